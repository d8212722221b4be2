"""Shared helpers for every suite: device/dtype params, skipping, x64 per process, blocking, compile split.

Rules the suites follow (the project's asv style: numpy/scipy-like suites):
- params never change with the environment; a combination this machine cannot run raises
  NotImplementedError in setup (asv shows n/a): an accelerator this machine lacks (gpu, tpu), a large case at
  JAXCI_SCALE=ci, a device other than JAXCI_ONLY_DEVICE (the GPU smoke run spends scarce GPU time on gpu
  combinations only), an op or dtype the backend lacks (one line: jaxci.accel.BACKEND_LACKS, XLA's
  UNIMPLEMENTED), or a combination an earlier round of the same asv run did not finish (its deadline);
- asv's forkserver (asv.conf.json) imports this module, and so JAX, once per run in a server process that
  forks one child per combination: the import starts no backend, and `fork_check` proves at every fork
  that none was started (a CPU or CUDA runtime copied into a child is undefined behaviour);
- skips are decided before JAX starts, so a skipped combination costs a fork;
- each child starts JAX's backend itself, so the platform (JAX_PLATFORMS) and x64 are set per combination,
  and `start_jax` checks both took effect before anything is measured;
- inputs are placed on the device in setup, compilation happens in setup, every timed call blocks.
"""

from __future__ import annotations

import abc
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

import jax  # in the forkserver, before any fork: paid once per asv run, not once per combination

#: the device param says what JAX's Device.platform says: cpu, gpu (CUDA or ROCm) or tpu. "tpu" was added
#: after the H200 capture: asv keys results by param values, so "gpu" keeps its meaning for the committed history
#: and a TPU's results are never shown as a gpu's (jaxci/accel.py, docs/gpu-capture.md "On a TPU").
DEVICES = ["cpu", "gpu", "tpu"]
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
    """Raise NotImplementedError (asv: n/a) for a device this machine lacks or a large case at CI scale."""
    if device not in DEVICES:
        raise ValueError(f"device param {device!r}: expected one of {DEVICES}")
    if large and scale() == "ci":
        raise NotImplementedError("large case: skipped at JAXCI_SCALE=ci")
    only = os.environ.get("JAXCI_ONLY_DEVICE")
    if only and device != only:
        raise NotImplementedError(f"JAXCI_ONLY_DEVICE={only}: {device} combination skipped")
    from jaxci.accel import missing_reason

    reason = missing_reason(device)
    if reason:
        raise NotImplementedError(reason)


def platform_for(device: str) -> str:
    """The JAX platform of a device param: jaxci.accel decides which GPU platform (cuda, rocm) this machine has."""
    from jaxci.accel import platform_for as decide

    return decide(device)


def backend_started() -> bool:
    """Whether this process started a JAX backend (CPU or an accelerator): from then on it must never fork."""
    from jax._src import xla_bridge

    check = getattr(xla_bridge, "backends_are_initialized", None)   # older JAX releases: the dict itself
    return bool(check() if check else getattr(xla_bridge, "_backends", {}))


def fork_check() -> None:
    """os.register_at_fork hook: a fork after a backend started is reported on stderr and, when
    JAXCI_FORK_AUDIT names a file, recorded there (the tests read it after a whole suite run)."""
    if backend_started():
        line = f"pid {os.getpid()} forked after a JAX backend started ({' '.join(sys.argv)[:200]})"
        print(f"jaxci: {line}", file=sys.stderr)
        audit = os.environ.get("JAXCI_FORK_AUDIT")
        if audit:
            with open(audit, "a") as fh:
                fh.write(line + "\n")


os.register_at_fork(before=fork_check)

_IMPORT_PID = os.getpid()   # the forkserver's pid: a process with another pid was forked from it
MADV_POPULATE_WRITE = 23    # Linux >= 5.14: fault pages in writable, as if written, contents unchanged


def unshare_inherited_memory() -> str:
    """In a forked child, copy every page it shares copy-on-write with the server, before a first-call
    measurement; returns what was done.

    A forked child's first trace writes (refcounts) to ~550 pages of JAX objects it inherited, and each
    first write is a copy-on-write fault: +5-8 ms on a 3-10 ms first trace, which a fresh interpreter
    never pays (measure/launch_fidelity.py, docs/suite-cost.md). MADV_POPULATE_WRITE takes all those
    faults at once, outside the measurement (~0.1 s for a JAX-imported server).
    """
    if os.getpid() == _IMPORT_PID:
        return "not a forked child: nothing shared"
    if not sys.platform.startswith("linux"):
        return f"{sys.platform}: no MADV_POPULATE_WRITE, inherited pages stay shared"
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    done = 0
    with open("/proc/self/maps") as maps:
        for line in maps:
            fields = line.split()
            perms, name = fields[1], (fields[5] if len(fields) > 5 else "")
            if perms[1] != "w" or perms[3] != "p" or name.startswith("[v"):   # [vvar], [vsyscall]: not ours
                continue
            lo, hi = (int(x, 16) for x in fields[0].split("-"))
            if libc.madvise(lo, hi - lo, MADV_POPULATE_WRITE) != 0:
                err = ctypes.get_errno()
                message = f"madvise(MADV_POPULATE_WRITE) failed ({os.strerror(err)}) at {name or 'anonymous'}"
                print(f"jaxci: {message}: a first-call measurement may include copy-on-write faults",
                      file=sys.stderr)
                return message
            done += hi - lo
    return f"unshared {done >> 20} MiB"


