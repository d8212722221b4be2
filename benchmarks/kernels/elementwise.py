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



# ---- streaming bandwidth (elementwise.Bandwidth): STREAM-like kernels with next to no arithmetic ----

BANDWIDTH_OPS = ["scale", "axpy"]
AXPY_A = 2.5   # exact in binary: with the small-integer inputs below every result is exact in either dtype


def scale(x):
    """a * x (STREAM "scale"): reads x, writes a new array."""
    return AXPY_A * x


def axpy(x, y):
    """a * x + y (BLAS axpy): reads x and y, writes a new array (y is not donated, so not overwritten)."""
    return AXPY_A * x + y


BANDWIDTH_KERNELS = {"scale": scale, "axpy": axpy}
#: (arrays read, arrays written) of n elements per call
BANDWIDTH_ARRAYS = {"scale": (1, 1), "axpy": (2, 1)}


def bandwidth_inputs(op: str, n: int, dtype: str, seed: int = 0):
    """x (and y for axpy): small integers, so a * x + y is exact and JAX and NumPy agree to the bit."""
    rng = np.random.default_rng(seed)
    reads, _ = BANDWIDTH_ARRAYS[op]
    return tuple(rng.integers(-1000, 1000, n).astype(dtype) for _ in range(reads))


def bandwidth_bytes(op: str, n: int, dtype: str) -> int:
    """Bytes read plus bytes written by one call, for achieved GB/s: scale 2n, axpy 3n elements."""
    reads, writes = BANDWIDTH_ARRAYS[op]
    return (reads + writes) * n * np.dtype(dtype).itemsize


def bandwidth_numpy(op: str, *args):
    """The same kernels in NumPy (the tests compare them exactly)."""
    return AXPY_A * args[0] if op == "scale" else AXPY_A * args[0] + args[1]
