"""FP64 penalty: float64 time / float32 time of the same kernel, size, device and machine (warm timings).

Suites without a device param (the host suite: NumPy, Numba) are reported under device "host".
A pair with a 0.0 or non-finite time has no ratio (None): it is listed, never summarized or divided by."""

from __future__ import annotations

from dataclasses import dataclass

from jaxci.analysis import case_label, group, is_timing, safe_ratio


@dataclass
class Fp64Ratio:
    machine: str
    benchmark: str
    case: tuple          # every param but dtype and device (the size included)
    device: str
    ratio: float | None  # None: undefined (a 0.0 or non-finite time)
    t32: float
    t64: float
    provenance: str

    @property
    def kernel(self) -> str:
        return case_label(self.benchmark, tuple(kv for kv in self.case if kv[0] != "n"))

    @property
    def n(self):
        return dict(self.case).get("n")


@dataclass
class Fp64Summary:
    machine: str
    kernel: str
    device: str
    ratio: float        # at the largest size measured in both dtypes (the most compute-bound shape)
    at: dict            # the params of that size
    low: float
    high: float
    count: int
    provenance: str


def fp64_ratios(records) -> list[Fp64Ratio]:
    timed = [r for r in records if is_timing(r) and r.ok and "dtype" in r.params]
    # suites without a device param (host: NumPy, Numba) run on the host CPU
    key = lambda r: (r.machine, r.benchmark,
                     tuple(sorted((k, v) for k, v in r.params.items() if k not in ("dtype", "device"))),
                     r.params.get("device", "host"))
    out = []
    for (machine, bench, case, device), recs in sorted(group(timed, key).items(), key=lambda kv: str(kv[0])):
        by = {r.params["dtype"]: r for r in recs}
        if "float32" in by and "float64" in by:
            r32, r64 = by["float32"], by["float64"]
            out.append(Fp64Ratio(machine, bench, case, device, safe_ratio(r64.value, r32.value), r32.value, r64.value,
                                 r64.provenance()))
    return out


def summarize(ratios) -> list[Fp64Summary]:
    def size(r):
        n = r.n
        return n if isinstance(n, (int, float)) else 0

    out = []
    ratios = [r for r in ratios if r.ratio is not None]
    for (machine, kernel, device), rs in sorted(group(ratios, lambda r: (r.machine, r.kernel, r.device)).items()):
        top = max(rs, key=size)
        vals = [r.ratio for r in rs]
        out.append(Fp64Summary(machine, kernel, device, top.ratio, dict(top.case), min(vals), max(vals), len(rs),
                               top.provenance))
    return out