WARM_CACHE_PREFIX = "jaxci-warm-compiles-"
SPLITS_PREFIX = "jaxci-compile-splits-"
DEADLINE_PREFIX = "jaxci-deadlines-"


def sibling_folder(prefix: str) -> Path | None:
    """A temp folder that the forked children of one asv run share (named after their server's pid), or None
    outside a forkserver child: a fresh interpreter has no siblings to share with."""
    if os.getpid() == _IMPORT_PID:
        return None
    return Path(tempfile.gettempdir()) / f"{prefix}{_IMPORT_PID}"


def warm_compile_cache() -> Path | None:
    """The compilation cache that the forked children of one asv run share for warm benchmarks, or None
    outside a forkserver child.

    asv measures every combination in 2 rounds, each a process of its own, and each process compiled the
    kernel again before its first timed call: up to ~15 s for a Kalman gradient, not part of any timing.
    With this cache the second round loads the executable the first compiled (JAX caches compiles of 1 s
    or more) and times the same calls. Compile and cold-start classes never use it.
    """
    return sibling_folder(WARM_CACHE_PREFIX)


def _remove_stale_sibling_folders() -> None:
    """Delete the shared folders of asv runs that have ended (their server's pid is gone)."""
    for prefix in (WARM_CACHE_PREFIX, SPLITS_PREFIX, DEADLINE_PREFIX):
        for path in Path(tempfile.gettempdir()).glob(f"{prefix}*"):
            try:
                os.kill(int(path.name.removeprefix(prefix)), 0)
            except ProcessLookupError:
                shutil.rmtree(path, ignore_errors=True)
            except (ValueError, PermissionError):
                continue


_remove_stale_sibling_folders()


def start_jax(device: str, dtype: str, *, cache: bool = False, reuse_compiles: bool = False):
    """Start JAX for one device and dtype in this process (a forkserver child, or a fresh interpreter);
    returns (jax, the jax.Device).

    The platform list names only the param's platform, so a GPU run whose CUDA backend fails raises
    instead of silently timing the CPU. JAX read JAX_PLATFORMS and the cache variables when the server
    imported it, so they are set through jax.config here (and in os.environ, for processes this one
    starts). The persistent compilation cache is off unless `cache`, or `reuse_compiles` in a forkserver
    child: then it is this asv run's own (warm_compile_cache), never one inherited from the environment.
    """
    if dtype not in DTYPES:
        raise ValueError(f"dtype param {dtype!r}: expected one of {DTYPES}")
    platform = platform_for(device)
    if not backend_started():   # the first start_jax of this process decides its platform
        os.environ["JAX_PLATFORMS"] = platform
        jax.config.update("jax_platforms", platform)
        if not cache:
            without_compile_cache()
        elif os.environ.get("JAX_COMPILATION_CACHE_DIR"):
            jax.config.update("jax_compilation_cache_dir", os.environ["JAX_COMPILATION_CACHE_DIR"])
    jax.config.update("jax_enable_x64", dtype == "float64")
    shared = warm_compile_cache() if reuse_compiles and not cache else None
    if shared is not None:
        jax.config.update("jax_compilation_cache_dir", str(shared))
        jax.config.update("jax_enable_compilation_cache", True)
    elif not cache:
        jax.config.update("jax_enable_compilation_cache", False)
    try:
        dev = jax.devices(platform)[0]
    except Exception as exc:   # e.g. no CUDA plugin: JAX's own error can be a bare AssertionError
        raise RuntimeError(f"JAX could not start platform {platform!r} for a {device} combination: {exc!r}") from exc
    check_started(jax, dev, device, dtype)
    return jax, dev


def check_started(jax, dev, device: str, dtype: str) -> None:
    """Refuse to measure a combination whose device or dtype did not take effect in this process."""
    import numpy as np

    want = device   # JAX's Device.platform is "gpu" for CUDA and ROCm alike, "tpu", "cpu": the device params
    got = jax.dtypes.canonicalize_dtype(np.float64)
    if dev.platform != want or jax.default_backend() != want or str(got) != dtype:
        raise RuntimeError(f"combination ({dtype}, {device}) started JAX on {dev.platform} (default backend "
                           f"{jax.default_backend()}) with {got} as the float type: settings did not take effect")


