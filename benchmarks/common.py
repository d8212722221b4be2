"""Shared helpers for every suite: device/dtype params, skipping, x64 per process, blocking, compile split.

Rules the suites follow (the project's asv style: numpy/scipy-like suites):
- params never change with the environment; a combination this machine cannot run raises
  NotImplementedError in setup (asv shows n/a): no GPU, a large case at JAXCI_SCALE=ci, or a device
  other than JAXCI_ONLY_DEVICE (the GPU smoke run spends scarce GPU time on gpu combinations only);
- skips are decided before JAX is imported, so a skipped combination costs a bare process start;
- each benchmark process is fresh (asv spawns), so x64 and JAX_PLATFORMS are set there, before JAX starts;
- inputs are placed on the device in setup, compilation happens in setup, every timed call blocks.
"""

from __future__ import annotations

import abc
import os
import sys
from pathlib import Path

DEVICES = ["cpu", "gpu"]
DTYPES = ["float32", "float64"]
SCALES = ("ci", "full")
REPO_ROOT = Path(__file__).resolve().parent.parent

_CACHE: dict = {}  # per-process: asv reruns setup around every repeat, so built work is kept here


def scale() -> str:
    """JAXCI_SCALE: "full" (default; what the bench workflow records) or "ci" (skips the large cases)."""
    value = os.environ.get("JAXCI_SCALE", "full")
    if value not in SCALES:
        raise ValueError(f"JAXCI_SCALE={value!r}: expected one of {SCALES}")
    return value


def track_scale():
    """A run fact, not a measurement: every suite module imports this, so each result file records per
    suite the JAXCI_SCALE it ran at (1 = full, 0 = ci); jaxci.results reads it back and keeps scales apart."""
    return float(SCALES.index(scale()))


track_scale.unit = "scale (0 = ci, 1 = full)"

#: a persistent compilation cache inherited from the environment (lecture CI's jax-env action sets it)
#: would turn cold starts into cache hits: every benchmark process starts JAX without it unless the
#: benchmark is about the cache (compile.PersistentCache passes cache=True)
CACHE_VARS = ("JAX_COMPILATION_CACHE_DIR", "JAX_ENABLE_COMPILATION_CACHE")


def without_compile_cache(env=None) -> dict:
    """`env` (default os.environ, changed in place) with the persistent compilation cache switched off."""
    env = os.environ if env is None else env
    for var in CACHE_VARS:
        env.pop(var, None)
    env["JAX_ENABLE_COMPILATION_CACHE"] = "false"
    return env


def skip_unless_runnable(device: str, *, large: bool = False) -> None:
    """Raise NotImplementedError (asv: n/a) for a missing device or a large case at CI scale."""
    if device not in DEVICES:
        raise ValueError(f"device param {device!r}: expected one of {DEVICES}")
    if large and scale() == "ci":
        raise NotImplementedError("large case: skipped at JAXCI_SCALE=ci")
    only = os.environ.get("JAXCI_ONLY_DEVICE")
    if only and device != only:
        raise NotImplementedError(f"JAXCI_ONLY_DEVICE={only}: {device} combination skipped")
    if device == "gpu":
        from jaxci.nvml import gpu_present

        if not gpu_present():
            raise NotImplementedError("no NVIDIA GPU on this machine: gpu combination skipped")


def platform_for(device: str) -> str:
    return "cpu" if device == "cpu" else "cuda"


def start_jax(device: str, dtype: str, *, cache: bool = False):
    """Import JAX for one device and dtype in this (fresh) process; returns (jax, the jax.Device).

    JAX_PLATFORMS names only the param's platform, so a GPU run whose CUDA backend fails raises
    instead of silently timing the CPU. The persistent compilation cache is off unless `cache`.
    """
    if dtype not in DTYPES:
        raise ValueError(f"dtype param {dtype!r}: expected one of {DTYPES}")
    if "jax" not in sys.modules:
        os.environ["JAX_PLATFORMS"] = platform_for(device)
        if not cache:
            without_compile_cache()
    import jax

    jax.config.update("jax_enable_x64", dtype == "float64")
    if not cache:
        jax.config.update("jax_enable_compilation_cache", False)
    return jax, jax.devices(platform_for(device))[0]


