"""Bad input to `jaxci env`, `machine`, `inputs`, `audit`, `upgrade-check`, `report`, the install step and the GPU
capture import, run as a user runs it (a fresh `python -m jaxci` process each), with the outcome each must have:
exit 2 and one line naming what and where, or exit 0 with a stated result; never a traceback, never a hang (each
run has a 60 s limit, a hang guard, not a timing check). Then property-based checks of `jaxci env` over random
kernels, peaks, device sizes and budgets.

Every bad-input file's cases are named by the command they run (test ids `jaxci-env-3`, `pytest -k jaxci-audit`
selects one command's cases in every file); `python -m tests.test_bad_input` prints the table of docs/bad-input.md:
every case of every file, grouped by command, with its outcome on this checkout.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

REPO = Path(__file__).resolve().parent.parent
LIMIT_S = 60
#: jaxci's commands with subcommands (argparse subparsers): a case is named by both words
SUBCOMMANDS = {"audit": {"merge"}, "failures": {"record", "skip"},
               "inputs": {"plan", "upgrade", "status", "collect", "suites", "requirements"},
               "release-watch": {"plan", "measure", "file"}}


@dataclass(frozen=True)
class Case:
    args: tuple  # after `jaxci`; "{tmp}" is replaced by a scratch folder prepared by setup()
    rc: int
    expect: str  # a fragment of the line shown in the table
    env: dict = field(default_factory=dict)
    shown: str = ""  # the input as the table shows it, when args are not readable as they are
    script: str = ""  # run this file instead of `-m jaxci`
    pick: str = ""  # on exit 0, show the first line holding this (default: expect)

    @property
    def command(self) -> str:
        """What runs: the script, or `jaxci` and its command words (`jaxci audit merge`, `jaxci inputs plan`)."""
        if self.script:
            return self.script
        second = self.args[1:2] if self.args[1:2] and self.args[1] in SUBCOMMANDS.get(self.args[0], ()) else ()
        return " ".join(["jaxci", *self.args[:1], *second])


def case_ids(cases) -> list[str]:
    """pytest ids by command and position: `jaxci-audit-merge-4`."""
    return [f"{case.command.replace(' ', '-').replace('/', '-')}-{i}" for i, case in enumerate(cases)]


LONG = "x" * 5000
CASES = [
    Case(("env", "--kernels", "3", "--peak-mib", "6000", "--device-memory-mib", "16000", "--format", "github"),
         2, "at most 2 fit"),
    Case(("env", "--kernels", "2", "--peak-mib", "1e-9", "--device-memory-mib", "16000"), 0,
         "kernels: 2 requested, safe: 3", pick="kernels:"),
    Case(("env", "--kernels", "2", "--peak-mib", "0.01", "--device-memory-mib", "16000"), 0,
         "kernels: 2 requested, safe: 3", pick="kernels:"),
    Case(("env", "--memory-budget", "0.58", "--kernels", "2", "--peak-mib", "2900", "--device-memory-mib",
               "10000"), 0, "kernels: 2 requested, safe: 2", pick="kernels:"),
    Case(("env", "--memory-budget", "0.29", "--kernels", "2", "--peak-mib", "2900", "--device-memory-mib",
               "10000"), 2, "at most 1 fit"),
    Case(("env", "--device-memory-mib", "inf"), 2, "--device-memory-mib inf"),
    Case(("env", "--device-memory-mib", "16000", "--slowest-cell-s", "inf"), 2, "--slowest-cell-s inf"),
    Case(("env", "--device-memory-mib", "16000", "--slowest-cell-s", "1e308"), 2, "--slowest-cell-s 1e+308"),
    *[Case(("machine", "--local", name, "--machine-file", "{tmp}/m.json"), 2, "a machine name is",
           shown=shown) for name, shown in [("../x", ""), ("/abs", ""), ("a/b", ""), (".", ""),
                                            ("a\nb", "jaxci machine --local $'a\\nb'"),
                                            (LONG, "jaxci machine --local x...x (5,000 characters)")]],
    Case(("inputs", "plan", "--bench=(.|.)*z", "--run-id", "1"), 2, "can backtrack through",
         pick="filter "),
    Case(("inputs", "collect", "--matrix", '{"include": [{"family": "c7i.2xlarge"}, {"family": "g4dn.2xlarge"}]}',
               "--incoming", "{tmp}/incoming", "--results", "{tmp}/results"), 0, "status unreadable", pick="| c7i",
         shown="jaxci inputs collect (c7i.2xlarge's status file cut off mid-write, g4dn.2xlarge fine)"),
    Case(("inputs", "collect", "--matrix", "[]", "--incoming", "{tmp}/incoming"), 2, "--matrix: expected"),
    Case(("inputs", "status", "{tmp}/status.json", "end"), 2, "--suite is required"),
    Case(("inputs", "status", "{tmp}/status.json", "end", "--suite", "dense"), 2, "--exit is required"),
    Case(("inputs", "status", "{tmp}/status.json", "end", "--suite", "dense\n## x", "--exit", "0"), 2,
         "is not a suite name", shown="jaxci inputs status S end --suite $'dense\\n## x' --exit 0"),
    Case(("audit", "{fixtures}/exec", "--output", "{tmp}/missing/table.md"), 2, "does not exist"),
    Case(("audit", "{fixtures}/exec", "--summary", "{tmp}"), 2, "is a folder"),
    Case(("audit", "{fixtures}/exec", "--execute", "--cell-timeout", "nan"), 2, "--cell-timeout nan"),
    Case(("audit", "{fixtures}/exec", "--execute", "--platforms", "cpu,tpu"), 2,
         "expected a comma-separated list"),
    Case(("upgrade-check", "--old", "0.10.1", "--new", "0.10.2", "--workdir", "{tmp}/reused"), 2,
         "already holds"),
    Case(("upgrade-check", "--old", "0.10.1", "--new", "0.10.2"), 2, "JAXCI_OFFLINE=1",
         env={"JAXCI_OFFLINE": "1", "PIP_FIND_LINKS": ""}),
    Case(("env", "--pin-cpu", "--machine", "nosuch"), 2, "unknown machine"),
    Case(("machine", "--local", "ok-name", "--machine-file", "{tmp}/m.json"), 2, "unknown backend 'rocm'",
         env={"JAXCI_BACKEND": "rocm"}),
    Case(("nonexistent.whl",), 2, "unknown backend '../cpu'", env={"JAXCI_BACKEND": "../cpu"},
         script="env_matrix/install.py", shown="JAXCI_BACKEND=../cpu python env_matrix/install.py WHEEL"),
    Case(("report", "{tmp}/empty"), 2, "no asv result values"),
    Case(("audit", "{tmp}/empty"), 2, "no lectures"),
]

# ---- captures to import, results folders, audit configs: CAP is made by setup_captures(), a capture per folder -----
CAP = "{tmp}/captures"
NEST = "(" * 1000 + "a" + ")" * 1000
CASES += [
    Case(("import", f"{CAP}/cap-version", "--results", f"{CAP}/results"), 2, "would orphan those results",
         shown="jaxci import CAPTURE (benchmark versions differ from the ones results/ uses) --results R"),
    Case(("import", f"{CAP}/cap-passwd", "--results", f"{CAP}/results"), 2, "is a symbolic link",
         shown="jaxci import CAPTURE (summary.md -> /etc/passwd) --results R"),
    Case(("import", f"{CAP}/cap-started", "--results", f"{CAP}/results"), 2, "is not a time like",
         shown='jaxci import CAPTURE ("started": "/../../../../../../tmp/pr/ESCAPED_started") --results R'),
    Case(("import", f"{CAP}/cap-commit", "--results", f"{CAP}/results"), 2, "is not a hex commit",
         shown='jaxci import CAPTURE (facts.commit "/../..") --results R'),
    Case(("import", f"{CAP}/cap-facts", "--results", f"{CAP}/results"), 2, "'facts' is 'oops'",
         shown='jaxci import CAPTURE ("facts": "oops") --results R'),
    Case(("import", f"{CAP}/cap-steps", "--results", f"{CAP}/results"), 2, "steps must be a list",
         shown='jaxci import CAPTURE ("steps": ["a", "b"]) --results R'),
    Case(("import", f"{CAP}/cap-newline", "--results", f"{CAP}/results"), 2, "a machine name is",
         shown='jaxci import CAPTURE ("machine": "a\\nb") --results R'),
    Case(("import", f"{CAP}/cap-shell", "--results", f"{CAP}/results"), 2, "a machine name is",
         shown='jaxci import CAPTURE ("machine": "x;rm -rf ~ $(id)`id`|&") --results R'),
    Case(("import", f"{CAP}/cap-big", "--results", f"{CAP}/results"), 2, "over the limit of 4.0 MiB",
         shown="jaxci import CAPTURE (a 5 MiB summary.md; the limit is 4 MiB) --results R"),
    Case(("import", f"{CAP}/cap-t4-h200", "--results", f"{CAP}/results"), 2, "has a Tesla T4 in the catalogue",
         shown="jaxci import CAPTURE (g4dn.2xlarge whose machine.json says 1 x NVIDIA H200) --results R"),
    *[Case(("import", f"{CAP}/cap-value-{tag}", "--results", f"{CAP}/results"), 2, frag,
           shown=f"jaxci import CAPTURE (a time of {tag}) --results R")
      for tag, frag in (("string", "not a number"), ("inf", "not a number"), ("-inf", "not a number"),
                        ("-1", "never negative"), ("dict", "not a number"))],
    Case(("import", f"{CAP}/cap-ok", "--results", f"{CAP}/file"), 2, "not a folder",
         shown="jaxci import CAPTURE --results FILE"),
    Case(("import", f"{CAP}/cap-ok", "--results", f"{CAP}/corrupt"), 2, "fix or remove it first",
         shown="jaxci import CAPTURE --results R (R/benchmarks.json cut off)"),
    Case(("import", f"{CAP}/cap-scalar", "--results", f"{CAP}/scalar"), 2, "do not have the shape",
         shown="jaxci import CAPTURE --results R (R's row holds a scalar where the capture has a list)"),
    Case(("import", f"{CAP}/cap-empty-results", "--results", f"{CAP}/results"), 2, "malformed",
         shown='jaxci import CAPTURE ("results": [] in the results file) --results R'),
    Case(("import", f"{CAP}/cap-deep", "--results", f"{CAP}/results"), 2, "nested",
         shown="jaxci import CAPTURE (capture.json nested 100,000 deep) --results R"),
    Case(("import", f"{CAP}/two.tar.gz", "--results", f"{CAP}/results"), 2, "2 capture folders inside",
         shown="jaxci import TARBALL (two capture folders) --results R"),
    Case(("report", f"{CAP}/fifo-results"), 2, "FIFO", shown="jaxci report R (R/m/machine.json a FIFO)"),
    Case(("report", f"{CAP}/zz-results"), 0, "zz.json: not loaded", pick="zz.json",
         shown="jaxci report R (R/m/zz.json a FIFO, the rest fine)"),
    Case(("report", f"{CAP}/zero-results"), 2, "character device",
         shown="jaxci report R (R/m/a.json a link to /dev/zero, no other results)"),
    Case(("env", "--results", f"{CAP}/fifo-results", "--machine", "m"), 2, "FIFO",
         shown="jaxci env --results R --machine m (R/m/machine.json a FIFO)"),
    Case(("audit", f"{CAP}/fifo-lecture"), 1, "is a FIFO", shown="jaxci audit D (D/a.md a FIFO)"),
    Case(("audit", f"{CAP}/fifo-config", "--format", "json"), 0, "FIFO", pick="FIFO",
         shown="jaxci audit D (D/_config.yml a FIFO)"),
    Case(("audit", f"{CAP}/laughs", "--format", "json"), 0, "alias bomb", pick="alias bomb",
         shown="jaxci audit D (D/myst.yml: a billion laughs)"),
    Case(("audit", f"{CAP}/laughs-ci"), 0, "alias bomb", pick="alias bomb",
         shown="jaxci audit D (D/.github/workflows/w.yml: a billion laughs)"),
    Case(("audit", f"{CAP}/recursive-ci"), 0, "recursive alias", pick="recursive alias",
         shown="jaxci audit D (a workflow with a recursive alias)"),
    Case(("report", f"{CAP}/neg-results"), 0, "unreadable value -1.0", pick="unreadable value",
         shown="jaxci report R (a time of -1; inf likewise)"),
    Case(("report", f"{CAP}/good-results", "--out", f"{CAP}/file"), 2, "is a file; give a folder",
         shown="jaxci report R --out FILE"),
    Case(("report", f"{CAP}/good-results", "--html", f"{CAP}/file"), 2, "is a file; give a folder",
         shown="jaxci report R --html FILE"),
    Case(("report", f"{CAP}/good-results", "--out", f"{CAP}/outdir"), 2, "is a folder or special file",
         shown="jaxci report R --out D (D/findings.md a folder)"),
    Case(("report", f"{CAP}/good-results", "--html", f"{CAP}/htmldir"), 2, "not UTF-8",
         shown="jaxci report R --html D (D/index.html binary)"),
    Case(("report", f"{CAP}/good-results", "--out", f"{CAP}/good-results/m"), 2, "inside the results folder",
         shown="jaxci report R --out R/m"),
    *[Case(("report", f"{CAP}/loader-{tag}"), 2, frag, shown=f"jaxci report R ({what})")
      for tag, frag, what in (("nomachine", "no machine name", "machine.json without machine"),
                              ("date", "is not a time", "a date of 1e300"),
                              ("version", "older benchmark version", "changed benchmark versions"))],
    *[Case(("report", f"{CAP}/loader-{tag}"), 0, frag, pick=frag, shown=f"jaxci report R ({what})")
      for tag, frag, what in (("notdict", "is a list, not an object", "a benchmarks.json entry not a dict"),
                              ("short", "param lists but", "a benchmarks.json entry shortened"))],
    Case(("audit", f"{CAP}/timeout-abc", "--format", "json"), 0, "execute.timeout", pick="execute.timeout",
         shown="jaxci audit D (_config.yml timeout: abc)"),
    Case(("audit", f"{CAP}/exclude-5", "--format", "json"), 0, "exclude_patterns", pick="exclude_patterns",
         shown="jaxci audit D (_config.yml exclude_patterns: 5)"),
    Case(("audit", f"{CAP}/steps-7"), 0, "not a list of steps", pick="not a list of steps",
         shown="jaxci audit D (a workflow job with steps: 7)"),
    Case(("audit", "{fixtures}/exec", "--emit-config", "{tmp}"), 2, "is a folder",
         shown="jaxci audit tests/fixtures/lectures/exec --emit-config DIR"),
    Case(("audit", "{fixtures}/exec", "--emit-config", "{tmp}/missing/x.patch"), 2, "does not exist",
         shown="jaxci audit tests/fixtures/lectures/exec --emit-config TMP/missing/x.patch"),
    Case(("capture", "--budget", "nan", "--out", "{tmp}/empty"), 2, "--budget nan"),
    Case(("capture", "--only", "["), 2, "--only: '[' is not a valid regular expression"),
    Case(("capture", "--budget", "900", "--out", f"{CAP}/file"), 2, "is a file; give a folder for the packed",
         shown="jaxci capture --budget 900 --out FILE"),
    Case(("capture", "--budget", "900", "--out", "{tmp}/cap-out", "--work", "."), 2,
         "inside (or above) the checkout",
         shown="jaxci capture --budget 900 --out D --work ."),
    Case(("upgrade-check", "--old", "0.10.1", "--new", "0.10.2", "--bench", NEST), 2, "at most 200",
         shown="jaxci upgrade-check --old 0.10.1 --new 0.10.2 --bench '((...(a)...))' (1,000 groups)"),
    Case(("upgrade-check", "--old", "0.10.1", "--new", "0.10.2", "--bench", "a{4294967296}"), 2,
         "nested or repeated"),
    Case(("inputs", "status", f"{CAP}/fifo-status", "finish"), 2, "FIFO",
         shown="jaxci inputs status FIFO finish"),
    Case(("inputs", "collect", "--matrix", "[" * 50_000 + "]" * 50_000, "--incoming", "{tmp}/incoming"), 2,
         "nested", shown="jaxci inputs collect --matrix '[[[...]]]' (50,000 deep)"),
    Case(("machine", "--local", "ok-name", "--machine-file", "{tmp}"), 2, "is a folder",
         shown="jaxci machine --local ok-name --machine-file DIR"),
    Case(("machine", "--local", "ok-name", "--machine-file", f"{CAP}/corrupt-machine.json"), 2,
         "fix or remove it", shown="jaxci machine --local ok-name --machine-file F (F cut off)"),
    Case(("env", "--kernels", "３", "--device-memory-mib", "16000"), 2, "non-ASCII character '３'"),
    Case(("env", "--peak-mib", "٢", "--device-memory-mib", "16000"), 2, "non-ASCII character '٢'"),
]


def setup(tmp: Path) -> None:
    """The scratch files the cases read: a cut-off status file, a reused work dir, empty folders."""
    from jaxci.workflows.status import end as status_end
    from jaxci.workflows.status import init as status_init

    (tmp / "empty").mkdir()
    (tmp / "reused" / "repo").mkdir(parents=True)
    (tmp / "reused" / "repo" / "from-an-earlier-check.txt").write_text("kept")
    (tmp / "results").mkdir()
    bad = tmp / "incoming" / "results-c7i.2xlarge" / "run-status"
    bad.mkdir(parents=True)
    (bad / "c7i.2xlarge.json").write_text('{"family": "c7i.2xlarge", "sui')
    good = tmp / "incoming" / "results-g4dn.2xlarge" / "run-status" / "g4dn.2xlarge.json"
    status_init(good, "g4dn.2xlarge", spot=False)
    status_end(good, "dense", 0)
    status_init(tmp / "status.json", "c7i.2xlarge", spot=False)
    setup_captures(tmp / "captures")


LAUGHS = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 9)}]\n" for i in range(8))


def setup_captures(root: Path) -> None:
    """Hostile captures, results folders with special files, audit configs."""
    import math
    import tarfile

    from tests.test_import_transaction import BENCH, capture_folder, results_tree

    root.mkdir()
    (root / "file").write_text("x")
    shutil.copytree(results_tree(root / "t", machine="local-old", cpu_value=3e-5), root / "results")

    def cap(name, manifest=None, edit=None, summary=b"# summary\n", **kw):
        res = results_tree(root / "src" / name, **kw)
        if edit:
            edit(res)
        return capture_folder(root / name, res, manifest, summary)

    def value(v):
        def edit(res):
            (path,) = (res / "local-x").glob("*-*.json")
            data = json.loads(path.read_text())
            data["results"][BENCH][0][0] = v
            path.write_text(json.dumps(data))
        return edit

    def empty_results(res):
        (path,) = (res / "local-x").glob("*-*.json")
        data = json.loads(path.read_text())
        data["results"] = []
        path.write_text(json.dumps(data))

    ok = cap("cap-ok")
    cap("cap-version", version="2")
    (cap("cap-passwd") / "summary.md").unlink()
    (root / "cap-passwd" / "summary.md").symlink_to("/etc/passwd")
    cap("cap-started", {"started": "/../../../../../../tmp/pr/ESCAPED_started"})
    cap("cap-commit", {"facts": {"commit": "/../.."}})
    cap("cap-facts", {"facts": "oops"})
    cap("cap-steps", {"steps": ["a", "b"]})
    cap("cap-newline", {"machine": "a\nb"})
    cap("cap-shell", {"machine": "x;rm -rf ~ $(id)`id`|&"})
    cap("cap-big", summary=b"x" * (5 * 1024 * 1024))
    cap("cap-t4-h200", {"machine": "g4dn.2xlarge", "rehearsal": False}, machine="g4dn.2xlarge",
        gpu="1 x NVIDIA H200", kind="catalogue", gpu_value=2e-5)
    for tag, v in (("string", "fast"), ("inf", math.inf), ("-inf", -math.inf), ("-1", -1.0), ("dict", {"a": 1})):
        cap(f"cap-value-{tag}", edit=value(v))
    cap("cap-empty-results", edit=empty_results)
    deep = cap("cap-deep")
    (deep / "capture.json").write_text("[" * 100_000 + "]" * 100_000)
    with tarfile.open(root / "two.tar.gz", "w:gz") as tar:
        tar.add(ok, arcname="a")
        tar.add(ok, arcname="b")
    shutil.copytree(root / "results", root / "corrupt")
    (root / "corrupt" / "benchmarks.json").write_text('{"version": 2, "x": ')
    scalar = cap("cap-scalar")   # the target holds the same file with a scalar where the capture has a list
    shutil.copytree(root / "results", root / "scalar")
    (root / "scalar" / "local-x").mkdir()
    res = root / "src" / "cap-scalar" / "results" / "local-x"
    for path in res.iterdir():
        data = json.loads(path.read_text())
        if "results" in data:
            data["results"][BENCH][0] = 1e-5
        path.write_text(json.dumps(data) if "results" in data else path.read_text())
        shutil.copy(path, root / "scalar" / "local-x" / path.name)
    assert scalar.exists()
    # results folders for report and env
    def results_folder(name, machine="m", **kw):
        out = root / name
        shutil.copytree(results_tree(root / "src" / name, machine=machine, **kw), out)
        return out
    fifo = results_folder("fifo-results")
    (fifo / "m" / "machine.json").unlink()
    os.mkfifo(fifo / "m" / "machine.json")
    zz = results_folder("zz-results")
    os.mkfifo(zz / "m" / "zz.json")
    zero = results_folder("zero-results")
    for path in (zero / "m").glob("*-*.json"):
        path.unlink()
    (zero / "m" / "a.json").symlink_to("/dev/zero")
    neg = results_folder("neg-results")
    for path in (neg / "m").glob("*-*.json"):
        data = json.loads(path.read_text())
        data["results"][BENCH][0][0] = -1.0
        path.write_text(json.dumps(data))
    results_folder("good-results")
    (root / "outdir" / "findings.md").mkdir(parents=True)
    (root / "htmldir").mkdir()
    (root / "htmldir" / "index.html").write_bytes(b"\xff\xfe\x00binary")
    for tag in ("notdict", "short", "nomachine", "date", "version"):
        out = results_folder(f"loader-{tag}")
        bench = json.loads((out / "benchmarks.json").read_text())
        if tag == "notdict":
            bench[BENCH] = ["not", "a", "dict"]
        elif tag == "short":
            bench[BENCH]["param_names"] = ["dtype"]
        elif tag == "version":
            bench[BENCH]["version"] = "changed"
        (out / "benchmarks.json").write_text(json.dumps(bench))
        if tag == "nomachine":
            info = json.loads((out / "m" / "machine.json").read_text())
            info.pop("machine")
            (out / "m" / "machine.json").write_text(json.dumps(info))
        if tag == "date":
            for path in (out / "m").glob("*-*.json"):
                data = json.loads(path.read_text())
                data["date"] = 1e300
                path.write_text(json.dumps(data))
    # audit inputs
    lecture = (REPO / "tests" / "fixtures" / "lectures" / "exec")
    md = next(p for p in sorted(lecture.iterdir()) if p.suffix == ".md")

    def book(name, config=None, myst=None, workflow=None):
        d = root / name
        d.mkdir()
        shutil.copy(md, d / md.name)
        if config is not None:
            (d / "_config.yml").write_text(config)
        if myst is not None:
            (d / "myst.yml").write_text(myst)
        if workflow is not None:
            (d / ".github" / "workflows").mkdir(parents=True)
            (d / ".github" / "workflows" / "w.yml").write_text(workflow)
        return d
    (root / "fifo-lecture").mkdir()
    os.mkfifo(root / "fifo-lecture" / "a.md")
    os.mkfifo(book("fifo-config") / "_config.yml")
    book("laughs", myst=LAUGHS)
    book("laughs-ci", workflow="on: push\n" + LAUGHS + "jobs: {}\n")
    book("recursive-ci", workflow="on: push\njobs: &a\n  b: *a\n")
    book("timeout-abc", config="execute:\n  timeout: abc\n")
    book("exclude-5", config="execute:\n  exclude_patterns: 5\n")
    book("steps-7", workflow="on: push\njobs:\n  j:\n    runs-on: ubuntu-latest\n    steps: 7\n")
    os.mkfifo(root / "fifo-status")
    (root / "corrupt-machine.json").write_text('{"version": 1, "x": {')


@dataclass
class Outcome:
    rc: int
    line: str  # the message line (rc != 0) or the line of the stated result (rc 0)
    stdout: str
    stderr: str


FIXTURES = REPO / "tests" / "fixtures" / "lectures"


def run_case(case: Case, tmp: Path) -> Outcome:
    """One case in a fresh process; "{tmp}" is the scratch folder in its arguments and its environment alike
    (GITHUB_STEP_SUMMARY=FIFO)."""
    args = [a.replace("{tmp}", str(tmp)).replace("{fixtures}", str(FIXTURES)) for a in case.args]
    cmd = [sys.executable, case.script, *args] if case.script else [sys.executable, "-m", "jaxci", *args]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JAXCI_", "GITHUB_"))}
    env.update({k: v.replace("{tmp}", str(tmp)) for k, v in case.env.items() if v}, PYTHONPATH=str(REPO))
    for k in [k for k, v in case.env.items() if not v]:
        env.pop(k, None)
    try:
        proc = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=LIMIT_S)
    except subprocess.TimeoutExpired:
        return Outcome(-9, f"no answer within {LIMIT_S} s (killed)", "", "")
    if proc.returncode:
        lines = [line for line in proc.stderr.splitlines() if line.strip()]
    else:
        lines = [line for line in (proc.stdout + "\n" + proc.stderr).splitlines() if (case.pick or case.expect) in line]
        lines = lines or proc.stdout.splitlines()
    return Outcome(proc.returncode, lines[-1] if proc.returncode and lines else (lines or [""])[0],
                   proc.stdout, proc.stderr)


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("bad-input")
    setup(tmp)
    return tmp


def check_outcome(case: Case, out: Outcome, *, quiet_refusal: bool = False) -> None:
    """The promise, for every bad-input test file: no traceback; the case's exit and message; a refusal is one line
    on stderr (and, with quiet_refusal, prints no result on stdout)."""
    assert "Traceback" not in out.stdout + out.stderr, out.stderr
    assert out.rc == case.rc and case.expect in out.line, (out.rc, out.line, out.stderr[-2000:])
    if case.rc == 2:
        assert out.stderr.strip().count("\n") == 0, f"not one line: {out.stderr!r}"
        if quiet_refusal:
            assert not out.stdout.strip(), f"a refusal printed a result: {out.stdout[:300]!r}"


@pytest.mark.parametrize("case", CASES, ids=case_ids(CASES))
def test_bad_input_outcome(case, scratch):
    check_outcome(case, run_case(case, scratch))


def test_reused_workdir_and_collect_leave_the_rest_alone(scratch):
    """The refusals lose nothing else: the reused clone is untouched, the good family's row is there."""
    assert [p.name for p in (scratch / "reused" / "repo").iterdir()] == ["from-an-earlier-check.txt"]
    out = run_case(next(c for c in CASES if c.expect == "status unreadable"), scratch)
    assert "| g4dn.2xlarge | on-demand | complete |" in out.stdout


