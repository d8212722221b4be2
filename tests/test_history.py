"""`jaxci history` (pin commits per JAX release, tags, resumable backfill) and the release-regression analysis."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from jaxci.analysis.releases import release_steps, releases_md, releases_measured
from jaxci.commands import history as history_cmd
from jaxci.results import history, release_index
from jaxci.results.records import Record
from jaxci.util import signals
from jaxci.util.pins import pin_jax
from tests.asvutil import TWO_RELEASES, share_environments
from tests.suiteutil import gone
from tests.synth import SynthResults

REPO = Path(__file__).resolve().parent.parent
DATES = {"0.11.0": "2026-07-16T18:58:25Z", "0.11.1": "2026-08-17T20:31:29Z", "0.11.2": "2026-09-17T23:43:35Z"}
RELEASES = list(DATES)
#: the package index's answer, fixed (jaxci history --index-snapshot): a new JAX release never moves a test
INDEX = REPO / "tests" / "fixtures" / "jax-release-index.json"


def _git(repo, *args):
    """git in `repo`, as a committer named t."""
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=repo, check=True,
                          capture_output=True, text=True).stdout.strip()


def _results(repo):
    """repo/results with machine m's folder and a benchmarks.json of one benchmark, loops.F.time_warm."""
    results = repo / "results"
    (results / "m").mkdir(parents=True)
    (results / "benchmarks.json").write_text(json.dumps({"loops.F.time_warm": {}, "version": 2}))
    return results


def _fake_run(broken, reason, calls):
    """A stand-in for history.run_release: a real asv results file per commit, `reason` for one in `broken`."""
    def run(runs, commit, bench, again=False):
        calls.append(commit)
        if commit in broken:
            return False, reason
        SynthResults(runs.repo, commit=commit).machine(runs.machine, kind="local") \
            .add(runs.machine, "loops.F.time_warm", [], [], lambda: 1.0).save()
        return True, ""

    return run


@pytest.fixture
def repo(tmp_path):
    """A small repository shaped like this one: env_matrix pins and one other file, one commit."""
    root = tmp_path / "repo"
    for backend, jax in (("cpu", "jax"), ("cuda13", "jax[cuda13]")):
        d = root / "env_matrix" / backend
        d.mkdir(parents=True)
        (d / "requirements.txt").write_text(f"# pins\n{jax}==0.12.0.1\njaxlib==0.12.0.1\nnumpyro==0.22.0\n")
    (root / "benchmarks.py").write_text("x = 1\n")
    _git(root.parent, "init", "-q", str(root))
    _git(root, "add", ".")
    _git(root, "commit", "-q", "-m", "base")
    return root


def test_parse_releases_checks_and_orders():
    assert history.parse_releases("0.11.2, 0.11.0,0.11.2") == ["0.11.0", "0.11.2"]
    for bad in ("0.11.x", "", "0.11.0,;rm -rf /", "v0.11.0"):
        with pytest.raises(history.HistoryError):
            history.parse_releases(bad)


def test_pins_text_moves_jax_and_frees_numpyro():
    base = "# c\njax[cuda13]==0.12.0.1\njaxlib==0.12.0.1\nnumpyro==0.22.0\n"
    text = pin_jax(base, "0.5.2", jaxlib=False, numpyro="0.19.0")
    assert "jax[cuda13]==0.5.2" in text and "jaxlib" not in text and "numpyro==0.19.0" in text
    assert "jaxlib==0.11.1" in pin_jax(base, "0.11.1", jaxlib=True, numpyro="0.22.0")
    assert "numpyro" not in pin_jax(base, "0.4.1", jaxlib=True, numpyro=None)


def test_numpyro_is_the_newest_that_declares_support():
    specs = {"0.15.0": ">=0.4.14", "0.19.0": ">=0.4.25", "0.22.0": ">=0.7.0", "0.2.0": "==0.1.44"}
    assert release_index.numpyro_for("0.4.18", specs) == "0.15.0"
    assert release_index.numpyro_for("0.5.2", specs) == "0.19.0"
    assert release_index.numpyro_for("0.12.0.1", specs) == "0.22.0"
    assert release_index.numpyro_for("0.1.0", specs) is None
    meta = ("Name: numpyro\nRequires-Dist: jaxlib>=0.7.0\nRequires-Dist: jax>=0.7.0\n"
            "Requires-Dist: jax[cuda13]>=0.7.0; extra == 'cuda13'\n")
    assert release_index._jax_spec(meta) == ">=0.7.0"
    assert release_index._jax_spec("Requires-Dist: jax (==0.1.44)\n") == "==0.1.44"


