"""Where the GPU line crosses the CPU line: per kernel and dtype, on one machine and across two machines.

Noise first: at each measured size the two lines are compared with `verdict`: where the interquartile
ranges asv recorded overlap, the point is a tie ("within noise"), never a side. Only points with a side
take part in crossings, so a 1% wobble between two equal lines makes no crossing. Where the quartiles
are unknown (a single sample) the medians decide. The same `verdict` serves every GPU/CPU comparison.

Between two sided points of opposite sign the crossing is interpolated on a log scale: with
d(n) = ln(t_gpu / t_cpu), ln n* = ln n_i + (ln n_j - ln n_i) * d_i / (d_i - d_j), i.e. where the two straight
lines of a log-log plot meet (ties between them only widen the interval the crossing lies in). Every
crossing is listed; nothing is extrapolated outside the measured sizes. The answer is one of: a break-even
size (GPU faster from n* up to the largest size), GPU faster at every size, GPU faster only between two
sizes (each band listed), the CPU faster or tied at every size, within noise at every size, not measured.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from jaxci.analysis import case_label, case_of, group, is_timing, safe_ratio

CROSSING = "crossing"
GPU_ALWAYS = "gpu faster at every measured size"
GPU_BAND = "gpu faster only between measured sizes"
NONE_IN_RANGE = "none in the measured range"
WITHIN_NOISE = "within noise at every measured size"
NOT_MEASURED = "not measured"

GPU_FASTER, CPU_FASTER, TIE = "gpu faster", "cpu faster", "within noise"


def _finite_pos(x) -> bool:
    return isinstance(x, (int, float)) and math.isfinite(x) and x > 0


def within_noise(a: float, a_iqr, b: float, b_iqr) -> bool:
    """Two medians are a tie when their interquartile ranges (q25, q75) overlap; with a range unknown
    (None) that side is its median alone, so two single samples tie only when equal."""
    lo_a, hi_a = a_iqr if a_iqr and None not in a_iqr else (a, a)
    lo_b, hi_b = b_iqr if b_iqr and None not in b_iqr else (b, b)
    lo_a, hi_a, lo_b, hi_b = min(lo_a, a), max(hi_a, a), min(lo_b, b), max(hi_b, b)
    return lo_a <= hi_b and lo_b <= hi_a


def verdict(cpu: float, gpu: float, cpu_iqr=None, gpu_iqr=None) -> str:
    """"gpu faster", "cpu faster" or "within noise" for two wall times (lower is faster)."""
    if within_noise(cpu, cpu_iqr, gpu, gpu_iqr):
        return TIE
    return GPU_FASTER if gpu < cpu else CPU_FASTER


@dataclass(frozen=True)
class SizePoint:
    """One measured size: medians and (q25, q75) of each line (None where asv recorded no quartiles)."""

    n: float
    cpu: float
    gpu: float
    cpu_iqr: tuple | None = None
    gpu_iqr: tuple | None = None

    @property
    def side(self) -> str:
        return verdict(self.cpu, self.gpu, self.cpu_iqr, self.gpu_iqr)

    def __iter__(self):  # unpacks as (n, t_cpu, t_gpu)
        return iter((self.n, self.cpu, self.gpu))

    def __getitem__(self, i):
        return (self.n, self.cpu, self.gpu)[i]


def as_point(p) -> SizePoint:
    if isinstance(p, SizePoint):
        return p
    n, c, g, *iqr = p
    return SizePoint(n, c, g, *(tuple(x) if x is not None else None for x in iqr[:2]))


@dataclass
class CrossoverResult:
    """What find_crossover says: the kind, the break-even size (CROSSING only), every crossing
    (n*, "gpu becomes faster" | "cpu becomes faster"), the sizes where the GPU is faster as bands
    (lo, hi) with None for "from the smallest" / "to the largest measured size", and each point's side."""

    kind: str
    n: float | None = None
    crossings: list = field(default_factory=list)
    bands: list = field(default_factory=list)
    sides: list = field(default_factory=list)   # [(n, "gpu faster" | "cpu faster" | "within noise")]

    def __iter__(self):  # unpacks as (kind, n, crossings)
        return iter((self.kind, self.n, self.crossings))

    def __getitem__(self, i):
        return (self.kind, self.n, self.crossings)[i]


def describe(kind: str, n, crossings, bands, points) -> str:
    """The answer in words; every crossing is named where there is more than one."""
    if kind == CROSSING:
        text = f"n ≈ {n:,.0f}"
        if len(crossings) > 1:
            text += " (crossings at " + ", ".join(f"n ≈ {x:,.0f} {what}" for x, what in crossings) + ")"
        return text
    if kind == GPU_ALWAYS:
        return f"below n = {points[0][0]:,} (gpu faster at every measured size)"
    if kind == GPU_BAND:
        parts = [f"GPU faster up to n ≈ {hi:,.0f}" if lo is None
                 else f"GPU faster between n ≈ {lo:,.0f} and n ≈ {hi:,.0f}" for lo, hi in bands]
        return "; ".join(parts) + " (the CPU is faster or tied at the largest measured size)"
    return kind


@dataclass
class Crossover:
    benchmark: str
    case: tuple
    dtype: str
    cpu_machine: str
    gpu_machine: str
    kind: str
    n: float | None
    points: list = field(default_factory=list)   # [SizePoint] used (unpack as (n, t_cpu, t_gpu))
    crossings: list = field(default_factory=list)  # every sign change: (n*, "gpu becomes faster"|"cpu becomes faster")
    label: str = "measured"
    provenance: str = ""
    note: str = ""
    bands: list = field(default_factory=list)    # [(lo, hi)]: where the GPU is faster (None = measured edge)
    sides: list = field(default_factory=list)    # [(n, verdict)] per measured size

    @property
    def kernel(self) -> str:
        return case_label(self.benchmark, self.case)

    def answer(self) -> str:
        return describe(self.kind, self.n, self.crossings, self.bands, self.points)


