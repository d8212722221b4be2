"""A lecture's prediction record moved to a family: this host's measured seconds by the host factor (the family's
host time over this host's on the same probe), then the calibration (jaxci.analysis.residual: a scale of those
seconds and the per-notebook residual). Each applied once, whatever the record went through before.
"""

from __future__ import annotations

#: parts of a record that the runner model gives rather than this host's measured time: never moved by the host factor
#: (`backend`, the CUDA client's start-up, and `leapfrog`, a sampler's steps as loop turns, are carried from a GPU
#: capture's host by the model's own rule)
MODELLED = {"gpu": ("calls", "loops", "backend", "leapfrog"), "cpu": ()}


def host_scaled(pred: dict, factor: float, source: str, low: float | None = None, high: float | None = None) -> dict:
    """The record with this host's measured seconds moved to the family's host: every part measured here (host
    code, compile, the CPU side's calls, loops and eager work, start-up) x `factor` (the family's host time / this
    host's on the same probe), the GPU's modelled calls and loops unchanged; each band end moved at its own end of
    the factor's band (`low`, `high`; default the factor). A record scaled before is scaled again from its
    `unscaled` figures, never twice, and without the per-notebook residual (added after it: with_residual)."""
    base = {**pred, **pred["unscaled"]} if pred.get("unscaled") else pred
    base = {k: v for k, v in base.items() if k != "uncalibrated"}  # calibrated after scaling (with_residual)
    low, high = factor if low is None else low, factor if high is None else high
    out = {**base, "parts": {}, "basis": f"{base.get('basis', '')}; this host's measured parts x {factor:.3g} "
                                          f"({source})",
           "unscaled": {k: base.get(k) for k in (*SECONDS, "parts", "basis", "inputs") if k in base}}
    for side, parts in (base.get("parts") or {}).items():
        out["parts"][side] = _moved(parts, side, factor)
        old = sum(parts.values())
        if old > 0 and base.get(f"{side}_s") is not None:
            for key, f in ((f"{side}_s", factor), (f"{side}_low_s", low), (f"{side}_high_s", high)):
                if base.get(key) is not None:
                    out[key] = base[key] * sum(_moved(parts, side, f).values()) / old
    return out


def with_residual(pred: dict, band, source: str, scale: float = 1.0) -> dict:
    """The record with the calibration of jaxci.analysis.residual: the per-notebook residual (seconds on the family,
    a Band) added once to each side it has, as its own part `residual`, and the seconds measured here (what the host
    factor moved) x `scale`, labelled with where it was calibrated. Applied after host scaling (the residual is in
    the family's seconds already), never twice: a record calibrated before is rebased on its figures and inputs
    before it."""
    base = {**pred, **pred["uncalibrated"]} if pred.get("uncalibrated") else pred
    out = {**base, "parts": {}, "uncalibrated": {k: base.get(k) for k in (*SECONDS, "parts", "inputs") if k in base},
           "inputs": [*base.get("inputs", []), source]}
    for side, parts in (base.get("parts") or {}).items():
        moved = _moved(parts, side, scale)
        out["parts"][side] = {**moved, "residual": band.mid}
        old = sum(parts.values())
        if base.get(f"{side}_s") is None:
            continue
        grown = sum(moved.values()) / old if old > 0 else 1.0
        for key, add in ((f"{side}_s", band.mid), (f"{side}_low_s", band.low), (f"{side}_high_s", band.high)):
            if base.get(key) is not None:
                out[key] = max(base[key] * grown + add, 0.0)
    return out


#: the seconds of a record (each side's middle and band)
SECONDS = ("cpu_s", "cpu_low_s", "cpu_high_s", "gpu_s", "gpu_low_s", "gpu_high_s")


def _moved(parts: dict, side: str, factor: float) -> dict:
    return {k: v * (1.0 if k in MODELLED.get(side, ()) else factor) for k, v in parts.items()}
