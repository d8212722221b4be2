"""Per-notebook overheads in the executed audit's prediction (jaxci.audit.judging.predicted): a fresh kernel's start
and the CPU client's start-up, measured here, are paid on either device (a published Execution Statistics run time
includes them), so both sides carry them, the verdict's GPU/CPU ratio leaves them out, and a CPU-only family gets
its CPU side as a build time. Arithmetic on made-up runs: never a timing."""

import re

import pytest

from jaxci.audit.judging import classify as C
from jaxci.audit.judging import family, predicted
from jaxci.audit.runner import CellTiming
from tests.frozen import RESULTS as FROZEN_RESULTS
from tests.modelutil import notebook, t4_family

model = t4_family


def _run(kernel_start=None, startup=None):
    return notebook(CellTiming(0, "", 2.0, 2.0, compilations=1, compile_s=0.1, startup_s=startup),
                    kernel_start_s=kernel_start)


def test_kernel_start_and_cpu_client_start_up_land_on_both_sides(model):
    bare, fresh = predicted.gpu_family(_run(), model.runner), predicted.gpu_family(_run(1.5), model.runner)
    assert fresh.cpu.seconds - bare.cpu.seconds == pytest.approx(1.5) == fresh.gpu.seconds - bare.gpu.seconds
    # the CPU client's start-up inside the cell's 2 s: moved to start-up on both sides, never dropped from the GPU's
    started = predicted.gpu_family(_run(1.5, 0.25), model.runner)
    for side in ("cpu", "gpu"):
        assert started.side(side).seconds == pytest.approx(fresh.side(side).seconds)
        assert started.side(side).parts["start-up"] - fresh.side(side).parts["start-up"] == pytest.approx(0.25)
    assert started.overhead_s == pytest.approx(1.75)


def test_the_verdict_ratio_leaves_the_shared_overhead_out(model):
    fresh = predicted.gpu_family(_run(30.0, 0.0), model.runner)
    _, why = C.verdict_from(fresh, "g4dn.2xlarge")
    cpu, gpu = fresh.cpu.seconds - 30.0, fresh.gpu.seconds - 30.0
    assert f"GPU/CPU {gpu / cpu:.2f}" in why and "without the fresh kernel's 30 s both pay" in why


def test_each_band_in_the_verdict_is_on_the_same_footing_as_its_value(model):
    """The value shown is the whole lecture's, so is its band: a band that does not hold its value reads as a
    broken model."""
    fresh = predicted.gpu_family(_run(30.0, 0.0), model.runner)
    _, why = C.verdict_from(fresh, "g4dn.2xlarge")
    for side in ("GPU", "CPU"):
        value, low, high = re.search(rf"{side} ([\d.,]+) s predicted \(band ([\d.,]+)-([\d.,]+)\)", why).groups()
        assert float(low.replace(",", "")) <= float(value.replace(",", "")) <= float(high.replace(",", "")), why


def test_a_cpu_only_family_gets_its_cpu_side():
    cpu_only = family.from_results(FROZEN_RESULTS, "ubuntu-latest")
    assert not cpu_only.crossover  # no GPU side: judge.decide_predicted makes no verdict record
    rec = predicted.cpu_family(_run(1.0), cpu_only.runner)
    assert rec.label == "predicted" and "CPU only" in rec.basis and rec.gpu is None
    assert rec.cpu.seconds >= 1.0 + 2.0 - 0.1 and rec.overhead_s == 1.0


def test_a_float64_lecture_still_counts_its_gpu_compiles(model):
    """two_computation's shape (float64, many compilations): the model's float64 CPU compile part is 0, so no
    float64 ratio exists; the float32 ratio counts them, said, instead of a GPU compile part of 0."""
    run = _run()
    run.cells = [CellTiming(i, "", 1.0, 1.0, compilations=5, compile_s=0.5) for i in range(4)]
    p = predicted.gpu_family(run, model.runner, float64=True)
    assert p.gpu.parts["compile"] >= p.cpu.parts["compile"] > 0
    assert any("at the float32 ratio" in m for m in p.missing)