def test_chain_is_linear_dated_tagged_and_deterministic(repo):
    chain = history.build_chain(repo, "HEAD", RELEASES, DATES, set(RELEASES), {v: "0.22.0" for v in RELEASES})
    base = _git(repo, "rev-parse", "HEAD")
    assert chain.base == base
    assert _git(repo, "rev-list", "--first-parent", f"{base}..{history.BRANCH}").split() == \
        [chain.commits[v] for v in reversed(RELEASES)]
    for v in RELEASES:
        commit = chain.commits[v]
        changed = _git(repo, "diff", "--name-only", f"{commit}^", commit).split()
        assert set(changed) <= {"env_matrix/cpu/requirements.txt", "env_matrix/cuda13/requirements.txt"}
        pins = _git(repo, "show", f"{commit}:env_matrix/cpu/requirements.txt")
        assert f"jax=={v}" in pins and "numpyro==0.22.0" in pins
        assert _git(repo, "log", "-1", "--format=%cI", commit).startswith(DATES[v][:19])
        assert _git(repo, "cat-file", "-t", f"jax-v{v}") == "tag"  # annotated
        assert _git(repo, "rev-parse", f"jax-v{v}^{{commit}}") == commit
    # the working tree and main are untouched
    assert _git(repo, "rev-parse", "HEAD") == base and not _git(repo, "status", "--porcelain")
    again = history.build_chain(repo, base, RELEASES, DATES, set(RELEASES), {v: "0.22.0" for v in RELEASES})
    assert again.commits == chain.commits and not again.moved_tags
    assert history.existing_base(repo) == base


def test_missing_date_is_an_error(repo):
    with pytest.raises(history.HistoryError, match="0.11.1"):
        history.build_chain(repo, "HEAD", ["0.11.1"], {}, set())


def test_choose_is_newest_first_and_validates():
    every = ["0.10.2", "0.11.0", "0.11.1", "0.11.2"]
    assert history.choose(every, None, None) == list(reversed(every))
    assert history.choose(every, None, "0.11.1") == ["0.11.2", "0.11.1"]
    with pytest.raises(history.HistoryError, match="0.9.9"):
        history.choose(every, ["0.9.9"], None)
    with pytest.raises(history.HistoryError):
        history.choose(every, None, "1.0.0")


def test_backfill_goes_on_after_a_failure_and_resumes(repo, monkeypatch, capsys):
    chain = history.build_chain(repo, "HEAD", RELEASES, DATES, set(RELEASES))
    results, calls = _results(repo), []
    monkeypatch.setattr(history, "run_release", _fake_run({chain.commits["0.11.1"]}, "install failed: No matching "
                                                          "distribution found for jaxlib==0.11.1", calls))
    todo = ["0.11.2", "0.11.1", "0.11.0"]
    out = history.backfill(history.AsvRuns(repo, "m", {}, results), todo, chain, [])
    assert [(o.release, o.status) for o in out] == [("0.11.2", "measured"), ("0.11.1", "failed"),
                                                    ("0.11.0", "measured")]
    assert "No matching distribution" in out[1].reason
    state = json.loads(history.state_path("m", repo).read_text())
    assert state["releases"]["0.11.1"]["status"] == "failed" and state["base"] == chain.base
    printed = capsys.readouterr().out
    assert "release 3 of 3" in printed and "left" in printed
    calls.clear()
    again = history.backfill(history.AsvRuns(repo, "m", {}, results), todo, chain, [])
    assert [o.status for o in again] == ["skipped", "failed", "skipped"]
    assert calls == [chain.commits["0.11.1"]]  # only the failed release is tried again


def _rec(version, value, q=None, n=10_000, machine="m", bench="loops.ForiAccumulate.time_warm"):
    q25, q75 = (value * (1 - q), value * (1 + q)) if q is not None else (None, None)
    return Record(machine=machine, benchmark=bench, params={"n": n, "dtype": "float64", "device": "cpu"},
                  status="ok", value=value, unit="seconds", commit=version, date="2026-01-01T00:00:00Z",
                  jax_version=version, jax_source="test", env_name="e", q25=q25, q75=q75, file=f"{version}.json")


