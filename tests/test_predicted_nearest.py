"""The audit's lecture prediction with the nearest evidence (published on the family's hardware), as held against the
runners' published builds: the GPU / CPU ratio per fresh jit from one published source that ran the same series on
both devices, and a loop no call entry timed moving by the speed-up at its carry. Arithmetic on made-up runs and the
committed reference tables: never a timing."""

import dataclasses

import pytest

from jaxci.analysis import provenance as pv
from jaxci.audit.judging import classify, family, predicted
from jaxci.audit.reading.cell_records import EagerSize, EagerWork
from jaxci.audit.runner import CellTiming
from jaxci.evidence.inputs import reference
from tests.frozen import RESULTS as FROZEN_RESULTS
from tests.modelutil import notebook, runner_model

T4 = "g4dn.2xlarge"


@pytest.fixture(scope="module")
def nearest():
    return family.from_results(FROZEN_RESULTS, T4, published=reference())


def _scaled(ev, kernel_term, where, factor):
    return [dataclasses.replace(e, value=e.value.scale(factor)) if e.term == kernel_term and e.where == where else e
            for e in ev]


def test_the_fresh_jit_ratio_is_one_sources_pair_and_follows_it():
    ev = reference()
    pair = runner_model(published=ev).fresh_jit_ratio(T4)
    assert pair is not None and 0.5 < pair[0].mid < 2.0   # the two runners' own series: same work, same source
    gpu, cpu = (pv.figure_name("fresh-jit series 100-3000", *at) for at in ((T4, "gpu"), ("ubuntu-latest", "cpu")))
    probes = [pv.figure_name("pure-Python integer sum (10M)", f, "cpu") for f in (T4, "ubuntu-latest")]
    assert pv.derived_from(pair[1][0].sources, gpu) and not pv.derived_from(pair[1][0].sources, cpu)
    assert pv.derived_from(pair[1][1].sources, cpu) and all(pv.derived_from(pair[1][1].sources, p) for p in probes)
    assert runner_model().fresh_jit_ratio(T4) is None          # transfer-only: no pair
    assert runner_model(published=ev).fresh_jit_ratio("g6.2xlarge") is None   # nothing published there
    tripled = runner_model(published=_scaled(ev, "series_compile", T4, 3.0)).fresh_jit_ratio(T4)
    assert tripled[0].mid > 2.5 * pair[0].mid   # the GPU series moves the ratio: it is an input, not a constant


def _compiling_run():
    return notebook(*(CellTiming(i, "", 2.0, 2.0, compilations=5, compile_s=1.0) for i in range(1, 4)))


def test_the_compile_ratio_is_every_same_source_pair_and_follows_each():
    """Beside the fresh-jit series, each case whose compile part one source published on both runners (g4dn's
    T4 and the CPU runner: matmuls, a large elementwise op, a scalar scan), the CPU side moved to g4dn's host: what
    a lecture compiles is a mix, so their geometric mean, band the lowest to the highest pair."""
    ev = reference()
    model = runner_model(published=ev)
    both, inputs = model.compile_ratio(T4)
    series = model.fresh_jit_ratio(T4)[0]
    pairs = [i for i in inputs if " s over " in str(i)]   # one line per compile-part pair
    scan = [pv.figure_name("scalar scan compile", *where) for where in ((T4, "gpu"), ("ubuntu-latest", "cpu"))]
    assert len(pairs) == 4 and sum(all(pv.derived_from(i.sources, f) for f in scan) for i in pairs) == 1
    assert both.low < 1.0 < series.mid < both.mid < both.high   # a 50M-element op compiles faster on the T4
    assert "geometric mean of 5 published pairs" in str(inputs[-1])
    assert runner_model().compile_ratio(T4) is None          # transfer-only: no pair
    scan = [e for e in ev if e.term == "compile" and e.key == "scan" and e.device == "gpu"]
    tripled = runner_model(published=[dataclasses.replace(e, value=e.value.scale(3.0)) if e in scan else e
                                      for e in ev]).compile_ratio(T4)[0]
    assert tripled.mid == pytest.approx(both.mid * 3.0 ** (1 / 5))   # one pair of five, moved: an input
    assert tripled.high == pytest.approx(both.high * 3.0)


