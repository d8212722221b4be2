"""Dense linear algebra: the FP32/FP64 control workload (compute-bound at large n)."""

import jax.numpy as jnp
import jax.scipy.linalg as jsl

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
    """Nominal floating-point operations, for achieved GFLOP/s (matmul 2n^3, LU solve 2/3 n^3 + 2n^3, Cholesky 1/3 n^3)."""
    return {"matmul": 2 * n**3, "solve": 2 / 3 * n**3 + 2 * n**3, "cholesky": n**3 / 3}[op]
