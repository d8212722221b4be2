"""Dense linear algebra: the FP32/FP64 control workload (compute-bound at large n)."""

import jax
import jax.numpy as jnp
import jax.scipy.linalg as jsl
import numpy as np

from benchmarks.kernels.host import linalg_inputs

OPS = ["matmul", "solve", "cholesky"]


def matmul(a, b):
    return a @ b


def solve(a, b):
    return jnp.linalg.solve(a, b)


def cholesky(a, b):
    return jsl.cholesky(a, lower=True)


KERNELS = {"matmul": matmul, "solve": solve, "cholesky": cholesky}


#: A symmetric positive definite matrix (so every op is well posed) and a right-hand side: the same
#: matrices the NumPy host suite times, so JAX and NumPy results compare directly.
inputs = linalg_inputs


def flops(op: str, n: int) -> float:
    """Nominal floating-point operations, for achieved GFLOP/s (matmul 2n^3, LU solve 2/3 n^3 + 2n^3,
    Cholesky 1/3 n^3)."""
    return {"matmul": 2 * n**3, "solve": 2 / 3 * n**3 + 2 * n**3, "cholesky": n**3 / 3}[op]


# ---- matmul per precision path (dense.DensePrecision) ----

PRECISIONS = ["default", "highest"]


def matmul_default(a, b):
    """jax.lax.Precision.DEFAULT, named explicitly so an inherited JAX_DEFAULT_MATMUL_PRECISION cannot move it:
    float32 may run on TF32 tensor cores on GPUs that have them (A10G, L4, H200; not the T4)."""
    return jnp.matmul(a, b, precision=jax.lax.Precision.DEFAULT)


def matmul_highest(a, b):
    """jax.lax.Precision.HIGHEST: true FP32 (or FP64) GEMM on every device."""
    return jnp.matmul(a, b, precision=jax.lax.Precision.HIGHEST)


PRECISION_KERNELS = {"default": matmul_default, "highest": matmul_highest}


def matmul_inputs(n: int, dtype: str, seed: int = 0):
    """Two standard-normal n x n matrices: matmul needs no structure, and at n = 8192 the SPD `inputs` would
    cost a host GEMM per benchmark process."""
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, n)).astype(dtype), rng.standard_normal((n, n)).astype(dtype)
