"""The CUDA client's start-up (a fresh notebook kernel's backend start on a GPU machine): read from the process
starts a GPU capture probed and committed, carried by the runner model, paid once per kernel on the GPU side of
a lecture that started a backend. No timing is asserted: the figures come from files the tests write or from
the committed capture, and what is checked is where they go."""

from __future__ import annotations

import math
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from jaxci.analysis import provenance as pv
from jaxci.audit.judging import compile_time, predicted, rescaled
from jaxci.audit.reading.pins import Pin
from jaxci.audit.runner import CellTiming, NotebookRun
from jaxci.results import captures
from jaxci.results.captures import CaptureRecord, ProcessStart, process_starts
from jaxci.results.records import load_results
from tests.frozen import RESULTS
from tests.modelutil import notebook, runner_model, t4_family


def _record(folder: Path, name: str, starts: dict) -> Path:
    """A capture's record (the data) and its summary for a person beside it."""
    (folder / f"capture-{name}.md").write_text("# GPU capture on lab-x\n")
    rec = CaptureRecord("lab-x", "abc", "2026-11-30T00:00:00Z", f"capture-{name}.md", starts)
    path = folder / f"capture-{name}.toml"
    path.write_text(captures.text(rec))
    return path


def test_a_captures_process_starts_are_read_and_a_bad_record_names_its_file(tmp_path):
    _record(tmp_path, "a", {"cpu": 1.5, "gpu": 4.0})
    _record(tmp_path, "b", {"cpu": 1.2})               # a rehearsal: no GPU start, nothing to take
    _record(tmp_path, "c", {})                         # the probes did not run
    bad = _record(tmp_path, "d", {"cpu": 1.0})
    bad.write_text(bad.read_text().replace("cpu = 1.0", 'cpu = "fast"'))
    other = _record(tmp_path, "e", {"cpu": 1.0, "gpu": 2.0})
    other.write_text(other.read_text().replace("version = 1", "version = 9"))
    (tmp_path / "capture-f.md").write_text("- process start (import JAX + one op): {'cpu': 1, 'gpu': 2}\n")
    errors: list[str] = []
    starts = process_starts(tmp_path, errors)
    assert starts == (ProcessStart(1.5, 4.0, "capture-a.md"),)
    assert starts[0].backend_s == pytest.approx(2.5)
    assert len(errors) == 3 and all(e.count("\n") == 0 for e in errors)
    assert "capture-f.md" in errors[0] and captures.UPGRADE in errors[0]   # a summary's prose is never read
    assert "capture-d.toml" in errors[1] and "not device -> positive seconds" in errors[1]
    assert "capture-e.toml" in errors[2] and "version 9" in errors[2]


def test_a_record_reads_back_equal():
    rec = CaptureRecord("lab-x", "a" * 40, "2026-11-30T00:00:00Z", "capture-aaaaaaaa-2026-11-30T000000Z.md",
                        {"cpu": 1.31, "gpu": 3.54})
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / f"{rec.stem}.toml"
        path.write_text(captures.text(rec))
        assert captures.read(path) == rec and rec.stem + ".md" == rec.summary


def test_the_old_summaries_are_upgraded_once_by_the_one_legacy_reader(tmp_path):
    """A summary committed before its record existed is read by jaxci.results.legacy_captures only, through
    `jaxci import --upgrade-summaries`; a line that is no literal is never evaluated."""
    from jaxci.commands.import_capture import main as import_main
    from jaxci.results import legacy_captures

    folder = tmp_path / "lab-x"
    folder.mkdir()
    head = ("# GPU capture on lab-x\n\n- started 2026-11-30T23:56:32Z, budget 540 s, wall 454 s\n"
            "- commit 024bc0aa2fc8 (git)\n")
    (folder / "capture-024bc0aa-2026-11-30T235632Z.md").write_text(
        head + "- process start (import JAX + one op): {'cpu': 3.04, 'gpu': 3.79}\n")
    assert import_main(["--upgrade-summaries", "--results", str(tmp_path)]) == 0
    record = captures.read(folder / "capture-024bc0aa-2026-11-30T235632Z.toml")
    assert record.process_start_s == {"cpu": 3.04, "gpu": 3.79} and record.commit == "024bc0aa2fc8"
    assert legacy_captures.upgrade(tmp_path) == []   # once
    (folder / "capture-e.md").write_text(head + "- process start (import JAX + one op): __import__('os').getpid()\n")
    with pytest.raises(legacy_captures.LegacyError, match="unreadable"):
        legacy_captures.upgrade(tmp_path)
    assert not (folder / "capture-e.toml").exists()