def find_crossover(points) -> CrossoverResult:
    """points: [(n, t_cpu, t_gpu)] or [(n, t_cpu, t_gpu, cpu_iqr, gpu_iqr)] or [SizePoint], positive times.

    Unpacks as (kind, break-even n or None, crossings). The break-even size is the last crossing after
    which the GPU stays faster (ties aside) up to the largest size."""
    pts = sorted((as_point(p) for p in points if _finite_pos(p[1]) and _finite_pos(p[2])), key=lambda p: p.n)
    if len(pts) < 2:
        return CrossoverResult(NOT_MEASURED)
    sides = [(p.n, p.side) for p in pts]
    sided = [p for p in pts if p.side != TIE]
    if not sided:
        return CrossoverResult(WITHIN_NOISE, sides=sides)
    crossings = []
    for a, b in zip(sided, sided[1:]):
        if a.side != b.side:
            da, db = math.log(a.gpu / a.cpu), math.log(b.gpu / b.cpu)
            if (da < 0) == (db < 0):  # medians on one side, quartiles decided otherwise: meet at the log midpoint
                x = (math.log(a.n) + math.log(b.n)) / 2
            else:
                x = math.log(a.n) + (math.log(b.n) - math.log(a.n)) * da / (da - db)
            crossings.append((math.exp(x), "gpu becomes faster" if b.side == GPU_FASTER else "cpu becomes faster"))
    bands: list[tuple] = []
    lo: float | str | None = None if sided[0].side == GPU_FASTER else "closed"
    for x, what in crossings:
        if what == "gpu becomes faster":
            lo = x
        else:
            bands.append((lo, x))
            lo = "closed"
    if sided[-1].side == GPU_FASTER:
        if all(p.side == GPU_FASTER for p in sided):
            return CrossoverResult(GPU_ALWAYS, None, crossings, [(None, None)], sides)
        bands.append((lo, None))
        return CrossoverResult(CROSSING, crossings[-1][0], crossings, bands, sides)
    if bands:
        return CrossoverResult(GPU_BAND, None, crossings, bands, sides)
    return CrossoverResult(NONE_IN_RANGE, None, crossings, bands, sides)


def _series(recs) -> dict:
    return {r.params["n"]: r for r in recs if r.ok and isinstance(r.params.get("n"), (int, float))}


def _iqr(rec):
    return (rec.q25, rec.q75) if rec.q25 is not None and rec.q75 is not None else None


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
            points = [SizePoint(n, cpu[n].value, gpu[n].value, _iqr(cpu[n]), _iqr(gpu[n])) for n in common]
            found = find_crossover(points)
            kind, n_star, crossings = found
            note = ""
            if kind == NOT_MEASURED:
                note = (f"cpu measured at {len(cpu)} size(s), gpu at {len(gpu)}, both at {len(common)}: "
                        "needs both at two or more sizes")
            sample = [cpu[n] for n in common[:1]] + [gpu[n] for n in common[:1]]
            prov = "; ".join(sorted({f"{r.params['device']}: {r.provenance()}" for r in sample}))
            out.append(Crossover(bench, case, dtype, cpu_m, gpu_m, kind, n_star, points, crossings,
                                 provenance=prov, note=note, bands=found.bands, sides=found.sides))
    return out


@dataclass
class DeviceRatio:
    machine: str
    benchmark: str
    params: tuple        # every param but device
    cpu: float
    gpu: float
    provenance: str
    cpu_iqr: tuple | None = None
    gpu_iqr: tuple | None = None

    @property
    def ratio(self) -> float | None:
        """gpu time / cpu time: above 1 the GPU is slower; None where it is undefined (a 0 or non-finite time)."""
        return safe_ratio(self.gpu, self.cpu)

    @property
    def verdict(self) -> str:
        """"gpu faster" | "cpu faster" | "within noise": the crossover's noise margin, so a ratio of 1.01
        with overlapping quartiles is a tie, not "pin to CPU"."""
        return verdict(self.cpu, self.gpu, self.cpu_iqr, self.gpu_iqr)


# Timings whose cpu and gpu lines are not a choice of device for the same work: a transfer "to the CPU
# device" is a host copy (or none), so its gpu/cpu ratio would read as "pin to CPU" advice it cannot give.
NOT_A_DEVICE_CHOICE = ("dispatch.Transfer.",)


def device_ratios(records) -> list[DeviceRatio]:
    """gpu/cpu time of warm timings that have a device but no size axis (whole notebooks, single kernels).
    A pair with a 0.0 or non-finite time has no ratio and is left out (`safe_ratio`), never a crash."""
    timed = [r for r in records if is_timing(r) and r.ok and "device" in r.params and "n" not in r.params
             and not r.benchmark.startswith(NOT_A_DEVICE_CHOICE)]
    key = lambda r: (r.machine, r.benchmark, tuple(sorted((k, v) for k, v in r.params.items() if k != "device")))
    out = []
    for (machine, bench, params), recs in sorted(group(timed, key).items(), key=lambda kv: str(kv[0])):
        by = {r.params["device"]: r for r in recs}
        if "cpu" in by and "gpu" in by and safe_ratio(by["gpu"].value, by["cpu"].value) is not None:
            out.append(DeviceRatio(machine, bench, params, by["cpu"].value, by["gpu"].value, by["gpu"].provenance(),
                                   _iqr(by["cpu"]), _iqr(by["gpu"])))
    return out
