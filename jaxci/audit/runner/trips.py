"""Kernel side: the turns of a jitted function's while loops, counted without running the notebook's code again.

The runner sends this module's source into the lecture's kernel beside `hooks` (one private module), so, like
`hooks`: standard library only at import, JAX passed in or imported lazily, nothing from jaxci.

A while loop's trip count is data (a value-function iteration to a tolerance), so no trace knows it. It is counted
by running the function's jaxpr (the one JAX traced for the notebook's own call, read back from jit's cache: the
notebook's Python is not traced again) under an interpreter that adds a turn counter to each loop the notebook
wrote and reports it through one host callback per run of the loop. That extra run executes the lecture's
computation once more, so it is made only for a jaxpr proven free of effects (`uncountable` says why not
otherwise): no effect of any kind (`jax.debug.print`, `io_callback`, ordered or not) and no host callback at all
(`pure_callback` runs Python too). A vmapped loop is one batched loop in the jaxpr whose predicate holds per copy:
each copy's turns are counted, as the primitive runs them (their mean stands for the trips).
"""

from __future__ import annotations

import functools as _functools

#: primitives that only call a jaxpr: inlined, so a loop inside is counted
CALLS = ("jit", "pjit", "closed_call", "core_call", "custom_jvp_call", "custom_vjp_call", "custom_vjp_call_jaxpr",
         "checkpoint", "remat")
#: a primitive whose name holds one of these runs Python on the host
HOST = ("callback", "print")
#: the hooks' loop wrappers: a while eqn traced through one of them is a loop the notebook wrote
WRAPPERS = ("while_loop", "fori_loop")


def _sub_jaxprs(params: dict):
    """The jaxprs an equation holds (a loop's body and predicate, a branch, a called function)."""
    for value in params.values():
        for item in value if isinstance(value, (tuple, list)) else (value,):
            if hasattr(item, "eqns") or hasattr(getattr(item, "jaxpr", None), "eqns"):
                yield item


def _eqns(jaxpr):
    return getattr(jaxpr, "jaxpr", jaxpr).eqns


def walk(jaxpr):
    """Every equation of a jaxpr and of the jaxprs it holds, depth first, each before its own."""
    for eqn in _eqns(jaxpr):
        yield eqn
        for sub in _sub_jaxprs(eqn.params):
            yield from walk(sub)


def uncountable(jaxpr) -> str | None:
    """Why running this jaxpr again could change what the notebook sees (None: it cannot)."""
    effects = getattr(jaxpr, "effects", None) or getattr(getattr(jaxpr, "jaxpr", None), "effects", None)
    if effects:
        return "the function has effects (" + ", ".join(sorted({type(e).__name__ for e in effects})) + ")"
    for eqn in walk(jaxpr):
        if any(word in eqn.primitive.name for word in HOST):
            return f"the function calls the host ({eqn.primitive.name})"
    return None


def written_by_notebook(eqn, hook_file: str, is_jax_file) -> bool:
    """A while equation whose innermost frame outside JAX is one of the hooks' loop wrappers: a loop the notebook
    called (a library's own while loops are not the notebook's and are not counted)."""
    traceback = getattr(eqn.source_info, "traceback", None)
    for frame in getattr(traceback, "frames", None) or ():
        if is_jax_file(frame.file_name):
            continue
        return frame.file_name == hook_file and frame.function_name.rsplit(".", 1)[-1] in WRAPPERS
    return False


def notebook_loops(jaxpr, hook_file: str, is_jax_file) -> list:
    """The notebook's while equations in the order the trace met them (a loop before the loops inside it)."""
    return [eqn for eqn in walk(jaxpr)
            if eqn.primitive.name == "while" and written_by_notebook(eqn, hook_file, is_jax_file)]