def test_audit_gpu_platform_is_recorded_as_cuda(monkeypatch, tmp_path):
    """--platforms cpu,gpu ran on the GPU but the merge read only "cuda": gpu is now recorded as cuda."""
    from jaxci.audit import repo
    from jaxci.commands import audit as cli

    class Seen(Exception):
        pass

    def execute(verdicts, runs, **kw):
        raise Seen(runs.platforms)  # stop here: what matters is what the command would run on

    monkeypatch.setattr(repo, "execute", execute)
    with pytest.raises(Seen) as seen:
        cli.main([str(FIXTURES / "exec"), "--execute", "--platforms", "cpu,gpu", "--output",
                  str(tmp_path / "t.md"), "--no-progress"])
    assert seen.value.args[0] == ("cpu", "cuda")


# ---- jaxci env over random inputs ------------------------------------------------------------------------

POLICIES_BUDGET = None


def _policies():
    global POLICIES_BUDGET
    if POLICIES_BUDGET is None:
        from jaxci.catalogue import load_policies

        POLICIES_BUDGET = load_policies()
    return POLICIES_BUDGET


numbers = st.one_of(st.floats(min_value=1e-12, max_value=1e7), st.floats(allow_nan=True, allow_infinity=True),
                    st.sampled_from([1e-9, 0.01, 1.0, 2900.0, 6000.0, 15360.0, 16000.0, 81920.0, 1e308]))
