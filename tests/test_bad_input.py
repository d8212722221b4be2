"""Bad input to `jaxci env`, `machine`, `inputs`, `audit`, `upgrade-check`, `report`, `import`, `capture`, the
install step and the GPU capture import, each case run as a user runs it (tests/badinput.py): exit 2 and one line
naming what and where, or exit 0 with a stated result; never a traceback, never a hang. Then property-based checks
of `jaxci env` over random kernels, peaks, device sizes and budgets.

Every bad-input file's cases are named by the command they run (test ids `jaxci-env-3`, `pytest -k jaxci-audit`
selects one command's cases in every file); `python -m tests.test_bad_input` prints the table of docs/bad-input.md:
every case of every file, grouped by command, with its outcome on this checkout.
"""

from __future__ import annotations

import contextlib
import functools
import io
import json
import math
import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.badinput import FIXTURES, REPO, Case, outcome_tests, run_case, table, user_env
from tests.test_import_transaction import BENCH, capture_folder, results_tree, set_json, set_result

LONG = "x" * 5000
CASES = [
    Case(("env", "--kernels", "3", "--peak-mib", "6000", "--device-memory-mib", "16000", "--format", "github"),
         2, "at most 2 fit"),
    *[Case(("env", "--kernels", "2", "--peak-mib", peak, "--device-memory-mib", "16000"), 0,
           "kernels: 2 requested, safe: 3", pick="kernels:") for peak in ("1e-9", "0.01")],
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
    Case(("audit", "{fixtures}/exec", "--execute", "--platforms", "cpu,npu"), 2,
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

# ---- captures to import, results folders, audit books: CAP is made by setup_captures(), a folder each -----------
CAP = "{tmp}/captures"
NEST = "(" * 1000 + "a" + ")" * 1000
SHOWN = {"import": "jaxci import CAPTURE ({}) --results R", "report": "jaxci report R ({})",
         "audit": "jaxci audit D ({})"}


def on(command: str, folder: str, rc: int, expect: str, what: str, *options: str) -> Case:
    """A case reading the folder under CAP (a capture, results or a book), shown by what that folder holds."""
    results = ("--results", f"{CAP}/results") if command == "import" else ()
    return Case((command, f"{CAP}/{folder}", *results, *options), rc, expect, shown=SHOWN[command].format(what))


CASES += [
    on("import", "cap-version", 2, "would orphan those results",
       "benchmark versions differ from the ones results/ uses"),
    on("import", "cap-passwd", 2, "is a symbolic link", "summary.md -> /etc/passwd"),
    on("import", "cap-started", 2, "started '/../../../../../../tmp/pr/ESCAPED_started' is not a time like",
       '"started": "/../../../../../../tmp/pr/ESCAPED_started"'),
    on("import", "cap-commit", 2, "facts.commit '/../..' is not a hex commit", 'facts.commit "/../.."'),
    on("import", "cap-facts", 2, "'facts' is 'oops', not a dict", '"facts": "oops"'),
    on("import", "cap-steps", 2, "steps must be a list", '"steps": ["a", "b"]'),
    on("import", "cap-newline", 2, "a machine name is", '"machine": "a\\nb"'),
    on("import", "cap-shell", 2, "a machine name is", '"machine": "x;rm -rf ~ $(id)`id`|&"'),
    on("import", "cap-big", 2, "over the limit of 4.0 MiB", "a 5 MiB summary.md; the limit is 4 MiB"),
    on("import", "cap-t4-h200", 2, "has a Tesla T4 in the catalogue but machine.json records '1 x NVIDIA H200'",
       "g4dn.2xlarge whose machine.json says 1 x NVIDIA H200"),
    *[on("import", f"cap-value-{tag}", 2, frag, f"a time of {tag}")
      for tag, frag in (("string", "not a number"), ("inf", "not a number"), ("-inf", "not a number"),
                        ("-1", "never negative"), ("dict", "not a number"))],
    Case(("import", f"{CAP}/cap-ok", "--results", f"{CAP}/file"), 2, "not a folder",
         shown="jaxci import CAPTURE --results FILE"),
    Case(("import", f"{CAP}/cap-ok", "--results", f"{CAP}/corrupt"), 2, "fix or remove it first",
         shown="jaxci import CAPTURE --results R (R/benchmarks.json cut off)"),
    Case(("import", f"{CAP}/cap-scalar", "--results", f"{CAP}/scalar"), 2, "do not have the shape",
         shown="jaxci import CAPTURE --results R (R's row holds a scalar where the capture has a list)"),
    on("import", "cap-empty-results", 2, "malformed", '"results": [] in the results file'),
    on("import", "cap-deep", 2, "nested", "capture.json nested 100,000 deep"),
    on("import", "cap-measured-nothing", 2, "results.tar.gz holds no results",
       "a results.tar.gz with nothing in it (no step ran)"),
    Case(("import", f"{CAP}/two.tar.gz", "--results", f"{CAP}/results"), 2, "2 capture folders inside",
         shown="jaxci import TARBALL (two capture folders) --results R"),
    on("report", "fifo-results", 2, "FIFO", "R/m/machine.json a FIFO"),
    Case(("report", f"{CAP}/zz-results"), 0, "zz.json: not loaded", pick="zz.json",
         shown="jaxci report R (R/m/zz.json a FIFO, the rest fine)"),
    on("report", "zero-results", 2, "character device", "R/m/a.json a link to /dev/zero, no other results"),
    Case(("env", "--results", f"{CAP}/fifo-results", "--machine", "m"), 2, "FIFO",
         shown="jaxci env --results R --machine m (R/m/machine.json a FIFO)"),
    on("audit", "fifo-lecture", 1, "is a FIFO", "D/a.md a FIFO"),
    on("audit", "fifo-config", 0, "FIFO", "D/_config.yml a FIFO", "--format", "json"),
    on("audit", "laughs", 0, "alias bomb", "D/myst.yml: a billion laughs", "--format", "json"),
    on("audit", "laughs-ci", 0, "alias bomb", "D/.github/workflows/w.yml: a billion laughs"),
    on("audit", "recursive-ci", 0, "recursive alias", "a workflow with a recursive alias"),
    Case(("report", f"{CAP}/neg-results"), 0, "unreadable value -1.0", pick="unreadable value",
         shown="jaxci report R (a time of -1; inf likewise)"),
    *[Case(("report", f"{CAP}/good-results", option, f"{CAP}/{to}"), 2, expect, shown=f"jaxci report R {option} {what}")
      for option, to, expect, what in (("--out", "file", "is a file; give a folder", "FILE"),
                                       ("--html", "file", "is a file; give a folder", "FILE"),
                                       ("--out", "outdir", "is a folder or special file", "D (D/findings.md a folder)"),
                                       ("--html", "htmldir", "not UTF-8", "D (D/index.html binary)"),
                                       ("--out", "good-results/m", "inside the results folder", "R/m"))],
    on("report", "loader-nomachine", 2, "no machine name", "machine.json without machine"),
    on("report", "loader-date", 2, "is not a time", "a date of 1e300"),
    on("report", "loader-version", 2, "older benchmark version", "changed benchmark versions"),
    on("report", "loader-notdict", 0, "is a list, not an object", "a benchmarks.json entry not a dict"),
    on("report", "loader-short", 0, "param lists but", "a benchmarks.json entry shortened"),
    on("audit", "timeout-abc", 0, "execute.timeout", "_config.yml timeout: abc", "--format", "json"),
    on("audit", "exclude-5", 0, "exclude_patterns", "_config.yml exclude_patterns: 5", "--format", "json"),
    on("audit", "steps-7", 0, "not a list of steps", "a workflow job with steps: 7"),
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
    """Hostile captures, results folders with special files, audit books."""
    root.mkdir()
    (root / "file").write_text("x")
    shutil.copytree(results_tree(root / "t", machine="local-old", cpu_value=3e-5), root / "results")

    def cap(name, manifest=None, keys=None, value=None, summary=b"# summary\n", **kw):
        """A capture of fresh results, with the item at `keys` of its results file set to value."""
        res = results_tree(root / "src" / name, **kw)
        if keys:
            set_result(res, keys, value)
        return capture_folder(root / name, res, manifest, summary)

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
        cap(f"cap-value-{tag}", keys=("results", BENCH, 0, 0), value=v)
    cap("cap-empty-results", keys=("results",), value=[])
    (cap("cap-deep") / "capture.json").write_text("[" * 100_000 + "]" * 100_000)
    with tarfile.open(cap("cap-measured-nothing") / "results.tar.gz", "w:gz"):
        pass
    with tarfile.open(root / "two.tar.gz", "w:gz") as tar:
        tar.add(ok, arcname="a")
        tar.add(ok, arcname="b")
    shutil.copytree(root / "results", root / "corrupt")
    (root / "corrupt" / "benchmarks.json").write_text('{"version": 2, "x": ')
    cap("cap-scalar")  # the target holds the same results file with a scalar where the capture has a list
    shutil.copytree(root / "results", root / "scalar")
    shutil.copytree(root / "src" / "cap-scalar" / "results" / "local-x", root / "scalar" / "local-x")
    set_result(root / "scalar", ("results", BENCH, 0), 1e-5)

    def results_folder(name, keys=None, value=None):
        """Fresh results of machine m, with the item at `keys` of its results file set to value."""
        out = root / name
        shutil.copytree(results_tree(root / "src" / name, machine="m"), out)
        if keys:
            set_result(out, keys, value, machine="m")
        return out

    fifo = results_folder("fifo-results")
    (fifo / "m" / "machine.json").unlink()
    os.mkfifo(fifo / "m" / "machine.json")
    os.mkfifo(results_folder("zz-results") / "m" / "zz.json")
    zero = results_folder("zero-results")
    for path in (zero / "m").glob("*-*.json"):
        path.unlink()
    (zero / "m" / "a.json").symlink_to("/dev/zero")
    results_folder("neg-results", ("results", BENCH, 0, 0), -1.0)
    results_folder("good-results")
    (root / "outdir" / "findings.md").mkdir(parents=True)
    (root / "htmldir").mkdir()
    (root / "htmldir" / "index.html").write_bytes(b"\xff\xfe\x00binary")
    for tag, keys, value in (("notdict", (BENCH,), ["not", "a", "dict"]), ("short", (BENCH, "param_names"), ["dtype"]),
                             ("version", (BENCH, "version"), "changed")):
        set_json(results_folder(f"loader-{tag}") / "benchmarks.json", keys, value)
    results_folder("loader-date", ("date",), 1e300)
    info = json.loads((results_folder("loader-nomachine") / "m" / "machine.json").read_text())
    info.pop("machine")
    (root / "loader-nomachine" / "m" / "machine.json").write_text(json.dumps(info))
    md = next(p for p in sorted((FIXTURES / "exec").iterdir()) if p.suffix == ".md")

    def book(name, config=None, myst=None, workflow=None):
        """A one-lecture book with the given _config.yml, myst.yml and .github/workflows/w.yml."""
        d = root / name
        d.mkdir()
        shutil.copy(md, d / md.name)
        for path, text in (("_config.yml", config), ("myst.yml", myst), (".github/workflows/w.yml", workflow)):
            if text is not None:
                (d / path).parent.mkdir(parents=True, exist_ok=True)
                (d / path).write_text(text)
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


def _results_folder(case: Case, scratch: Path) -> Path | None:
    """What an import case's --results names: a refused import leaves it byte for byte as it was."""
    return Path(case.args[-1].replace("{tmp}", str(scratch))) if case.args[0] == "import" else None


scratch, test_bad_input_outcome = outcome_tests(CASES, setup, kept=_results_folder)


def test_reused_workdir_and_collect_leave_the_rest_alone(scratch):
    """The refusals lose nothing else: the reused clone is untouched, the good family's row is there."""
    assert [p.name for p in (scratch / "reused" / "repo").iterdir()] == ["from-an-earlier-check.txt"]
    out = run_case(next(c for c in CASES if c.expect == "status unreadable"), scratch)
    assert "| g4dn.2xlarge | on-demand | complete |" in out.stdout


def test_audit_gpu_platform_is_recorded_as_cuda(monkeypatch, tmp_path):
    """--platforms cpu,gpu runs on the GPU under the name the merge reads: cuda."""
    from jaxci.audit import repo
    from jaxci.commands import audit as cli

    class Seen(Exception):
        pass

    def execute(verdicts, runs, **kw):
        raise Seen(runs.platforms)  # stop here: what matters is what the command would run on

    monkeypatch.setattr(repo, "execute", execute)
    monkeypatch.setenv("JAXCI_ACCELERATOR", "cuda")   # a machine with a GPU: on one without, it is refused
    with pytest.raises(Seen) as seen:
        cli.main([str(FIXTURES / "exec"), "--execute", "--platforms", "cpu,gpu", "--output",
                  str(tmp_path / "t.md"), "--no-progress"])
    assert seen.value.args[0] == ("cpu", "cuda")


@pytest.mark.parametrize("platforms, accelerator, said", [
    ("tpu", "none", "--platforms tpu: no accelerator on this machine"),
    ("cpu,gpu", "tpu", "--platforms cuda: this machine's accelerator is tpu"),
    (None, "junk", "JAXCI_ACCELERATOR='junk'")])
def test_an_accelerator_the_machine_lacks_is_refused_before_anything_runs(platforms, accelerator, said, monkeypatch,
                                                                          tmp_path, capsys):
    """Issue 83 item 2: a NumPy lecture run under --platforms tpu on a CPU host was recorded as a completed TPU run,
    which accel-score scored as TPU data. Now: one line, exit 2, nothing written."""
    from jaxci.audit import repo
    from jaxci.commands import audit as cli

    def execute(verdicts, runs, **kw):
        raise AssertionError("nothing may run")

    monkeypatch.setattr(repo, "execute", execute)
    monkeypatch.setenv("JAXCI_ACCELERATOR", accelerator)
    out = tmp_path / "o.json"
    chosen = ["--platforms", platforms] if platforms else []
    assert cli.main([str(FIXTURES / "exec"), "--execute", *chosen, "--format", "json", "--output", str(out),
                     "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and said in err and not out.exists()


# ---- jaxci env over random inputs ------------------------------------------------------------------------

@functools.cache
def _policies():
    from jaxci.catalogue import load_policies

    return load_policies()


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
    with mock.patch.object(envadvice, "_fits", wraps=envadvice._fits) as fits:
        try:
            advice = recommend(kernels, peak_mib=peak, device_mib=device, pin_cpu=pin_cpu, budget=budget,
                               policies=policies, cache_dir="/c", slowest_cell_s=slowest, slowdown=slowdown)
        except AdviceError as exc:
            assert "\n" not in str(exc) and str(exc)
            return
    assert fits.call_count <= 101  # the safe-N search is bounded by the hundredths, whatever the peak
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
    proc = subprocess.Popen([sys.executable, "-m", "jaxci", "audit", str(lecture), "--execute", "--platforms", "cpu",
                             "--no-progress", "--output", str(tmp_path / "t.md")], cwd=REPO, env=user_env(),
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


if __name__ == "__main__":
    sys.stdout.write(table())