def test_release_steps_known_answer():
    recs = [_rec("0.11.0", 1e-4, 0.05), _rec("0.11.1", 3e-2, 0.05), _rec("0.11.2", 1.1e-4, 0.05),
            _rec("0.12.0.1", 1.0e-4, 0.05)]
    steps = release_steps(recs, 1.3)
    assert len(steps) == 2
    reg, imp = steps
    assert (reg.kind, reg.before, reg.after, reg.undone_in) == ("regression", "0.11.0", "0.11.1", "0.11.2")
    assert reg.ratio == pytest.approx(300)
    assert (imp.kind, imp.before, imp.after, imp.undone_in) == ("improvement", "0.11.1", "0.11.2", "0.11.0")
    text = releases_md(steps, releases_measured(recs), 1.3)
    assert "| loops.ForiAccumulate.time_warm | n=10000, dtype=float64, device=cpu | 0.11.0 | 0.11.1 | x300 |" in text
    assert "yes, in 0.11.2" in text
    # the fix is the regression's "undone" cell, not a second row: each regression is listed once
    assert "| 0.11.1 | 0.11.2 |" not in text and text.count("loops.ForiAccumulate.time_warm |") == 1


def test_release_steps_noise_and_versions_order():
    # x1.5 but the interquartile ranges overlap: noise, not a regression
    assert release_steps([_rec("0.11.0", 1.0, 0.3), _rec("0.11.1", 1.5, 0.3)], 1.3) == []
    # ordered by version, not by text: 0.9.2 -> 0.10.0 is consecutive; a regression never undone says so
    steps = release_steps([_rec("0.10.0", 5.0, 0.01), _rec("0.9.2", 1.0, 0.01)], 1.3)
    assert [(s.before, s.after, s.undone_in, s.last) for s in steps] == [("0.9.2", "0.10.0", None, "0.10.0")]
    measured = releases_measured([_rec("0.10.0", 5.0), _rec("0.9.2", 1.0)])
    assert "no: x5 at 0.10.0" in releases_md(steps, measured, 1.3)  # today's ratio against 0.9.2


def test_one_release_says_not_measured():
    assert releases_md([], releases_measured([_rec("0.12.0.1", 1.0)]), 1.3).startswith("Not measured")


def _online() -> bool:
    if os.environ.get("JAXCI_OFFLINE"):
        return False
    try:
        release_index.index_versions("jaxlib")
        return True
    except Exception:
        return False


@pytest.mark.slow
def test_history_end_to_end_two_releases(tmp_path, release_environments):
    """The real thing on a tiny case: a clone, two JAX releases, one benchmark class, stock asv compare."""
    if not _online():
        pytest.skip("no package index (offline or JAXCI_OFFLINE set): history installs JAX releases from PyPI")
    old, new = TWO_RELEASES
    clone = tmp_path / "clone"
    # main alone: no jax-v* tag or jax-history branch that a command made in this checkout (bench.sh restores
    # them), so the chain is built over this commit, whatever ran here before
    subprocess.run(["git", "clone", "-q", "--no-local", "--single-branch", "--no-tags", str(REPO), str(clone)],
                   check=True)
    share_environments(clone, release_environments)
    env = dict(os.environ, HOME=str(tmp_path), PYTHONPATH=str(clone), JAXCI_SCALE="ci",
               PIP_CACHE_DIR=os.environ.get("PIP_CACHE_DIR", str(Path.home() / ".cache" / "pip")),
               UV_CACHE_DIR=os.environ.get("UV_CACHE_DIR", str(Path.home() / ".cache" / "uv")))
    env.pop("JAX_PLATFORMS", None)
    # --max-load: never measure a release again for the load; the running tests load this machine past the quiet
    # rule, which would only multiply the asv runs (the rule itself: test_confirmed_steps, with a stand-in asv)
    cmd = [sys.executable, "-m", "jaxci", "history", "--releases", f"{old},{new}", "--max-load", "10000",
           "--index-snapshot", str(INDEX),
           "--bench", r"loops\.ForiAccumulate\.time_warm", "--machine", "hist-test"]
    subprocess.run([sys.executable, "-m", "jaxci", "machine", "--local", "hist-test"], cwd=clone, env=env, check=True)
    proc = subprocess.run(cmd, cwd=clone, env=env, capture_output=True, text=True, timeout=1500)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "2 measured" in proc.stdout, proc.stdout
    state = json.loads((clone / ".jaxci" / "history" / "hist-test.json").read_text())
    assert {v: s["status"] for v, s in state["releases"].items()} == {new: "measured", old: "measured"}
    # resumable: a second run measures nothing
    again = subprocess.run(cmd, cwd=clone, env=env, capture_output=True, text=True, timeout=600)
    assert "0 measured, 2 already measured" in again.stdout, again.stdout
    asv = str(Path(sys.executable).with_name("asv"))
    cmp = subprocess.run([asv, "compare", f"jax-v{old}", f"jax-v{new}", "--machine", "hist-test"], cwd=clone,
                         env=env, capture_output=True, text=True, timeout=300)
    assert cmp.returncode == 0, cmp.stderr
    assert "loops.ForiAccumulate.time_warm" in cmp.stdout
    # the JAX version of each point comes from the pin at its commit, read in the clone that holds them
    code = ("from jaxci.results.records import load_results; print(sorted({r.jax_version for r in "
            "load_results('results').records if r.benchmark == 'loops.ForiAccumulate.time_warm' and r.ok "
            "and r.machine == 'hist-test'}))")  # the clone also holds the committed reference history
    got = subprocess.run([sys.executable, "-c", code], cwd=clone, env=env, capture_output=True, text=True, check=True)
    assert got.stdout.strip() == str([old, new])


