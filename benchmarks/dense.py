"""dense: matmul, solve and Cholesky over n, the FP32/FP64 control (compute-bound at large n).

Read with asv's "x-axis: n" view: where the gpu line crosses the cpu line is the break-even size.
"""

# track_scale is a run fact (the scale this suite ran at), collected by asv from this module
from benchmarks.common import DEVICES, DTYPES, ColdStart, CompileSplit, WarmTime, track_scale  # noqa: F401

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


# ---- matmul per precision path (the second GPU capture) ----

PRECISIONS = ["default", "highest"]
PRECISION_SIZES = [1024, 2048, 4096, 8192]
PRECISION_CI_MAX_N = 1024
GPU_ONLY_N = 8192   # on a CPU one float64 call takes ~10 s, and both precisions are the same path there


class DensePrecision(WarmTime):
    """matmul with an explicit `jax.lax.Precision`: `default` (DEFAULT) or `highest` (HIGHEST).

    On GPUs with TF32 tensor cores (A10G, L4, H200) a float32 matmul at DEFAULT precision may run in TF32
    (10-bit mantissa inputs); HIGHEST forces true FP32 GEMM, so the pair measures the FP32 rate that `Dense`
    (plain `a @ b`, DEFAULT) cannot. The T4 has no TF32, and float64 has one path on every device: there the
    two precisions should time the same. On a CPU both precisions are the same path (XLA:CPU computes a
    float32 dot in FP32 whatever the precision), so the CPU lines are a control, not a second measurement.

    Achieved GFLOP/s is flops(n) = 2 n^3 (kernels.dense.flops("matmul", n)) over this time, as the report
    does for `Dense` (jaxci.analysis.work); no separate track, so a capture times each combination once.
    n = 1024 runs at CI scale; 8192 runs only on a GPU (n/a on a CPU: ~10 s a call, one path).
    """

    params = [PRECISIONS, PRECISION_SIZES, DTYPES, DEVICES]
    param_names = ["precision", "n", "dtype", "device"]
    timeout = 600   # n = 8192 in float64 on a T4 (1/32-rate FP64): ~4 s a call

    def setup(self, precision, n, dtype, device):
        if n >= GPU_ONLY_N and device == "cpu":
            raise NotImplementedError(f"n = {n}: a GPU size (on a CPU ~10 s a call, both precisions one path)")
        super().setup(precision, n, dtype, device)

    def is_large(self, precision, n):
        return n > PRECISION_CI_MAX_N

    def build(self, precision, n, dtype):
        from benchmarks.kernels import dense

        return dense.PRECISION_KERNELS[precision], dense.matmul_inputs(n, dtype)
