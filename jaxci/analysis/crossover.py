"""Where the GPU line crosses the CPU line: per kernel and dtype, on one machine and across two machines.

Between two measured sizes the crossing is interpolated on a log scale: with d(n) = ln(t_gpu / t_cpu),
ln n* = ln n_i + (ln n_(i+1) - ln n_i) * d_i / (d_i - d_(i+1)), i.e. where the two straight lines of a
log-log plot meet. Nothing is extrapolated outside the measured sizes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from jaxci.analysis import case_label, case_of, group, is_timing

CROSSING = "crossing"
GPU_ALWAYS = "gpu faster at every measured size"
NONE_IN_RANGE = "none in the measured range"
NOT_MEASURED = "not measured"


@dataclass
class Crossover:
    benchmark: str
    case: tuple
    dtype: str
    cpu_machine: str
    gpu_machine: str
    kind: str
    n: float | None
    points: list = field(default_factory=list)   # [(n, t_cpu, t_gpu)] used
    crossings: list = field(default_factory=list)  # every sign change: (n*, "gpu becomes faster"|"cpu becomes faster")
    label: str = "measured"
    provenance: str = ""
    note: str = ""

    @property
    def kernel(self) -> str:
        return case_label(self.benchmark, self.case)

    def answer(self) -> str:
        if self.kind == CROSSING:
            return f"n ≈ {self.n:,.0f}"
        if self.kind == GPU_ALWAYS:
            return f"below n = {self.points[0][0]:,} (gpu faster at every measured size)"
        return self.kind


def find_crossover(points) -> tuple[str, float | None, list]:
    """points: [(n, t_cpu, t_gpu)] with positive times. Returns (kind, break-even n or None, crossings).

    The break-even size is the last crossing after which the GPU stays faster up to the largest size.
    """
    pts = sorted((float(n), float(c), float(g)) for n, c, g in points if c > 0 and g > 0)
    if len(pts) < 2:
        return NOT_MEASURED, None, []
    d = [math.log(g / c) for _, c, g in pts]
    crossings = []
    for (n0, _, _), (n1, _, _), d0, d1 in zip(pts, pts[1:], d, d[1:]):
        if (d0 >= 0) != (d1 >= 0):
            x = math.log(n0) + (math.log(n1) - math.log(n0)) * d0 / (d0 - d1)
            crossings.append((math.exp(x), "gpu becomes faster" if d1 < 0 else "cpu becomes faster"))
    if d[-1] >= 0:
        return NONE_IN_RANGE, None, crossings
    if all(x < 0 for x in d):
        return GPU_ALWAYS, None, crossings
    return CROSSING, crossings[-1][0], crossings


def _series(recs) -> dict:
    return {r.params["n"]: r for r in recs if r.ok and isinstance(r.params.get("n"), (int, float))}


def crossovers(records, cpu_only_machines=()) -> list[Crossover]:
    """Same-machine crossovers for every machine with both lines, and cross-machine ones pairing the cpu
    line of each CPU-only machine with the gpu line of every other machine."""
    timed = [r for r in records if is_timing(r) and {"n", "dtype", "device"} <= r.params.keys()]
    lines = group(timed, lambda r: (r.benchmark, case_of(r), r.params["dtype"], r.machine, r.params["device"]))
    kernels = sorted({k[:3] for k in lines}, key=str)
    machines = sorted({k[3] for k in lines})
    out = []
    for bench, case, dtype in kernels:
        pairs = [(m, m) for m in machines]
        pairs += [(c, g) for c in machines if c in cpu_only_machines for g in machines if g != c]
        for cpu_m, gpu_m in pairs:
            cpu = _series(lines.get((bench, case, dtype, cpu_m, "cpu"), []))
            gpu = _series(lines.get((bench, case, dtype, gpu_m, "gpu"), []))
            if cpu_m != gpu_m and not gpu:
                continue  # a cross-machine pair only where the other machine has a gpu line
            common = sorted(set(cpu) & set(gpu))
            points = [(n, cpu[n].value, gpu[n].value) for n in common]
            kind, n_star, crossings = find_crossover(points)
            note = ""
            if kind == NOT_MEASURED:
                note = (f"cpu measured at {len(cpu)} size(s), gpu at {len(gpu)}, both at {len(common)}: "
                        "needs both at two or more sizes")
            sample = [cpu[n] for n in common[:1]] + [gpu[n] for n in common[:1]]
            prov = "; ".join(sorted({f"{r.params['device']}: {r.provenance()}" for r in sample}))
            out.append(Crossover(bench, case, dtype, cpu_m, gpu_m, kind, n_star, points, crossings,
                                 provenance=prov, note=note))
    return out


@dataclass
class DeviceRatio:
    machine: str
    benchmark: str
    params: tuple        # every param but device
    cpu: float
    gpu: float
    provenance: str

    @property
    def ratio(self) -> float:
        """gpu time / cpu time: above 1 the GPU is slower (pin to CPU)."""
        return self.gpu / self.cpu


def device_ratios(records) -> list[DeviceRatio]:
    """gpu/cpu time of warm timings that have a device but no size axis (whole notebooks, single kernels)."""
    timed = [r for r in records if is_timing(r) and r.ok and "device" in r.params and "n" not in r.params]
    key = lambda r: (r.machine, r.benchmark, tuple(sorted((k, v) for k, v in r.params.items() if k != "device")))
    out = []
    for (machine, bench, params), recs in sorted(group(timed, key).items(), key=lambda kv: str(kv[0])):
        by = {r.params["device"]: r for r in recs}
        if "cpu" in by and "gpu" in by:
            out.append(DeviceRatio(machine, bench, params, by["cpu"].value, by["gpu"].value, by["gpu"].provenance()))
    return out
