"""The kernel-side half of the instrumented runner: the per-cell hooks (this module), with the hooks on jitted calls
and loops (jit_calls) and in JAX (jax_hooks).

These modules run *inside the lecture's kernel*. The runner (kernel._kernel_setup_code) sends their sources, with
jaxmon's `CompileClock` and the records (cell_records), into one private module, then calls
`install(get_ipython(), CompileClock(), trace)`, so any Python 3 kernelspec works without jaxci installed there.
Therefore: standard library only at import, JAX imported lazily (after the notebook's own `import jax`), and from
jaxci only each other, by `from jaxci.audit.runner.<module> import ...` statements the runner leaves out.

Per cell it records (one dict per cell, read by the runner through `take()`):
- wall seconds between IPython's pre_run_cell and post_run_cell, and the CompileClock deltas; before the clock
  stops, the cell's asynchronous JAX work is waited for (the last result of every jitted function it called, the
  last eager result, every array bound in the user namespace), so time lands in the cell that spent it;
- `import_s`: the notebook's own `import jax`, in its cell;
- `memory`: at the cell's end, the device's peak bytes in use (GPU), JAX's live buffers and the kernel's peak
  host RSS, each under its own name (`memory()`): what a lecture needs per kernel, read outside the timed window;
- `startup_s`: the backend's start-up (jax's first `backends()` call: creating the CPU / CUDA client), in the cell
  that triggered it, apart from compile time;
- `loops`: every lax loop the notebook calls (cell_records.TracedLoop: kind, trips or None, carry elements, times
  noted, within), carry read through vmap (a BatchTracer's shape is one element's: its batched value is read),
  `within` the jitted
  function whose trace it was noted in ("" at top level: then it ran once per time noted); a jitted function
  called inside another's trace, its own trace reused by JAX, has its loops noted again as first recorded, and
  called there under vmap (traced one element at a time) its loops' carries count once per vmapped copy;
- `jitted`: the largest argument (elements) each jitted function was traced with;
- `calls`: per jitted function and argument signature called from notebook code outside any trace
  (cell_records.JitCall): calls,
  `first_s` (the call that compiled, waited for) and `compile_s` (its compile part, from jax.monitoring's events
  for that function's name), `warm_s` (the next call, waited for), `wall_s` (the calls that took the slow path;
  fast-path calls are counted only, their compute lands in the cell's end-of-cell wait), the largest
  argument's elements and dtype, the loops its trace held, `placed: "cpu"` where the lecture places the call on
  the CPU on any machine (`placed_on_cpu`), and XLA's cost analysis of the compiled executable
  (flops, bytes accessed, fusions in the optimised HLO), read once per new executable from the trace JAX made for
  the call (jit's cache: the notebook's Python is never traced again). A `while_loop` in it (its trip count is
  data: a value-function iteration to a tolerance), or a `fori_loop` with traced bounds, is counted where that
  cannot change what the notebook sees: the trace must be free of effects and host callbacks (`trips`). Then up
  to PROBES of a signature's slow-path calls (each at most PROBE_MAX_S long) are queued, and after the cell, in a
  request of its own (outside the cell's clocks and its timeout: `count_queued`), the traced jaxpr runs again on
  the same arguments with each such loop counting its turns; the loop's mean turns per run stand for its trips
  (`TracedLoop.count` = "counted"; `trip_probe_s` says how long the counts took). Otherwise its count says
  "not counted: <why>" and its trips stay unknown (the judging infers them from the call's time). The count is a
  sample of those calls' arguments: trips that vary from call to call (a bound the notebook sweeps) are only as
  good as it;
- `busy_s`: CPU seconds of the kernel's main thread in the cell: its host work
  (Python, NumPy, SciPy, JAX's dispatch and compiles), where XLA computes on its own threads while the main thread
  waits: of a cell's time no hook accounts for, the part that was host code whatever JAX was asked;
- `host_kinds`: the cell's CPU seconds by kind (host_kinds.HostKinds: `python_s` and `native_s` share `busy_s` as a
  sampler of the main thread's innermost frame saw it, `threads_s` the other threads' CPU seconds);
- `eager`: un-jitted primitives the notebook ran (jnp outside jit; cell_records.EagerWork): op count, seconds
  inside them, and per size class (powers of two of the largest operand or result) the count and largest size.
- `samplers`: each run of a library sampler (numpyro's `MCMC.run`) started from this cell: its seconds (waited
  for, compiles included), chains, warm-up and samples, and for HMC / NUTS the leapfrog steps of the collected
  iterations (`leapfrog`, `leapfrog_iterations`, `leapfrog_max`, `leapfrog_lockstep`: the run collects
  `num_steps` for the hook, which takes it out again). Its jitted loops are library code, which the jit and loop
  hooks leave alone, so without this record its seconds would stand as the cell's host time.

Cost per jitted call, by design: a call on a function's only signature that compiles nothing (its jit cache did not
grow) takes the fast path: one tracer check on the first argument, a cache-size read and a counter; no pytree walk, no
wait, no timing of its own (its compute lands in the cell's end-of-cell wait). Signatures are walked on the first
call of each cell, after a compile (and the warm call after it), and for functions called with several.
"""

