"""Bad input, seventh pass (issue 83; ../shared/probes7/broken-s7.txt): the surfaces added since the sixth, each
case a fresh process as a user runs it (tests/badinput.py). The tests beside the cases check what the case table
cannot: nothing written, a patch that applies, a file left as it was (test_patch_hostile_workflow.py,
test_ci_patch_hostile_workflows.py, test_devsets_records_hostile.py, test_bad_input_numbers_cli.py, ...)."""

from __future__ import annotations

import copy
import json
import subprocess
from pathlib import Path

from tests.badinput import REPO, Case, outcome_tests

BOOK = "{tmp}/book"
V1 = json.loads((REPO / "docs" / "reference" / "dev-sets.json").read_text())
V2 = json.loads((REPO / "docs" / "reference" / "dev-sets-all.json").read_text())
FAMILY = "g4dn.2xlarge"
STATUS = ("| Document | Modified | Method | Run Time (s) | Status |\n|---|---|---|---|---|\n"
          "| a | 2026-08-13 | cache | 20 | ✅ |\n| a | 2026-08-13 | cache | 900 | ❌ |\n"
          "| b | 2026-08-13 | cache | 10 | ✅ |\n| big | 2026-08-13 | cache | 1e308 | ✅ |\n")


def _snapshot(root: Path, status: bytes) -> None:
    root.mkdir(parents=True)
    (root / "status.ipynb").write_bytes(status)
    for args in (["init", "-q"], ["add", "status.ipynb"],
                 ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "publish"]):
        subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


def _write(path: Path, data) -> None:
    path.write_text(json.dumps(data))


def setup(tmp: Path) -> None:
    nb = json.dumps({"cells": [{"cell_type": "markdown", "source": STATUS}]}).encode()
    _snapshot(tmp / "snap", nb)
    _snapshot(tmp / "snap-bytes", b"\xff\xfe" + nb)
    (tmp / "book" / "lectures").mkdir(parents=True)
    (tmp / "book" / "lectures" / "a.md").write_text("---\nkernelspec:\n  name: python3\n---\n\n```{code-cell} "
                                                     "ipython3\nimport numpy as np\nprint(np.ones(3).sum())\n```\n")
    _write(tmp / "p-1e308.json", {"format": "jaxci-published-build", "version": 1, "repository": "o/r",
                                  "commit": "c", "executed": "2026-01-01", "family": FAMILY,
                                  "seconds": {"a": 1e308, "b": 1e308, "c": 10}, "refused": {}})
    _write(tmp / "p-true.json", {"format": "jaxci-published-build", "version": True, "repository": "o/r",
                                 "commit": "c", "executed": "2026-01-01", "family": FAMILY, "seconds": {"c": 10},
                                 "refused": {}})
    v1 = copy.deepcopy(V1)
    v1["sets"][FAMILY] = [1]
    _write(tmp / "v1-list.json", v1)
    v2 = copy.deepcopy(V2)
    v2["sets"][FAMILY]["lectures"] = "abc"
    _write(tmp / "v2-string.json", v2)
    v2 = copy.deepcopy(V2)
    for row in v2["sets"][FAMILY]["lectures"]:
        row["published_s"] = 1e308
    _write(tmp / "v2-1e308.json", v2)
    _write(tmp / "status.json", {"family": "c7i<!-- hidden\n\n# Forged heading", "spot": False, "suites": {},
                                 "running": None, "finished": False})
    _write(tmp / "status-ok.json", {"family": "c7i.2xlarge", "spot": False, "suites": {}, "running": None,
                                    "finished": False})


def _published(snapshot: str, *more: str) -> tuple:
    return ("audit", "published", snapshot, "--commit", "HEAD", "--family", FAMILY, "--output", "{tmp}/p.json", *more)


