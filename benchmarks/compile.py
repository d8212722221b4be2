"""compile: what lectures pay before any kernel runs warm.

- `CompileColdStart`: the first call (trace + compile + run) of lecture-shaped kernels in a fresh interpreter.
- `JitSeries` / `JitSeriesTotal`: a lecture-style series of fresh jits of a matmul at n = 100 ... 3000, each
  first call timed with its compile (incidents.md: 1.51 s in total on the CPU runner, 1.82 s on the T4).
- `PersistentCache`: the same series in two fresh processes sharing one JAX_COMPILATION_CACHE_DIR (a temp
  dir), cold then warm; compile seconds saved and cache hits/misses are read from jax.monitoring.

The series runs once per combination: asv starts a process per method, so the first one writes its numbers
into the scratch directory asv makes for `setup_cache` (deleted after the run) and the others read them.
CI scale runs the series in float32 and the cold start of the Kalman gradient in float64 only.
Only PersistentCache uses a persistent compilation cache: every other process starts JAX with it off
(common.start_jax), so an inherited JAX_COMPILATION_CACHE_DIR cannot turn a cold start into a cache hit.
"""

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.common import (
    DEVICES,
    DTYPES,
    REPO_ROOT,
    ColdStart,
    once_per_run,
    platform_for,
    scale,
    skip_unless_runnable,
    start_jax,
    track_scale,  # noqa: F401  (track_scale: this suite's recorded scale)
)

SERIES_SIZES = [100, 500, 1000, 2000, 3000]
COLD_KERNELS = ["matmul", "op_mix", "scan", "kalman_grad"]
CI_COLD = {("kalman_grad", "float64")}


def _ci_skip(dtype, device) -> None:
    if scale() == "ci" and dtype != "float32":
        raise NotImplementedError("skipped at JAXCI_SCALE=ci: only float32 runs")


class CompileColdStart(ColdStart):
    """Incident shapes: 1000x1000 matmul, the 50M-element op mix, a 100k-step scalar scan, the Kalman gradient."""

    params = [COLD_KERNELS, DTYPES, DEVICES]
    param_names = ["kernel", "dtype", "device"]
    #: its own setup's hash: the version ColdStart pins is its other subclasses' (benchmarks/common.py)
    version = "158759d89fdb3a524d9c9c22159f7411f923a4f860962dc77f1bb514a08805b1"

    def setup(self, kernel, dtype, device):
        if scale() == "ci" and (kernel, dtype) not in CI_COLD:
            raise NotImplementedError("skipped at JAXCI_SCALE=ci")
        super().setup(kernel, dtype, device)

    def build(self, kernel, dtype):
        import numpy as np

        if kernel == "matmul":
            from benchmarks.kernels import dense

            return dense.matmul, dense.inputs(1000, dtype)
        if kernel == "op_mix":
            from benchmarks.kernels import elementwise

            return elementwise.op_mix, elementwise.inputs(50_000_000, dtype)
        if kernel == "scan":
            from benchmarks.kernels import loops

            return (lambda x0: loops.quadratic_map(x0, 100_000)), (np.asarray(0.3, dtype=dtype),)
        if kernel == "kalman_grad":
            from benchmarks.kernels import kalman

            return kalman.grad_fn("sequential", 11), kalman.inputs(11, 96, dtype)
        raise ValueError(f"cold-start kernel {kernel!r}: expected one of {COLD_KERNELS}")


def run_series(jax, dtype: str, sizes=SERIES_SIZES) -> dict:
    """Each size: a new jax.jit of a matmul called once on a fresh host array (trace, compile, copy, run)."""
    import numpy as np

    from jaxci.jaxmon import CompileClock

    clock = CompileClock().install()
    rng = np.random.default_rng(0)
    per_size, compile_s = {}, {}
    for n in sizes:
        a = rng.standard_normal((n, n)).astype(dtype)
        before = clock.total
        start = time.perf_counter()
        jax.block_until_ready(jax.jit(lambda x: x @ x)(a))
        per_size[str(n)] = time.perf_counter() - start
        compile_s[str(n)] = clock.total - before
    return {"per_size_s": per_size, "total_s": sum(per_size.values()), "compile_per_size_s": compile_s,
            "compile_s": clock.total, "compilations": clock.compilations, **clock.events}


