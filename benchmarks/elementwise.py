"""elementwise: the intro-lecture op mix (cos, sin, sqrt, exp) from 1e3 to 5e7 elements (memory-bound)."""

# track_scale is a run fact (the scale this suite ran at), collected by asv from this module
from benchmarks.common import DEVICES, DTYPES, ColdStart, CompileSplit, WarmTime, track_scale  # noqa: F401

SIZES = [1_000, 10_000, 100_000, 1_000_000, 10_000_000, 50_000_000]
CI_MAX_N = 100_000
COMPILE_N = 100_000


def _build(n, dtype):
    from benchmarks.kernels import elementwise

    return elementwise.op_mix, elementwise.inputs(n, dtype)


class Elementwise(WarmTime):
    params = [SIZES, DTYPES, DEVICES]
    param_names = ["n", "dtype", "device"]

    def is_large(self, n):
        return n > CI_MAX_N

    def build(self, n, dtype):
        return _build(n, dtype)


class ElementwiseCompile(CompileSplit):
    params = [DTYPES, DEVICES]
    param_names = ["dtype", "device"]

    def build(self, dtype):
        return _build(COMPILE_N, dtype)


class ElementwiseColdStart(ColdStart):
    params = ElementwiseCompile.params
    param_names = ElementwiseCompile.param_names
    build = ElementwiseCompile.build


# ---- achieved memory bandwidth (the second GPU capture) ----

import statistics  # noqa: E402  (appended with the class that uses them)
import time  # noqa: E402

BANDWIDTH_OPS = ["scale", "axpy"]
BANDWIDTH_SIZES = [1_000_000, 10_000_000, 100_000_000]   # 1e8 elements: 400 MB (float32) / 800 MB per array
BANDWIDTH_CI_MAX_N = 1_000_000
GBPS_MIN_CALLS, GBPS_MAX_CALLS, GBPS_BUDGET_S = 5, 51, 2.0
clock = time.perf_counter   # the GB/s track's clock (the tests put a fake one here)


def median_call_s(call) -> float:
    """Median seconds of `call()` (which blocks) over at least GBPS_MIN_CALLS calls, more while the budget lasts."""
    times: list[float] = []
    spent = 0.0
    while len(times) < GBPS_MIN_CALLS or (len(times) < GBPS_MAX_CALLS and spent < GBPS_BUDGET_S):
        start = clock()
        call()
        times.append(clock() - start)
        spent += times[-1]
    return statistics.median(times)


class Bandwidth(WarmTime):
    """Achieved memory bandwidth of STREAM-like kernels: `scale` (a * x) and `axpy` (a * x + y), fused by XLA
    into one pass, from 1e6 to 1e8 elements (4 MB to 800 MB per array).

    `time_warm` as every warm kernel; `track_gbps` is bytes read plus written (kernels.elementwise.bandwidth_bytes:
    scale 2n, axpy 3n elements; outputs are new buffers, nothing is donated) over the median of at least 5 blocked
    calls (up to 51, while 2 s last), measured in its own process after the same compile and warm call.
    1e6 runs at CI scale. A GPU's figure at 1e8 is its streaming bandwidth; at 1e6 (a few MB) it is launch-bound,
    and on a CPU the small sizes are cache-resident: read the figure by size.
    """

    params = [BANDWIDTH_OPS, BANDWIDTH_SIZES, DTYPES, DEVICES]
    param_names = ["op", "n", "dtype", "device"]
    timeout = 300   # 1e8 float64 axpy on a 2-core CPU runner: 2.4 GB a call, host inputs ~2 s

    def is_large(self, op, n):
        return n > BANDWIDTH_CI_MAX_N

    def build(self, op, n, dtype):
        from benchmarks.kernels import elementwise

        return elementwise.BANDWIDTH_KERNELS[op], elementwise.bandwidth_inputs(op, n, dtype)

    def track_gbps(self, op, n, dtype, device):
        from benchmarks.kernels import elementwise

        seconds = median_call_s(lambda: self.jax.block_until_ready(self.fn(*self.args)))
        return elementwise.bandwidth_bytes(op, n, dtype) / seconds / 1e9

    track_gbps.unit = "GB/s"