budgets = st.one_of(st.floats(min_value=0.0, max_value=1.2), st.sampled_from([0.29, 0.58, 0.75, 0.9, 1.0]))


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(kernels=st.integers(min_value=-3, max_value=1500), peak=st.one_of(st.none(), numbers),
       device=st.one_of(st.none(), numbers), budget=budgets, pin_cpu=st.booleans(),
       slowest=st.one_of(st.none(), numbers), slowdown=st.one_of(st.none(), numbers))
def test_env_advice_never_oversubscribes_never_loops_never_crashes(kernels, peak, device, budget, pin_cpu, slowest,
                                                                   slowdown):
    from jaxci.workflows import envadvice
    from jaxci.workflows.envadvice import AdviceError, recommend

    policies, _ = _policies()
    calls = []
    original = envadvice._fits
    envadvice._fits = lambda *a: calls.append(a) or original(*a)
    try:
        advice = recommend(kernels, peak_mib=peak, device_mib=device, pin_cpu=pin_cpu, budget=budget,
                           policies=policies, cache_dir="/c", slowest_cell_s=slowest, slowdown=slowdown)
    except AdviceError as exc:
        assert "\n" not in str(exc) and str(exc)
        return
    finally:
        envadvice._fits = original
    assert len(calls) <= 101  # the safe-N search is bounded by the hundredths, whatever the peak
    share = {"fraction": advice.fraction, "default": envadvice.JAX_DEFAULT_PREALLOCATE}.get(advice.policy, 0.0)
    assert kernels * share <= budget + 1e-12, advice  # never a fraction sum over the budget
    if advice.policy == "fraction" and peak is not None:
        assert advice.fraction * device >= peak * (1 - 1e-9)  # each slice holds the peak
        assert advice.safe_kernels >= kernels
    # no cell time: no number at all (the repository keeps its own); with one, within the rule's bounds
    assert (advice.cell_timeout_s is None) == (slowest is None)
    assert slowest is None or 60 <= advice.cell_timeout_s <= envadvice.MAX_CELL_TIMEOUT_S
    assert all("\n" not in v for v in advice.env.values())


