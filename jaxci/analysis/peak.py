"""Achieved fraction of a machine's catalogue peak: FLOP/s for dense kernels (against the peak of the precision
path the kernel runs on), GB/s for memory-bound ones.

Precision paths (jaxci.analysis.peak.gemm_path): JAX's default matmul precision runs float32 as TF32 on tensor
cores from compute capability 8.0 (Ampere: A10G, A100; Ada: L4, L40S; Hopper: H200) and as true FP32 on the T4
(Turing, 7.5, no TF32); `precision=highest` forces FP32. float64 runs on FP64 tensor cores where the catalogue
has a sourced `gpu_fp64_tensor_tflops` (A100, H100/H200), else on the FP64 units (`gpu_fp64_tflops`). A rate is
only ever divided by the peak of the path it ran on, so no efficiency exceeds 1 of a correctly chosen peak.
"""

from __future__ import annotations

from dataclasses import dataclass

from jaxci.analysis.work import work

TF32_MIN_CC = 8.0


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


def _fig(entry, key):
    fig = entry.figure(key)
    return (float(fig.value) if fig.value is not None else None), (fig.source or fig.reason or "")


def gemm_path(entry, dtype: str, precision: str = "default") -> tuple[str, str, float | None, str]:
    """(path, catalogue key, peak in GFLOP/s or None, source or reason) of a GPU matmul on one catalogue entry."""
    if entry is None:
        return "", "", None, "not a catalogue machine: no sourced peak"
    cc = entry.value("gpu_compute_capability")
    if dtype == "float64":
        tensor = _fig(entry, "gpu_fp64_tensor_tflops")[0] is not None
        path, key = ("fp64-tensor", "gpu_fp64_tensor_tflops") if tensor else ("fp64", "gpu_fp64_tflops")
    elif precision == "default" and cc is not None and float(cc) >= TF32_MIN_CC:
        path, key = "tf32", "gpu_tf32_tflops"
    else:
        path, key = "fp32", "gpu_fp32_tflops"
    peak, src = _fig(entry, key)
    return path, key, (peak * 1000 if peak is not None else None), src


def peak_of(entry, device: str, dtype: str, bound: str, precision: str = "default") -> tuple[float | None, str, str]:
    """(peak in GFLOP/s or GB/s, catalogue key, note) for one catalogue machine; None with the reason.
    GPU FLOP/s: the peak of the precision path a matmul at `precision` runs on (gemm_path)."""
    if entry is None:
        return None, "", "not a catalogue family: no sourced peak"
    bits = "fp64" if dtype == "float64" else "fp32"
    if bound == "flops" and device == "gpu":
        _, key, peak, note = gemm_path(entry, dtype, precision)
        return peak, key, note or f"{key}: no sourced figure"
    if bound == "flops":
        key = f"cpu_{bits}_gflops"
    else:
        key = "gpu_bandwidth_gbs" if device == "gpu" else "cpu_bandwidth_gbs"
    fig = entry.figure(key)
    if fig.value is None:
        return None, key, fig.reason or f"{key}: no sourced figure"
    return float(fig.value), key, fig.source or ""


def achieved(records, catalogue: dict) -> list[Achieved]:
    out = []
    for r in records:
        w = work(r.benchmark, r.params) if r.ok and r.method.startswith("time_") else None
        if w is None or not (0 < r.value < float("inf")):
            continue
        bound, flops, nbytes = w
        rate = (flops if bound == "flops" else nbytes) / r.value / 1e9
        peak, key, note = peak_of(catalogue.get(r.machine), r.params.get("device", "cpu"), r.params["dtype"], bound,
                                  str(r.params.get("precision", "default")))
        if r.params.get("op") in ("solve", "cholesky") and r.params.get("device") == "gpu":
            note = f"{note} (solve/Cholesky: compared with the matmul path's peak)"
        out.append(Achieved(r.machine, r.benchmark, dict(r.params), r.value, rate,
                            "GFLOP/s" if bound == "flops" else "GB/s", peak, key, note, r.provenance()))
    return out