class _SeriesRun:
    """Shared by the series classes: one run per (dtype, device) in a scratch dir that asv gives the class."""

    timeout = 600

    def setup_cache(self):
        return os.getcwd()

    def _result(self, rundir, name, dtype, device, run):
        _ci_skip(dtype, device)
        skip_unless_runnable(device)
        return once_per_run(Path(rundir) / f"{name}-{dtype}-{device}.json", lambda: run(dtype, device))


def _series_here(dtype, device):
    jax, _ = start_jax(device, dtype)
    return run_series(jax, dtype)


class JitSeries(_SeriesRun):
    params = [SERIES_SIZES, DTYPES, DEVICES]
    param_names = ["n", "dtype", "device"]

    def setup(self, rundir, n, dtype, device):
        self.series = self._result(rundir, "series", dtype, device, _series_here)

    def track_first_call_s(self, rundir, n, dtype, device):
        return self.series["per_size_s"][str(n)]

    track_first_call_s.unit = "seconds"


class JitSeriesTotal(_SeriesRun):
    params = [DTYPES, DEVICES]
    param_names = ["dtype", "device"]

    def setup(self, rundir, dtype, device):
        self.series = self._result(rundir, "series", dtype, device, _series_here)

    def track_total_s(self, rundir, dtype, device):
        return self.series["total_s"]

    track_total_s.unit = "seconds"


CACHE_CHILD = """
import json, sys
sys.path.insert(0, {root!r})
from benchmarks.common import start_jax
from benchmarks.compile import run_series
jax, _ = start_jax({device!r}, {dtype!r}, cache=True)
jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
jax.config.update("jax_persistent_cache_min_entry_size_bytes", -1)
print("JAXCI-RESULT " + json.dumps(run_series(jax, {dtype!r}, {sizes!r})))
"""


def cache_cold_warm(dtype: str, device: str, sizes=SERIES_SIZES, timeout: float = 280) -> dict:
    """The series in two fresh processes, one after the other, sharing a new persistent cache directory."""
    runs = {}
    with tempfile.TemporaryDirectory(prefix="jaxci-cache-") as cache_dir:
        env = dict(os.environ, JAX_COMPILATION_CACHE_DIR=cache_dir, JAX_PLATFORMS=platform_for(device),
                   JAX_ENABLE_COMPILATION_CACHE="true")
        code = CACHE_CHILD.format(root=str(REPO_ROOT), device=device, dtype=dtype, sizes=list(sizes))
        for label in ("cold", "warm"):
            proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                                  timeout=timeout)
            lines = [line for line in proc.stdout.splitlines() if line.startswith("JAXCI-RESULT ")]
            if proc.returncode or not lines:
                raise RuntimeError(f"{label} cache run exited {proc.returncode}: {proc.stderr[-2000:]}")
            runs[label] = json.loads(lines[-1].split(" ", 1)[1])
        runs["entries"] = len(os.listdir(cache_dir))
    return runs


class PersistentCache(_SeriesRun):
    """Cold (empty cache) vs warm (filled by the cold run) series; the warm run's hits and misses."""

    params = [DTYPES, DEVICES]
    param_names = ["dtype", "device"]

    def setup(self, rundir, dtype, device):
        self.runs = self._result(rundir, "cache", dtype, device, cache_cold_warm)

    def track_cold_s(self, rundir, dtype, device):
        return self.runs["cold"]["total_s"]

    def track_warm_s(self, rundir, dtype, device):
        return self.runs["warm"]["total_s"]

    def track_compile_saved_s(self, rundir, dtype, device):
        return self.runs["cold"]["compile_s"] - self.runs["warm"]["compile_s"]

    def track_warm_cache_hits(self, rundir, dtype, device):
        return self.runs["warm"]["cache_hits"]

    def track_warm_cache_misses(self, rundir, dtype, device):
        return self.runs["warm"]["cache_misses"]

    track_cold_s.unit = track_warm_s.unit = track_compile_saved_s.unit = "seconds"
    track_warm_cache_hits.unit = track_warm_cache_misses.unit = "compilations"


