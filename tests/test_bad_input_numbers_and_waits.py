"""Bad input, by command: numbers in other scripts' digits (`predict`, `history`), a history that does not exist
(`history --confirm`), a package index that never answers and a GitHub output that cannot be written
(`release-watch plan`), a commit time outside the calendar and a conditions file nested too deep (`history`), and
the measurement scripts' malformed inputs (`measure/published_builds.py`, `measure/offline_data.py`). Each case
runs in a fresh process (tests/badinput.py): exit 2 and one line, never a traceback or a wait past the stated
limit."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from jaxci.results import conditions, history
from jaxci.util import quoting
from tests.badinput import REPO, Case, outcome_tests

CASES = [
    Case(("predict", "--family", "g4dn.2xlarge", "--kernel", "matmul", "--n", "٢"), 2,
         "expected a whole number in ASCII digits"),
    Case(("history", "--cpus", "０", "--dry-run"), 2, "--cpus '０': CPU numbers"),
    Case(("history", "--confirm", "--machine", "nosuch"), 2, "no history at results/nosuch/"),
    Case(("history", "--validate", "0.4.31", "--github-output", "/proc/version"), 2,
         "--github-output /proc/version: cannot write it"),
    Case(("{tmp}/kernel.json", "{tmp}"), 2, "not a kernelspec", script="measure/offline_data.py"),
    Case(("{tmp}/list.json", "{tmp}"), 2, "not a kernelspec", script="measure/offline_data.py"),
    Case(("{tmp}", "--machine", "g4dn.2xlarge", "--from-audit", "{tmp}/list.json"), 2,
         "not an audit JSON", script="measure/published_builds.py"),
]


def setup(tmp: Path) -> None:
    """A kernel spec, a JSON list and an Execution Statistics notebook the cases read."""
    (tmp / "kernel.json").write_text(json.dumps({"argv": "python -m ipykernel"}))
    (tmp / "list.json").write_text("[1, 2]")
    table = ("| Document | Modified | Method | Run Time (s) | Status |\n|---|---|---|---|---|\n"
             "| a | x | cache | inf | ✅ |\n| b | x | cache | -50 | ✅ |\n| c | x | cache | 12.5 | ✅ |\n")
    (tmp / "status.ipynb").write_text(json.dumps({"cells": [{"cell_type": "markdown", "source": table}]}))


scratch, test_bad_input_outcome = outcome_tests(CASES, setup)


def test_a_published_run_time_that_is_not_a_finite_non_negative_number_is_refused(scratch):
    sys.path.insert(0, str(REPO / "measure"))
    try:
        import published_builds
    finally:
        sys.path.pop(0)
    rows = published_builds.parse_status((scratch / "status.ipynb").read_text(), None)
    assert [(r.document, r.seconds) for r in rows] == [("a", None), ("b", None), ("c", 12.5)]
    assert rows[0].refused == rows[1].refused == "run time not a finite, non-negative number of at most 5 days"


def test_a_package_index_wait_ends_at_its_limit_with_every_process_it_started(tmp_path):
    """A stand-in pip that never answers and leaves a child holding its output: the limit ends both (a hang
    here would stop this test at its own 60 s, not pass)."""
    fake = tmp_path / "python"
    fake.write_text("#!/bin/sh\nsleep 300 &\nsleep 300\n")
    fake.chmod(0o755)
    code = textwrap.dedent(f"""
        from jaxci.results.release_index import HistoryError, index_versions
        try:
            index_versions("jax", python={str(fake)!r}, timeout=1)
        except HistoryError as exc:
            print(exc)
    """)
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert "no answer from the package index within 1 s" in out.stdout, out.stderr


@pytest.mark.parametrize("stamp", ["99999999999999", "-99999999999999", "x"])
def test_a_commit_time_outside_the_calendar_is_said_not_raised(stamp):
    with pytest.raises(history.HistoryError, match="outside the calendar"):
        history._commit_time("0123456789abcdef", stamp)
    with pytest.raises(history.HistoryError, match="not a time on the calendar"):
        history._dated_env("+99999-01-01T00:00:00Z")


def test_a_conditions_file_nested_too_deep_is_one_error(tmp_path):
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "conditions.toml").write_text("a = " + "[" * 50_000 + "]" * 50_000 + "\n")
    errors: list = []
    assert conditions.load(tmp_path, "m", errors) == ([], [])
    assert len(errors) == 1 and "nested deeper" in errors[0]


@pytest.mark.parametrize("text", ["a`b", "`x", "a``b`", "x|y", "<!-- @you"])
def test_a_code_span_holds_any_name_whole(text):
    span = quoting.code(text)
    fence = span[:len(span) - len(span.lstrip("`"))]
    inner = span[len(fence):-len(fence)]
    assert inner.strip(" ") == text and fence not in inner  # no run of backticks inside closes it early


def test_a_published_run_time_of_1e308_is_no_run_time(tmp_path):
    """Issue 83 item 8: 1e308 s passed the finite check, summed to inf and broke `audit --published --format json`,
    `coverage` and `shard-plan`. A run time is at most 5 days, in the table and in the record."""
    from jaxci.results import published_build

    table = ("| Document | Modified | Method | Run Time (s) | Status |\n|---|---|---|---|---|\n"
             "| big | x | cache | 1e308 | ✅ |\n| ok | x | cache | 432000 | ✅ |\n")
    rows = published_build.parse_status(json.dumps({"cells": [{"cell_type": "markdown", "source": table}]}), None)
    assert [(r.document, r.seconds) for r in rows] == [("big", None), ("ok", 432000.0)]
    record = {"format": published_build.FORMAT, "version": published_build.VERSION, "repository": "o/r",
              "commit": "c", "executed": "2026-01-01", "family": "g4dn.2xlarge", "seconds": {"a": 1e308},
              "refused": {}}
    path = tmp_path / "p.json"
    for seconds, version in (({"a": 1e308}, published_build.VERSION), ({"a": 1.0}, True)):
        path.write_text(json.dumps({**record, "seconds": seconds, "version": version}))
        with pytest.raises(published_build.PublishedError) as caught:
            published_build.read(path)
        assert str(path) in str(caught.value)
