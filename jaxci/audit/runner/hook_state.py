"""The state the kernel-side hooks share, and the small readers of JAX values they all use.

Runs inside the lecture's kernel (see hooks): standard library only, JAX imported lazily, nothing from jaxci
(the runner ships the sources of cell_records, hook_state, jit_calls, jax_hooks and hooks into one private module,
in that order, without their jaxci imports).
"""

from __future__ import annotations

import sys as _sys
import time as _time

_LIB = ("site-packages", "dist-packages")
#: at most this many loops / jitted functions / call signatures / eager size classes kept per cell
LIMIT = 50

STATE: dict = {"t0": None, "busy0": None, "before": None, "records": [], "installed": False, "loops": {}, "shapes": {},
         "calls": {}, "clock": None, "trace": True, "cell": 0, "active": [], "tracing": [], "fn_loops": {}, "eager": {},
         "eager_ops": 0, "eager_s": 0.0, "eager_last": None, "startup_s": 0.0, "ns": None, "called": set(),
         "depth": 0, "fn_compile": {}, "import_s": 0.0, "samplers": [], "own_loops": {}, "traces": {}, "batch": [],
         "lowering": False, "queued": [], "last_calls": [], "cpu_devices": set()}
_JAX: dict = {}  # the jax module and the pieces of it the hooks use (filled by bind())
_TRACER: list = [type(None)]  # jax.core.Tracer once bound (a module global: read on every call)
_clock = _time.perf_counter


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