def place(jax, device, tree):
    """Put host arrays on the device and wait for the copies, outside any timed region."""
    return jax.block_until_ready(jax.device_put(tree, device))


class JaxCase(abc.ABC):
    """A suite's kernel description: subclasses define `build` and, optionally, `is_large`.

    `build(*case, dtype)` returns (fn, host_args): a pure function of arrays and NumPy inputs.
    Params are (*case, dtype, device): dtype and device always come last.
    """

    #: a first trace or compile is measured in this process: take the fork's copy-on-write faults first
    first_in_process = False
    #: only warm calls are timed: load a compile that another round of this asv run made (warm_compile_cache)
    reuse_compiles = False
    #: setup makes a JSON record (not live objects), and asv's process per track shares it: the first child of an
    #: asv run makes it, its siblings read it (sibling_folder). setup's source, and so the asv version and
    #: history of its benchmarks, stays the same either way.
    shared_record = False

    def is_large(self, *case) -> bool:
        return False

    @abc.abstractmethod
    def build(self, *case_and_dtype):
        """Abstract, which also keeps asv from collecting the base classes as benchmarks."""

    def _prepare(self, params):
        *case, dtype, device = params
        skip_unless_runnable(device, large=self.is_large(*case))
        if self.first_in_process:
            unshare_inherited_memory()
        jax, dev = start_jax(device, dtype, reuse_compiles=self.reuse_compiles)
        fn, host_args = self.build(*case, dtype)
        skip_lacking(jax, fn, host_args, platform_for(device), dtype)
        return jax, fn, place(jax, dev, host_args)

    def _once(self, params, make):
        """make(jax, fn, args) once per process and params (asv calls setup before every repeat); where the class
        shares its record, once per asv run (_shared). A combination that an earlier round of this asv run did not
        finish is n/a (within_deadline); one the backend cannot compile is n/a with the backend's line."""
        *case, dtype, device = params
        skip_unless_runnable(device, large=self.is_large(*case))   # a skip first: it leaves no deadline marker
        within_deadline(type(self).__name__, params)
        key = (type(self).__name__, params)
        if key not in _CACHE:
            folder = sibling_folder(SPLITS_PREFIX) if self.shared_record else None
            made = lambda: unimplemented_as_na(params, lambda: make(*self._prepare(params)))
            _CACHE[key] = made() if folder is None else self._shared(folder, params, made)
        return _CACHE[key]

    def _shared(self, folder: Path, params, made):
        """The record of this combination in this asv run: the first forked child makes it, its siblings read it
        (once_per_run)."""
        *case, dtype, device = params
        skip_unless_runnable(device, large=self.is_large(*case))
        folder.mkdir(exist_ok=True)
        path = folder / f"{type(self).__name__}-{'-'.join(map(str, params))}.json"
        return once_per_run(path, made)

    def teardown(self, *params):
        """The timed part ended: this combination met its deadline (within_deadline)."""
        finished(type(self).__name__, params)



def _deadline_marker(name: str, params) -> Path | None:
    folder = sibling_folder(DEADLINE_PREFIX)
    return None if folder is None else folder / f"{name}-{'-'.join(map(str, params))}"


def within_deadline(name: str, params) -> None:
    """Every combination has a deadline: asv kills a process at its class's `timeout`, but runs the combination
    again in its next round, so a hung kernel cost rounds x timeout (a dense float64 case on a TPU took a whole
    call). A combination that an earlier process of this asv run started and never finished (killed at its
    deadline, or died) is n/a for the rest of the run; this process marks its own start."""
    marker = _deadline_marker(name, params)
    if marker is None:
        return
    if marker.exists() and marker.read_text() != str(os.getpid()):
        raise NotImplementedError(f"an earlier process of this asv run started {name}{tuple(params)} and did not "
                                  "finish it (killed at its timeout, or died): not run again")
    marker.parent.mkdir(exist_ok=True)
    marker.write_text(str(os.getpid()))


def finished(name: str, params) -> None:
    marker = _deadline_marker(name, params)
    if marker is not None:
        marker.unlink(missing_ok=True)


def skip_lacking(jax, fn, host_args, platform: str, dtype: str) -> None:
    """n/a before any compile where the kernel uses what the backend lacks (jaxci.accel.BACKEND_LACKS); traces
    the kernel only for a (platform, dtype) the table names, so other combinations pay nothing."""
    from jaxci.accel import BACKEND_LACKS, lacking_reason, primitives

    if (platform, dtype) not in BACKEND_LACKS:
        return
    shapes = jax.tree.map(lambda a: jax.ShapeDtypeStruct(getattr(a, "shape", ()), getattr(a, "dtype", dtype)),
                          host_args)
    reason = lacking_reason(platform, dtype, primitives(jax.make_jaxpr(fn)(*shapes).jaxpr))
    if reason:
        raise NotImplementedError(reason)


