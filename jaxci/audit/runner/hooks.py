"""The kernel-side half of the instrumented runner: per-cell timing hooks and the tracing hooks.

This module runs *inside the lecture's kernel*. The runner (jaxci.audit.runner) sends its source with jaxmon's
`CompileClock` into a private module, then calls `install(get_ipython(), CompileClock(), trace)`, so any Python 3
kernelspec works without jaxci installed there. Therefore: standard library only at import, JAX imported lazily
(after the notebook's own `import jax`), nothing from jaxci.

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
- `eager`: un-jitted primitives the notebook ran (jnp outside jit): op count, seconds inside them, and per size
  class (powers of two of the largest operand or result) the count and largest size.
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

try:  # in the kernel, where jaxci may be absent, the runner defines these ahead of this module's source
    from jaxci.audit.runner.cell_records import COUNTED, JitCall, TracedLoop
except ImportError:
    pass

_LIB = ("site-packages", "dist-packages")
#: at most this many loops / jitted functions / call signatures / eager size classes kept per cell
LIMIT = 50
#: eager ops per cell read in full (sizes); past it they are only counted and timed
EAGER_FULL = 2000
#: namespace entries looked at per cell for arrays still computing
NAMESPACE_LIMIT = 5000
#: at most this many extra runs per jitted signature count its while loops' turns (Called._queue_count)
PROBES = 5
#: no extra run after a call that took longer than this (seconds, waited, compile included): it would double an
#: expensive call, and a long call's own CPU time already says how many passes it ran (predicted._inferred_passes)
PROBE_MAX_S = 5.0
#: the module holding `trips` in the kernel (the runner makes it); imported from the package elsewhere
TRIPS_MODULE = "_jaxci_trips"
#: the loops whose trips a trace may not know and a count's extra run reports: a while loop's turns, a fori_loop's
#: traced bounds
COUNTABLE = ("lax.while_loop", "lax.fori_loop")

STATE = {"t0": None, "busy0": None, "before": None, "records": [], "installed": False, "loops": {}, "shapes": {},
         "calls": {}, "clock": None, "trace": True, "cell": 0, "active": [], "tracing": [], "fn_loops": {}, "eager": {},
         "eager_ops": 0, "eager_s": 0.0, "eager_last": None, "startup_s": 0.0, "ns": None, "called": set(),
         "depth": 0, "fn_compile": {}, "import_s": 0.0, "samplers": [], "own_loops": {}, "traces": {}, "batch": [],
         "lowering": False, "queued": [], "last_calls": [], "cpu_devices": set()}
_JAX: dict = {}  # the jax module and the pieces of it the hooks use (filled by bind())
_TRACER: list = [type(None)]  # jax.core.Tracer once bound (a module global: read on every call)
_clock = _time.perf_counter
_HOOK_FILE = (lambda: None).__code__.co_filename  # the file name the loop wrappers' frames carry in a traceback


def _trips():
    """The loop counter (`trips`): the runner's private module in the kernel, the package's module elsewhere."""
    module = _sys.modules.get(TRIPS_MODULE)
    if module is None:
        import importlib

        module = importlib.import_module("jaxci.audit.runner.trips")
    return module


def bind(jax) -> None:
    """Keep jax and the few of its internals the hooks need; each is optional (older or newer JAX: fall back)."""
    _JAX["jax"] = jax
    _JAX["tracer"] = _TRACER[0] = jax.core.Tracer
    try:
        from jax._src import core

        _JAX["top"] = core.trace_state_clean
    except Exception:
        _JAX["top"] = lambda: True
    try:
        from jax._src import core as jax_core
        from jax._src import source_info_util

        _JAX["core"], _JAX["user_file"] = jax_core, source_info_util.is_user_filename
    except Exception:
        pass
    try:
        from jax._src.array import ArrayImpl

        _JAX["array"] = ArrayImpl
    except Exception:
        _JAX["array"] = None


def unbatched(leaf):
    """The value behind vmap's tracer (nested vmaps: the innermost batched value), so its shape is the batched
    one; anything else is returned as it is."""
    while type(leaf).__name__ == "BatchTracer" and hasattr(leaf, "val"):
        leaf = leaf.val
    return leaf


def shape_of(leaf) -> tuple:
    return tuple(int(d) for d in getattr(unbatched(leaf), "shape", ()))


def elements(tree, leaves=None) -> int:
    """Elements in a pytree of arrays and scalars, read through vmap (shapes only: tracers work too)."""
    if leaves is None:
        import jax

        leaves = jax.tree_util.tree_leaves(tree)
    total = 0
    for leaf in leaves:
        n = 1
        for d in shape_of(leaf):
            n *= d
        total += n
    return total


def user_call(depth: int = 2) -> bool:
    """True when the frame `depth` levels up is notebook code, not a library."""
    name = _sys._getframe(depth).f_code.co_filename
    return not any(part in name for part in _LIB)


def note_loop(kind: str, trips, carry) -> None:
    """One lax loop seen; inside a jitted function's trace it also joins that function's loops (run per call), and
    the innermost traced function keeps it as its own (`own_loops`: replayed when its trace is reused)."""
    if STATE["lowering"]:
        return
    within = STATE["tracing"][0] if STATE["tracing"] else None
    if within is not None:
        own = STATE["own_loops"].setdefault(STATE["tracing"][-1][0], [])
        if len(own) < LIMIT:
            own.append((kind, trips, carry))
    for copies in STATE["batch"]:  # a jitted function under vmap is traced one element at a time
        carry *= copies
    key = (kind, trips, carry, within[1] if within else "")
    STATE["loops"][key] = STATE["loops"].get(key, 0) + 1
    if within is not None:
        STATE["fn_loops"].setdefault(within[0], []).append(TracedLoop(kind, trips, carry))


def batch_of(leaves) -> int:
    """How many copies vmap runs of a call with these arguments: the largest ratio of an argument's batched
    elements (read through vmap) to one copy's (its tracer's aval), 1 outside vmap. A jitted function called under
    vmap is traced with one element's shapes, so the carries of the loops it holds are one copy's."""
    most = 1
    for leaf in leaves:
        one = elements(None, [getattr(leaf, "aval", leaf)])
        if one:
            most = max(most, elements(None, [leaf]) // one)
    return most


def replay_loops(key) -> None:
    """A jitted function called inside another's trace whose own trace JAX reused (its jaxpr cached from an
    earlier signature of the outer one): the loop hooks saw none of its loops this time, so they are noted again
    as it recorded them (a simulation called with a new horizon whose loops live in a jitted function it calls)."""
    for kind, trips, carry in list(STATE["own_loops"].get(key, [])):
        note_loop(kind, trips, carry)


def concrete(x):
    try:
        return int(x)
    except Exception:
        return None


def cost_of(lower) -> dict:
    """flops, bytes accessed and fusions of one compiled executable, from XLA's own cost analysis and optimised HLO
    ({} where it cannot be read). `lower()` lowers jit's own trace of the call: the executable is in jit's compile
    cache by now, nothing is traced or compiled again."""
    try:
        compiled = lower().compile()
        cost = compiled.cost_analysis()
    except Exception:
        return {}
    if isinstance(cost, (list, tuple)):
        cost = cost[0] if cost else {}
    out = {}
    if isinstance(cost, dict):
        for key, name in (("flops", "flops"), ("bytes accessed", "bytes"), ("transcendentals", "transcendentals")):
            value = cost.get(key)
            if isinstance(value, (int, float)) and value >= 0:
                out[name] = float(value)
    try:
        out["fusions"] = compiled.as_text().count(" fusion(")
    except Exception:
        pass
    return out


def _block(out) -> None:
    try:
        _JAX["jax"].block_until_ready(out)
    except Exception:
        pass


def _signature(leaves) -> tuple:
    return tuple((shape_of(leaf), str(getattr(leaf, "dtype", type(leaf).__name__))) for leaf in leaves)


class Called:
    """A jitted function as the notebook calls it: counts and times each top-level call (see the module docstring
    for what is waited for and when)."""

    def __init__(self, jax, name, jitted, key=None, fun=None):
        if "jax" not in _JAX:
            bind(jax)
        self.jax, self.name, self.jitted, self.key = jax, name, jitted, key if key is not None else id(self)
        self.tallies = {}  # per signature: its while loops' counted turns (_queue_count, count_queued)
        self.placed = False  # made with backend="cpu" or a CPU device (trace_hooks' jit)
        self.sigs: dict = {}  # argument signature -> what describes it (shapes, XLA cost, loops in its trace)
        self.size = self._size()
        self.single = False  # one signature only: hits need no walk
        self.warm = False  # the next call is waited for (the warm call after a compile)
        self.fast = False  # single, not warm, this cell's entry open: calls are only counted (`pending`)
        self.cell, self.entries, self.entry, self.last, self.pending = -1, {}, None, None, 0
        self.__wrapped__ = fun if fun is not None else jitted  # what jax.jit(fun).__wrapped__ is without the hooks
        self.__name__ = name
        self.__doc__ = getattr(jitted, "__doc__", None)
        STATE["called"].add(name)

    def __get__(self, obj, objtype=None):  # a jitted method binds as the jitted function would
        import functools

        return self if obj is None else functools.partial(self, obj)

    def __getattr__(self, item):  # lower, trace, eval_shape, clear_cache ... stay the jitted function's
        return getattr(self.jitted, item)

    def _size(self):
        try:
            return self.jitted._cache_size()
        except Exception:
            return None

    def __call__(self, *args, **kwargs):
        if args and isinstance(args[0], _TRACER[0]):  # inside another function's trace
            return self._inside(args, kwargs)
        if self.fast:
            out = self.jitted(*args, **kwargs)
            if self.jitted._cache_size() == self.size:  # the only signature, nothing compiled: counted only
                self.pending += 1
                self.last = out
                return out
            t0 = None  # it compiled: its time is the compile (jax.monitoring) plus the wait below
        else:
            t0 = _clock()
            out = self.jitted(*args, **kwargs)
        try:
            self._slow(out, t0, args, kwargs)
        except Exception:
            pass
        return out

    def _inside(self, args, kwargs):
        """A call inside another function's trace: its loops join that function's, once per vmapped copy, and are
        replayed where JAX reused its own trace."""
        traced = STATE["traces"].get(self.key, 0)
        try:
            copies = batch_of(self.jax.tree_util.tree_leaves((args, kwargs)))
        except Exception:
            copies = 1
        STATE["batch"].append(copies)
        try:
            out = self.jitted(*args, **kwargs)
            if STATE["tracing"] and STATE["traces"].get(self.key, 0) == traced:
                replay_loops(self.key)
        finally:
            STATE["batch"].pop()
        return out

    def flush(self) -> None:
        """Fast-path calls into the entry they belong to (the function's only signature)."""
        if self.pending and self.entry is not None:
            self.entry.calls += self.pending
        self.pending = 0

    def _slow(self, out, t0, args, kwargs) -> None:
        """A compile, a new cell, a new or second signature: walk the arguments, wait where a time is wanted."""
        size = self._size()
        leaves = self.jax.tree_util.tree_leaves((args, kwargs))
        if not _JAX["top"]() or any(isinstance(leaf, _TRACER[0]) for leaf in leaves):
            return
        if t0 is None:
            t0 = _clock() - STATE["fn_compile"].get(self.name, 0.0)
        sig = _signature(leaves)
        new = sig not in self.sigs
        compiled = new if size is None else size != self.size
        self.size = size
        waited = new or compiled or self.warm
        if waited:
            _block(out)
        wall = _time.perf_counter() - t0
        if new:
            self.sigs[sig] = self._describe(sig, leaves, args, kwargs)
        self._queue_count(sig, wall, args, kwargs)
        self.single = len(self.sigs) == 1
        entry = self._entry(sig)
        entry.calls += 1
        entry.wall_s += wall
        if compiled:
            entry.first_s = (entry.first_s or 0.0) + wall
            entry.compile_s = (entry.compile_s or 0.0) + STATE["fn_compile"].pop(self.name, 0.0)
            self.warm = True
        elif self.warm:
            entry.warm_s = wall
            self.warm = False
        self.fast = self.single and not self.warm and self.size is not None
        self.last = out

    def _describe(self, sig, leaves, args, kwargs) -> JitCall:
        big = max(leaves, key=lambda leaf: elements(None, [leaf]), default=None)
        loops = STATE["fn_loops"].pop(self.key, [])[:LIMIT]
        STATE["lowering"] = True  # reading jit's trace back is not a run: no loop it meets is noted
        try:
            try:
                traced = self.jitted.trace(*args, **kwargs)
            except Exception:
                traced = None
            cost = cost_of(traced.lower if traced is not None else lambda: self.jitted.lower(*args, **kwargs))
        finally:
            STATE["lowering"] = False
        unknown = [i for i, loop in enumerate(loops) if loop.kind in COUNTABLE and loop.trips is None]
        if unknown:
            self._tally(sig, traced, loops, unknown, self._dynamic(args, kwargs))
        return JitCall(name=self.name, elements=elements(None, leaves),
                    largest=elements(None, [big]) if big is not None else 0,
                    dtype=str(getattr(big, "dtype", "")) if big is not None else "", loops=loops,
                    placed="cpu" if placed_on_cpu(self, leaves) else None, **cost)

    def _tally(self, sig, traced, loops: list, unknown: list, leaves) -> None:
        """Whether the loops of unknown trips can be counted (see `trips`), and what counts them: else each is
        marked with why not."""
        why, found = _countable(traced, unknown, leaves)
        if why:
            for i in unknown:
                loops[i].count = "not counted: " + why
            return
        self.tallies[sig] = {"loops": unknown, "probes": 0, "jaxpr": traced.jaxpr, "found": found, "counter": None}

    def _dynamic(self, args, kwargs) -> list:
        """The call's arguments that are its trace's inputs: all but jit's static ones, flattened."""
        info = getattr(self.jitted, "_jit_info", None)
        numbers, names = getattr(info, "static_argnums", ()) or (), getattr(info, "static_argnames", ()) or ()
        dynamic = ([a for i, a in enumerate(args) if i not in numbers],
                   {k: v for k, v in kwargs.items() if k not in names})
        return self.jax.tree_util.tree_leaves(dynamic)

    def _queue_count(self, sig, wall: float, args, kwargs) -> None:
        """A slow-path call of a signature with loops to count, at most PROBE_MAX_S long: its arguments are kept for
        `count_queued`, which runs after the cell (at most PROBES per signature)."""
        tally = self.tallies.get(sig)
        if tally is None or tally["probes"] >= PROBES:
            return
        if wall > PROBE_MAX_S:
            self._label(sig, f"not counted: its call took over {PROBE_MAX_S:g} s (a count would repeat it)")
            return
        tally["probes"] += 1
        STATE["queued"].append((self, sig, self._dynamic(args, kwargs)))

    def count(self, sig, leaves) -> None:
        """One queued count: the signature's traced jaxpr runs on the call's arguments with its loops counted; each
        loop's mean turns per run over the counts so far replace its unknown trips (a failed run counts none)."""
        tally, jax = self.tallies[sig], self.jax
        if tally["counter"] is None:
            tally["counter"] = _trips().counting(jax, _JAX["core"], _JAX["jit0"], _JAX["while0"], tally["jaxpr"],
                                                 tally["found"])
        run, counts = tally["counter"]
        try:
            _block(run(*leaves))
            jax.effects_barrier()
        except Exception as exc:
            self._label(sig, f"not counted: the count failed ({type(exc).__name__})")
            return
        self._label(sig, "not counted: inside a primitive the count does not open (a scan body)")
        loops = self.sigs[sig].loops
        for i, (turns, runs) in zip(tally["loops"], counts):
            if runs:
                loops[i].trips, loops[i].count = turns / runs, COUNTED

    def _label(self, sig, why: str) -> None:
        """Say why the signature's loops of unknown trips are not counted (a loop counted before keeps its count)."""
        loops = self.sigs[sig].loops
        for i in self.tallies[sig]["loops"]:
            if not loops[i].counted:
                loops[i].count = why

    def _entry(self, sig) -> dict:
        self.flush()
        if self.cell != STATE["cell"]:
            self.cell, self.entries = STATE["cell"], {}
            STATE["active"].append(self)
        entry = self.entries.get(sig)
        if entry is None:
            entry = self.sigs[sig].opened()
            self.entries[sig] = entry
            if len(STATE["calls"]) < LIMIT:
                STATE["calls"][(self.key, sig)] = entry
        self.entry = entry
        return entry


def _countable(traced, unknown: list, leaves) -> tuple:
    """(why the loops cannot be counted, None), or (None, the notebook's while equations in the trace's order)."""
    if traced is None or "core" not in _JAX or "jit0" not in _JAX:
        return "its trace could not be read back", None
    trips, jaxpr = _trips(), traced.jaxpr
    why = trips.uncountable(jaxpr)
    if why:
        return why, None
    if not trips.matches(jaxpr, leaves):
        return "its arguments are not its trace's inputs (a static argument)", None
    user_file = _JAX["user_file"]
    found = trips.notebook_loops(jaxpr, _HOOK_FILE, lambda name: not user_file(name))
    if len(found) != len(unknown):
        return f"{len(unknown)} loop(s) noted, {len(found)} found in its trace", None
    return None, found


def count_queued(budget_s: float) -> str:
    """Run the counts the last cell queued (the runner asks after the cell, in a request of its own), starting none
    after `budget_s`; the seconds they took and, per call entry of the cell's record, its loops now."""
    queued, STATE["queued"] = STATE["queued"], []
    t0, touched = _clock(), []
    STATE["depth"] = 1  # the counts' own dispatches are not the notebook's eager work
    try:
        for called, sig, leaves in queued:
            if _clock() - t0 > budget_s:
                break
            called.count(sig, leaves)
            touched.append(called.sigs[sig])
    finally:
        STATE["depth"] = 0
    entries = STATE["last_calls"]
    out = [[k, entry.loops] for k, entry in enumerate(entries) if any(entry.loops is sig.loops for sig in touched)]
    return _json.dumps({"s": _clock() - t0, "calls": out}, default=_dataclasses.asdict)


def note_eager(primitive: str, args, out, seconds: float) -> None:
    """One un-jitted primitive the notebook ran: counted and timed; its largest operand or result sized."""
    STATE["eager_ops"] += 1
    STATE["eager_s"] += seconds
    STATE["eager_last"] = out
    if STATE["eager_ops"] > EAGER_FULL:
        return
    big, dtype = 0, None
    for x in (*args, *(out if isinstance(out, (list, tuple)) else (out,))):
        n = getattr(x, "size", None)
        if type(n) is int and n > big:
            big, dtype = n, getattr(x, "dtype", None)
    key = (big.bit_length(), dtype)
    entry = STATE["eager"].get(key)
    if entry is None:
        if len(STATE["eager"]) >= LIMIT:
            return
        entry = STATE["eager"][key] = [0, 0]
    entry[0] += 1
    entry[1] = max(entry[1], big)


_LOOP_PRIMS = ("scan", "while")  # sized by the loop hooks; the jit calls of Called are counted there


def eager_hooks(jax) -> None:
    """Count the JAX work that runs outside any trace and outside the notebook's jitted functions: primitives bound
    directly (EvalTrace), one level deep (a primitive's own one-op jit is not counted again), and the calls of
    library-jitted functions (most of jax.numpy) that take JAX's Python path: the first call per argument signature;
    later ones run in JAX's C++ dispatch, which no Python hook sees. Private API, each hook optional: without them
    eager work is not counted and the cell's time still is."""
    from jax._src import core

    top = _JAX.get("top") or (lambda: True)

    def counted(run, primitive, name, args, outs):
        if STATE["depth"] or primitive in _LOOP_PRIMS or name in STATE["called"] or not top():
            return run()
        STATE["depth"] = 1
        t0 = _time.perf_counter()
        try:
            out = run()
        finally:
            STATE["depth"] = 0
        try:
            note_eager(primitive, args, outs(out), _time.perf_counter() - t0)
        except Exception:
            pass
        return out

    cls = core.EvalTrace
    process0 = cls.process_primitive

    def process_primitive(self, primitive, args, params, /):
        return counted(lambda: process0(self, primitive, args, params), primitive.name, params.get("name"), args,
                       lambda out: out)

    cls.process_primitive = process_primitive
    try:
        from jax._src import pjit
    except Exception:
        return
    run0 = getattr(pjit, "_run_python_pjit", None)
    if run0 is None:
        return

    def run_python_pjit(p, args_flat, fun, *rest, **kw):
        return counted(lambda: run0(p, args_flat, fun, *rest, **kw), "pjit", getattr(fun, "__name__", None),
                       args_flat, lambda out: out[1] if isinstance(out, tuple) and len(out) > 1 else ())

    pjit._run_python_pjit = run_python_pjit


def startup_hook(jax) -> None:
    """Time the backend's start-up (the first `backends()` call creates the clients), once, apart from compile."""
    from jax._src import xla_bridge as xb

    if xb.backends_are_initialized():
        return
    original = xb.backends

    def backends():
        xb.backends = original
        t0 = _time.perf_counter()
        try:
            return original()
        finally:
            STATE["startup_s"] += _time.perf_counter() - t0

    xb.backends = backends


def trace_hooks(jax) -> None:
    """Wrap lax.scan / fori_loop / while_loop and jax.jit as the notebook sees them (see the module docstring)."""
    import functools
    import weakref

    lax = jax.lax
    scan0, fori0, while0, jit0 = lax.scan, lax.fori_loop, lax.while_loop, jax.jit

    @functools.wraps(scan0)
    def scan(f, init, xs=None, length=None, *args, **kwargs):
        if user_call():
            try:
                n = length
                if n is None:
                    leaves = jax.tree_util.tree_leaves(xs)
                    n = int(leaves[0].shape[0]) if leaves and getattr(leaves[0], "shape", ()) else None
                note_loop("lax.scan", n, elements(init))
            except Exception:
                pass
        return scan0(f, init, xs, length, *args, **kwargs)

    @functools.wraps(fori0)
    def fori_loop(lower, upper, body_fun, init_val, *args, **kwargs):
        if user_call():
            try:
                lo, hi = concrete(lower), concrete(upper)
                note_loop("lax.fori_loop", hi - lo if lo is not None and hi is not None else None, elements(init_val))
            except Exception:
                pass
        return fori0(lower, upper, body_fun, init_val, *args, **kwargs)

    @functools.wraps(while0)
    def while_loop(cond_fun, body_fun, init_val):
        if user_call():
            try:
                note_loop("lax.while_loop", None, elements(init_val))
            except Exception:
                pass
        return while0(cond_fun, body_fun, init_val)

    wrapped = weakref.WeakKeyDictionary()  # one wrapper per function, so jit's own cache still hits

    def jit(fun=None, *args, **kwargs):
        if not callable(fun) or not user_call():
            return jit0(fun, *args, **kwargs) if fun is not None else jit0(*args, **kwargs)
        try:
            traced = wrapped.get(fun)
        except TypeError:  # not weak-referenceable: leave it alone
            return jit0(fun, *args, **kwargs)
        name = getattr(fun, "__name__", "<jitted>")
        if traced is None:
            traced = _traced(fun, name)
            wrapped[fun] = traced
        called = Called(jax, name, jit0(traced, *args, **kwargs), key=id(traced), fun=fun)
        called.placed = kwargs.get("backend") == "cpu" or on_cpu_device(kwargs.get("device"))
        return called

    _JAX["jit0"], _JAX["while0"] = jit0, while0  # what the counts run with (the notebook's, unhooked)
    lax.scan, lax.fori_loop, lax.while_loop, jax.jit = scan, fori_loop, while_loop, jit
    jax.devices, jax.local_devices = cpu_query(jax.devices, 0), cpu_query(jax.local_devices, None)


def cpu_query(query, position):
    """jax.devices / jax.local_devices, noting the devices the notebook asks for by the CPU backend's name (its
    `backend` argument: positional at `position`, or by keyword): the devices it places work on the CPU with."""
    import functools

    @functools.wraps(query)
    def devices(*args, **kwargs):
        out = query(*args, **kwargs)
        backend = args[position] if position is not None and len(args) > position else kwargs.get("backend")
        if isinstance(backend, str) and backend.lower() == "cpu" and user_call():
            STATE["cpu_devices"].update(id(d) for d in out)
        return out

    return devices


def on_cpu_device(where) -> bool:
    """Is `where` (a device, or None) one the notebook asked for as a CPU device (`cpu_query`)? The audit's host has
    only a CPU, so a device the notebook took from `jax.devices()` is the same object: only the explicit request
    says the lecture means the CPU on a GPU machine too."""
    return where is not None and id(where) in STATE["cpu_devices"]


def placed_on_cpu(called, leaves) -> bool:
    """Does the lecture place this call on the CPU on any machine: a jit made with `backend="cpu"` or a CPU device,
    a CPU device as the default device (`jax.default_device` or the config), or an argument committed to one
    (`jax.device_put(x, cpu)`)?"""
    if getattr(called, "placed", False):
        return True
    try:
        if on_cpu_device(called.jax.config.jax_default_device):
            return True
    except Exception:
        pass
    return any(getattr(leaf, "committed", False) and all(on_cpu_device(d) for d in leaf.devices())
               for leaf in leaves if hasattr(leaf, "devices"))


def _traced(fun, name):
    """What jit traces instead of `fun`: notes its largest argument, and which function the loops it holds are in."""
    import functools

    @functools.wraps(fun)
    def traced(*a, **k):
        try:
            size = elements((a, k))
            STATE["shapes"][name] = max(STATE["shapes"].get(name, 0), size)
        except Exception:
            pass
        if not STATE["tracing"] and not STATE["lowering"]:  # an outermost trace: the loops a call's signature
            STATE["fn_loops"][id(traced)] = []  # holds are this trace's, not an earlier one's (a vmapped call's)
        STATE["tracing"].append((id(traced), name))
        STATE["traces"][id(traced)] = STATE["traces"].get(id(traced), 0) + 1
        if not STATE["lowering"]:  # its own loops are this trace's: a replay repeats one trace, never all of them
            STATE["own_loops"][id(traced)] = []
        try:
            return fun(*a, **k)
        finally:
            STATE["tracing"].pop()

    return traced


def compile_by_name(jax) -> None:
    """Compile seconds per function name (jax.monitoring passes fun_name), so a call's compile part is its own."""
    stages = ("/jax/core/compile/jaxpr_trace_duration", "/jax/core/compile/jaxpr_to_mlir_module_duration",
              "/jax/core/compile/backend_compile_duration")

    def on_duration(event, duration, fun_name=None, **kwargs):
        if fun_name and event in stages and fun_name in STATE["called"]:
            STATE["fn_compile"][fun_name] = STATE["fn_compile"].get(fun_name, 0.0) + duration

    jax.monitoring.register_event_duration_secs_listener(on_duration)


def install_jax() -> None:
    if not STATE["installed"]:
        STATE["installed"] = True
        jax = _sys.modules["jax"]
        STATE["clock"].install()
        if STATE["trace"]:
            for hook in (bind, startup_hook, eager_hooks, trace_hooks, compile_by_name):
                try:
                    hook(jax)
                except Exception:
                    pass


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
                STATE["samplers"].append({"what": "numpyro.MCMC.run", "s": _clock() - t0,
                                          **{k: _plain(getattr(self, attr, None)) for k, attr in (
                                              ("chains", "num_chains"), ("warmup", "num_warmup"),
                                              ("samples", "num_samples"), ("chain_method", "chain_method"))},
                                          **_leapfrog_steps(self, added)})

    run._jaxci = True
    mcmc.run = run


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
    STATE["t0"], STATE["busy0"] = _time.perf_counter(), _time.thread_time()


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
    out = {}
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
    if not started:
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
    after = STATE["clock"].snapshot()
    delta = {k: after[k] - STATE["before"][k] for k in after}
    delta["wall"], delta["busy_s"] = wall, busy
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
        delta["eager"] = {"ops": STATE["eager_ops"], "s": STATE["eager_s"],
                          "sizes": sorted(([largest, ops, str(dtype or "")] for (_, dtype), (ops, largest)
                                           in STATE["eager"].items()), reverse=True)}
    STATE["records"].append(delta)


def take() -> str:
    records, STATE["records"] = STATE["records"], []
    return _json.dumps(records, default=_dataclasses.asdict)


def install(ip, clock, trace: bool = True) -> None:
    """Register the per-cell hooks on an IPython shell; the JAX hooks go in when the notebook imports jax."""
    STATE["clock"], STATE["trace"] = clock, bool(trace)
    STATE["ns"] = getattr(ip, "user_ns", None)
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
