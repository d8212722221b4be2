"""host: what most lecture cells run (plain Python, NumPy, Numba), so instance fit counts the whole build.

No JAX here: of 145 lectures in the largest series 34 import JAX; the rest is interpreter speed, BLAS and
Numba, where runner families differ in other directions than on JAX (incidents.md). The `threads` param
("1" or "all" CPUs this process may use) gives the single-thread vs all-cores view for the kernels that
use threads (BLAS, Numba prange); NumPy elementwise and sort are single-threaded, so they have none.
`Threads` tracks the effective BLAS and Numba thread counts and writes the BLAS library and kernel
(threadpoolctl) to $JAXCI_ARTIFACTS/host or .jaxci/host/, so runs on different machines can be compared.

Numba's first call (compile + one small run) is tracked in setup of a process of its own (asv's forkserver
forks one per combination from a server that never imports Numba), apart from the warm times. CI scale
skips the large sizes; params never change.
"""

from benchmarks.common import (
    DTYPES,
    skip_unless_runnable,
    track_scale,  # noqa: F401  (a run fact: the scale this suite ran at)
)

_CACHE: dict = {}  # per process: asv reruns setup around each repeat

THREADS = ["1", "all"]
PYTHON_KERNELS = ["int_sum", "float_sum", "dict_count"]
PYTHON_SIZES = [100_000, 1_000_000, 10_000_000]
LINALG_OPS = ["matmul", "solve"]
LINALG_SIZES = [256, 1000, 3000]
SWEEP_SIZES = [4, 16]   # k: the small matrices of a sampler's conditional draws
SWEEP_DRAWS = 2_000
ELEMENTWISE_SIZES = [1_000_000, 50_000_000]
SORT_SIZES = [1_000_000, 10_000_000]
NUMBA_LOOP_SIZES = [100_000, 1_000_000, 10_000_000]
NUMBA_PARALLEL_SIZES = [10_000, 100_000, 1_000_000]
FIRST_CALL_N = {"loop": 1_000, "parallel": 1_000}


def _skip_large(large: bool) -> None:
    """Host work runs on the CPU: the common rules (CI scale, JAXCI_ONLY_DEVICE) decide."""
    skip_unless_runnable("cpu", large=large)


def _cached(key, make):
    """make() once per process and key: asv reruns setup before every repeat."""
    if key not in _CACHE:
        _CACHE[key] = make()
    return _CACHE[key]


def _kernels():
    from benchmarks.kernels import host

    return host


class PurePython:
    """Interpreter speed: one core, no library (the 10M integer sum is the incidents' comparison)."""

    params = [PYTHON_KERNELS, PYTHON_SIZES]
    param_names = ["kernel", "n"]
    timeout = 180

    def setup(self, kernel, n):
        _skip_large(n > PYTHON_SIZES[0])
        self.fn = _kernels().PYTHON_KERNELS[kernel]

    def time_run(self, kernel, n):
        self.fn(n)


class NumpyLinalg:
    """BLAS matmul and LU solve at 1 thread and at all CPUs (same inputs as the JAX dense suite)."""

    params = [LINALG_OPS, LINALG_SIZES, THREADS, DTYPES]
    param_names = ["op", "n", "threads", "dtype"]
    timeout = 300

    def setup(self, op, n, threads, dtype):
        _skip_large(n > LINALG_SIZES[0])
        host = _kernels()
        self.limiter = host.set_threads(threads)
        def inputs_after_first_call():
            args = host.linalg_inputs(n, dtype)
            host.LINALG_KERNELS[op](*args)  # first BLAS call (thread pool start-up) outside the timed body
            return args

        self.fn, self.args = host.LINALG_KERNELS[op], _cached(("linalg", op, n, dtype), inputs_after_first_call)

    def time_run(self, op, n, threads, dtype):
        self.fn(*self.args)


class NumpySmallLinalgLoop:
    """A Gibbs sweep of SWEEP_DRAWS draws (Cholesky, solve, log determinant of a k x k matrix each, in a Python
    loop) at 1 thread and at all CPUs: the per-call cost of NumPy's LAPACK that long host-bound lectures pay
    (docs/dev-sets.md: the T4 runner ran two such lectures 1.5-1.7x slower than its pure-Python probe predicts)."""

    params = [SWEEP_SIZES, THREADS, DTYPES]
    param_names = ["k", "threads", "dtype"]
    timeout = 120

    def setup(self, k, threads, dtype):
        _skip_large(k > SWEEP_SIZES[0])
        host = _kernels()
        self.limiter = host.set_threads(threads)
        self.args = _cached(("sweep", k, dtype), lambda: host.sweep_inputs(k, SWEEP_DRAWS, dtype))
        host.gibbs_sweep(self.args[0][:2], self.args[1][:2])   # LAPACK's first call outside the timed body
        self.fn = host.gibbs_sweep

    def time_run(self, k, threads, dtype):
        self.fn(*self.args)