def place(jax, device, tree):
    """Put host arrays on the device and wait for the copies, outside any timed region."""
    return jax.block_until_ready(jax.device_put(tree, device))


class JaxCase(abc.ABC):
    """A suite's kernel description: subclasses define `build` and, optionally, `is_large`.

    `build(*case, dtype)` returns (fn, host_args): a pure function of arrays and NumPy inputs.
    Params are (*case, dtype, device): dtype and device always come last.
    """

    def is_large(self, *case) -> bool:
        return False

    @abc.abstractmethod
    def build(self, *case_and_dtype):
        """Abstract, which also keeps asv from collecting the base classes as benchmarks."""

    def _prepare(self, params):
        *case, dtype, device = params
        skip_unless_runnable(device, large=self.is_large(*case))
        jax, dev = start_jax(device, dtype)
        fn, host_args = self.build(*case, dtype)
        return jax, fn, place(jax, dev, host_args)

    def _once(self, params, make):
        """make(jax, fn, args) once per process and params; asv calls setup before every repeat."""
        key = (type(self).__name__, params)
        if key not in _CACHE:
            _CACHE[key] = make(*self._prepare(params))
        return _CACHE[key]


class WarmTime(JaxCase):
    """Warm run time: compiled in setup, the timed call only runs and blocks."""

    timeout = 180

    def setup(self, *params):
        def compile_and_warm(jax, fn, args):
            compiled = jax.jit(fn)
            jax.block_until_ready(compiled(*args))  # compile and warm outside the timed body
            return jax, compiled, args

        self.jax, self.fn, self.args = self._once(params, compile_and_warm)

    def time_warm(self, *params):
        self.jax.block_until_ready(self.fn(*self.args))


class CompileSplit(JaxCase):
    """Compile seconds of the first jit of a kernel in a fresh process, split by stage (jax.monitoring)."""

    timeout = 180

    def setup(self, *params):
        def first_compile(jax, fn, args):
            from jaxci.jaxmon import CompileClock

            clock = CompileClock().install()
            jax.block_until_ready(jax.jit(fn)(*args))
            return clock.snapshot()

        self.split = self._once(params, first_compile)

    def track_trace_s(self, *params):
        return self.split["trace"]

    def track_lower_s(self, *params):
        return self.split["lower"]

    def track_backend_s(self, *params):
        return self.split["backend"]

    track_trace_s.unit = track_lower_s.unit = track_backend_s.unit = "seconds"


COLD_SETUP = """
import sys
sys.path.insert(0, {root!r})
from benchmarks.common import cold_prepare
jax, fn, args = cold_prepare({module!r}, {cls!r}, {params!r})
"""
COLD_STMT = "jax.block_until_ready(jax.jit(fn)(*args))"


class ColdStart(JaxCase):
    """First call (trace + compile + run) in a fresh interpreter; JAX import and inputs are not timed."""

    timeout = 300
    repeat = (1, 5, 30.0)

    def setup(self, *params):
        *case, dtype, device = params
        skip_unless_runnable(device, large=self.is_large(*case))

    def timeraw_first_call(self, *params):
        setup = COLD_SETUP.format(root=str(REPO_ROOT), module=type(self).__module__,
                                  cls=type(self).__name__, params=params)
        return COLD_STMT, setup


def cold_prepare(module: str, cls: str, params: tuple):
    """Inside the fresh interpreter of a timeraw benchmark: JAX started, inputs placed, nothing compiled."""
    import importlib

    case = getattr(importlib.import_module(module), cls)()
    return case._prepare(params)