from __future__ import annotations

import dataclasses as _dataclasses
import importlib.abc as _abc
import importlib.util as _util
import json as _json
import sys as _sys
import time as _time

from jaxci.audit.reading.cell_records import EagerSize, EagerWork, SamplerRun, TracedLoop
from jaxci.audit.runner.hook_state import _JAX, LIMIT, STATE, _block, _clock
from jaxci.audit.runner.host_kinds import HostKinds, run_delay
from jaxci.audit.runner.jax_hooks import install_jax

#: namespace entries looked at per cell for arrays still computing
NAMESPACE_LIMIT = 5000



#: the module whose sampler runs are timed (sampler_hooks), hooked when the notebook imports it
SAMPLER_MODULE = "numpyro.infer.mcmc"


def sampler_hooks(module) -> None:
    """Time each `MCMC.run` of numpyro, per cell (see `samplers` in the module docstring). Once per class."""
    import functools

    mcmc = getattr(module, "MCMC", None)
    run0 = getattr(mcmc, "run", None)
    if run0 is None or getattr(run0, "_jaxci", False):
        return

    @functools.wraps(run0)
    def run(self, *args, **kwargs):
        added = _ask_leapfrog_steps(self, kwargs)
        t0 = _clock()
        try:
            return run0(self, *args, **kwargs)
        finally:
            _block(getattr(self, "_states", None))
            if len(STATE["samplers"]) < LIMIT:
                STATE["samplers"].append(SamplerRun("numpyro.MCMC.run", _clock() - t0, **{
                    k: _plain(getattr(self, attr, None)) for k, attr in (
                        ("chains", "num_chains"), ("warmup", "num_warmup"), ("samples", "num_samples"),
                        ("chain_method", "chain_method"))}, **_leapfrog_steps(self, added)))

    setattr(run, "_jaxci", True)  # noqa: B010 (marks the wrapper: hooked once per class)
    setattr(mcmc, "run", run)  # noqa: B010 (numpyro's class, patched in the kernel)


def _ask_leapfrog_steps(mcmc, kwargs) -> bool:
    """Have an HMC / NUTS run also collect each iteration's leapfrog steps (`num_steps` of its state), unless the
    notebook asked for them itself; True when this added the field (it is taken out again after the run, so the
    notebook's `get_extra_fields()` is what it asked for)."""
    try:
        from numpyro.infer.hmc import HMC

        fields = tuple(kwargs.get("extra_fields", ()))
        if not isinstance(mcmc.sampler, HMC) or "num_steps" in fields:
            return False
        kwargs["extra_fields"] = fields + ("num_steps",)
        return True
    except Exception:
        return False