class NumpyElementwise:
    """The JAX elementwise suite's expression in NumPy (the incidents' 50M-element case): one thread."""

    params = [ELEMENTWISE_SIZES, DTYPES]
    param_names = ["n", "dtype"]
    timeout = 300

    def setup(self, n, dtype):
        _skip_large(n > ELEMENTWISE_SIZES[0])
        host = _kernels()
        self.fn, self.x = host.op_mix, _cached(("elementwise", n, dtype), lambda: host.elementwise_inputs(n, dtype))

    def time_run(self, n, dtype):
        self.fn(self.x)


class NumpySort:
    """np.sort of normal draws: single-threaded, memory and branch bound."""

    params = [SORT_SIZES, DTYPES]
    param_names = ["n", "dtype"]
    timeout = 180

    def setup(self, n, dtype):
        _skip_large(n > SORT_SIZES[0])
        host = _kernels()
        self.fn, self.x = host.sort, _cached(("sort", n, dtype), lambda: host.sort_inputs(n, dtype))

    def time_run(self, n, dtype):
        self.fn(self.x)


def _numba_warm(kernel, n, dtype):
    """Compile and warm outside the timed body; cached so asv's repeats reuse the compiled kernel."""
    def compile_and_warm():
        host = _kernels()
        fn, args = host.numba_kernels()[kernel], host.numba_inputs(kernel, n, dtype)
        fn(*args)
        return fn, args

    return _cached(("numba", kernel, n, dtype), compile_and_warm)


class NumbaLoop:
    """A serial @njit loop (the quadratic map the JAX scan suite runs), warm: compiled in setup."""

    params = [NUMBA_LOOP_SIZES, DTYPES]
    param_names = ["n", "dtype"]
    timeout = 180

    def setup(self, n, dtype):
        _skip_large(n > NUMBA_LOOP_SIZES[0])
        self.fn, self.args = _numba_warm("loop", n, dtype)

    def time_run(self, n, dtype):
        self.fn(*self.args)


class NumbaParallel:
    """A prange loop over independent rows at 1 thread and at all CPUs, warm: compiled in setup."""

    params = [NUMBA_PARALLEL_SIZES, THREADS, DTYPES]
    param_names = ["n", "threads", "dtype"]
    timeout = 180

    def setup(self, n, threads, dtype):
        _skip_large(n > NUMBA_PARALLEL_SIZES[0])
        self.limiter = _kernels().set_threads(threads, numba=True)
        self.fn, self.args = _numba_warm("parallel", n, dtype)

    def time_run(self, n, threads, dtype):
        self.fn(*self.args)


class NumbaFirstCall:
    """Seconds of the first call in a fresh process: Numba's type inference and LLVM compile + a small run.

    Numba's import is not counted (a lecture pays it once per kernel); no on-disk cache is used.
    """

    params = [["loop", "parallel"], DTYPES]
    param_names = ["kernel", "dtype"]
    timeout = 180

    def setup(self, kernel, dtype):
        def first_call_seconds():
            import time

            host = _kernels()
            fn = host.numba_kernels()[kernel]
            args = host.numba_inputs(kernel, FIRST_CALL_N[kernel], dtype)
            if fn.signatures:
                raise RuntimeError(f"numba {kernel} already compiled in this process: not a first call")
            start = time.perf_counter()
            fn(*args)
            return time.perf_counter() - start

        self.seconds = _cached(("first", kernel, dtype), first_call_seconds)

    def track_first_call_s(self, kernel, dtype):
        return self.seconds

    track_first_call_s.unit = "seconds"


class Threads:
    """Effective thread counts under the `threads` switch, and the BLAS library written beside the results."""

    params = [THREADS]
    param_names = ["threads"]
    timeout = 60

    def setup(self, threads):
        host = _kernels()
        self.limiter = host.set_threads(threads, numba=True)
        import numba

        self.blas, self.numba = host.blas_threads(), numba.get_num_threads()
        host.write_host_info(f"threads-{threads}")

    def track_blas_threads(self, threads):
        return self.blas

    def track_numba_threads(self, threads):
        return self.numba

    track_blas_threads.unit = track_numba_threads.unit = "threads"
