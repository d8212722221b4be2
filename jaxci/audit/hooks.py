"""The kernel-side half of the instrumented runner: per-cell timing hooks and the tracing hooks.

This module runs *inside the lecture's kernel*. The runner (jaxci.audit.runner) sends its source with jaxmon's
`CompileClock` into a private module, then calls `install(get_ipython(), CompileClock(), trace)`, so any Python 3
kernelspec works without jaxci installed there. Therefore: standard library only at import, JAX imported lazily,
nothing from jaxci.

Per cell it records (one dict per cell, read by the runner through `take()`):
- wall seconds between IPython's pre_run_cell and post_run_cell, and the CompileClock deltas;
- `loops`: every lax loop the notebook calls: [kind, trips or None, carry elements, times called]. Carry shapes
  are read through vmap (a BatchTracer's shape is one element's: its batched value is read instead), so a scan
  vmapped over 1e6 firms carries 1e6 elements, not 1;
- `jitted`: the largest argument (elements) each jitted function was traced with;
- `calls`: per jitted function called from notebook code with concrete arrays (outside any trace): the number of
  calls, their wall seconds *with the result waited for* (jax.block_until_ready, so the time lands in the cell that
  spent it, not in the cell that next touches the result), the largest argument's elements and dtype (the
  concrete, batched shape), and XLA's cost analysis of the compiled call (flops, bytes accessed), read once per
  argument signature through `jitted.lower(*args).compile().cost_analysis()`.
Only calls made from notebook code are wrapped; calls from inside libraries pass straight through.
"""

from __future__ import annotations

import importlib.abc as _abc
import importlib.util as _util
import json as _json
import sys as _sys
import time as _time

_LIB = ("site-packages", "dist-packages")
#: at most this many loops / jitted functions / called functions kept per cell
LIMIT = 50

STATE = {"t0": None, "before": None, "records": [], "installed": False, "loops": {}, "shapes": {}, "calls": {},
         "clock": None, "trace": True}


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
    key = (kind, trips, carry)
    STATE["loops"][key] = STATE["loops"].get(key, 0) + 1


def concrete(x):
    try:
        return int(x)
    except Exception:
        return None


def cost_of(jitted, args, kwargs) -> dict:
    """flops and bytes accessed of one compiled call, from XLA's own cost analysis ({} where it cannot be read)."""
    try:
        cost = jitted.lower(*args, **kwargs).compile().cost_analysis()
    except Exception:
        return {}
    if isinstance(cost, (list, tuple)):
        cost = cost[0] if cost else {}
    if not isinstance(cost, dict):
        return {}
    out = {}
    for key, name in (("flops", "flops"), ("bytes accessed", "bytes"), ("transcendentals", "transcendentals")):
        value = cost.get(key)
        if isinstance(value, (int, float)) and value >= 0:
            out[name] = float(value)
    return out


