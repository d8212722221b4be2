"""kalman: the state-space log-likelihood of the NUTS incident and its gradient, sequential (lax.scan) and
parallel-in-time (lax.associative_scan), over state dimension k and T = n steps.

The incident model is k = 11 over n = 96 quarters in float64 (incidents.md): every NUTS leapfrog step
evaluates `KalmanGrad` at that shape. The sequential filter is a loop of tiny ops (launch-bound on a GPU);
the parallel one trades O(log n) depth for k x k solves, which is the GPU's best chance on this model.
CI scale runs only the incident shape (k = 11, n = 96), sequential in both dtypes and the parallel
likelihood in float64 (its gradient compiles for seconds); everything else is skipped there. The cold first
call of the gradient is timed in compile.CompileColdStart (a CompileSplit class here would add 24 processes).
"""

from benchmarks.common import (
    DEVICES,
    DTYPES,
    WarmTime,
    scale,
    track_scale,  # noqa: F401  (a run fact: the scale this suite ran at)
)

VARIANTS = ["sequential", "parallel"]
STATE_DIMS = [2, 11, 50]
STEPS = [96, 1000]
CI_CASE = (11, 96)  # (k, n): the incident's shape


def _inputs(k, n, dtype):
    from benchmarks.kernels import kalman

    return kalman.inputs(k, n, dtype)


class _Kalman(WarmTime):
    params = [VARIANTS, STATE_DIMS, STEPS, DTYPES, DEVICES]
    param_names = ["variant", "k", "n", "dtype", "device"]
    timeout = 300  # the k = 50, n = 1000 parallel gradient compiles for about 15 s on a 2-core CPU
    ci_variants_dtypes: set = set()

    def is_large(self, variant, k, n):
        return (k, n) != CI_CASE

    def setup(self, variant, k, n, dtype, device):
        if scale() == "ci" and (variant, dtype) not in self.ci_variants_dtypes:
            raise NotImplementedError("skipped at JAXCI_SCALE=ci")
        super().setup(variant, k, n, dtype, device)


class KalmanLoglik(_Kalman):
    ci_variants_dtypes = {("sequential", "float32"), ("sequential", "float64"), ("parallel", "float64")}

    def build(self, variant, k, n, dtype):
        from benchmarks.kernels import kalman

        return kalman.loglik_fn(variant, k), _inputs(k, n, dtype)


class KalmanGrad(_Kalman):
    """d loglik / d theta for the 18 parameters: the per-leapfrog-step cost of NUTS on this model."""

    ci_variants_dtypes = {("sequential", "float32"), ("sequential", "float64")}

    def build(self, variant, k, n, dtype):
        from benchmarks.kernels import kalman

        return kalman.grad_fn(variant, k), _inputs(k, n, dtype)