def _leapfrog_steps(mcmc, added: bool) -> dict:
    """The collected iterations' leapfrog steps: their sum, count and largest, and `leapfrog_lockstep`, the sum over
    iterations of the most any chain took (vectorized chains run their loops in lockstep: that is how many turns
    the device runs). They decide a run's time on a GPU, where each step is loop turns and tiny launches; {} when
    not collected."""
    try:
        states = mcmc._states
        steps = states.pop("num_steps") if added else states.get("num_steps")
        if steps is None:
            return {}
        import numpy as np

        steps = np.asarray(steps)  # chains x collected iterations
        lockstep = steps.max(axis=0).sum() if steps.ndim == 2 else steps.sum()
        return {"leapfrog": int(steps.sum()), "leapfrog_iterations": int(steps.size),
                "leapfrog_max": int(steps.max(initial=0)), "leapfrog_lockstep": int(lockstep)}
    except Exception:
        return {}


def _plain(value):
    return value if isinstance(value, (int, float, str)) or value is None else str(value)


class _AfterImport(_abc.MetaPathFinder):
    """Call `loaded(run, module)` in place of the loader's exec_module of the module named `name`, the first time
    anything imports it; then leave sys.meta_path."""

    name = ""

    def loaded(self, run, module) -> None:
        run(module)

    def find_spec(self, name, path=None, target=None):
        if name != self.name:
            return None
        _sys.meta_path.remove(self)
        spec = _util.find_spec(name)
        if spec is not None and spec.loader is not None and hasattr(spec.loader, "exec_module"):
            run = spec.loader.exec_module
            spec.loader.exec_module = lambda module: self.loaded(run, module)
        return spec


class SamplerWatcher(_AfterImport):
    """Hook the sampler's module as soon as the notebook (or a library it imports) finishes importing it."""

    name = SAMPLER_MODULE

    def loaded(self, run, module) -> None:
        run(module)
        try:
            sampler_hooks(module)
        except Exception:
            pass


class JaxWatcher(_AfterImport):
    """Install the clock right after the notebook's own `import jax` finishes (JAX's import cost stays in the
    cell that pays it)."""

    name = "jax"

    def loaded(self, run, module) -> None:
        t0 = _time.perf_counter()
        run(module)
        STATE["import_s"] += _time.perf_counter() - t0
        install_jax()


def pre(info=None) -> None:
    STATE["loops"], STATE["shapes"], STATE["calls"], STATE["eager"] = {}, {}, {}, {}
    STATE["eager_ops"], STATE["eager_s"], STATE["startup_s"], STATE["import_s"] = 0, 0.0, 0.0, 0.0
    STATE["samplers"], STATE["queued"], STATE["last_calls"] = [], [], []  # counts a failed cell left: dropped
    STATE["cell"] += 1
    STATE["before"] = STATE["clock"].snapshot()
    if STATE.get("kinds") is not None:
        STATE["kinds"].mark()
    STATE["t0"], STATE["busy0"] = _time.perf_counter(), _time.thread_time()
    STATE["wait0"] = run_delay()


def settle() -> float:
    """Wait for the cell's asynchronous JAX work (so its time is this cell's); the seconds waited."""
    if "jax" not in _JAX:
        return 0.0
    t0 = _time.perf_counter()
    for called in STATE["active"]:
        called.flush()
        called.fast = False  # the next cell's first call opens its own entry
        if called.last is not None:
            _block(called.last)
            called.last = None
    STATE["active"] = []
    if STATE["eager_last"] is not None:
        _block(STATE["eager_last"])
        STATE["eager_last"] = None
    array, ns = _JAX.get("array"), STATE["ns"]
    if array is not None and ns is not None:
        for i, value in enumerate(list(ns.values())):
            if i >= NAMESPACE_LIMIT:
                break
            if type(value) is array:
                try:
                    value.block_until_ready()
                except Exception:
                    pass
    return _time.perf_counter() - t0


