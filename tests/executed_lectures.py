"""The scaled fixture lectures executed once per test session, by the command line: `jaxci audit --execute
--machine g4dn.2xlarge --format json --cache DIR`.

Executing them is most of the time of the tests that need them, and two files do: the build-cost rows read the
audit JSON, the verdict tests judge the runs themselves. The run cache keys a run by the lecture's code, its
platform, the cell timeout and the kernel's environment, never by the runner model, so the verdict tests judge
these same runs again (repo.execute with a Reuse of the cache) with the model they choose, starting no kernel.
"""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from jaxci import REPO_ROOT

LECTURES = REPO_ROOT / "tests" / "fixtures" / "lectures"
SCALED = LECTURES / "model_verdicts_scaled"
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


def execute_scaled(folder: Path) -> ExecutedAudit:
    """`jaxci audit SCALED --execute` on this machine's CPU, its JSON and run cache written under `folder`."""
    out, cache = folder / "audit.json", folder / "runs"
    proc = subprocess.run([sys.executable, "-m", "jaxci", "audit", str(SCALED), "--execute", "--platforms", "cpu",
                           "--machine", FAMILY, "--format", "json", "--output", str(out), "--no-progress",
                           "--cell-timeout", str(CELL_TIMEOUT), "--cache", str(cache)],
                          capture_output=True, text=True, timeout=600, cwd=REPO_ROOT)
    return ExecutedAudit(out, cache, proc.returncode, proc.stderr)
