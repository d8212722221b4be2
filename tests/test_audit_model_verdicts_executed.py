"""Executed: the fixture lectures run in real kernels on the CPU (model_verdicts once per session, by the command
line; model_verdicts_scaled as recorded: tests/executed_lectures.py) and are decided by the runner model's numbers
for g4dn.2xlarge. Verdicts only: no timing is asserted (which verdict, where the time landed, the labels)."""

import pytest

from jaxci.audit import repo
from jaxci.audit.judging import classify as C
from jaxci.audit.judging import colab, family
from jaxci.audit.reading.cell_records import TracedLoop
from jaxci.audit.runner.cache import Reuse
from tests.executed_lectures import CELL_TIMEOUT, FAMILY, LECTURES, FrozenRuns
from tests.frozen import RESULTS as FROZEN_RESULTS

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def executed(small_lectures_executed):
    """Both folders judged here by the model from the frozen results: the small lectures' runs are the session's
    (their run cache), the scaled lectures' the recorded ones; neither is executed again."""
    model = family.from_results(FROZEN_RESULTS, FAMILY)
    out = {}
    for folder, reuse in (("model_verdicts", Reuse(small_lectures_executed.cache, cell_timeout=CELL_TIMEOUT)),
                          ("model_verdicts_scaled", FrozenRuns())):
        verdicts = repo.audit_static(LECTURES / folder, model)
        repo.execute(verdicts, repo.Runs(("cpu",), CELL_TIMEOUT, reuse=reuse, progress=False), model=model)
        assert reuse.reused and not reuse.executed, (  # else these tests ran the lectures again
            f"{folder}: the session's runs were not reused (the command line and repo.execute keyed them apart)")
        out.update({f"{folder}/{v.path}": v for v in verdicts})
    return out


def test_every_jax_lecture_that_ran_has_a_predicted_gpu_time(executed):
    for v in executed.values():
        assert v.status == "ok", v.errors
        p = v.predicted["g4dn.2xlarge"]
        assert p.label == "predicted" and p.gpu.low <= p.gpu.seconds <= p.gpu.high
        assert colab.COLAB in v.predicted and v.basis == "predicted" and "margin" in v.why


def test_bulk_work_large_enough_keeps_the_gpu(executed):
    """Never pinned: the GPU is predicted faster; kept outright where its whole band clears the margin, else
    "either" (the one pin rule: an overlap of the bands decides nothing)."""
    for name in ("model_verdicts_scaled/vmapped_scan_long.md", "model_verdicts_scaled/bulk_eager_beside_unknown.md",
                 "model_verdicts_scaled/closed_matrix_long.md"):
        assert executed[name].recommendation in (C.KEEP_GPU, C.EITHER), (name, executed[name].why)
        pred = executed[name].predicted["g4dn.2xlarge"]
        assert pred.gpu.seconds < pred.cpu.seconds, (name, executed[name].why)


def test_small_work_is_decided_by_compile_and_start_up(executed):
    """A 1e6-firm scan of 200 steps or a one-off 4e6-element step: a fraction of a second of work on a CPU, less
    than the GPU's compiles: the numbers do not keep them on the GPU, whatever the static class. (The small
    closed_matrix, 100 steps, comes out near break-even on this shared host: its verdict is not asserted.)"""
    assert executed["model_verdicts/late_x64.md"].recommendation == C.PIN_CPU
    for name in ("model_verdicts/vmapped_scan.md", "model_verdicts/unknown_beside_bulk.md",
                 "model_verdicts/late_jit_name.md"):
        assert executed[name].recommendation in (C.PIN_CPU, C.EITHER), (name, executed[name].why)


def test_largest_later_trace_sizes_the_loop(executed):
    v = executed["model_verdicts_scaled/later_trace.md"]
    loop = next(lp for lp in v.scan.loops if lp.source != "executed")
    assert (loop.trips, loop.carry) == (50, 2_000_003) and loop.source == "static+executed"
    assert v.recommendation in (C.PIN_CPU, C.EITHER), v.why  # 50 eager steps: less work than one GPU compile


@pytest.mark.parametrize("lecture, trips", [("model_verdicts/vmapped_scan.md", 200),
                                            ("model_verdicts_scaled/vmapped_scan_long.md", 3000)])
def test_time_lands_in_the_cell_that_called(executed, lecture, trips):
    """Executed in this session (the small lecture) and as recorded (the scaled one)."""
    cells = {c.index: c for c in executed[lecture].runs["cpu"].cells}
    call, plot = cells[3], cells[4]  # `out = paths(k0)`, then `print(float(out.mean()))`
    assert not plot.calls and call.settle_s is not None  # the call and its wait are the calling cell's
    (entry,) = call.calls
    assert entry.name == "simulate" and entry.loops == [TracedLoop("lax.scan", trips, 1_000_000)]
    assert entry.first_s >= entry.compile_s > 0