def test_the_committed_summaries_all_have_their_records():
    """Committed data is all in the current form: every capture summary in results/ has its record."""
    root = Path(__file__).resolve().parent.parent
    for results in (root / "results", RESULTS):
        for summary in results.glob("*/capture-*.md"):
            assert captures.read(summary.with_suffix(".toml")).summary == summary.name


def test_a_broken_capture_record_keeps_every_result(tmp_path):
    shutil.copytree(RESULTS / "lab-h200", tmp_path / "lab-h200")
    broken = _record(tmp_path / "lab-h200", "zz-broken", {"cpu": 1.0, "gpu": 3.0})
    broken.write_text(broken.read_text().replace("gpu = 3.0", "gpu = -3.0"))
    rs = load_results(tmp_path)
    facts = rs.machines["lab-h200"]
    assert len(facts.process_starts) == len(list((RESULTS / "lab-h200").glob("capture-*.toml")))
    assert any("capture-zz-broken.toml" in e for e in rs.errors)
    assert rs.records, "the machine's asv results are still loaded"


@pytest.fixture(scope="module")
def results():
    return load_results(RESULTS)


def test_the_backend_start_is_the_captures_gpu_start_less_its_cpu_start(results):
    starts = results.machines["lab-h200"].process_starts
    assert starts, "the committed H200 capture probed both devices"
    lo, hi = min(s.backend_s for s in starts), max(s.backend_s for s in starts)
    p = runner_model().predict("g4dn.2xlarge", "backend_start", None, device="gpu")
    assert p and p.low == pytest.approx(lo) and p.high == pytest.approx(hi)
    assert p.seconds == pytest.approx(math.sqrt(lo * hi))
    assert "process start gpu less cpu" in p.inputs and starts[0].source in p.inputs
    assert p.rests_on(pv.MEASURED, "lab-h200")


def test_the_backend_start_reads_the_figure_and_says_why_when_there_is_none(results):
    """Doubling every probed GPU start's surplus doubles the prediction (it is read, not a constant); no capture
    with both devices leaves it unpredicted, with the reason."""
    h200 = results.machines["lab-h200"]
    doubled = tuple(ProcessStart(s.cpu_s, s.cpu_s + 2 * s.backend_s, s.source) for s in h200.process_starts)
    base = runner_model().predict("g5.2xlarge", "backend_start", None, device="gpu")
    twice = runner_model(machines={**results.machines, "lab-h200": replace(h200, process_starts=doubled)}).predict(
        "g5.2xlarge", "backend_start", None, device="gpu")
    assert twice.seconds == pytest.approx(2 * base.seconds)
    none = runner_model(machines={**results.machines, "lab-h200": replace(h200, process_starts=())}).predict(
        "g5.2xlarge", "backend_start", None, device="gpu")
    assert not none and "process start" in none.reason
    cpu = runner_model().predict("ubuntu-latest", "backend_start", None, device="cpu")
    assert not cpu and "GPU" in cpu.reason


def _cell(index: int, compilations: int, startup_s: float | None) -> CellTiming:
    return CellTiming(index=index, first_line="x = 1", wall_s=1.0, client_s=1.0, compile_s=0.1 * compilations,
                      compilations=compilations, startup_s=startup_s)


def _run(*cells: CellTiming) -> NotebookRun:
    return notebook(*cells, path="lecture.md", wall_s=sum(c.wall_s for c in cells), kernel_start_s=0.5)


