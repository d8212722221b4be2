"""The kernel-side hooks put into JAX when the notebook imports it: eager primitives counted and timed, the
backend's start-up and each function's compile seconds timed, and the jit and loop wrappers of jit_calls.

Runs inside the lecture's kernel (see hook_state).
"""

from __future__ import annotations

import sys as _sys
import time as _time

from jaxci.audit.runner.hook_state import _JAX, LIMIT, STATE, bind
from jaxci.audit.runner.jit_calls import trace_hooks

#: eager ops per cell read in full (sizes); past it they are only counted and timed
EAGER_FULL = 2000


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

    setattr(cls, "process_primitive", process_primitive)  # noqa: B010 (jax's class, patched in the kernel)
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
