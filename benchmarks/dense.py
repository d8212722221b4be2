"""dense: matmul, solve and Cholesky over n, the FP32/FP64 control (compute-bound at large n).

Read with asv's "x-axis: n" view: where the gpu line crosses the cpu line is the break-even size.
"""

from benchmarks.common import DEVICES, DTYPES, ColdStart, CompileSplit, WarmTime
from benchmarks.common import track_scale  # noqa: F401  (a run fact: the scale this suite ran at)

OPS = ["matmul", "solve", "cholesky"]
SIZES = [64, 256, 1024, 2048, 4096]
CI_MAX_N = 256
COMPILE_N = 256


def _build(op, n, dtype):
    from benchmarks.kernels import dense

    return dense.KERNELS[op], dense.inputs(n, dtype)


class Dense(WarmTime):
    params = [OPS, SIZES, DTYPES, DEVICES]
    param_names = ["op", "n", "dtype", "device"]

    def is_large(self, op, n):
        return n > CI_MAX_N

    def build(self, op, n, dtype):
        return _build(op, n, dtype)


class DenseCompile(CompileSplit):
    params = [OPS, DTYPES, DEVICES]
    param_names = ["op", "dtype", "device"]

    def build(self, op, dtype):
        return _build(op, COMPILE_N, dtype)


class DenseColdStart(ColdStart):
    params = DenseCompile.params
    param_names = DenseCompile.param_names
    build = DenseCompile.build
