"""The kernel-side hooks on jitted calls and lax loops: each top-level call of a jitted function counted and timed
(`Called`), each loop noted with its trips and carry, and the while loops of unknown trips counted after the cell
(`count_queued`); where the notebook places a call on the CPU. See hooks for what a cell's record holds.

Runs inside the lecture's kernel (see hook_state).
"""

from __future__ import annotations

import dataclasses as _dataclasses
import json as _json
import sys as _sys
import time as _time

from jaxci.audit.reading.cell_records import COUNTED, JitCall, TracedLoop
from jaxci.audit.runner.hook_state import (
    _JAX,
    _TRACER,
    LIMIT,
    STATE,
    _block,
    _clock,
    _signature,
    bind,
    concrete,
    cost_of,
    elements,
    user_call,
)

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
_HOOK_FILE = (lambda: None).__code__.co_filename  # the file name the loop wrappers' frames carry in a traceback


def _trips():
    """The loop counter (`trips`): the runner's private module in the kernel, the package's module elsewhere."""
    module = _sys.modules.get(TRIPS_MODULE)
    if module is None:
        import importlib

        module = importlib.import_module("jaxci.audit.runner.trips")
    return module


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

    def _entry(self, sig) -> JitCall:
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

    # one wrapper per function, so jit's own cache still hits
    wrapped: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

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
