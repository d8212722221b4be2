"""The large elementwise expression of an introductory lecture: memory-bound at large sizes."""

import jax.numpy as jnp
import numpy as np

from benchmarks.kernels.host import elementwise_inputs
from benchmarks.kernels.host import op_mix as op_mix_host

SIZES = [1_000, 10_000, 100_000, 1_000_000, 10_000_000, 50_000_000]


def op_mix(x):
    """A composition of cos, sin, sqrt and exp, fused by XLA into one pass."""
    return jnp.cos(x) ** 2 * jnp.sin(3 * x) + jnp.sqrt(jnp.abs(x)) * jnp.exp(-0.5 * x * x)


#: The same expression in NumPy (the host suite times it; the tests check the JAX one against it).
op_mix_numpy = op_mix_host


def inputs(n: int, dtype: str):
    return (elementwise_inputs(n, dtype),)


def bytes_moved(n: int, dtype: str) -> int:
    """One read and one write per element, for achieved GB/s."""
    return 2 * n * np.dtype(dtype).itemsize