def _text(x) -> str:
    return repr(x) if isinstance(x, float) else str(x)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(kernels=st.one_of(st.integers(min_value=-2, max_value=3000), st.text(max_size=8)),
       peak=st.one_of(numbers, st.text(max_size=8)), device=st.one_of(numbers, st.text(max_size=8)),
       budget=budgets, fmt=st.sampled_from(["text", "github", "json", "shell", "yaml"]))
def test_env_cli_exits_0_or_2_with_one_line(kernels, peak, device, budget, fmt):
    from jaxci.commands.env import main

    argv = [f"--kernels={_text(kernels)}", f"--peak-mib={_text(peak)}", f"--device-memory-mib={_text(device)}",
            f"--memory-budget={budget!r}", f"--format={fmt}"]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = main(argv)
        except SystemExit as exc:  # argparse: a value that is not a number
            rc = exc.code
    assert rc in (0, 2), err.getvalue()
    if rc == 2:
        assert err.getvalue().strip().splitlines()[-1].startswith(("jaxci env: error:", "usage:")) or \
            "error:" in err.getvalue()
    elif fmt == "github":
        lines = out.getvalue().splitlines()
        fractions = [float(v) for k, v in (line.split("=", 1) for line in lines)
                     if k == "XLA_PYTHON_CLIENT_MEM_FRACTION"]
        assert all(f * int(kernels) <= budget + 1e-12 for f in fractions)
    elif fmt == "json":
        assert json.loads(out.getvalue())["kernels"] == int(kernels)


