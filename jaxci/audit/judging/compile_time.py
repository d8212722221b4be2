"""A lecture's compile and start-up seconds on a device: what a fresh kernel pays before the lecture's own work,
the first compile once, and each further compilation at this run's measured seconds per compilation moved by the
family's GPU / CPU compile ratio (the published pairs of the same cases first, the first-compile ratio else);
compiles the lecture places on the CPU stay at their CPU seconds.
"""

from __future__ import annotations

import math

from jaxci.analysis.provenance import render


def overhead_s(run) -> float:
    """What a fresh kernel pays before the lecture's own work, measured here, on either device: the kernel's start
    (a published Execution Statistics run time includes it: a notebook without code cells takes 0.8-0.9 s there)
    and the CPU client's start-up (JAX creates the CPU client on a GPU machine too)."""
    return (run.kernel_start_s or 0.0) + sum(c.startup_s or 0.0 for c in run.cells)


def compile_time(view, run, device: str, base: str, total, on_cpu: frozenset = frozenset(),
             cuda: bool = False) -> None:
    """The first compile of the kernel once (start-up), then each further compilation at this run's measured
    seconds per compilation x the device's compile ratio; on the GPU side, a compilation in a cell the lecture
    itself places on the CPU (`on_cpu`), or of a call it places there, stays at this run's CPU seconds, and the CUDA
    client's start-up where the lecture creates it (`cuda`: starts_cuda)."""
    pinned = [c for c in run.cells if device == "gpu" and c.index in on_cpu]
    cells = [c for c in run.cells if not (device == "gpu" and c.index in on_cpu)]
    placed, placed_s = _placed_compiles(cells) if device == "gpu" else (0, 0.0)
    kept = sum(c.compile_s or 0.0 for c in pinned) + placed_s
    total.seconds("compile", kept)
    count = max(sum(c.compilations or 0 for c in cells) - placed, 0)
    measured = max(sum(c.compile_s or 0.0 for c in cells) - placed_s, 0.0)
    shared = overhead_s(run)
    total.seconds("start-up", shared)
    if device == "gpu" and cuda:
        total.add("backend", view.call("backend_start", None, base, device))
    if not count:
        return
    first = view.call("elementwise", 1, base, device, compile_only=True)
    total.add("start-up", first)
    if count < 2:
        return
    per = (count - 1) * measured / count
    if device == "cpu":
        total.seconds("compile", per)
        return
    pairs = _published_compile_ratio(view)
    if pairs is not None:  # nearest evidence: one published source compiled the same cases on both devices
        total.seconds("compile", per * pairs[0].mid, per * pairs[0].low, per * pairs[0].high)
        total.inputs += [f"further compilations on the GPU x {pairs[0].mid:.3g} (band {pairs[0].low:.3g}-"
                         f"{pairs[0].high:.3g}): " + render(pairs[1])]
        return
    ratio = _compile_ratio(view, base, total)  # only where no pair stands: it notes what it falls back on
    if ratio is None:
        total.missing.append("no first-compile ratio GPU / CPU: further compilations not counted on the GPU")
        return
    total.seconds("compile", per * math.sqrt(ratio), per, per * ratio)


def _published_compile_ratio(view):
    """(band, inputs) of GPU / CPU seconds per further compilation on the family's host from the published pairs
    of the same cases on both devices (RunnerModel.compile_ratio: the fresh-jit series, and each compile part
    published on both), or None. It beats the first-compile ratio below, whose GPU and CPU parts come from
    different sources (on g4dn.2xlarge: the T4 runner's published 0.116 s over the lab's 0.032 s, 3.6x). The series
    alone (matmuls: a cuBLAS call on the GPU, 1.09x on g4dn's host) does not stand for what lectures compile; the
    pairs span it (a scalar scan 12.7x, a large elementwise op 0.18x)."""
    ask = getattr(getattr(view, "model", None), "compile_ratio", None)
    return ask(view.family) if ask else None


def _compile_ratio(view, base: str, total) -> float | None:
    """The model's first-compile ratio GPU / CPU in the lecture's dtype, else in the other one (compiling is host
    work on the same graph whatever the element type: a float64 CPU compile part of 0 left a float64 lecture's
    GPU compiles uncounted), said when it is the other's; None when neither has both."""
    for dtype in (base, "float32" if base == "float64" else "float64"):
        first = view.call("elementwise", 1, dtype, "gpu", compile_only=True)
        cpu = view.call("elementwise", 1, dtype, "cpu", compile_only=True)
        if first and cpu and cpu.seconds > 0:
            if dtype != base:
                total.missing.append(f"no {base} first-compile ratio GPU / CPU: further compilations on the GPU "
                                     f"at the {dtype} ratio {first.seconds / cpu.seconds:.3g}")
            return max(first.seconds / cpu.seconds, 1.0)
    return None


def placed_on_cpu(entry) -> bool:
    """A jitted call the lecture places on the CPU on any machine (hooks: `backend="cpu"`, a CPU device for jit,
    the default device or its arguments): its CPU side stands on the GPU side too."""
    return entry.placed == "cpu"


def _placed_compiles(cells) -> tuple:
    """(compilations, seconds) of the calls the lecture places on the CPU (`placed_on_cpu`), in these cells."""
    placed = [e for c in cells for e in (c.calls or []) if placed_on_cpu(e) and e.compile_s]
    return len(placed), sum(e.compile_s for e in placed)