def test_validate_workflow_input(tmp_path):
    out = tmp_path / "out"
    for good in (" 0.11.1,0.11.0 ", "all", ""):
        assert history_cmd.main(["--validate", good, "--github-output", str(out)]) == 0
    assert out.read_text() == "history=0.11.0,0.11.1\nhistory=all\nhistory=\n"
    for bad in ("0.11.1\nevil=1", "$(id)", "0.11.x", "latest"):
        assert history_cmd.main(["--validate", bad, "--github-output", str(out)]) == 2
    assert out.read_text().count("history=") == 3


def test_a_release_whose_every_benchmark_failed_is_recorded_failed(repo, monkeypatch):
    chain = history.build_chain(repo, "HEAD", ["0.11.0"], DATES, {"0.11.0"})
    results = repo / "results"
    (results / "m").mkdir(parents=True)
    commit = chain.commits["0.11.0"]

    def crashed(runs, commit_, bench, again=False):
        runs.log_path.write_text("==== asv run\nasv: benchmark failed (exit status -11)\n")
        SynthResults(runs.repo, commit=commit_).machine(runs.machine, kind="local") \
            .add(runs.machine, "loops.F.time_warm", ["n"], [[1, 2]], lambda n: None if n == 1 else math.nan).save()
        return True, "some benchmarks failed (asv exit 2; see the log)"

    monkeypatch.setattr(history, "run_release", crashed)
    (out,) = history.backfill(history.AsvRuns(repo, "m", {}, results), ["0.11.0"], chain, [])
    assert out.status == "failed" and "exit status -11" in out.reason
    assert history.any_value(results, "m", commit) is False


def test_failure_reason_names_the_error_not_a_skip():
    log = ("·· Error running /e/bin/python /x/asv/benchmark.py discover /b /tmp/r.json (exit status 1)\n"
           "   AttributeError: module 'numpy' has no attribute 'trapz'. Did you mean: 'trace'?\n"
           "               asv: skipped: NotImplementedError('large case: skipped at JAXCI_SCALE=ci')\n")
    assert history._last_error(log).startswith("AttributeError: module 'numpy' has no attribute 'trapz'")


# ---- robust backfill: inputs, signals, the chain's refs, the state file -----------------------------------

@pytest.mark.parametrize("argv", [["--bench", "["], ["--bench", "(a+)+$"], ["--bench=-x"],
                                  ["--machine", "../x"], ["--machine", "a/b"],
                                  ["--releases", "1" * 5000 + ".0"], ["--since", "0." + "9" * 5000]])
