"""A predicted CPU and GPU time per executed lecture on one runner family, from what the instrumented run measured
per jitted call (jaxci.audit.hooks) and the runner model (jaxci.audit.family.RunnerView).

    T(device) = sum over jitted calls of calls x predicted call time
              + sum over traced loops of times x (predicted loop(trips) + trips x predicted work per step)
              + compilations x predicted compile part

A call's predicted time is the model's elementwise time at the elements its compiled program moves (XLA's bytes
accessed / 2 / itemsize, at least its largest argument), or a matmul of the order whose FLOPs match XLA's count
when the program is compute-heavy (more than 10 FLOPs per byte). A loop step's work is the elementwise time at
its carry (read through vmap) less the dispatch floor. Every figure is labelled "predicted" with its inputs and
band; it never fills a measured cell.
"""

from __future__ import annotations

from dataclasses import dataclass, field

ITEM = {"float32": 4, "float64": 8}
#: a measured cell this slow (seconds) is never "trivial", whatever the static class says
SLOW_CELL_S = 10.0


@dataclass
class Sum:
    mid: float = 0.0
    low: float = 0.0
    high: float = 0.0
    missing: list = field(default_factory=list)

    def add(self, p, times: float = 1.0, less=None) -> None:
        if not p:
            self.missing.append(p.reason)
            return
        cut = less.seconds if less else 0.0
        self.mid += times * max(p.seconds - cut, 0.0)
        self.low += times * max((p.low if p.low is not None else p.seconds) - cut, 0.0)
        self.high += times * max((p.high if p.high is not None else p.seconds) - cut, 0.0)


def _dtype(text: str) -> str:
    return "float64" if "64" in (text or "") else "float32"


def _call_time(view, entry: dict, device: str):
    dtype = _dtype(entry.get("dtype", ""))
    nbytes, flops = entry.get("bytes") or 0.0, entry.get("flops") or 0.0
    n = max(int(nbytes / (2 * ITEM[dtype])), int(entry.get("largest") or 0), 1)
    p = view.call("elementwise", n, dtype, device)
    if flops > 10 * max(nbytes, 1.0):
        order = max(int(round((flops / 2) ** (1 / 3))), 1)
        q = view.call("matmul", order, dtype, device)
        if q and (not p or q.seconds > p.seconds):
            return q
    return p


def _device_time(view, run, device: str, float64: bool, static: dict) -> Sum:
    total = Sum()
    base = "float64" if float64 else "float32"
    floor = view.call("dispatch", None, base, device)
    compile_part = view.call("elementwise", 1, base, device, compile_only=True)
    for cell in run.cells:
        for entry in cell.calls or []:
            total.add(_call_time(view, entry, device), entry.get("calls", 1))
        for kind, trips, carry, count in cell.loops or []:
            if trips is None:
                total.missing.append(f"cell {cell.index}: {kind} with a trip count not known")
                continue
            model_kind = "fori" if "fori" in kind else "scan"
            total.add(view.call(model_kind, max(int(trips), 1), base, device), count or 1)
            carry = max(carry or 0, static.get((cell.index, kind), 0))  # closed-over arrays the trace cannot see
            if carry:
                total.add(view.call("elementwise", int(carry), base, device), (count or 1) * trips, less=floor)
        if cell.compilations:
            total.add(compile_part, cell.compilations)
    return total


def predict_lecture(run, model, float64: bool = False, loops=()) -> dict | None:
    """{"cpu_s", "cpu_low_s", "cpu_high_s", "gpu_s", "gpu_low_s", "gpu_high_s", "basis", "missing"} for one
    executed run on the model's family; None when the family has no runner model or no GPU."""
    view = getattr(model, "runner", None)
    if view is None or run is None or not run.cells:
        return None
    static = {}
    for lp in loops:  # the static scan's per-step work (a closed-over matrix) where it is larger than the carry
        if lp.carry:
            static[(lp.cell, lp.kind)] = max(static.get((lp.cell, lp.kind), 0), lp.carry)
    cpu, gpu = (_device_time(view, run, "cpu", float64, static), _device_time(view, run, "gpu", float64, static))
    calls = sum(len(c.calls or []) for c in run.cells)
    loops = sum(len(c.loops or []) for c in run.cells)
    compiles = sum(c.compilations or 0 for c in run.cells)
    basis = (f"predicted (runner model for {view.family}) from the {run.platform or 'cpu'} run: {calls} jitted "
             f"call signature(s) with XLA cost analysis, {loops} traced loop(s), {compiles} compilation(s)")
    return {"cpu_s": cpu.mid, "cpu_low_s": cpu.low, "cpu_high_s": cpu.high, "gpu_s": gpu.mid, "gpu_low_s": gpu.low,
            "gpu_high_s": gpu.high, "basis": basis, "missing": sorted(set(cpu.missing + gpu.missing))[:5],
            "label": "predicted"}


def verdict_from(pred: dict, family: str, slower: float, faster: float) -> tuple[str, str]:
    """(recommendation, why) from the predicted seconds on both devices and the margin used."""
    from jaxci.audit.classify import EITHER, KEEP_GPU, PIN_CPU

    cpu, gpu = pred["cpu_s"], pred["gpu_s"]
    ratio = gpu / cpu if cpu > 0 else float("inf")
    rec = KEEP_GPU if ratio < faster else PIN_CPU if ratio > slower else EITHER
    why = (f"predicted on {family}: GPU {gpu:.3g} s (band {pred['gpu_low_s']:.3g}..{pred['gpu_high_s']:.3g}) vs CPU "
           f"{cpu:.3g} s (band {pred['cpu_low_s']:.3g}..{pred['cpu_high_s']:.3g}), GPU/CPU {ratio:.2f}; margin: "
           f"keep on GPU below {faster}, pin to CPU above {slower}, either between")
    return rec, why


def slow_cell(run) -> tuple[int, float] | None:
    """(cell, seconds) of the slowest measured cell when it reaches SLOW_CELL_S."""
    if run is None or not run.cells:
        return None
    top = max(run.cells, key=lambda c: c.wall_s)
    return (top.index, top.wall_s) if top.wall_s >= SLOW_CELL_S else None
