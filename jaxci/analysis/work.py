"""Nominal work of the timed kernels, re-stated here because analysis must not import JAX or benchmarks.

Keep in step with benchmarks/kernels/dense.py `flops` and benchmarks/kernels/elementwise.py `bytes_moved`
(tests/test_analysis.py checks the two agree).
"""

from __future__ import annotations

ITEMSIZE = {"float32": 4, "float64": 8}


def dense_flops(op: str, n: int) -> float:
    """benchmarks/kernels/dense.py flops(): matmul 2n^3, LU solve 2/3 n^3 + 2n^3, Cholesky 1/3 n^3."""
    return {"matmul": 2 * n**3, "solve": 2 / 3 * n**3 + 2 * n**3, "cholesky": n**3 / 3}[op]


def elementwise_bytes(n: int, dtype: str) -> int:
    """benchmarks/kernels/elementwise.py bytes_moved(): one read and one write per element."""
    return 2 * n * ITEMSIZE[dtype]


#: XLA's cost analysis of the op mix (benchmarks/kernels/elementwise.py op_mix), per element, the same in both
#: dtypes: 8 flops and 4 transcendentals (cos, sin, sqrt, exp). tests/test_runner_model_published.py compiles
#: the kernel and checks these against `jax.jit(op_mix).lower(x).compile().cost_analysis()`.
OP_MIX_FLOPS_PER_ELEMENT = 8
OP_MIX_TRANSCENDENTALS_PER_ELEMENT = 4


def elementwise_ops(n: int) -> tuple[int, int]:
    """(flops, transcendentals) of the op mix at n elements, as XLA's cost analysis counts them."""
    return OP_MIX_FLOPS_PER_ELEMENT * n, OP_MIX_TRANSCENDENTALS_PER_ELEMENT * n


def dense_bytes(n: int, dtype: str) -> int:
    """Two n x n inputs read, one n x n output written (a floor: blocked kernels re-read more)."""
    return 3 * n * n * ITEMSIZE[dtype]


BANDWIDTH_ARRAYS = {"scale": 2, "axpy": 3}   # arrays of n elements read plus written (kernels/elementwise.py)


def bandwidth_bytes(op: str, n: int, dtype: str) -> int:
    """benchmarks/kernels/elementwise.py bandwidth_bytes(): scale reads and writes n, axpy reads 2n, writes n."""
    return BANDWIDTH_ARRAYS[op] * n * ITEMSIZE[dtype]


def work(benchmark: str, params: dict) -> tuple[str, float, float] | None:
    """(bound, flops, bytes) for a warm-timed kernel with a stated work formula, else None.

    bound is "flops" (compute-bound: compared with FLOP/s peaks) or "bytes" (memory-bound: GB/s).
    """
    n, dtype = params.get("n"), params.get("dtype")
    if not isinstance(n, int) or dtype not in ITEMSIZE:
        return None
    if benchmark == "dense.Dense.time_warm" and params.get("op") in ("matmul", "solve", "cholesky"):
        return "flops", dense_flops(params["op"], n), dense_bytes(n, dtype)
    if benchmark == "dense.DensePrecision.time_warm" and params.get("precision") in ("default", "highest"):
        return "flops", dense_flops("matmul", n), dense_bytes(n, dtype)
    if benchmark == "elementwise.Elementwise.time_warm":
        return "bytes", 0.0, elementwise_bytes(n, dtype)
    if benchmark == "elementwise.Bandwidth.time_warm" and params.get("op") in BANDWIDTH_ARRAYS:
        return "bytes", 0.0, bandwidth_bytes(params["op"], n, dtype)
    return None


WHILE_K, WHILE_TOL, WHILE_MAX = 25, 1e-6, 10_000   # benchmarks/kernels/loops.py power_iteration(_inputs)


def while_iterations(dtype: str) -> int | None:
    """Iterations loops.WhileConverge runs: benchmarks/kernels/loops.py's power iteration restated in NumPy on
    the same fixed matrix (seed 0), start vector and tolerance, so the count is deterministic and needs no
    benchmark change (tests/test_runner_model_loops.py checks it against the JAX kernel). None without NumPy."""
    try:
        import numpy as np
    except ImportError:
        return None
    rng = np.random.default_rng(0)
    q, _ = np.linalg.qr(rng.standard_normal((WHILE_K, WHILE_K)))
    eig = np.linspace(0.1, 0.9, WHILE_K)
    eig[-1] = 1.0
    a = ((q * eig) @ q.T).astype(dtype)
    v = np.full(WHILE_K, 1 / np.sqrt(WHILE_K), dtype=dtype)
    delta, i = np.inf, 0
    while delta > WHILE_TOL and i < WHILE_MAX:
        w = a @ v
        w = w / np.linalg.norm(w)
        delta, v, i = float(np.linalg.norm(w - v)), w, i + 1
    return i
