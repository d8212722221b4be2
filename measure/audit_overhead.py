"""Overhead of the runner's per-cell instrumentation: the same notebook run with and without it; goal < 10%.

    .venv/bin/python measure/audit_overhead.py [--pairs 7] [--scale ci] [--trivial-cells 200]
        [--loop-calls 20000] [--baseline plain|untraced] [--call-cost 2000] [--kernel K] [NOTEBOOK ...]

Default notebooks (when none is named and no --trivial-cells): the suite's fixtures except nuts_f64 (slow).
Runs alternate (plain, instrumented, plain, ...) so load drift hits both; each run is a fresh kernel on
JAX_PLATFORMS=cpu.
--trivial-cells N adds a generated notebook of N `x = i` cells: its difference divided by N is the fixed
per-cell cost of the instrumentation (hooks plus one silent request), free of the work's own noise.
--loop-calls N adds a generated notebook whose Python loop calls a tiny jitted function N times and runs a
lax.scan and a fori_loop: dispatch-bound work where the per-call cost of the tracing hooks shows (each call
of a jitted function is counted: a fast path with no wait and no argument walk, jaxci.audit.runner.hooks.Called), so
its difference divided by N is the cost per jitted call; the loop cell alone is reported too.
--baseline untraced compares the instrumented run with the same instrumentation minus the tracing hooks
(loops, jitted calls, eager work, start-up, the end-of-cell wait), isolating what the hooks cost.
--call-cost N measures, in this process and without kernels, what the hooks' wrapper adds to one tiny jitted
call: a chain of N calls through jax.jit and through hooks.Called, alternated, the minimum of 15 repeats each
(the minimum, because the machine is shared), in µs per call.
--kernel K runs every notebook in that Jupyter kernel (a lecture kernel from measure/lecture_kernel.sh: the
executed audit of a lecture against a plain nbclient execution of it); a cell tagged raises-exception may fail in
both runs, as the audit allows it.
Reports, per notebook, medians of the whole run (kernel start to shutdown) and of the summed client-side
cell times (request sent to reply received), and the relative difference of the medians.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEFAULT = [REPO / "benchmarks" / "notebook_fixtures" / f"{n}.md" for n in ("elementwise_f64", "grid_scan",
                                                                            "fresh_compiles")]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("notebooks", nargs="*", type=Path, help="default: the suite's fixtures, unless --trivial-cells")
    p.add_argument("--pairs", type=int, default=7)
    p.add_argument("--scale", default="ci", choices=["ci", "full"])
    p.add_argument("--trivial-cells", type=int, default=0)
    p.add_argument("--loop-calls", type=int, default=0)
    p.add_argument("--baseline", choices=["plain", "untraced"], default="plain",
                   help="what the instrumented run is compared with (default: no instrumentation at all)")
    p.add_argument("--call-cost", type=int, default=0, help="in-process: µs the wrapper adds per tiny jitted call")
    p.add_argument("--kernel", help="Jupyter kernel for every notebook (default: each notebook's kernelspec)")
    args = p.parse_args()
    if args.call_cost:
        return call_cost(args.call_cost)
    notebooks = list(args.notebooks) or ([] if args.trivial_cells or args.loop_calls else DEFAULT)
    if args.trivial_cells:
        import nbformat.v4 as v4

        trivial = v4.new_notebook(cells=[v4.new_code_cell(f"x = {i}") for i in range(args.trivial_cells)])
        trivial.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
        notebooks.append(trivial)
    if args.loop_calls:
        import nbformat.v4 as v4

        looped = v4.new_notebook(cells=[v4.new_code_cell(c) for c in (
            "import jax\nimport jax.numpy as jnp",
            "step = jax.jit(lambda x: x * 0.5 + 1.0)\nx = jnp.zeros(8)\n"
            f"for _ in range({args.loop_calls}):\n    x = step(x)\nx.block_until_ready()",
            "_, p = jax.lax.scan(lambda c, _: (c * 0.9, c), 0.3, None, length=10_000)\n"
            "r = jax.lax.fori_loop(0, 1_000, lambda i, v: v + 1, jnp.ones(16))\nr.block_until_ready()")])
        looped.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
        looped.metadata["jaxci_label"] = f"{args.loop_calls} jitted calls"
        notebooks.append(looped)
    os.environ["JAXCI_SCALE"] = args.scale
    from jaxci.audit.runner import run_notebook

    env = {"PYTHONPATH": str(REPO)}
    base = "plain" if args.baseline == "plain" else "untr."
    print(f"{'notebook':22s} {'whole ' + base:>12s} {'whole instr':>12s} {'diff':>7s} "
          f"{'cells ' + base:>12s} {'cells instr':>12s} {'diff':>7s}")
    for nb in notebooks:
        name = nb.stem if isinstance(nb, Path) else nb.metadata.get("jaxci_label", f"{len(nb.cells)} trivial cells")
        whole = {False: [], True: []}
        cells = {False: [], True: []}
        loop_cell = {False: [], True: []}  # the --loop-calls notebook's loop cell alone
        for i in range(args.pairs):
            for instrument in ((False, True) if i % 2 == 0 else (True, False)):
                if args.baseline == "plain":
                    run = run_notebook(nb, platform="cpu", env=env, instrument=instrument, timeout=900,
                                       kernel_name=args.kernel)
                else:
                    run = run_notebook(nb, platform="cpu", env=env, instrument=True, trace=instrument, timeout=900,
                                       kernel_name=args.kernel)
                if not run.ok:
                    print(f"{nb}: {run.status}: {run.error}", file=sys.stderr)
                    return 1
                whole[instrument].append(run.wall_s)
                cells[instrument].append(sum(c.client_s for c in run.cells))
                loop_cell[instrument].append(run.cells[1].client_s if len(run.cells) > 1 else 0.0)
        w0, w1 = statistics.median(whole[False]), statistics.median(whole[True])
        c0, c1 = statistics.median(cells[False]), statistics.median(cells[True])
        print(f"{name:22s} {w0:11.3f}s {w1:11.3f}s {100 * (w1 - w0) / w0:+6.1f}% "
              f"{c0:11.3f}s {c1:11.3f}s {100 * (c1 - c0) / c0:+6.1f}%")
        if not isinstance(nb, Path) and "jaxci_label" in nb.metadata:
            l0, l1 = statistics.median(loop_cell[False]), statistics.median(loop_cell[True])
            print(f"  cost per jitted call: {1e6 * (c1 - c0) / args.loop_calls:+.2f} µs; the loop cell alone: "
                  f"{l0:.3f} s -> {l1:.3f} s ({100 * (l1 - l0) / l0:+.1f}%, "
                  f"{1e6 * (l1 - l0) / args.loop_calls:+.2f} µs per call)")
        elif not isinstance(nb, Path):
            print(f"  fixed cost per cell: {1000 * (w1 - w0) / len(nb.cells):+.2f} ms")
    return 0


def call_cost(n: int, repeats: int = 15) -> int:
    """µs per tiny jitted call, plain jit vs the hooks' Called wrapper on its fast path (alternated, min of repeats)."""
    import timeit

    import jax
    import jax.numpy as jnp

    from jaxci.audit.runner import hooks

    def fn(x):
        return x * 0.5 + 1.0

    plain, wrapped = jax.jit(fn), hooks.Called(jax, "fn", jax.jit(fn))
    hooks.STATE["cell"] = 1
    x = jnp.zeros(8)
    for f in (plain, wrapped, wrapped, wrapped):
        jax.block_until_ready(f(x))

    def chain(f):
        def run():
            y = x
            for _ in range(n):
                y = f(y)
            y.block_until_ready()
        return run

    best = {"jit": [], "Called": []}
    for i in range(repeats):
        for name, f in (("jit", plain), ("Called", wrapped)) if i % 2 == 0 else (("Called", wrapped), ("jit", plain)):
            best[name].append(min(timeit.repeat(chain(f), number=1, repeat=3)) / n * 1e6)
    a, b = min(best["jit"]), min(best["Called"])
    print(f"tiny jitted call, chain of {n:,}: jit {a:.2f} µs, Called {b:.2f} µs, +{b - a:.2f} µs "
          f"({100 * (b - a) / a:+.0f}%); fast path taken: {wrapped.single and not wrapped.warm}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