def unimplemented_as_na(params, make):
    """make(), with a backend's UNIMPLEMENTED compile error turned into n/a and one line (not XLA's 40)."""
    from jaxci.accel import unimplemented_reason

    *_, dtype, device = params
    try:
        return make()
    except Exception as exc:
        reason = unimplemented_reason(exc, platform_for(device), dtype)
        if reason is None:
            raise
        print(f"jaxci: n/a: {reason}", file=sys.stderr)
    raise NotImplementedError(reason)


def once_per_run(path: Path, make) -> dict:
    """The JSON record at `path`, made by make() in the first process of an asv run that asks and read back by
    the others (asv starts a process per benchmark method). A process that finds a started but unfinished record
    (an earlier method timed out or died) fails instead of measuring a second time. The nuts classes keep this
    pattern written out in their setup: its source is their asv version."""
    if path.exists():
        record = json.loads(path.read_text())
    else:
        path.write_text(json.dumps({"started": True}))
        try:
            record = make()
        except NotImplementedError as exc:   # n/a for the siblings too, with the same reason
            path.write_text(json.dumps({"n/a": str(exc)}))
            raise
        path.write_text(json.dumps(record))
    if "n/a" in record:
        raise NotImplementedError(record["n/a"])
    if "started" in record:
        raise RuntimeError(f"{path.name}: an earlier process of this run started this measurement and did not finish")
    return record


class WarmTime(JaxCase):
    """Warm run time: compiled in setup, the timed call only runs and blocks."""

    timeout = 180
    reuse_compiles = True   # the compile is setup here: a later round may load it (warm_compile_cache)

    def setup(self, *params):
        def compile_and_warm(jax, fn, args):
            compiled = jax.jit(fn)
            jax.block_until_ready(compiled(*args))  # compile and warm outside the timed body
            return jax, compiled, args

        self.jax, self.fn, self.args = self._once(params, compile_and_warm)

    def time_warm(self, *params):
        self.jax.block_until_ready(self.fn(*self.args))


class CompileSplit(JaxCase):
    """Compile seconds of the first jit of a kernel in a fresh process, split by stage (jax.monitoring).

    The three stages come from ONE first compile per combination (`shared_record`): asv starts a process per
    track, and in an asv run the first of them compiles and records the split for the other two.
    """

    timeout = 180
    first_in_process = True   # a forkserver child is made to hold its own memory, as a fresh process does
    shared_record = True

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
    warmup_time = 0   # every sample is a fresh interpreter: asv's default warm-up would start one more, unused
    # Each sample is already a fresh interpreter, so asv's second round adds samples, not independence. At CI
    # scale (smoke results, never committed) one round: 5 cold starts per combination; at full scale 2 x 5.
    rounds = 1 if scale() == "ci" else 2   # a bad JAXCI_SCALE fails here, at import: asv measures nothing

    #: setup gained the deadline and the backend-lacks checks (issue 71); what is timed is unchanged, so the version
    #: of the asv history stays (compile.CompileColdStart, whose setup is its own, pins its own)
    version = "21987a8f8bf9e0cb0c7e090909e2d4252dd045fb6656bd19eadb7defd1b0b5b9"

    def setup(self, *params):
        *case, dtype, device = params
        skip_unless_runnable(device, large=self.is_large(*case))
        within_deadline(type(self).__name__, params)
        self._skip_lacking(params)

    def _skip_lacking(self, params):
        """n/a where the kernel uses what the backend lacks: the cold call is timed in a fresh interpreter, where
        the backend's error could only fail the benchmark. Traces, without a backend, only for the table's cases."""
        from jaxci.accel import BACKEND_LACKS

        *case, dtype, device = params
        if (platform_for(device), dtype) in BACKEND_LACKS:
            jax.config.update("jax_enable_x64", dtype == "float64")
            fn, host_args = self.build(*case, dtype)
            skip_lacking(jax, fn, host_args, platform_for(device), dtype)

    def timeraw_first_call(self, *params):
        setup = COLD_SETUP.format(root=str(REPO_ROOT), module=type(self).__module__,
                                  cls=type(self).__name__, params=params)
        return COLD_STMT, setup


def cold_prepare(module: str, cls: str, params: tuple):
    """Inside the fresh interpreter of a timeraw benchmark: JAX started, inputs placed, nothing compiled."""
    import importlib

    case = getattr(importlib.import_module(module), cls)()
    return case._prepare(params)