# ---- compile stages with XLA's GPU autotuning on (default) and off (the second GPU capture) ----

from benchmarks.common import CompileSplit, backend_started  # noqa: E402  (appended with the class below)

AUTOTUNE = ["default", "off"]
AUTOTUNE_KERNELS = ["matmul", "kalman_grad"]
AUTOTUNE_FLAG = "--xla_gpu_autotune_level"
AUTOTUNE_MATMUL_N = 1024
CI_AUTOTUNE = {("matmul", "float32"), ("kalman_grad", "float64")}


def autotune_flags(autotune: str, flags: str = "") -> str:
    """XLA_FLAGS for one `autotune` param: any inherited --xla_gpu_autotune_level removed (so `default` is
    XLA's own level), and `--xla_gpu_autotune_level=0` appended for `off`; every other flag is kept."""
    if autotune not in AUTOTUNE:
        raise ValueError(f"autotune param {autotune!r}: expected one of {AUTOTUNE}")
    kept = [f for f in flags.split() if f.split("=", 1)[0] != AUTOTUNE_FLAG]
    return " ".join(kept + ([f"{AUTOTUNE_FLAG}=0"] if autotune == "off" else []))


def set_autotune(autotune: str) -> str:
    """Put this param's XLA_FLAGS in os.environ before this process starts a JAX backend (XLA parses the
    variable once, when the first backend starts); refuse when a backend already started with other flags."""
    flags = autotune_flags(autotune, os.environ.get("XLA_FLAGS", ""))
    if os.environ.get("XLA_FLAGS", "") != flags:
        if backend_started():
            raise RuntimeError(f"XLA_FLAGS={flags!r} must be set before JAX starts; a backend already started "
                               f"with {os.environ.get('XLA_FLAGS', '')!r}")
        if flags:
            os.environ["XLA_FLAGS"] = flags
        else:
            os.environ.pop("XLA_FLAGS", None)
    return flags


class AutotuneCompile(CompileSplit):
    """Compile seconds by stage (trace, lower, backend) of the first jit in a process whose XLA_FLAGS set GPU
    autotuning to XLA's default level or off (`--xla_gpu_autotune_level=0`: no GEMM/fusion autotuning, the
    heuristic choice), for a 1024 x 1024 matmul and the Kalman gradient (k = 11, T = 96).

    The flag is put in the environment in setup, before the process (an asv forkserver child whose server
    started no backend) starts JAX, and XLA reads it when the backend starts. On a CPU the flag has no effect
    (XLA:CPU does not autotune): both lines should agree there, and they still run so the CPU path and the
    flag handling are exercised. CI scale runs the matmul in float32 and the gradient in float64.
    """

    params = [AUTOTUNE, AUTOTUNE_KERNELS, DTYPES, DEVICES]
    param_names = ["autotune", "kernel", "dtype", "device"]

    def setup(self, autotune, kernel, dtype, device):
        if scale() == "ci" and (kernel, dtype) not in CI_AUTOTUNE:
            raise NotImplementedError("skipped at JAXCI_SCALE=ci")
        skip_unless_runnable(device)
        self.xla_flags = set_autotune(autotune)
        super().setup(autotune, kernel, dtype, device)

    def build(self, autotune, kernel, dtype):
        if kernel == "matmul":
            from benchmarks.kernels import dense

            return dense.matmul, dense.inputs(AUTOTUNE_MATMUL_N, dtype)
        if kernel == "kalman_grad":
            from benchmarks.kernels import kalman

            return kalman.grad_fn("sequential", 11), kalman.inputs(11, 96, dtype)
        raise ValueError(f"autotune kernel {kernel!r}: expected one of {AUTOTUNE_KERNELS}")