g4dn = t4_family


def test_a_lecture_that_starts_a_backend_pays_the_cuda_start_once_on_the_gpu_side(g4dn):
    backend = g4dn.runner.call("backend_start", None, "float32", "gpu")
    first = g4dn.runner.call("elementwise", 1, "float32", "gpu", compile_only=True)
    jax_run = _run(_cell(0, 0, 0.2), _cell(1, 3, None), _cell(2, 2, None))
    p = predicted.gpu_family(jax_run, g4dn.runner)
    shared = compile_time.overhead_s(jax_run)
    assert p.gpu.parts["start-up"] == pytest.approx(shared + first.seconds)
    assert p.gpu.parts["backend"] == pytest.approx(backend.seconds) and p.cpu.parts["backend"] == 0
    assert p.cpu.parts["start-up"] == pytest.approx(shared + g4dn.runner.call(
        "elementwise", 1, "float32", "cpu", compile_only=True).seconds)
    assert not any("not counted" in m and "CUDA" in m for m in p.missing)


def test_a_lecture_that_never_starts_a_backend_pays_no_cuda_start(g4dn):
    host_only = _run(_cell(0, 0, None), _cell(1, 0, None))
    p = predicted.gpu_family(host_only, g4dn.runner)
    assert p.gpu.parts["start-up"] == pytest.approx(compile_time.overhead_s(host_only))
    assert p.gpu.parts["backend"] == 0


def test_a_familys_own_capture_is_the_nearest_evidence(results):
    """A capture on the family itself (a lent T4 registered as g4dn.2xlarge) beats the H200's probes."""
    h200 = results.machines["lab-h200"]
    mine = replace(h200, name="g4dn.2xlarge", process_starts=(ProcessStart(1.0, 5.0, "capture-t4.md"),))
    p = runner_model(machines={**results.machines, "g4dn.2xlarge": mine}).predict("g4dn.2xlarge", "backend_start",
                                                                                  None, device="gpu")
    assert p.seconds == pytest.approx(4.0) and "capture-t4.md" in p.inputs
    assert p.rests_on(pv.MEASURED, "g4dn.2xlarge") and not p.rests_on(pv.MEASURED, "lab-h200")


def test_the_host_factor_never_moves_the_modelled_backend_start(g4dn):
    """The backend start is the model's figure (carried from the capture's host by its own rule), not this host's
    measured time: moving the record to the family's host leaves it as it was."""
    p = predicted.gpu_family(_run(_cell(0, 0, 0.2), _cell(1, 3, None)), g4dn.runner)
    moved = rescaled.host_scaled(p, 2.0, "a probe")
    assert p.gpu.parts["backend"] > 0
    assert moved.gpu.parts["backend"] == pytest.approx(p.gpu.parts["backend"])
    assert moved.gpu.parts["start-up"] == pytest.approx(2 * p.gpu.parts["start-up"])


def test_a_cpu_only_platform_list_before_the_first_backend_creates_no_cuda_client():
    run = _run(_cell(0, 0, None), _cell(1, 0, None), _cell(2, 3, 0.2))
    assert predicted.starts_cuda(run) and not predicted.starts_cuda(_run(_cell(0, 0, None)))
    env, name = "JAX_PLATFORMS", "jax_platform_name"  # what chose each pin (Pin.setting)
    assert not predicted.starts_cuda(run, [Pin(1, 1, ("cpu",), "JAX_PLATFORMS=cpu", env)])
    assert not predicted.starts_cuda(run, [Pin(2, 1, ("cpu",), "config jax_platforms=cpu", "jax_platforms")])
    assert predicted.starts_cuda(run, [Pin(3, 1, ("cpu",), "JAX_PLATFORMS=cpu", env)])           # too late: it started
    assert predicted.starts_cuda(run, [Pin(1, 1, ("cpu",), "config jax_platform_name=cpu", name)])  # a default only
    assert predicted.starts_cuda(run, [Pin(1, 1, ("cuda", "cpu"), "JAX_PLATFORMS=cuda,cpu", env)])
