"""kalman: the state-space log-likelihood of the NUTS incident and its gradient, sequential (lax.scan) and
parallel-in-time (lax.associative_scan), over state dimension k and T = n steps.

The incident model is k = 11 over n = 96 quarters in float64 (incidents.md): every NUTS leapfrog step
evaluates `KalmanGrad` at that shape. The sequential filter is a loop of tiny ops (launch-bound on a GPU);
the parallel one trades O(log n) depth for k x k solves, which is the GPU's best chance on this model.
CI scale runs only the incident shape (k = 11, n = 96); everything else is skipped there. The cold first
call of the gradient is timed in compile.CompileColdStart (a CompileSplit class here would add 24 processes).
"""

from benchmarks.common import DEVICES, DTYPES, WarmTime

VARIANTS = ["sequential", "parallel"]
STATE_DIMS = [2, 11, 50]
STEPS = [96, 1000]
CI_CASE = (11, 96)  # (k, n): the incident's shape


def _inputs(k, n, dtype):
    from benchmarks.kernels import kalman

    return kalman.inputs(k, n, dtype)


class KalmanLoglik(WarmTime):
    params = [VARIANTS, STATE_DIMS, STEPS, DTYPES, DEVICES]
    param_names = ["variant", "k", "n", "dtype", "device"]
    timeout = 300

    def is_large(self, variant, k, n):
        return (k, n) != CI_CASE

    def build(self, variant, k, n, dtype):
        from benchmarks.kernels import kalman

        return kalman.loglik_fn(variant, k), _inputs(k, n, dtype)


class KalmanGrad(WarmTime):
    """d loglik / d theta for the 18 parameters: the per-leapfrog-step cost of NUTS on this model."""

    params = KalmanLoglik.params
    param_names = KalmanLoglik.param_names
    timeout = 300
    is_large = KalmanLoglik.is_large

    def build(self, variant, k, n, dtype):
        from benchmarks.kernels import kalman

        return kalman.grad_fn(variant, k), _inputs(k, n, dtype)