# ---- the table for docs/bad-input.md ---------------------------------------------------------------------

def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", "\\n")


def shown(case: Case) -> str:
    if case.shown:
        return case.shown
    prefix = "".join(f"{k}={v} " for k, v in case.env.items() if v)
    args = [a.replace("{tmp}", "TMP").replace("{fixtures}", "tests/fixtures/lectures") for a in case.args]
    return prefix + "jaxci " + " ".join(map(shlex.quote, args))


def _summary(out: Outcome, tmp: str) -> tuple[str, str]:
    line = out.line.replace(tmp, "TMP").replace(str(REPO), "CHECKOUT") or "(no message)"
    if "Traceback" in out.stdout + out.stderr:
        last = [x for x in out.stderr.splitlines() if x.strip()]
        line = "traceback: " + (last[-1] if last else line)
    return ("hang" if out.rc == -9 else str(out.rc)), line[:300]


#: every bad-input file: its CASES, and setup(tmp) preparing the scratch folder they read
FILES = ["tests.test_bad_input", "tests.test_bad_input_audit", "tests.test_bad_input_numbers_and_waits",
         "tests.test_bad_input_paths", "tests.test_bad_input_reports", "tests.test_bad_input_values"]


def table() -> str:
    """docs/bad-input.md's table: every case of every file with its outcome on this checkout, grouped by command."""
    import importlib

    rows = []
    for name in FILES:
        module = importlib.import_module(name)
        with tempfile.TemporaryDirectory() as tmp:
            module.setup(Path(tmp))
            for case in module.CASES:
                rc, line = _summary(run_case(case, Path(tmp)), tmp)
                rows.append((case.command, f"| {case.command} | `{_cell(shown(case))}` | {rc} | {_cell(line)} |"))
    rows.sort(key=lambda row: row[0])  # stable: a command's cases stay in their files' order
    return "\n".join(["| command | input | exit | message (first line) |", "|---|---|---|---|",
                      *(row for _, row in rows)]) + "\n"