CASES = [
    Case(_published("{tmp}/snap-bytes"), 2, "not UTF-8 text"),
    Case(_published("{tmp}/snap", "--cap", "inf"), 2, "expected a finite number above zero"),
    Case(_published("{tmp}/snap", "--repository", "owner/name\n# Forged heading"), 2, "control character"),
    Case(("audit", "published", "{tmp}/snap", "--commit", "HEAD", "--family", FAMILY, "--output",
          "{tmp}/no-such-folder/p.json"), 2, "does not exist"),
    Case(("audit", "published", "{tmp}/snap", "--commit", "HEAD", "--family", FAMILY, "--output",
          "{tmp}/snap/status.ipynb"), 2, "is the snapshot's status.ipynb"),
    Case(_published("{tmp}/snap"), 0, "2 rows refused", pick="wrote"),   # a listed twice, big at 1e308 s
    Case(("audit", "shard-plan", "{tmp}/p-1e308.json"), 2, "run times (0 to 5 days)"),
    Case(("audit", "shard-plan", "{tmp}/p-true.json"), 2, "version True"),
    Case(("audit", BOOK, "--execute", "--platforms", "tpu", "--no-progress"), 2,
         "--platforms tpu: no accelerator on this machine", env={"JAXCI_ACCELERATOR": "none"}),
    Case(("audit", BOOK, "--execute", "--no-progress", "--only", "a"), 2, "JAXCI_ACCELERATOR='junk'",
         env={"JAXCI_ACCELERATOR": "junk"}),
    Case(("audit", BOOK, "--reuse-failures"), 2, "--reuse-failures needs --execute"),
    Case(("devsets", "--table", "{tmp}/v1-list.json", "--check"), 2, "not a version 1 development-set record"),
    Case(("devsets", "--table", "{tmp}/v2-string.json"), 2, "'lectures' is not a non-empty list of rows"),
    Case(("devsets", "--table", "{tmp}/v2-1e308.json"), 2, "a figure is missing or not positive"),
    Case(("devsets", "--from-audit", "{tmp}/a.json", "--calibrate", "{tmp}/c.json", "--accepts", "x,y"), 2,
         "expected a number in ASCII digits"),
    Case(("devsets", "--from-audit", "{tmp}/a.json", "--calibrate", "{tmp}/c.json", "--accepts", "3,1"), 2,
         "LOW must be below HIGH"),
    Case(("devsets", "--from-audit", "{tmp}/a.json", "--record", "{tmp}/nodir/r.json"), 2, "does not exist"),
    Case(("accel-score", "{tmp}/a.json", "--family", "nosuch"), 2, "--family 'nosuch': not a catalogue machine"),
    Case(("published-score", "--set", "ubuntu-latest.cpu_physical_cores=0"), 2, "finite number above zero"),
    Case(("published-score", "--set", "ubuntu-latest.cpu_physical_corez=4"), 2, "has no figure"),
    Case(("published-score", "--set", "ubuntu-latest.cpu_physical_cores=\u0662"), 2, "ASCII digits"),
    Case(("published-score", "{tmp}"), 2, "not an asv results directory"),
    Case(("crossover-stability", "--families", "nosuch"), 2, "is not a catalogue runner family"),
    Case(("inputs", "status", "{tmp}/status.json", "finish"), 2, "a machine name is 1-64 letters"),
    Case(("inputs", "status", "{tmp}/status-ok.json", "end", "--suite", "dense", "--exit", "1234567"), 2,
         "expected a process exit status"),
]

scratch, test_bad_input_outcome = outcome_tests(CASES, setup)


def test_a_malformed_committed_audit_is_one_line_and_the_report_goes_on(tmp_path):
    """A leftover of the sixth pass, by design: `jaxci report --audits` says a malformed committed audit in one
    line naming its file and field, leaves it out and writes the rest; the two lines after it are the report's own
    (pages written, cells read), said for every report."""
    import sys

    from tests.committed import committed

    audit = json.loads((REPO / "audits" / "lecture-python-advanced.myst@b83d6da" / "audit.json").read_text())
    audit["published"]["commit"] = 1234567
    folder = tmp_path / "A" / "x@1234567"
    folder.mkdir(parents=True)
    _write(folder / "audit.json", audit)
    (tmp_path / "M").mkdir()
    proc = subprocess.run([sys.executable, "-m", "jaxci", "report", str(committed()), "--audits", str(tmp_path / "A"),
                           "--maintainers", str(tmp_path / "M"), "--format", "summary", "--no-progress"],
                          capture_output=True, text=True, cwd=REPO, timeout=120)
    lines = proc.stderr.splitlines()
    assert proc.returncode == 0 and "Traceback" not in proc.stderr
    said = [x for x in lines if "x@1234567" in x]
    assert len(said) == 1 and "published.commit" in said[0] and said[0].endswith("left out")
    assert all(x.startswith(("jaxci report: wrote", "jaxci report: ")) for x in lines)
