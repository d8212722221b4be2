"""elementwise: the intro-lecture op mix (cos, sin, sqrt, exp) from 1e3 to 5e7 elements (memory-bound)."""

from benchmarks.common import DEVICES, DTYPES, ColdStart, CompileSplit, WarmTime
from benchmarks.common import track_scale  # noqa: F401  (a run fact: the scale this suite ran at)

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
