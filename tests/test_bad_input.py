"""Every bad input of issue 17, run as a user runs it (a fresh `python -m jaxci` process each), with the
outcome each must have: exit 2 and one line naming what and where, or exit 0 with a stated result; never a
traceback, never a hang (each run has a 60 s limit, a hang guard, not a timing check). Then property-based
checks of `jaxci env` over random kernels, peaks, device sizes and budgets.

`python -m tests.test_bad_input [BEFORE_CHECKOUT]` prints the table of outcomes that docs/bad-input.md
holds; given the path of an older checkout (e.g. `git archive COMMIT | tar -x -C DIR`), it adds a column
with that checkout's outcome of every input.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shlex
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


@dataclass(frozen=True)
class Case:
    issue: str  # the numbered point of issue 17
    args: tuple  # after `jaxci`; "{tmp}" is replaced by a scratch folder prepared by setup()
    rc: int
    expect: str  # a fragment of the line shown in the table
    env: dict = field(default_factory=dict)
    shown: str = ""  # the input as the table shows it, when args are not readable as they are
    script: str = ""  # run this file instead of `-m jaxci`
    before: str = ""  # why the table does not run this case on an older checkout
    pick: str = ""  # on exit 0, show the first line holding this (default: expect)


LONG = "x" * 5000
CASES = [
    Case("1", ("env", "--kernels", "3", "--peak-mib", "6000", "--device-memory-mib", "16000", "--format", "github"),
         2, "at most 2 fit"),
    Case("2", ("env", "--kernels", "2", "--peak-mib", "1e-9", "--device-memory-mib", "16000"), 0,
         "kernels: 2 requested, safe: 90", pick="kernels:"),
    Case("2", ("env", "--kernels", "2", "--peak-mib", "0.01", "--device-memory-mib", "16000"), 0,
         "kernels: 2 requested, safe: 90", pick="kernels:"),
    Case("3", ("env", "--memory-budget", "0.58", "--kernels", "2", "--peak-mib", "2900", "--device-memory-mib",
               "10000"), 0, "kernels: 2 requested, safe: 2", pick="kernels:"),
    Case("3", ("env", "--memory-budget", "0.29", "--kernels", "2", "--peak-mib", "2900", "--device-memory-mib",
               "10000"), 2, "at most 1 fit"),
    Case("3", ("env", "--device-memory-mib", "inf"), 2, "--device-memory-mib inf"),
    Case("3", ("env", "--device-memory-mib", "16000", "--slowest-cell-s", "inf"), 2, "--slowest-cell-s inf"),
    Case("3", ("env", "--device-memory-mib", "16000", "--slowest-cell-s", "1e308"), 2, "--slowest-cell-s 1e+308"),
    *[Case("4", ("machine", "--local", name, "--machine-file", "{tmp}/m.json"), 2, "a machine name is",
           shown=shown) for name, shown in [("../x", ""), ("/abs", ""), ("a/b", ""), (".", ""),
                                            ("a\nb", "jaxci machine --local $'a\\nb'"),
                                            (LONG, "jaxci machine --local x...x (5,000 characters)")]],
    Case("5", ("inputs", "plan", "--bench=(.|.)*z", "--run-id", "1"), 2, "can backtrack through",
         pick="filter "),
    Case("6", ("inputs", "collect", "--matrix", '{"include": [{"family": "c7i.2xlarge"}, {"family": "g4dn.2xlarge"}]}',
               "--incoming", "{tmp}/incoming", "--results", "{tmp}/results"), 0, "status unreadable", pick="| c7i",
         shown="jaxci inputs collect (c7i.2xlarge's status file cut off mid-write, g4dn.2xlarge fine)"),
    Case("6", ("inputs", "collect", "--matrix", "[]", "--incoming", "{tmp}/incoming"), 2, "--matrix: expected"),
    Case("6", ("inputs", "status", "{tmp}/status.json", "end"), 2, "--suite is required"),
    Case("6", ("inputs", "status", "{tmp}/status.json", "end", "--suite", "dense"), 2, "--exit is required"),
    Case("6", ("inputs", "status", "{tmp}/status.json", "end", "--suite", "dense\n## x", "--exit", "0"), 2,
         "is not a suite name", shown="jaxci inputs status S end --suite $'dense\\n## x' --exit 0"),
    Case("7", ("audit", "{fixtures}/exec", "--output", "{tmp}/missing/table.md"), 2, "does not exist"),
    Case("7", ("audit", "{fixtures}/exec", "--summary", "{tmp}"), 2, "is a folder"),
    Case("7", ("audit", "{fixtures}/exec", "--execute", "--cell-timeout", "nan"), 2, "--cell-timeout nan"),
    Case("7", ("audit", "{fixtures}/exec", "--execute", "--platforms", "cpu,tpu"), 2,
         "expected a comma-separated list"),
    Case("8", ("upgrade-check", "--old", "0.10.1", "--new", "0.10.2", "--workdir", "{tmp}/reused"), 2,
         "already holds"),
    Case("8", ("upgrade-check", "--old", "0.10.1", "--new", "0.10.2"), 2, "JAXCI_OFFLINE=1",
         env={"JAXCI_OFFLINE": "1", "PIP_FIND_LINKS": ""},
         before="not run: JAXCI_OFFLINE was not read, so the whole check started (clone, virtualenvs, pip)"),
    Case("9", ("env", "--pin-cpu", "--machine", "nosuch"), 2, "unknown machine"),
    Case("9", ("machine", "--local", "ok-name", "--machine-file", "{tmp}/m.json"), 2, "unknown backend 'rocm'",
         env={"JAXCI_BACKEND": "rocm"}),
    Case("9", ("nonexistent.whl",), 2, "unknown backend '../cpu'", env={"JAXCI_BACKEND": "../cpu"},
         script="env_matrix/install.py", shown="JAXCI_BACKEND=../cpu python env_matrix/install.py WHEEL"),
    Case("9", ("report", "{tmp}/empty"), 2, "no asv result values"),
    Case("9", ("audit", "{tmp}/empty"), 2, "no lectures"),
]


def setup(tmp: Path) -> None:
    """The scratch files the cases read: a cut-off status file, a reused work dir, empty folders."""
    from jaxci.ci.status import end as status_end, init as status_init

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


@dataclass
class Outcome:
    rc: int
    line: str  # the message line (rc != 0) or the line of the stated result (rc 0)
    stdout: str
    stderr: str


FIXTURES = REPO / "tests" / "fixtures" / "lectures"


def run_case(case: Case, tmp: Path, repo: Path = REPO) -> Outcome:
    """One case in a fresh process, with `repo`'s jaxci (this checkout unless another is given)."""
    args = [a.replace("{tmp}", str(tmp)).replace("{fixtures}", str(FIXTURES)) for a in case.args]
    cmd = [sys.executable, case.script, *args] if case.script else [sys.executable, "-m", "jaxci", *args]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JAXCI_", "GITHUB_"))}
    env.update({k: v for k, v in case.env.items() if v}, PYTHONPATH=str(repo))
    for k in [k for k, v in case.env.items() if not v]:
        env.pop(k, None)
    try:
        proc = subprocess.run(cmd, cwd=repo, env=env, capture_output=True, text=True, timeout=LIMIT_S)
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


