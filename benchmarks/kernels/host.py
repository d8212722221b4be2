"""Host kernels: what most lecture cells run (plain Python, NumPy, Numba), with no JAX import.

The NumPy kernels use the same expressions and inputs as the JAX dense and elementwise kernels, and the
Numba loop is the same quadratic map as the JAX scan, so a report can set host and JAX lines side by side
at the same n. Numba is imported only when its kernels are asked for (it costs ~0.3 s per process).
"""

from __future__ import annotations

import functools
import json
import os
from pathlib import Path

import numpy as np

R = 3.7  # quadratic-map parameter, as in the JAX loops suite
THREADS = ["1", "all"]


# ---- pure Python: the interpreter's own speed (one core, no library) ----

def int_sum(n: int) -> int:
    """Integer arithmetic: sum of i*i mod a prime."""
    total = 0
    for i in range(n):
        total += i * i % 1_000_003
    return total


def float_sum(n: int) -> float:
    """Float arithmetic: midpoint rule for the integral of 4/(1+x^2) over [0, 1] (= pi)."""
    h = 1.0 / n
    total = 0.0
    for i in range(n):
        x = (i + 0.5) * h
        total += 4.0 / (1.0 + x * x)
    return total * h


def dict_count(n: int, buckets: int = 1009) -> dict:
    """Dictionary-heavy: count hashed keys with get/set, the shape of tallying loops in lectures."""
    counts: dict = {}
    for i in range(n):
        key = i * 7919 % buckets
        counts[key] = counts.get(key, 0) + 1
    return counts


PYTHON_KERNELS = {"int_sum": int_sum, "float_sum": float_sum, "dict_count": dict_count}


# ---- NumPy: BLAS-backed (threaded) and single-threaded array work ----

def matmul(a, b):
    return a @ b


def solve(a, b):
    return np.linalg.solve(a, b)


LINALG_KERNELS = {"matmul": matmul, "solve": solve}


def linalg_inputs(n: int, dtype: str, seed: int = 0):
    """A symmetric positive definite matrix and an n x n right-hand side (as the JAX dense suite builds)."""
    rng = np.random.default_rng(seed)
    m = rng.standard_normal((n, n))
    a = (m @ m.T) / n + np.eye(n)
    b = rng.standard_normal((n, n))
    return a.astype(dtype), b.astype(dtype)


def op_mix(x):
    """The JAX elementwise suite's expression in NumPy: one temporary per operation, one thread."""
    return np.cos(x) ** 2 * np.sin(3 * x) + np.sqrt(np.abs(x)) * np.exp(-0.5 * x * x)


def elementwise_inputs(n: int, dtype: str):
    return np.linspace(-4.0, 4.0, n).astype(dtype)


def sort_inputs(n: int, dtype: str, seed: int = 0):
    return np.random.default_rng(seed).standard_normal(n).astype(dtype)


def sort(x):
    return np.sort(x)


# ---- NumPy small linear algebra in a Python loop: a Gibbs sampler's sweep ----

def sweep_inputs(k: int, draws: int, dtype: str, seed: int = 0):
    """`draws` symmetric positive definite k x k matrices and k-vectors: one conditional draw's inputs each."""
    rng = np.random.default_rng(seed)
    m = rng.standard_normal((draws, k, k))
    covs = m @ np.swapaxes(m, 1, 2) / k + np.eye(k)
    return covs.astype(dtype), rng.standard_normal((draws, k)).astype(dtype)


def gibbs_sweep(covs, means) -> float:
    """The shape of a long host-bound lecture's sampler (a Cholesky factor, a solve and a log determinant on a small
    matrix per draw, in a Python loop): per-call overhead of NumPy's LAPACK, which the pure-Python probe does not
    see. Returns the sum of each draw's log density kernel, -(log det + m' S^-1 m) / 2 + log L[0, 0]."""
    total = 0.0
    for cov, mean in zip(covs, means):
        factor = np.linalg.cholesky(cov)
        weights = np.linalg.solve(cov, mean)
        _, logdet = np.linalg.slogdet(cov)
        total += float(-0.5 * (logdet + mean @ weights) + np.log(factor[0, 0]))
    return total


# ---- Numba: compiled loops, serial and prange ----