class Called:
    """A jitted function as the notebook calls it: times each top-level call with its result waited for."""

    def __init__(self, jax, name, jitted):
        self.jax, self.name, self.jitted = jax, name, jitted
        self.seen: dict = {}  # argument signature -> cost analysis
        self.__wrapped__ = jitted
        self.__name__ = name
        self.__doc__ = getattr(jitted, "__doc__", None)

    def __get__(self, obj, objtype=None):  # a jitted method binds as the jitted function would
        import functools

        return self if obj is None else functools.partial(self, obj)

    def __getattr__(self, item):  # lower, trace, eval_shape, clear_cache ... stay the jitted function's
        return getattr(self.jitted, item)

    def __call__(self, *args, **kwargs):
        jax = self.jax
        leaves = jax.tree_util.tree_leaves((args, kwargs))
        if any(isinstance(leaf, jax.core.Tracer) for leaf in leaves):
            return self.jitted(*args, **kwargs)  # called inside a trace: part of an outer program
        t0 = _time.perf_counter()
        out = self.jitted(*args, **kwargs)
        try:
            jax.block_until_ready(out)
        except Exception:
            pass
        wall = _time.perf_counter() - t0
        try:
            self._record(leaves, args, kwargs, wall)
        except Exception:
            pass
        return out

    def _record(self, leaves, args, kwargs, wall) -> None:
        sig = tuple((shape_of(leaf), str(getattr(leaf, "dtype", type(leaf).__name__))) for leaf in leaves)
        key = (self.name, sig)
        entry = STATE["calls"].get(key)
        if entry is None:
            if key[1] not in self.seen:
                self.seen[key[1]] = cost_of(self.jitted, args, kwargs)
            big = max(leaves, key=lambda leaf: elements(None, [leaf]), default=None)
            entry = {"name": self.name, "calls": 0, "wall_s": 0.0, "elements": elements(None, leaves),
                     "largest": elements(None, [big]) if big is not None else 0,
                     "dtype": str(getattr(big, "dtype", "")) if big is not None else "", **self.seen[key[1]]}
            if len(STATE["calls"]) >= LIMIT:
                return
            STATE["calls"][key] = entry
        entry["calls"] += 1
        entry["wall_s"] += wall


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
            @functools.wraps(fun)
            def traced(*a, **k):
                try:
                    size = elements((a, k))
                    STATE["shapes"][name] = max(STATE["shapes"].get(name, 0), size)
                except Exception:
                    pass
                return fun(*a, **k)

            wrapped[fun] = traced
        return Called(jax, name, jit0(traced, *args, **kwargs))

    lax.scan, lax.fori_loop, lax.while_loop, jax.jit = scan, fori_loop, while_loop, jit


def install_jax() -> None:
    if not STATE["installed"]:
        STATE["clock"].install()
        if STATE["trace"]:
            try:
                trace_hooks(_sys.modules["jax"])
            except Exception:
                pass
        STATE["installed"] = True


class JaxWatcher(_abc.MetaPathFinder):
    """Install the clock right after the notebook's own `import jax` finishes (JAX's import cost stays in the
    cell that pays it)."""

    def find_spec(self, name, path=None, target=None):
        if name != "jax":
            return None
        _sys.meta_path.remove(self)
        spec = _util.find_spec(name)
        if spec is not None and spec.loader is not None and hasattr(spec.loader, "exec_module"):
            run = spec.loader.exec_module

            def exec_module(module):
                run(module)
                install_jax()

            spec.loader.exec_module = exec_module
        return spec


def pre(info=None) -> None:
    STATE["loops"], STATE["shapes"], STATE["calls"] = {}, {}, {}
    STATE["before"] = STATE["clock"].snapshot()
    STATE["t0"] = _time.perf_counter()


def post(result=None) -> None:
    wall = _time.perf_counter() - STATE["t0"]
    after = STATE["clock"].snapshot()
    delta = {k: after[k] - STATE["before"][k] for k in after}
    delta["wall"] = wall
    delta["ok"] = bool(getattr(result, "success", True))
    if STATE["loops"] or STATE["shapes"] or STATE["calls"]:
        delta["loops"] = [[k, t, c, n] for (k, t, c), n in STATE["loops"].items()][:LIMIT]
        delta["jitted"] = dict(list(STATE["shapes"].items())[:LIMIT])
        delta["calls"] = list(STATE["calls"].values())[:LIMIT]
    STATE["records"].append(delta)


def take() -> str:
    records, STATE["records"] = STATE["records"], []
    return _json.dumps(records)


def install(ip, clock, trace: bool = True) -> None:
    """Register the per-cell hooks on an IPython shell; the JAX hooks go in when the notebook imports jax."""
    STATE["clock"], STATE["trace"] = clock, bool(trace)
    if "jax" in _sys.modules:
        install_jax()
    else:
        _sys.meta_path.insert(0, JaxWatcher())
    ip.events.register("pre_run_cell", pre)
    ip.events.register("post_run_cell", post)