def test_further_gpu_compilations_take_the_published_pairs_and_say_so(nearest):
    p = predicted.gpu_family(_compiling_run(), nearest.runner)
    ratio = nearest.runner.model.compile_ratio(T4)[0]
    per = 14 * 3.0 / 15   # 15 compilations in 3 s: the first is start-up, the other 14 at this run's seconds
    assert p.gpu.parts["compile"] == pytest.approx(per * ratio.mid)
    assert p.cpu.parts["compile"] == pytest.approx(per)
    assert any("further compilations on the GPU" in i and "published (" in i for i in p.inputs)
    transfer = predicted.gpu_family(_compiling_run(), family.from_results(FROZEN_RESULTS, T4).runner)
    assert not transfer.inputs   # no published pair: the first-compile ratio, as before
    # a float64 lecture: the pairs stand, so no first-compile fallback is noted as missing (it is not used)
    f64 = predicted.gpu_family(_compiling_run(), nearest.runner, float64=True)
    assert not any("first-compile ratio" in m for m in f64.missing), f64.missing
    assert any("first-compile ratio" in m for m in predicted.gpu_family(
        _compiling_run(), family.from_results(FROZEN_RESULTS, T4).runner, float64=True).missing)


def _uncalled_loop_run(carry):
    loops = [["lax.while_loop", None, carry, 1, "simulate"]] if carry else []
    cell = CellTiming(1, "", 20.0, 20.0, compilations=1, compile_s=0.5, loops=loops, jitted={"simulate": 1},
                      eager=EagerWork(1, 0.0, [EagerSize(4, 1, "float32")]))
    return notebook(cell)


def test_a_loop_no_call_timed_moves_by_the_speed_up_at_its_carry(nearest):
    bulk = predicted.gpu_family(_uncalled_loop_run(400_000), nearest.runner)
    tiny = predicted.gpu_family(_uncalled_loop_run(None), nearest.runner)
    assert bulk.cpu.parts["eager"] == pytest.approx(tiny.cpu.parts["eager"])   # measured, unchanged
    assert bulk.gpu.seconds < 0.5 * tiny.gpu.seconds
    assert bulk.gpu.high == pytest.approx(tiny.gpu.high)   # none of it moving stays the high end


def _calls_run(fusions=14, warm_s=2e-4, largest=200, flops=2e3, nbytes=8e3, wall_s=1.0):
    """One cell of 1000 calls of one executable of `fusions` fusions."""
    entry = {"name": "update", "calls": 1000, "largest": largest, "dtype": "float32", "flops": flops, "bytes": nbytes,
             "loops": [], "fusions": fusions, "warm_s": warm_s}
    return notebook(CellTiming(1, "", wall_s, wall_s, calls=[entry]))


def test_a_small_executable_costs_a_launch_per_fusion_on_the_gpu(nearest):
    one, many = (predicted.gpu_family(_calls_run(f), nearest.runner) for f in (1, 14))
    step = nearest.runner.step("scan", "float32", "gpu").value
    floor = nearest.runner.call("dispatch", None, "float32", "gpu").seconds
    per = 14 * step / predicted.SCAN_STEP_KERNELS ** 0.5   # between 14 steps' kernels and 14 whole steps
    assert many.gpu.parts["calls"] == pytest.approx(1000 * (floor + per))
    assert one.gpu.parts["calls"] < many.gpu.parts["calls"]
    assert many.cpu.parts["calls"] == pytest.approx(one.cpu.parts["calls"])   # measured here, as it was


def _tiny_calls_run(warm_s, **work):
    return _calls_run(warm_s=warm_s, largest=1, wall_s=1000 * warm_s + 0.1, **work)


def test_a_tiny_calls_host_side_handling_is_paid_on_the_gpu_too(nearest):
    """back_prop's shape: many calls of a tiny executable with many arrays in and out, each taking far longer
    here than its work: that host-side handling stays on the GPU side, beside its launches."""
    slow, quick = (predicted.gpu_family(_tiny_calls_run(w), nearest.runner) for w in (2.5e-4, 1e-6))
    cpu = predicted._call_time(nearest.runner, _tiny_calls_run(0).cells[0].calls[0], "cpu").seconds
    assert slow.gpu.parts["host"] - quick.gpu.parts["host"] == pytest.approx(1000 * (2.5e-4 - cpu),
                                                                                         abs=1e-3)
    assert slow.gpu.parts["calls"] == pytest.approx(quick.gpu.parts["calls"])   # launches unchanged
    big = predicted.gpu_family(_tiny_calls_run(2.5e-4, flops=2e9, nbytes=8e8), nearest.runner)  # real work
    assert big.gpu.parts["host"] == pytest.approx(0.1, abs=1e-6)   # nothing added beside real work


def test_the_curves_basis_is_a_field_not_the_first_word_of_its_label():
    measured = family.from_results(FROZEN_RESULTS, "lab-h200")   # the capture timed both devices' op mix
    predicted = family.from_results(FROZEN_RESULTS, T4, published=reference())
    assert (measured.curve_basis, predicted.curve_basis) == (family.MEASURED, family.PREDICTED)
    for model in (measured, predicted):
        basis = model.curve_basis
        model.curve_label = f"elementwise times ({basis})"
        assert classify._curve_basis(model) == basis