@functools.cache
def numba_kernels():
    """Compile nothing yet: return the njit dispatchers (numba compiles on the first call per signature)."""
    import numba

    @numba.njit
    def quadratic_path(x0, r, n):
        """x_{t+1} = r x_t (1 - x_t), keeping the path: a serial loop nothing can vectorise."""
        out = np.empty(n, dtype=x0.dtype)
        x = x0[0]
        one = r / r  # a one of r's type: an int literal would promote float32 to float64
        for t in range(n):
            x = r * x * (one - x)
            out[t] = x
        return out

    @numba.njit(parallel=True)
    def quadratic_many(x0, r, steps):
        """Iterate the map `steps` times from each start value: independent rows, split over threads."""
        out = np.empty_like(x0)
        one = r / r
        for i in numba.prange(x0.shape[0]):
            x = x0[i]
            for _ in range(steps):
                x = r * x * (one - x)
            out[i] = x
        return out

    return {"loop": quadratic_path, "parallel": quadratic_many}


PARALLEL_STEPS = 200


def numba_inputs(kernel: str, n: int, dtype: str):
    """Arguments of a Numba kernel; r is a scalar of the dtype so float32 stays float32."""
    r = np.dtype(dtype).type(R)
    if kernel == "loop":
        return np.asarray([0.3], dtype=dtype), r, n
    if kernel == "parallel":
        return np.linspace(0.1, 0.9, n).astype(dtype), r, PARALLEL_STEPS
    raise ValueError(f"numba kernel {kernel!r}: expected 'loop' or 'parallel'")


def quadratic_path_reference(x0: float, n: int, dtype: str):
    """Plain NumPy-scalar loop with the same operation order, for the numerics check."""
    x, r = np.dtype(dtype).type(x0), np.dtype(dtype).type(R)
    one = np.dtype(dtype).type(1)
    out = np.empty(n, dtype=dtype)
    for t in range(n):
        x = r * x * (one - x)
        out[t] = x
    return out


def quadratic_many_reference(x0, steps: int):
    """Vectorised NumPy: every row advanced one step at a time."""
    x = np.array(x0)
    r, one = x.dtype.type(R), x.dtype.type(1)
    for _ in range(steps):
        x = r * x * (one - x)
    return x


# ---- threads: one switch for BLAS (threadpoolctl) and Numba, per process ----

def available_cpus() -> int:
    """CPUs this process may run on (affinity, so a container's limit counts), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def thread_target(threads: str) -> int:
    if threads == "1":
        return 1
    if threads == "all":
        return available_cpus()
    raise ValueError(f"threads param {threads!r}: expected one of {THREADS}")


def set_threads(threads: str, *, numba: bool = False):
    """Limit BLAS (and Numba when asked) to 1 thread or all CPUs in this process; returns the limiter.

    The limiter stays in force until its restore_original_limits(); asv gives each combination a fresh
    process, so a benchmark sets it in setup and nothing leaks into another combination.
    """
    from threadpoolctl import threadpool_limits

    n = thread_target(threads)
    limiter = threadpool_limits(limits=n, user_api="blas")
    if numba:
        import numba as nb

        nb.set_num_threads(min(n, nb.config.NUMBA_NUM_THREADS))
    return limiter


def blas_threads() -> int:
    """The largest thread count among the loaded BLAS libraries (0 when none is loaded)."""
    from threadpoolctl import threadpool_info

    return max((lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"), default=0)


def host_info() -> dict:
    """What makes host timings comparable across machines: BLAS library, its kernel, thread counts."""
    from threadpoolctl import threadpool_info

    info = {
        "available_cpus": available_cpus(),
        "cpu_count": os.cpu_count(),
        "numpy": np.__version__,
        "threadpools": threadpool_info(),
        "env": {k: os.environ[k] for k in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "OPENBLAS_NUM_THREADS",
                                           "OMP_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS")
                if k in os.environ},
    }
    try:
        import numba as nb

        info.update(numba=nb.__version__, numba_threads=nb.get_num_threads(),
                    numba_max_threads=nb.config.NUMBA_NUM_THREADS,
                    numba_threading_layer_config=nb.config.THREADING_LAYER)
    except ImportError:
        info["numba"] = None
    return info


def artifacts_dir() -> Path:
    """$JAXCI_ARTIFACTS/host, else .jaxci/host/ in the checkout (git-ignored)."""
    root = os.environ.get("JAXCI_ARTIFACTS")
    base = Path(root) if root else Path(__file__).resolve().parents[2] / ".jaxci"
    return base / "host"


def write_host_info(label: str) -> Path:
    """Write host_info() as JSON named by host name and `label` (asv tells a benchmark its commit and
    environment, not its machine name)."""
    host = os.uname().nodename
    path = artifacts_dir() / f"threadpool-{host}-{label}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    extra = {"host": host, "label": label, "asv_commit": os.environ.get("ASV_COMMIT"),
             "asv_env": os.environ.get("ASV_ENV_NAME")}
    path.write_text(json.dumps(dict(host_info(), **extra), indent=2) + "\n")
    return path
