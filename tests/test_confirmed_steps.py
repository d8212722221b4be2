"""A step between two JAX releases is a regression only when a quiet rerun confirms it; everything else is shown
apart as "unconfirmed (noise?)" with its load. The records behind that (results/<machine>/conditions.toml) are
checked on the way in, and a fresh clone's site says how to get its release history back."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
from contextlib import nullcontext
from types import SimpleNamespace

import pytest

from jaxci import REPO_ROOT
from jaxci.analysis.releases import judge, params_text, release_steps, releases_md, releases_measured
from jaxci.report import regressions
from jaxci.results import conditions, history
from jaxci.results.records import Record
from jaxci.util.loadavg import Load, Sampler
from tests.suiteutil import python


def _rec(version, value, machine="m", n=10_000):
    return Record(machine=machine, benchmark="loops.Scan.time_warm", params={"n": n, "dtype": "float64",
                  "device": "cpu"}, status="ok", value=value, unit="seconds", commit=f"c{version}",
                  date="2026-01-01T00:00:00Z", jax_version=version, jax_source="test", env_name="e",
                  q25=value * 0.99, q75=value * 1.01, file=f"{version}.json")


RECS = [_rec("0.11.0", 1e-4), _rec("0.11.1", 3e-2), _rec("0.11.2", 1.1e-4)]
KEY = "n=10000, dtype=float64, device=cpu"


def _confirmation(ratio, load, own=None, others=None):
    return conditions.Confirmation("loops.Scan.time_warm", KEY, "0.11.0", "0.11.1", 300.0, ratio, load, "d",
                                   own, others)


def _judged(confirmations=(), runs=(), cores=2):
    steps = release_steps(RECS, 1.3)
    return judge(steps, {"m": list(runs)}, {"m": list(confirmations)}, 1.3, {"m": cores})


def test_a_step_without_a_rerun_is_unconfirmed_and_says_its_load():
    runs = [conditions.Run("0.11.0", "c0110", "d", "cpu", (0.2, 0.4, 0.3)),
            conditions.Run("0.11.1", "c0111", "d", "cpu", (3.0, 4.0, 5.0))]
    reg = _judged(runs=runs)[0]
    assert (reg.kind, reg.confirmed, reg.load) == ("regression", False, 4.0)
    assert params_text(reg.params) == KEY


@pytest.mark.parametrize("ratio, load, confirmed", [
    (290.0, (0.3, 0.5, 0.4), True),     # an old record: median 0.4 <= 0.25 x 2 CPUs, and still past x1.3
    (1.05, (0.3, 0.5, 0.4), False),     # quiet, but the rerun refutes it
    (290.0, (2.5, 3.0, 2.8), False),    # still past, but measured beside other work: not a confirmation
    (None, (0.3,), False),              # the rerun measured nothing for this combination
    (290.0, (), False),                 # no load recorded: cannot be called quiet
])
def test_only_a_quiet_rerun_past_the_factor_confirms(ratio, load, confirmed):
    reg = _judged([_confirmation(ratio, load)])[0]
    assert reg.confirmed is confirmed and reg.rerun_ratio == ratio


@pytest.mark.parametrize("load, own, others, confirmed", [
    ((1.2, 1.3, 1.1), 1.0, 0.05, True),   # the load average is the rerun's own: nothing else ran
    ((1.2, 1.3, 1.1), 0.3, 0.9, False),   # the same load average, but most of it was another process's
    ((0.1,), 0.1, 0.6, False),            # a low load average cannot hide a neighbour the CPU times saw
])
def test_the_quiet_rule_discounts_the_reruns_own_cpu_use(load, own, others, confirmed):
    """On 2 vCPUs asv, pip and the benchmark hold the load average at 1.0-1.3 with nothing else running: a rule
    on the load average alone never confirmed anything there. What counts is the CPU other processes used."""
    reg = _judged([_confirmation(290.0, load, own, others)])[0]
    assert reg.confirmed is confirmed


def _report(steps):
    return SimpleNamespace(release_steps=steps, upgrade_factor=1.3)


def test_the_first_screen_shows_confirmed_regressions_only():
    unsure = _report(_judged())
    text = regressions.regressions_md(unsure)
    assert text.startswith("No confirmed regression") and "asv compare" not in text
    assert "1 unconfirmed step(s)" in text and "`jaxci history --confirm --machine m`" in text
    sure = regressions.regressions_md(_report(_judged([_confirmation(290.0, (0.4,))])))
    assert "asv compare jax-v0.11.0 jax-v0.11.1 --machine m" in sure and "x290" in sure
    assert "unconfirmed" not in sure


def test_the_findings_table_lists_unconfirmed_steps_apart_with_their_load():
    runs = [conditions.Run("0.11.1", "c0111", "d", "cpu", (3.0, 4.0, 5.0))]
    text = releases_md(_judged(runs=runs), releases_measured(RECS), 1.3)
    assert "No confirmed step." in text and "Unconfirmed (noise?)" in text
    assert text.split("Unconfirmed (noise?)")[1].count("| loops.Scan.time_warm |") == 1
    assert "| 4.00 |" in text
    split = [conditions.Run("0.11.1", "c0111", "d", "cpu", (1.2, 1.3), "backfill", (1,), 1.0, 0.07)]
    assert "| 1.25 (others 0.07 CPU) |" in releases_md(_judged(runs=split), releases_measured(RECS), 1.3)
    sure = releases_md(_judged([_confirmation(290.0, (0.4,))]), releases_measured(RECS), 1.3)
    assert "Confirmed:" in sure and "| x290 |" in sure and "Unconfirmed (noise?)" not in sure


def _load_with(tmp_path, appended: str):
    """conditions.load of machine m once `appended` is added to its file: (runs, confirmations), errors."""
    path = conditions.path_of(tmp_path, "m")
    path.write_text(path.read_text() + appended)
    errors = []
    return conditions.load(tmp_path, "m", errors), errors


def test_conditions_round_trip_and_a_bad_record_loses_only_itself(tmp_path):
    (tmp_path / "m").mkdir()
    run = conditions.Run("0.11.0", "abcdef1", "2026-12-01T00:00:00+00:00", "AMD EPYC", (0.5, 0.75))
    conditions.append_run(tmp_path, "m", run)
    conditions.append_confirmation(tmp_path, "m", _confirmation(290.0, (0.4,)))
    runs, confirmations = conditions.load(tmp_path, "m")
    assert runs == [run] and confirmations == [_confirmation(290.0, (0.4,))]
    (runs, confirmations), errors = _load_with(tmp_path, '[[run]]\nrelease = "x; rm -rf /"\ncommit = "abc1234"\n\n'
                                               '[[confirmation]]\nbenchmark = "a.b"\nparams = ""\nbefore = "0.1"\n'
                                               'after = "0.2"\nfirst_ratio = -1.0\n')
    assert runs == [run] and len(confirmations) == 1
    assert len(errors) == 2 and "is not a JAX release" in errors[0] and "not a positive finite" in errors[1]
    assert all("\n" not in e for e in errors)


def test_a_conditions_file_that_is_a_link_or_not_toml_is_one_error(tmp_path):
    (tmp_path / "m").mkdir()
    path = conditions.path_of(tmp_path, "m")
    path.write_text("[[run]\n")
    errors = []
    assert conditions.load(tmp_path, "m", errors) == ([], []) and "not read" in errors[0]
    path.unlink()
    os.mkfifo(path)
    errors = []
    assert conditions.load(tmp_path, "m", errors) == ([], []) and "FIFO" in errors[0]


def test_a_run_record_keeps_the_cpus_it_was_pinned_to_and_refuses_bad_ones(tmp_path):
    (tmp_path / "m").mkdir()
    run = conditions.Run("0.11.0", "abcdef1", "2026-12-01T00:00:00+00:00", "Intel Xeon", (0.9,), "backfill", (1,))
    conditions.append_run(tmp_path, "m", run)
    assert "cpus = [1]" in conditions.path_of(tmp_path, "m").read_text()
    (runs, _), errors = _load_with(tmp_path, '[[run]]\nrelease = "0.11.1"\ncommit = "abc1234"\ncpus = ["1; rm"]\n')
    assert runs == [run]
    assert len(errors) == 1 and "cpus must be a list of CPU numbers" in errors[0]


def test_pinning_reaches_every_process_started_afterwards():
    """The reference history pins asv, pip and the benchmarks (children) to one CPU: affinity is inherited."""
    code = ("import os, subprocess, sys\nfrom jaxci.util.loadavg import pin_to\n"
            "cpu = min(os.sched_getaffinity(0))\npin_to((cpu,))\n"
            "child = subprocess.run([sys.executable, '-c', 'import os; print(sorted(os.sched_getaffinity(0)))'],"
            " capture_output=True, text=True).stdout.strip()\nprint(child == str([cpu]))\n")
    out = python("-c", code, cwd=REPO_ROOT, timeout=60)
    assert out.stdout.strip() == "True", out.stderr
    with pytest.raises(ValueError, match="not one this process may run on"):
        from jaxci.util.loadavg import pin_to

        pin_to((4095,))


@pytest.mark.parametrize("cpus, message", [("4095", "may run on CPU"), ("1;rm -rf /", "CPU numbers separated"),
                                           ("", "CPU numbers separated")])
def test_a_bad_cpus_option_is_one_line_and_measures_nothing(cpus, message):
    out = python("-m", "jaxci", "history", "--confirm", "--machine", "ref-epyc-2c-ci", "--cpus", cpus, "--dry-run",
                 cwd=REPO_ROOT, timeout=120)
    assert out.returncode == 2 and message in out.stderr and len(out.stderr.strip().splitlines()) == 1


def test_the_sampler_takes_a_first_and_a_last_sample():
    values = iter([0.1, 0.2, 0.3, 0.4])
    with Sampler(every=3600, read=lambda: next(values), busy=lambda: None) as s:
        pass
    assert s.load.samples == (0.1, 0.2) and s.load.quiet(0.2) and not s.load.quiet(0.1)
    assert s.load.others is None      # no /proc/stat: judged by the load average, the stricter reading
    assert Load(()).text() == "load not recorded" and not Load(()).quiet(10)


def test_the_sampler_splits_the_machines_busy_time_into_the_runs_and_the_others():
    busy, own, clock = iter([100.0, 130.0]), iter([5.0, 25.0]), iter([0.0, 20.0])
    with Sampler(every=3600, read=lambda: 1.4, busy=lambda: next(busy), own=lambda: next(own),
                 clock=lambda: next(clock)) as s:
        pass
    # 30 CPU seconds busy in 20 s, 20 of them the run's: the run used 1 CPU, the others 0.5
    assert (s.load.own, s.load.others) == (1.0, 0.5)
    assert s.load.quiet(0.5) and not s.load.quiet(0.4)
    assert "the run used 1.00 CPU, other processes 0.50" in s.load.text()


def test_a_childs_cpu_time_counts_as_the_runs_own():
    """asv, pip and the benchmark are children of jaxci history: their CPU time is the run's, not a neighbour's,
    once they have been waited for (getrusage of the children). CPU seconds, not wall time: no timing is asserted."""
    spin = "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.5: pass"
    clock = iter([0.0, 1.0])   # one "second" of run: `own` is then the run's CPU seconds themselves
    with Sampler(every=3600, busy=lambda: 0.0, clock=lambda: next(clock)) as s:
        subprocess.run([sys.executable, "-c", spin], check=True, timeout=120)
    assert s.load.own >= 0.5   # the child's 0.5 CPU seconds at least, counted as the run's own


def test_conditions_keep_the_cpu_split_and_refuse_a_bad_one(tmp_path):
    (tmp_path / "m").mkdir()
    run = conditions.Run("0.11.0", "abcdef1", "2026-12-01T00:00:00+00:00", "AMD EPYC", (1.1,), "backfill", (1,),
                         0.98, 0.04)
    conditions.append_run(tmp_path, "m", run)
    conditions.append_confirmation(tmp_path, "m", _confirmation(290.0, (1.2,), 1.0, 0.02))
    runs, confirmations = conditions.load(tmp_path, "m")
    assert runs == [run] and confirmations[0].measured_load == Load((1.2,), 1.0, 0.02)
    (runs, _), errors = _load_with(tmp_path, '[[run]]\nrelease = "0.11.1"\ncommit = "abc1234"\ncpu_others = "lots"\n')
    assert runs == [run]
    assert len(errors) == 1 and "cpu_others" in errors[0] and "not a number of CPUs" in errors[0]


def test_a_release_measured_above_the_load_is_measured_again_and_each_run_recorded(tmp_path, monkeypatch):
    (tmp_path / "results" / "m").mkdir(parents=True)
    calls = []

    def fake_run(runs, commit, bench, again=False):
        calls.append(again)
        return True, ""

    loads = iter([Load((3.0, 3.0)), Load((2.0, 2.0)), Load((0.2, 0.2))])
    monkeypatch.setattr(history, "run_release", fake_run)
    monkeypatch.setattr("jaxci.util.loadavg.Sampler", lambda: nullcontext(SimpleNamespace(load=next(loads))))
    runs = history.AsvRuns(tmp_path, "m", {}, tmp_path / "results", io.StringIO(), tmp_path / "log")
    ok, _ = history.measured_quietly(runs, "0.11.0", "abcdef1", [], 1.0)
    assert ok and calls == [False, True, True]   # the reruns replace the loaded results (asv run without skip)
    runs, _ = conditions.load(tmp_path / "results", "m")
    assert [r.purpose for r in runs] == ["backfill", "rerun", "rerun"]
    assert [r.load_median for r in runs] == [3.0, 2.0, 0.2]


def test_force_measures_every_benchmark_again_from_the_first_run(tmp_path, monkeypatch):
    """--force re-measures a history: a first run with asv's --skip-existing-successful would measure only the
    benchmarks added since, and keep the loaded old timings of every other one."""
    (tmp_path / "results" / "m").mkdir(parents=True)
    calls = []
    monkeypatch.setattr(history, "run_release", lambda runs, commit, bench, again=False:
                        calls.append(again) or (True, ""))
    monkeypatch.setattr(history, "measured_keys", lambda results_dir, machine, commit: {"a"})
    monkeypatch.setattr(history, "selected_benchmarks", lambda results_dir, bench: {"a"})
    monkeypatch.setattr(history, "any_value", lambda results_dir, machine, commit: True)
    chain = SimpleNamespace(commits={"0.11.0": "abcdef1"})
    monkeypatch.setattr(history, "save_state", lambda *a, **k: None)
    runs = history.AsvRuns(tmp_path, "m", {}, tmp_path / "results", io.StringIO())
    skipped = history.backfill(runs, ["0.11.0"], chain, [], earlier={})
    assert [o.status for o in skipped] == ["skipped"] and calls == []
    forced = history.backfill(runs, ["0.11.0"], chain, [], force=True, earlier={})
    assert [o.status for o in forced] == ["measured"] and calls == [True]


def _jaxci(clone, *args):
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT), "PYTHONSAFEPATH": "1"}  # this checkout's jaxci, not the clone's
    return python("-m", "jaxci", *args, cwd=clone, timeout=600, env=env)


@pytest.mark.slow
def test_a_fresh_clone_gets_its_release_history_back_and_the_printed_compare_runs(tmp_path):
    """git clone brings no jax-v* tags: `jaxci report --html` says the one command that brings them back (never
    a site without history in silence), and after it the `asv compare` the report prints for a step works."""
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", "--single-branch", "--no-tags", str(REPO_ROOT), str(clone)], check=True)
    html = tmp_path / "html"
    html.mkdir()
    proc = _jaxci(clone, "report", "results", "--html", str(html), "--no-progress")
    assert proc.returncode == 2 and "jaxci history --restore-refs && asv publish" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    restored = _jaxci(clone, "history", "--restore-refs")
    assert restored.returncode == 0, restored.stderr
    from jaxci.report.build import build

    steps = [s for s in build(clone / "results").release_steps if s.kind == "regression"]
    command = regressions.reproduce(steps[0]).split()
    asv = str(REPO_ROOT / ".venv" / "bin" / "asv")
    compared = subprocess.run([asv, *command[1:]], cwd=clone, capture_output=True, text=True, timeout=300)
    assert compared.returncode == 0 and "| Benchmark (Parameter)" in compared.stdout, compared.stderr[-500:]
    assert "Did not find results" not in compared.stdout + compared.stderr


def test_confirm_reruns_each_release_pair_once_and_records_every_combination(tmp_path, monkeypatch):
    from jaxci.results import confirm as confirm_mod

    (tmp_path / "m").mkdir()
    runs = []
    monkeypatch.setattr(confirm_mod, "run_release",
                        lambda asv_runs, commit, bench, again=False: runs.append((commit, bench, again))
                        or (True, ""))
    rerun = [_rec("0.11.0", 1e-4), _rec("0.11.1", 2.9e-2), _rec("0.11.0", 2e-4, n=1000), _rec("0.11.1", 2.1e-4, n=1000)]
    monkeypatch.setattr(confirm_mod, "load_results", lambda d: SimpleNamespace(records=rerun))
    small = "n=1000, dtype=float64, device=cpu"
    target = confirm_mod.Target("loops.Scan.time_warm", "0.11.0", "0.11.1", {KEY: 300.0, small: 5.0})
    asv_runs = history.AsvRuns(tmp_path, "m", {}, tmp_path, io.StringIO(), tmp_path / "log")
    made = confirm_mod.confirm(asv_runs, [target], {"0.11.0": "c0", "0.11.1": "c1"})
    pattern = [r"^loops\.Scan\.time_warm(\(|$)"]
    assert runs == [("c0", pattern, True), ("c1", pattern, True)]
    # the pattern selects asv's name of a parameterised benchmark, "name(params)", as asv's own regex search does
    assert re.search(pattern[0], "loops.Scan.time_warm(10000, 'float64', 'cpu')")
    assert not re.search(pattern[0], "loops.Scan.time_warm_other(1)")
    assert {c.params: round(c.rerun_ratio, 2) for c in made} == {KEY: 290.0, small: 1.05}
    assert conditions.load(tmp_path, "m")[1] == made
