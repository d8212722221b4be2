"""Names from a record reach Markdown tables as one quoted cell each (issue 83, injection): a lecture named with an
HTML comment, a `|` or an @-mention stays in its cell in `audit coverage --table` and `accel-score`."""

from __future__ import annotations

from jaxci.analysis import accel_score as A
from jaxci.report import coverage

NAMES = ("evil<!-- hidden", "a|b", "@octocat")


def _cells(text: str) -> list[list[str]]:
    return [line.split(" | ") for line in text.splitlines() if line.startswith("| ") and "---" not in line]


def test_coverage_table_quotes_names_and_reasons():
    rows = [coverage.Covered(name, 10.0, "executed", "why | with\nnewline") for name in NAMES]
    text = coverage.table(rows)
    assert "<!--" not in text and "@octocat" not in text and "\nnewline" not in text
    assert all(len(r) == 4 for r in _cells(text))   # no extra column


def test_accel_score_table_quotes_lecture_paths():
    rows = [A.Row(f"lectures/{name}.md", 1.0, 2.0, 1.0, 2.0, 1.5, 2.5, "both") for name in NAMES]
    text = A.markdown(rows, "lab-tpu-v5e", "tpu")
    assert "<!--" not in text and "@octocat" not in text
    assert all(len(r) == 8 for r in _cells(text.split("\n\n")[0]))
