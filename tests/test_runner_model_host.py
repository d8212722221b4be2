"""NumPy matmul on a runner's CPU through the model's CPU GEMM scaling, and the published
figures' rounding interval: synthetic truth only."""

import math

import pytest

from jaxci.analysis import provenance as pv
from jaxci.evidence.published import read
from jaxci.report.published import _interval_ratio
from tests.modelutil import runner_model
from tests.synth import SynthResults

RATE = 1e11   # FLOP/s of the synthetic 2-vCPU machine's BLAS at all threads


def test_numpy_matmul_scales_by_physical_cores(tmp_path):
    s = SynthResults(tmp_path).machine("lab-epyc-2c", kind="lab", cores="2")
    s.add("lab-epyc-2c", "host.NumpyLinalg.time_run", ["op", "n", "threads", "dtype"],
          [["matmul"], [256, 3000], ["1", "all"], ["float64"]],
          lambda op, n, threads, dtype: 2 * n**3 / (RATE if threads == "all" else RATE / 2))
    model = runner_model(s.save())
    p = model.predict("c7i.2xlarge", "numpy_matmul", 3000, "float64", "cpu")
    ref_cores = math.sqrt(1 * 2)   # the 2-vCPU VM: 1-2 physical cores (SMT unknown), geometric mean
    assert p.seconds == pytest.approx(2 * 3000**3 / (RATE * 4 / ref_cores))       # c7i.2xlarge: 4 physical
    assert p.low < p.seconds < p.high and "one thread" in p.inputs
    # ubuntu-latest's physical cores have no primary source (GitHub's docs give 4 processors): 2-4, SMT unknown
    u = model.predict("ubuntu-latest", "numpy_matmul", 3000, "float64", "cpu")
    assert u.seconds == pytest.approx(2 * 3000**3 / (RATE * math.sqrt(2 * 4) / ref_cores))
    assert "ubuntu-latest 2-4 physical cores (SMT unknown)" in u.inputs and u.rests_on(pv.CATALOGUE, "ubuntu-latest")
    assert "device cpu" in model.predict("g4dn.2xlarge", "numpy_matmul", 3000, "float64", "gpu").reason


def test_published_values_carry_their_rounding_interval():
    figs = [f for f in read().incidents if f.case in ("1000x1000 matmul, compiled", "NumPy 3000x3000 matmul")]
    t4 = [f for f in figs if f.family == "g4dn.2xlarge" and f.kernel == "matmul"][0]
    assert t4.resolution_s == pytest.approx(0.0005)
    assert _interval_ratio(0.0008, t4) == 1.0 and _interval_ratio(0.00025, t4) == pytest.approx(0.5)
    numpy = [f for f in figs if f.kernel == "numpy_matmul"]
    assert {f.device for f in numpy} == {"cpu"} and {f.dtype for f in numpy} == {"float64"}


def test_cpu_op_mix_rate_follows_the_measured_size(tmp_path):
    """In cache (small n) the op mix runs faster than from memory (large n): the CPU line takes the rate measured
    near n, log-interpolated, so a crossover at n ~ 1e4 is not placed with the rate of n = 1e7."""
    fast, slow, floor = 2e8, 5e7, 5e-6
    rate = {10_000: fast, 100_000: fast, 10_000_000: slow}
    s = SynthResults(tmp_path).machine("lab-epyc-2c", kind="lab", cores="2")
    s.add("lab-epyc-2c", "dispatch.TinyOp.time_warm", ["dtype", "device"], [["float32"], ["cpu"]], lambda **_: floor)
    s.add("lab-epyc-2c", "elementwise.Elementwise.time_warm", ["n", "dtype", "device"],
          [sorted(rate), ["float32"], ["cpu"]], lambda n, dtype, device: floor + n / rate[n])
    model = runner_model(s.save())
    at = {n: model.predict("ubuntu-latest", "elementwise", n, "float32", "cpu").seconds for n in (20_000, 10**7, 10**8)}
    assert at[20_000] == pytest.approx(floor + 20_000 / fast)
    assert at[10**7] == pytest.approx(floor + 10**7 / slow) and at[10**8] == pytest.approx(floor + 10**8 / slow)
    mid = 10**6   # halfway in log n between 1e5 and 1e7: the geometric mean of the two rates
    got = model.predict("ubuntu-latest", "elementwise", mid, "float32", "cpu").seconds
    assert got == pytest.approx(floor + mid / math.sqrt(fast * slow))


def test_cpu_op_mix_below_the_smallest_size_keeps_its_fixed_cost(tmp_path):
    """Below a machine's smallest measured size the op mix follows the line through its two smallest sizes (a
    fixed cost of the call plus a per-element cost), not the rate of the smallest size held, which would leave
    only the TinyOp floor as the fixed cost; the band runs from that (fast end) to the smallest size's time."""
    floor, fixed, per = 5e-6, 6e-5, 5e-9   # the call's own fixed cost 12x the floor, as the measured CPUs show
    s = SynthResults(tmp_path).machine("lab-epyc-2c", kind="lab", cores="2")
    s.add("lab-epyc-2c", "dispatch.TinyOp.time_warm", ["dtype", "device"], [["float32"], ["cpu"]], lambda **_: floor)
    s.add("lab-epyc-2c", "elementwise.Elementwise.time_warm", ["n", "dtype", "device"],
          [[10_000, 100_000], ["float32"], ["cpu"]], lambda n, dtype, device: fixed + n * per)
    model = runner_model(s.save())
    p = model.predict("ubuntu-latest", "elementwise", 1000, "float32", "cpu")
    assert p.seconds == pytest.approx(fixed + 1000 * per)
    t0 = fixed + 10_000 * per
    assert p.low == pytest.approx(floor + (t0 - floor) * 1000 / 10_000)   # the rate of n = 1e4 held
    assert p.high == pytest.approx(t0)                                     # the time of n = 1e4 held
    assert "below its smallest size n=10,000" in p.inputs