if __name__ == "__main__":
    sys.stdout.write(table())


def test_the_cache_key_step_escapes_the_cache_input(tmp_path):
    """The jax-env action: a `cache` input holding a newline and a workflow command is echoed escaped, so the
    runner sees one ::error annotation and no injected ::warning."""
    import yaml

    action = yaml.safe_load((REPO / ".github" / "actions" / "jax-env" / "action.yml").read_text())
    (step,) = [s for s in action["runs"]["steps"] if s.get("id") == "key"]
    env = {**os.environ, "CACHE": "maybe\n::warning title=injected::gotcha%0A", "MACHINE": "g4dn.2xlarge",
           "PYTHON": sys.executable, "GITHUB_OUTPUT": str(tmp_path / "out"), "RUNNER_OS": "Linux",
           "RUNNER_ARCH": "X64", "GITHUB_RUN_ID": "1", "GITHUB_RUN_ATTEMPT": "1"}
    proc = subprocess.run(["bash", "-c", step["run"]], env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    lines = proc.stdout.splitlines()
    assert len(lines) == 1 and lines[0].startswith("::error title=jax-env::cache must be true or false")
    assert "%0A::warning" in lines[0] and "%250A" in lines[0]


@pytest.mark.parametrize("signum, rc", [(2, 130), (15, 143)])
def test_an_interrupted_audit_says_so_and_ends_the_lecture_processes(tmp_path, signum, rc):
    """SIGINT/SIGTERM during --execute: one line "interrupted", exit 130/143, and the
    daemon a cell double-forked (setsid, PPID 1 once its parent exits) is ended too; the lecture's writes went
    to a scratch working directory, not beside the lecture."""
    import signal
    import time

    import nbformat

    marker = tmp_path / "daemon.pid"
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells.append(nbformat.v4.new_code_cell(
        "import os, time\nopen('written-here.txt', 'w').write('x')\nimport jax\npid = os.fork()\nif pid == 0:\n"
        "    os.setsid()\n    if os.fork() == 0:\n"
        f"        open({str(marker)!r}, 'w').write(str(os.getpid()))\n        time.sleep(600)\n    os._exit(0)\n"
        "os.waitpid(pid, 0)\ntime.sleep(600)\n"))
    lecture = tmp_path / "lectures"
    lecture.mkdir()
    nbformat.write(nb, lecture / "sleeper.ipynb")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JAXCI_", "GITHUB_"))}
    proc = subprocess.Popen([sys.executable, "-m", "jaxci", "audit", str(lecture), "--execute", "--platforms", "cpu",
                             "--no-progress", "--output", str(tmp_path / "t.md")], cwd=REPO, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not marker.exists() and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.2)
    assert marker.exists(), proc.communicate(timeout=30)
    time.sleep(0.5)
    daemon = int(marker.read_text())
    proc.send_signal(signum)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == rc, err
    lines = [x for x in err.splitlines() if x.strip()]
    assert "Traceback" not in err and len(lines) == 1 and "interrupted" in lines[0], err
    time.sleep(0.5)
    state = Path(f"/proc/{daemon}/stat").read_text().rsplit(")", 1)[1].split()[0] \
        if Path(f"/proc/{daemon}").exists() else "gone"
    assert state in ("gone", "Z"), f"the daemon {daemon} survived ({state})"
    assert not (lecture / "written-here.txt").exists()
    if state == "Z":
        os.kill(daemon, signal.SIGKILL)