@pytest.mark.parametrize("case", CASES, ids=[f"{c.issue}-{i}" for i, c in enumerate(CASES)])
def test_bad_input_outcome(case, scratch):
    out = run_case(case, scratch)
    assert "Traceback" not in out.stdout + out.stderr, out.stderr
    assert out.rc == case.rc and case.expect in out.line, (out.rc, out.line, out.stderr[-2000:])
    if case.rc == 2:
        assert out.stderr.strip().count("\n") == 0, f"not one line: {out.stderr!r}"


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

    def execute(verdicts, platforms, **kw):
        raise Seen(platforms)  # stop here: what matters is what the command would run on

    monkeypatch.setattr(repo, "execute", execute)
    with pytest.raises(Seen) as seen:
        cli.main([str(FIXTURES / "exec"), "--execute", "--platforms", "cpu,gpu", "--output",
                  str(tmp_path / "t.md"), "--no-progress"])
    assert seen.value.args[0] == ["cpu", "cuda"]


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
    from jaxci.ci import envadvice
    from jaxci.ci.envadvice import AdviceError, recommend

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
    assert 60 <= advice.cell_timeout_s <= envadvice.MAX_CELL_TIMEOUT_S
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
        fractions = [float(v) for k, v in (line.split("=", 1) for line in lines) if k == "XLA_PYTHON_CLIENT_MEM_FRACTION"]
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
    line = out.line.replace(tmp, "TMP") or "(no message)"
    if "Traceback" in out.stdout + out.stderr:
        last = [x for x in out.stderr.splitlines() if x.strip()]
        line = "traceback: " + (last[-1] if last else line)
    return ("hang" if out.rc == -9 else str(out.rc)), line[:300]


def table(before: Path | None = None) -> str:
    with tempfile.TemporaryDirectory() as tmp:
        setup(Path(tmp))
        head = "| issue | input | exit | message (first line) |"
        rows = [head + (" before: exit, message |" if before else ""), "|---|---|---|---|" + ("---|" if before else "")]
        for case in CASES:
            rc, line = _summary(run_case(case, Path(tmp)), tmp)
            row = f"| {case.issue} | `{_cell(shown(case))}` | {rc} | {_cell(line)} |"
            if before and case.before:
                row += f" {_cell(case.before)} |"
            elif before:
                old_rc, old_line = _summary(run_case(case, Path(tmp), repo=before), tmp)
                row += f" {old_rc}: {_cell(old_line)} |"
            rows.append(row)
    return "\n".join(rows) + "\n"


if __name__ == "__main__":
    sys.stdout.write(table(Path(sys.argv[1]).resolve() if len(sys.argv) > 1 else None))
