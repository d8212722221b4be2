"""measure/published_spread.py: a lecture's published run times grouped by the version of its code across a
snapshot's history, a re-published (cached) time counted once. A made-up series in a temporary git repository;
never a timing."""

import json
import os
import subprocess

from tests.modelutil import script

spread = script("published_spread")


def _status(day: str, rows: list[tuple[str, float]]) -> str:
    table = "".join(f"|{n}|{day} 03:04|cache|{s}|✅|\n" for n, s in rows)
    text = ("# Execution Statistics\n\n|Document|Modified|Method|Run Time (s)|Status|\n"
            "|:--:|:--:|:--:|:--:|:--:|\n" + table)
    return json.dumps({"cells": [{"cell_type": "markdown", "metadata": {}, "source": [text]}], "metadata": {},
                       "nbformat": 4, "nbformat_minor": 5})


def _notebook(code: str) -> str:
    return json.dumps({"cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                                  "source": [code]}], "metadata": {}, "nbformat": 4, "nbformat_minor": 5})


def test_times_are_grouped_by_the_lectures_code_and_a_cached_time_counts_once(tmp_path):
    git = ["git", "-C", str(tmp_path), "-c", "user.email=t@t", "-c", "user.name=t"]
    subprocess.run(git[:3] + ["init", "-q"], check=True)
    builds = [("2026-01-01", "x = 1", 10.0), ("2026-01-02", "x = 1", 10.0), ("2026-01-03", "x = 1", 12.0),
              ("2026-01-04", "x = 2", 30.0)]
    for day, code, seconds in builds:
        (tmp_path / "status.ipynb").write_text(_status(day, [("alpha", seconds)]))
        (tmp_path / "alpha.ipynb").write_text(_notebook(code))
        subprocess.run(git + ["add", "."], check=True)
        subprocess.run(git + ["commit", "-qm", day, f"--date={day}T12:00:00"], check=True,
                       env={**os.environ, "GIT_COMMITTER_DATE": f"{day}T12:00:00"})
    found = spread.spread(tmp_path / ".git", "2025-12-01", None)
    assert found == {"alpha": [{"first": "2026-01-01", "last": "2026-01-03", "times": [10.0, 12.0]},
                               {"first": "2026-01-04", "last": "2026-01-04", "times": [30.0]}]}
    assert spread.spread(tmp_path / ".git", "2025-12-01", ["beta"]) == {}