def memory() -> dict:
    """The kernel's memory at the cell's end, each figure labelled by what it is: `device_peak_bytes` (the
    devices' peak bytes in use, from `memory_stats()`, where the backend reports it: a GPU) with `device_platform`,
    `live_buffers_bytes` (JAX's live arrays now: what the CPU backend has instead) and `host_rss_peak_bytes` (the
    kernel process's peak resident set). Cheap: one getrusage, one call per device, one pass over live arrays;
    the backends are never started here (a notebook that has not used JAX yet reports host RSS only)."""
    out: dict = {}
    try:
        import resource

        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux, bytes on macOS
        out["host_rss_peak_bytes"] = rss if _sys.platform == "darwin" else rss * 1024
    except Exception:
        pass
    jax = _JAX.get("jax")
    try:
        from jax._src import xla_bridge as xb

        started = jax is not None and xb.backends_are_initialized()
    except Exception:
        started = False
    if jax is None or not started:
        return out
    try:
        stats = [(d.platform, (d.memory_stats() or {}).get("peak_bytes_in_use")) for d in jax.local_devices()]
        peaks = [(b, p) for p, b in stats if isinstance(b, int)]
        if peaks:
            out["device_peak_bytes"], out["device_platform"] = max(peaks)
    except Exception:
        pass
    try:
        out["live_buffers_bytes"] = sum(int(a.nbytes) for a in jax.live_arrays())
    except Exception:
        pass
    return out


def post(result=None) -> None:
    waited = settle() if STATE["installed"] else 0.0
    wall = _time.perf_counter() - STATE["t0"]
    busy = _time.thread_time() - STATE["busy0"]
    waited_for_a_core = run_delay()
    after = STATE["clock"].snapshot()
    delta = {k: after[k] - STATE["before"][k] for k in after}
    delta["wall"], delta["busy_s"] = wall, busy
    if waited_for_a_core is not None and STATE.get("wait0") is not None:
        delta["wait_s"] = min(max(waited_for_a_core - STATE["wait0"], 0.0), wall)
    if STATE.get("kinds") is not None:
        delta["host_kinds"] = STATE["kinds"].split(busy)
    delta["ok"] = bool(getattr(result, "success", True))
    delta["memory"] = memory()
    if STATE["installed"]:
        delta["settle_s"] = waited
        for key in ("startup_s", "import_s"):
            if STATE[key]:
                delta[key] = STATE[key]
    if STATE["loops"] or STATE["shapes"] or STATE["calls"]:
        delta["loops"] = [TracedLoop(k, t, c, n, w) for (k, t, c, w), n in STATE["loops"].items()][:LIMIT]
        delta["jitted"] = dict(list(STATE["shapes"].items())[:LIMIT])
        delta["calls"] = STATE["last_calls"] = list(STATE["calls"].values())[:LIMIT]
    if STATE["queued"]:
        delta["queued"] = len(STATE["queued"])  # the runner then asks for count_queued
    if STATE["samplers"]:
        delta["samplers"] = STATE["samplers"]
    if STATE["eager_ops"]:
        sizes = sorted((EagerSize(largest, ops, str(dtype or "")) for (_, dtype), (ops, largest)
                        in STATE["eager"].items()), reverse=True)
        delta["eager"] = EagerWork(STATE["eager_ops"], STATE["eager_s"], sizes)
    STATE["records"].append(delta)


def take() -> str:
    records, STATE["records"] = STATE["records"], []
    return _json.dumps(records, default=_dataclasses.asdict)


def install(ip, clock, trace: bool = True) -> None:
    """Register the per-cell hooks on an IPython shell; the JAX hooks go in when the notebook imports jax."""
    STATE["clock"], STATE["trace"] = clock, bool(trace)
    STATE["ns"] = getattr(ip, "user_ns", None)
    STATE["kinds"] = HostKinds()
    STATE["kinds"].start()
    if "jax" in _sys.modules:
        install_jax()
    else:
        _sys.meta_path.insert(0, JaxWatcher())
    if trace and SAMPLER_MODULE in _sys.modules:
        sampler_hooks(_sys.modules[SAMPLER_MODULE])
    elif trace:
        _sys.meta_path.insert(0, SamplerWatcher())
    ip.events.register("pre_run_cell", pre)
    ip.events.register("post_run_cell", post)