class Counter:
    """Evaluates a jaxpr as JAX would, the k-th of `loops` it meets (in `walk`'s order, so the k-th of the list)
    with a turn counter reported through `report(k, turns)`. It opens calls, conds and while loops; a loop inside a
    primitive it does not open (a scan body, a shard_map) runs as it is and reports nothing: it stays uncounted."""

    def __init__(self, jax, core, while_loop, jaxpr, loops: list, report):
        self.jax, self.core, self.while_loop, self.report = jax, core, while_loop, report
        self.wanted, self.met = {id(eqn) for eqn in loops}, 0
        self.holding = holders(jaxpr, loops)

    def run(self, jaxpr, *args) -> list:
        inner = getattr(jaxpr, "jaxpr", jaxpr)
        env = {}
        for var, value in zip(inner.constvars, getattr(jaxpr, "consts", ())):
            env[var] = value
        for var, value in zip(inner.invars, args):
            env[var] = value
        for eqn in inner.eqns:
            values = [self._read(env, v) for v in eqn.invars]
            outs = self._eqn(eqn, values)
            if not eqn.primitive.multiple_results:
                outs = [outs]
            for var, value in zip(eqn.outvars, outs):
                if not isinstance(var, self.core.DropVar):
                    env[var] = value
        return [self._read(env, v) for v in inner.outvars]

    def _read(self, env, var):
        return var.val if isinstance(var, self.core.Literal) else env[var]

    def _eqn(self, eqn, values):
        name = eqn.primitive.name
        if name == "while" and (id(eqn) in self.wanted or id(eqn) in self.holding):
            return self._while(eqn, values)
        if name == "cond" and id(eqn) in self.holding:  # each branch opened, in the order walk lists them
            index, *operands = values
            branches = [_functools.partial(self.run, branch) for branch in eqn.params["branches"]]
            return self.jax.lax.switch(index, branches, *operands)
        if name in CALLS and id(eqn) in self.holding:
            sub = next(_sub_jaxprs(eqn.params), None)
            if sub is not None and len(getattr(sub, "jaxpr", sub).invars) == len(values):
                return self.run(sub, *values)
        got = eqn.primitive.get_bind_params(eqn.params)  # params; (subfuns, params) in older JAX
        subfuns, params = got if isinstance(got, tuple) else ((), got)
        with eqn.ctx.manager:
            return eqn.primitive.bind(*subfuns, *values, **params)

    def _while(self, eqn, values) -> list:
        """The loop, counting its turns: per copy where vmap batched its predicate (the primitive then turns while
        any copy's predicate holds and each copy's carry changes only while its own does, as emulated here)."""
        p, jnp = eqn.params, self.jax.numpy
        cond, body, nc, nb = p["cond_jaxpr"], p["body_jaxpr"], p["cond_nconsts"], p["body_nconsts"]
        cond_consts, body_consts, init = values[:nc], values[nc:nc + nb], values[nc + nb:]
        copies = tuple(cond.out_avals[0].shape)  # () unless vmap batched the predicate

        def holds(carry):
            return self.run(cond, *cond_consts, *carry)[0]

        def turn(state):
            carry, turns = state
            new = self.run(body, *body_consts, *carry)
            if not copies:
                return new, turns + 1
            going = holds(carry)
            new = [jnp.where(going.reshape(going.shape + (1,) * (jnp.ndim(x) - going.ndim)), n, x)
                   for n, x in zip(new, carry)]
            return new, turns + going.astype(jnp.int32)

        k = None
        if id(eqn) in self.wanted:  # met while tracing, in the order walk lists them
            k, self.met = self.met, self.met + 1
        out, turns = self.while_loop(lambda state: jnp.any(holds(state[0])), turn,
                                     (list(init), jnp.zeros(copies, jnp.int32)))
        if k is not None:
            from jax.experimental import io_callback

            io_callback(_functools.partial(self.report, k), None, turns, ordered=False)
        return out


def holders(jaxpr, loops: list) -> set:
    """ids of the equations that hold one of `loops` somewhere inside: opened so the loop inside is reached."""
    wanted, found = {id(eqn) for eqn in loops}, set()

    def holds(eqn) -> bool:
        inside = False
        for sub in _sub_jaxprs(eqn.params):
            for child in _eqns(sub):
                inside = holds(child) or id(child) in wanted or inside
        if inside:
            found.add(id(eqn))
        return inside

    for eqn in _eqns(jaxpr):
        holds(eqn)
    return found


def matches(jaxpr, leaves) -> bool:
    """The call's arguments are the jaxpr's inputs, one for one (no static argument among them)."""
    avals = getattr(jaxpr, "in_avals", None)
    if avals is None or len(avals) != len(leaves):
        return False
    return all(tuple(getattr(leaf, "shape", ())) == tuple(aval.shape) for leaf, aval in zip(leaves, avals))


def counting(jax, core, jit, while_loop, jaxpr, loops: list):
    """A jitted function of the call's arguments that runs `jaxpr` with `loops` counted, and the tallies it adds to:
    counts[k] = [turns, runs] of loop k."""
    counts = [[0, 0] for _ in loops]

    def report(k, turns) -> None:
        for value in getattr(turns, "ravel", lambda: [turns])():
            counts[k][0] += int(value)
            counts[k][1] += 1

    counter = Counter(jax, core, while_loop, jaxpr, loops, report)

    def jaxci_trip_count(*args):  # a name no notebook function has: its compile is never taken for one
        return counter.run(jaxpr, *args)

    return jit(jaxci_trip_count), counts
