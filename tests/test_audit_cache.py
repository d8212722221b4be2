"""The incremental executed audit: a second audit of unchanged lectures executes none; changing one lecture's code
executes that one; markdown does not count; a changed kernel environment or platform is a different key; a
previous audit JSON (`--baseline`) serves as well as a cache folder. Executions are counted from the audit JSON
and from the progress lines, never from timings."""

from __future__ import annotations

import json
import shutil
from dataclasses import fields
from pathlib import Path
from types import SimpleNamespace

import pytest

from jaxci.audit.runner import cache
from jaxci.audit.runner.outcome import CellTiming, NotebookRun
from jaxci.audit.writing.merge import strip_timings
from jaxci.commands import audit

FOLDER = Path(__file__).resolve().parent / "fixtures" / "shards20"
LECTURES = ["plain_00.md", "plain_01.md", "part2/raises.md"]


@pytest.fixture
def folder(tmp_path):
    out = tmp_path / "lectures"
    for name in LECTURES:
        (out / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(FOLDER / name, out / name)
    return out


def run(folder: Path, out: Path, capsys, *extra: str) -> tuple[dict, list[str]]:
    """One executed audit: its JSON, and the progress lines of the runs it executed."""
    assert audit.main([str(folder), "--execute", "--platforms", "cpu", "--format", "json", "--output", str(out),
                       *extra]) == 0
    lines = [x for x in capsys.readouterr().err.splitlines() if x.startswith("jaxci audit: [")]
    return json.loads(out.read_text()), lines


def executed(doc: dict) -> int:
    return sum(len(k) for k in doc["execution"]["keys"].values()) - len(doc["execution"]["reused"])


@pytest.mark.slow  # real kernels
def test_a_second_audit_executes_nothing_and_a_changed_lecture_alone_runs_again(folder, tmp_path, capsys):
    store = tmp_path / "cache"
    first, lines = run(folder, tmp_path / "a.json", capsys, "--cache", str(store))
    assert executed(first) == 3 and len(lines) == 3 and len(list(store.glob("*.json"))) == 3
    second, lines = run(folder, tmp_path / "b.json", capsys, "--cache", str(store))
    assert executed(second) == 0 and lines == []
    assert second["execution"]["reused"] == sorted(f"{p} [cpu]" for p in LECTURES)
    # the reused runs give the same audit: only the list of reused runs differs
    for doc in (first, second):
        doc["execution"].pop("reused")
    assert strip_timings(second) == strip_timings(first)

    lecture = folder / "plain_01.md"
    lecture.write_text(lecture.read_text().replace("# Plain lecture 1", "# Plain lecture 1, retitled"))
    third, lines = run(folder, tmp_path / "c.json", capsys, "--cache", str(store))
    assert executed(third) == 0 and lines == []  # markdown is not in the key

    lecture.write_text(lecture.read_text().replace("range(2000)", "range(2001)"))
    fourth, lines = run(folder, tmp_path / "d.json", capsys, "--cache", str(store))
    assert executed(fourth) == 1 and len(lines) == 1 and "plain_01.md (cpu)" in lines[0]
    assert fourth["execution"]["keys"]["plain_01.md"] != first["execution"]["keys"]["plain_01.md"]
    assert fourth["execution"]["keys"]["plain_00.md"] == first["execution"]["keys"]["plain_00.md"]


@pytest.mark.slow  # real kernels
def test_a_previous_audit_json_is_a_baseline(folder, tmp_path, capsys):
    first, _ = run(folder, tmp_path / "a.json", capsys)
    again, lines = run(folder, tmp_path / "b.json", capsys, "--baseline", str(tmp_path / "a.json"))
    assert executed(again) == 0 and lines == []
    (folder / "plain_00.md").write_text((folder / "plain_00.md").read_text().replace("1000", "1001"))
    changed, lines = run(folder, tmp_path / "c.json", capsys, "--baseline", str(tmp_path / "a.json"))
    assert executed(changed) == 1 and "plain_00.md (cpu)" in lines[0]


def _lecture(folder):
    """What the cache reads of a lecture: its path, relative and absolute."""
    return SimpleNamespace(path="plain_00.md", path_abs=folder / "plain_00.md")


def test_the_key_follows_the_kernel_environment_platform_and_timeout(folder, monkeypatch):
    lecture = _lecture(folder)
    identity = {"kernel": "python3", "python": "3.12.1", "jax": "0.11.2", "jaxlib": "0.11.2"}
    monkeypatch.setattr(cache, "kernel_identity", lambda name: dict(identity))
    base = cache.Reuse().key(lecture, "cpu", "python3")
    assert cache.Reuse().key(lecture, "cpu", "python3") == base
    assert cache.Reuse().key(lecture, "cuda", "python3") != base
    assert cache.Reuse(cell_timeout=900).key(lecture, "cpu", "python3") != base
    identity["jax"] = "0.12.0"
    assert cache.Reuse().key(lecture, "cpu", "python3") != base  # a new JAX pin re-executes


def test_failed_runs_are_not_reused(tmp_path, folder):
    lecture = _lecture(folder)
    reuse = cache.Reuse(tmp_path / "store")
    failed = NotebookRun(str(lecture.path_abs), status="timeout", error="cell 1 exceeded", platform="cpu")
    reuse.store(lecture, "cpu", "k1", failed)
    assert not (tmp_path / "store").exists()  # nothing stored: a timeout may have been the machine's
    assert reuse.lookup(lecture, "cpu", "k1") is None


def test_a_run_reads_back_from_its_record():
    run = NotebookRun("x.md", platform="cpu", wall_s=1.5, kernel_start_s=0.4,
                      cells=[CellTiming(0, "x = 1", 0.01, 0.02, compile_s=0.0, compilations=0)])
    again = NotebookRun.from_dict(json.loads(json.dumps(run.as_dict())))
    assert again.as_dict() == run.as_dict()


def test_a_new_field_in_what_a_run_records_bumps_the_cache_format():
    """A cached run from before a field existed lacks it (a cached NUTS lecture without `samplers` would be
    predicted the old way): the cell's fields are pinned to the format that records them."""

    two = {"index", "first_line", "wall_s", "client_s", "status", "compile_s", "trace_s", "lower_s", "backend_s",
           "compilations", "cache_hits", "cache_misses", "error", "expected_error", "loops", "jitted", "calls",
           "eager", "samplers", "startup_s", "settle_s", "import_s", "memory"}
    # 3: the same fields, a sampler record carries its leapfrog steps; 4: a call's while loops carry counted trips;
    # 5: the main thread's CPU seconds
    # 6 also records `wait_s` (the main thread's wait for a core) without a new format: a run without it is judged
    # as before it existed (no wait taken out of its wall time), so a cached run stays right; so does `host_kinds`
    # (the CPU seconds by kind: a run without it has its host work unsplit, as every run before it)
    # 6: loops counted only where no effect could repeat
    recorded = {2: two, 3: two, 4: two | {"trip_probe_s"}, 5: two | {"trip_probe_s", "busy_s"},
                6: two | {"trip_probe_s", "busy_s", "wait_s", "host_kinds"}}
    # set on a failed cell only, and a failed run is never reused: no cached run can lack them
    failed_only = {"error_name", "error_packages"}
    assert {f.name for f in fields(CellTiming)} - failed_only == recorded[cache.FORMAT]


def test_a_completed_run_in_the_cache_beats_the_baselines_failure_of_the_same_key(tmp_path, folder):
    """A re-judge that keeps the baseline's failures (--reuse-failures) still takes the lecture's completed run
    from the cache, e.g. one run again once its downloads had local copies."""
    lecture = _lecture(folder)
    failed = NotebookRun(str(lecture.path_abs), status="error", error="cell 5: OfflineCopyMissing", platform="cpu")
    baseline = {"execution": {"keys": {"plain_00.md": {"cpu": "k1"}}},
                "lectures": [{"path": "plain_00.md", "runs": {"cpu": failed.as_dict()}}]}
    keeps = cache.Reuse(tmp_path / "store", baseline, failures=True)
    assert keeps.lookup(lecture, "cpu", "k1").status == "error"  # nothing in the cache: the failure is kept
    completed = NotebookRun(str(lecture.path_abs), status="ok", platform="cpu", wall_s=12.0)
    (tmp_path / "store").mkdir()
    cache.Reuse(tmp_path / "store").store(lecture, "cpu", "k1", completed)
    assert cache.Reuse(tmp_path / "store", baseline, failures=True).lookup(lecture, "cpu", "k1").status == "ok"
    assert cache.Reuse(None, baseline, failures=True).lookup(lecture, "cpu", "k1").status == "error"


def test_a_run_executed_now_is_cached_with_the_probe_of_the_host_that_ran_it(tmp_path, folder):
    """The cache's record of an executed run carries its host probe: a later re-judge that reuses it moves it by
    the speed of the host when it ran, not by its own baseline's probe (which was taken under another load)."""
    from jaxci.audit import repo
    from jaxci.audit.runner import host_probe
    from jaxci.audit.runner.lectures import Runs

    lecture = _lecture(folder)
    (tmp_path / "store").mkdir()
    reuse = cache.Reuse(tmp_path / "store")
    reuse.keys = {"plain_00.md": {"cpu": "k1"}}
    run = NotebookRun(str(lecture.path_abs), status="ok", platform="cpu", wall_s=12.0)
    reuse.store(lecture, "cpu", "k1", run)
    assert json.loads((tmp_path / "store" / "k1.json").read_text())["host_probe"] is None
    now = host_probe.Probe(0.085, 0.084, 0.126, 1_000_000, "when it ran")
    baseline = host_probe.Probe(0.172, 0.164, 0.188, 1_000_000, "the baseline's, loaded")
    verdict = SimpleNamespace(path="plain_00.md", runs={"cpu": run})
    repo.stamp_probes([verdict], Runs(("cpu",), reuse=reuse, baseline_probe=baseline), now, host_probe)
    stored = json.loads((tmp_path / "store" / "k1.json").read_text())
    assert stored["host_probe"]["seconds"] == 0.085
    again = cache.Reuse(tmp_path / "store", {"execution": {}, "lectures": []}, failures=True)
    assert again.lookup(lecture, "cpu", "k1").host_probe["seconds"] == 0.085


def test_a_probe_read_back_again_and_again_says_once_that_it_was_reused():
    from jaxci.audit.runner import host_probe

    measured = host_probe.Probe(0.085, 0.084, 0.126, 1_000_000, "int_sum here: 0.085 s")
    once = host_probe.from_dict(host_probe.as_dict(measured))
    twice = host_probe.from_dict(host_probe.as_dict(once))
    assert once.reused and twice.text == once.text and once.text.endswith("int_sum here: 0.085 s")
    assert once.text.count("reused") == 1 and (twice.seconds, twice.n) == (0.085, 1_000_000)
