"""Achieved fraction of a machine's catalogue peak: FLOP/s for dense kernels, GB/s for elementwise ones."""

from __future__ import annotations

from dataclasses import dataclass

from jaxci.analysis.work import work


@dataclass
class Achieved:
    machine: str
    benchmark: str
    params: dict
    seconds: float
    rate: float            # FLOP/s or bytes/s achieved
    unit: str              # "GFLOP/s" | "GB/s"
    peak: float | None     # same unit; None when the catalogue has no sourced figure
    peak_key: str
    note: str
    provenance: str

    @property
    def fraction(self):
        return self.rate / self.peak if self.peak else None


def peak_of(entry, device: str, dtype: str, bound: str) -> tuple[float | None, str, str]:
    """(peak in GFLOP/s or GB/s, catalogue key, note) for one catalogue machine; None with the reason."""
    if entry is None:
        return None, "", "not a catalogue family: no sourced peak"
    bits = "fp64" if dtype == "float64" else "fp32"
    if bound == "flops":
        key, scale = (f"gpu_{bits}_tflops", 1000.0) if device == "gpu" else (f"cpu_{bits}_gflops", 1.0)
    else:
        key, scale = ("gpu_bandwidth_gbs", 1.0) if device == "gpu" else ("cpu_bandwidth_gbs", 1.0)
    fig = entry.figure(key)
    if fig.value is None:
        return None, key, fig.reason or f"{key}: no sourced figure"
    return float(fig.value) * scale, key, fig.source or ""


def achieved(records, catalogue: dict) -> list[Achieved]:
    out = []
    for r in records:
        w = work(r.benchmark, r.params) if r.ok and r.method.startswith("time_") else None
        if w is None or not (0 < r.value < float("inf")):
            continue
        bound, flops, nbytes = w
        rate = (flops if bound == "flops" else nbytes) / r.value / 1e9
        peak, key, note = peak_of(catalogue.get(r.machine), r.params.get("device", "cpu"), r.params["dtype"], bound)
        out.append(Achieved(r.machine, r.benchmark, dict(r.params), r.value, rate,
                            "GFLOP/s" if bound == "flops" else "GB/s", peak, key, note, r.provenance()))
    return out
