"""Executed fixture lectures for the verdict and build-cost tests.

The small lectures (model_verdicts: a fraction of a second of work each) are executed once per test session by
the command line, `jaxci audit --execute --machine g4dn.2xlarge --format json --cache DIR`; the build-cost rows
read its JSON, and the verdict tests judge the same runs again from its run cache (repo.execute with a Reuse),
starting no kernel.

The scaled lectures (model_verdicts_scaled: the sizes where a GPU pays, two minutes of CPU work) are judged from
their recorded runs (FROZEN, written by `python -m tests.executed_lectures`, which executes them by the command line
on this machine): the same records the cache would hand back, so the verdicts do not move with the load or the
speed of the machine that runs the tests.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from jaxci import REPO_ROOT

LECTURES = REPO_ROOT / "tests" / "fixtures" / "lectures"
SMALL = LECTURES / "model_verdicts"
SCALED = LECTURES / "model_verdicts_scaled"
#: the scaled lectures' runs, recorded by `python -m tests.executed_lectures`
FROZEN = LECTURES / "model_verdicts_scaled.runs.json"
FAMILY = "g4dn.2xlarge"
#: the per-cell limit of every execution of these lectures: part of the run cache's key, so the same everywhere
#: (a float, as the command line parses it: the key hashes its JSON form)
CELL_TIMEOUT = 300.0


@dataclass(frozen=True)
class ExecutedAudit:
    json_path: Path   # the audit JSON (--format json --output)
    cache: Path       # the run cache it stored every completed run in
    returncode: int
    stderr: str


def execute(lectures: Path, folder: Path) -> ExecutedAudit:
    """`jaxci audit LECTURES --execute` on this machine's CPU, its JSON and run cache written under `folder`."""
    out, cache = folder / "audit.json", folder / "runs"
    proc = subprocess.run([sys.executable, "-m", "jaxci", "audit", str(lectures), "--execute", "--platforms", "cpu",
                           "--machine", FAMILY, "--format", "json", "--output", str(out), "--no-progress",
                           "--cell-timeout", str(CELL_TIMEOUT), "--cache", str(cache)],
                          capture_output=True, text=True, timeout=600, cwd=REPO_ROOT)
    return ExecutedAudit(out, cache, proc.returncode, proc.stderr)


class FrozenRuns:
    """A run cache (the Reuse interface run_lectures calls) that hands back the recorded run of every lecture and
    platform, whatever this machine's kernel environment, and refuses to execute anything."""

    def __init__(self, path: Path = FROZEN):
        self.runs: dict[str, dict[str, dict]] = json.loads(path.read_text())["runs"]
        self.reused: list[str] = []
        self.executed: list[str] = []   # always empty: store refuses

    def key(self, verdict, platform: str, kernel: str) -> str:
        return f"{verdict.path} [{platform}]"

    def lookup(self, verdict, platform: str, key: str):
        from jaxci.audit.runner.outcome import NotebookRun

        record = self.runs.get(verdict.path, {}).get(platform)
        if record is None:
            raise AssertionError(f"{key}: no recorded run in {FROZEN.name}: run `python -m tests.executed_lectures`")
        run = NotebookRun.from_dict(record)
        run.path = str(verdict.path_abs)
        self.reused.append(key)
        return run

    def store(self, verdict, platform: str, key: str, run) -> None:
        raise AssertionError(f"{key} was executed: recorded runs are never executed again")


def freeze() -> Path:
    """Execute the scaled lectures by the command line and record their runs in FROZEN, with where they ran."""
    with tempfile.TemporaryDirectory() as scratch:
        audit = execute(SCALED, Path(scratch))
        if audit.returncode:
            raise SystemExit(f"jaxci audit --execute exited {audit.returncode}:\n{audit.stderr[-3000:]}")
        data = json.loads(audit.json_path.read_text())
    from importlib.metadata import version

    from jaxci.util.loadavg import cpu_model

    runs = {lec["path"]: {where: {**run, "path": Path(run["path"]).relative_to(REPO_ROOT).as_posix()}
                          for where, run in lec["runs"].items()}
            for lec in data["lectures"] if lec.get("runs")}   # no path of the recording machine
    record = {"recorded": {"by": "python -m tests.executed_lectures", "date": date.today().isoformat(),
                           "cpu": cpu_model(), "cores": os.cpu_count(), "python": platform.python_version(),
                           "jax": version("jax"), "cell_timeout": CELL_TIMEOUT},
              "runs": runs}
    FROZEN.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")
    return FROZEN


if __name__ == "__main__":
    print(f"recorded {freeze()}")