def test_bad_arguments_give_one_line_and_exit_2(argv, capsys, monkeypatch):
    assert history_cmd.main([*argv, "--dry-run", "--index-snapshot", str(INDEX)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("jaxci history: ") and len(err) < 400, err


def test_a_5000_digit_version_is_refused_not_a_traceback():
    with pytest.raises(history.HistoryError, match="not a JAX release"):
        history.parse_releases("0." + "1" * 5000)
    assert history_cmd.main(["--validate", "1" * 5000 + ".1"]) == 2
    assert history.parse_releases("0.12.0.1") == ["0.12.0.1"]


def test_sigint_while_building_the_chain_moves_no_ref(repo, monkeypatch):
    first = history.build_chain(repo, "HEAD", RELEASES, DATES, set(RELEASES))
    before = {r: _git(repo, "rev-parse", f"refs/tags/jax-v{r}^{{commit}}") for r in RELEASES}
    (repo / "benchmarks.py").write_text("x = 2\n")
    _git(repo, "commit", "-qam", "new base")
    real, calls = history.git, []

    def interrupted_git(repo_, *args, **kw):
        calls.append(args[0])
        if args[0] == "mktag" and calls.count("mktag") == 2:
            raise KeyboardInterrupt
        return real(repo_, *args, **kw)

    monkeypatch.setattr(history, "git", interrupted_git)
    with pytest.raises(KeyboardInterrupt):
        history.build_chain(repo, "HEAD", RELEASES, DATES, set(RELEASES))
    assert {r: _git(repo, "rev-parse", f"refs/tags/jax-v{r}^{{commit}}") for r in RELEASES} == before
    assert _git(repo, "rev-parse", history.BRANCH) == first.commits["0.11.2"]
    monkeypatch.setattr(history, "git", real)
    second = history.build_chain(repo, "HEAD", RELEASES, DATES, set(RELEASES))
    assert second.moved_tags == [f"jax-v{r}" for r in RELEASES]
    assert {r: _git(repo, "rev-parse", f"refs/tags/jax-v{r}^{{commit}}") for r in RELEASES} == second.commits
    assert _git(repo, "cat-file", "-p", "jax-v0.11.1").endswith("JAX 0.11.1")


@pytest.mark.parametrize("other_thread", [False, True])
def test_signals_are_held_while_refs_move(other_thread):
    """Held even when the kernel delivers the signal to another thread of the process, one that does not block
    it (earlier tests may leave threads behind). Python's own SIGINT handler is what a command starts with, so the
    test sets it: an earlier test on the worker may have left another."""
    stop = threading.Event()
    if other_thread:
        threading.Thread(target=stop.wait, daemon=True).start()
    done = []
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            with signals.held():
                os.kill(os.getpid(), signal.SIGINT)
                time.sleep(0.05)
                done.append("after the signal, still inside")
    finally:
        stop.set()
        signal.signal(signal.SIGINT, previous)
    assert done


def test_sigterm_kills_the_asv_tree_and_records_the_release(repo, monkeypatch, tmp_path):
    chain = history.build_chain(repo, "HEAD", ["0.11.0"], DATES, {"0.11.0"})
    pidfile = tmp_path / "grandchild.pid"
    fake = tmp_path / "asv"
    fake.write_text(f"#!/bin/sh\nsleep 300 &\necho $! > {pidfile}\nwait\n")
    fake.chmod(0o755)
    monkeypatch.setattr(history, "asv_exe", lambda: str(fake))
    old = signal.signal(signal.SIGTERM, history_cmd._raise_interrupted)

    def term_when_started():
        deadline = time.monotonic() + 20
        while not pidfile.exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        time.sleep(0.1)
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=term_when_started, daemon=True).start()
    try:
        with pytest.raises(history.HistoryStopped):
            history.backfill(history.AsvRuns(repo, "m", {**os.environ}, repo / "results"), ["0.11.0"], chain, [])
    finally:
        signal.signal(signal.SIGTERM, old)
    assert gone(int(pidfile.read_text()), timeout=5), "the asv run's child outlived the backfill"
    record = json.loads(history.state_path("m", repo).read_text())["releases"]["0.11.0"]
    assert record["status"] == "interrupted" and "SIGTERM" in record["reason"]


def test_state_file_merges_earlier_records_and_keeps_failure_reasons(repo, monkeypatch):
    chain = history.build_chain(repo, "HEAD", RELEASES, DATES, set(RELEASES))
    results, broken = _results(repo), {chain.commits["0.11.1"]}
    monkeypatch.setattr(history, "run_release", _fake_run(broken, "install failed: jaxlib==0.11.1 not found", []))
    history.backfill(history.AsvRuns(repo, "m", {}, results), ["0.11.2", "0.11.1"], chain, [])
    broken.clear()
    history.backfill(history.AsvRuns(repo, "m", {}, results), ["0.11.1", "0.11.0"], chain, [])  # other releases
    state = json.loads(history.state_path("m", repo).read_text())["releases"]
    assert set(state) == set(RELEASES)  # 0.11.2 from the first run kept
    assert state["0.11.2"]["status"] == "measured"
    assert state["0.11.1"]["status"] == "measured"
    assert state["0.11.1"]["earlier"] == [{"commit": chain.commits["0.11.1"], "status": "failed",
                                           "reason": "install failed: jaxlib==0.11.1 not found"}]
    before = state["0.11.2"]
    monkeypatch.setattr(history, "run_release", lambda *a, **k: pytest.fail("a measured release was run again"))
    history.backfill(history.AsvRuns(repo, "m", {}, results), ["0.11.2"], chain, [])  # skipped: the record stays
    assert json.loads(history.state_path("m", repo).read_text())["releases"]["0.11.2"] == before


@pytest.mark.parametrize("text", ["{not json", "[]", '{"releases": [1]}', '{"releases": {"0.11.0": 3}}', "\xff"])
def test_a_corrupt_state_file_gives_one_line_and_exit_2(text, repo, monkeypatch, capsys):
    path = history.state_path("m", repo)
    path.parent.mkdir(parents=True)
    path.write_bytes(text.encode("latin-1"))
    with pytest.raises(history.HistoryError, match="move it aside"):
        history.load_state(path)
    chain = history.build_chain(repo, "HEAD", ["0.11.0"], DATES, {"0.11.0"})
    monkeypatch.setattr(history_cmd, "checkout_root", lambda: repo)
    monkeypatch.setattr(history_cmd, "_chain", lambda repo_, args: (chain, ["0.11.0"]))
    monkeypatch.setattr(history_cmd, "backfill", lambda *a, **k: pytest.fail("backfill started"))
    assert history_cmd.main(["--machine", "m"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "move it aside" in err


def test_a_clone_of_main_alone_gets_the_release_tags_back_byte_for_byte(repo, tmp_path):
    """main carries the chain through a merge (-s ours); a clone of main has the commits but no tags, and asv
    plots a commit off main's first parent only through its tag. restore_refs rebuilds each tag object as
    build_chain wrote it (same tagger and date), so the tags are the originals, not new ones."""
    chain = history.build_chain(repo, "HEAD", RELEASES, DATES, set(RELEASES))
    _git(repo, "merge", "-q", "-s", "ours", "--no-edit", history.BRANCH)
    clone = tmp_path / "clone"
    _git(tmp_path, "clone", "-q", "--single-branch", "--no-tags", str(repo), str(clone))
    assert _git(clone, "tag").strip() == ""
    assert history.restore_refs(clone) == (3, True)
    for version in RELEASES:
        tag = history.TAG_PREFIX + version
        assert _git(clone, "rev-parse", tag) == _git(repo, "rev-parse", tag)      # the same tag object
        assert _git(clone, "rev-parse", f"{tag}^{{commit}}").strip() == chain.commits[version]
    assert _git(clone, "rev-parse", history.BRANCH) == _git(repo, "rev-parse", history.BRANCH)
    assert history.restore_refs(clone) == (0, False)  # nothing left to restore


def test_the_index_snapshot_is_the_chain_s_release_list(tmp_path):
    answer = release_index.read_snapshot(INDEX)
    assert answer.releases == RELEASES and answer.dates == DATES and answer.jaxlib == set(RELEASES)
    assert release_index.numpyro_for("0.11.1", answer.numpyro_jax) == "0.22.0"
    bad = json.loads(INDEX.read_text())
    for field, value, said in (("releases", "0.11.0", "'releases' is not a JSON list"),
                               ("dates", {"0.11.x": "2026"}, "is not a release number"),
                               ("version", True, "version True"), ("format", "other", "not a jax-release-index")):
        path = tmp_path / f"{field}.json"
        path.write_text(json.dumps({**bad, field: value}))
        with pytest.raises(history.HistoryError, match=said) as caught:
            release_index.read_snapshot(path)
        assert str(path) in str(caught.value)


def test_an_old_chain_under_newer_benchmarks_is_refused_by_name(repo):
    """A chain over a base whose jaxci differs from the checkout's (the committed reference history's base, seen by
    a clone whose bench.sh restored the branch): every benchmark would fail on the old jaxci, so the command says
    so before it runs asv, and names --base."""
    chain = history.build_chain(repo, "HEAD", RELEASES, DATES, set(RELEASES))
    assert history_cmd._reusable_base(repo) == chain.base  # the same jaxci: the chain is reused
    (repo / "jaxci").mkdir()
    (repo / "jaxci" / "accel.py").write_text("x = 1\n")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "newer jaxci")
    with pytest.raises(history.HistoryError, match="--base HEAD") as caught:
        history_cmd._reusable_base(repo)
    assert chain.base[:8] in str(caught.value)
