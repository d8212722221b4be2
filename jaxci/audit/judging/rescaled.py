"""A lecture's prediction record moved to a family: this host's measured seconds by the host factor (the family's
host time over this host's on the same probe), then the calibration (jaxci.analysis.residual: a scale of those
seconds and the per-notebook residual). Each applied once, whatever the record went through before.
"""

from __future__ import annotations

from dataclasses import replace

from jaxci.analysis.prediction import MODELLED, SIDES, LecturePrediction, PredictedSide


def host_scaled(pred: LecturePrediction, factor: float, source: str, low: float | None = None,
                high: float | None = None) -> LecturePrediction:
    """The record with this host's measured seconds moved to the family's host: every part measured here (host
    code, compile, the CPU side's calls, loops and eager work, start-up) x `factor` (the family's host time / this
    host's on the same probe), the GPU's modelled calls and loops unchanged; each band end moved at its own end of
    the factor's band (`low`, `high`; default the factor). A record scaled before is scaled again from its
    `unscaled` figures, never twice, and without the per-notebook residual (added after it: with_residual)."""
    base = replace(pred.restored(pred.unscaled), uncalibrated=None)  # calibrated after scaling (with_residual)
    low, high = factor if low is None else low, factor if high is None else high
    cpu, gpu = (_scaled(base.side(name), name, (factor, low, high)) for name in SIDES)
    return replace(base, cpu=cpu, gpu=gpu, basis=f"{base.basis}; this host's measured parts x {factor:.3g} ({source})",
                   unscaled=base.snapshot())


def _scaled(side: PredictedSide | None, name: str, factors: tuple) -> PredictedSide | None:
    """One side's parts x the factor (the modelled ones kept), its seconds and band ends each in proportion."""
    if side is None or side.parts is None:
        return side
    parts, old = side.parts, sum(side.parts.values())
    moved = _moved(parts, name, factors[0])
    if old <= 0:
        return replace(side, parts=moved)
    mid, lo, hi = (None if x is None else x * sum(_moved(parts, name, f).values()) / old
                   for x, f in zip((side.seconds, side.low, side.high), factors))
    return PredictedSide(mid if mid is not None else side.seconds, lo, hi, moved)


def with_residual(pred: LecturePrediction, band, source: str, scale: float = 1.0) -> LecturePrediction:
    """The record with the calibration of jaxci.analysis.residual: the per-notebook residual (seconds on the family,
    a Band) added once to each side it has, as its own part `residual`, and the seconds measured here (what the host
    factor moved) x `scale`, labelled with where it was calibrated. Applied after host scaling (the residual is in
    the family's seconds already), never twice: a record calibrated before is rebased on its figures and inputs
    before it."""
    base = pred.restored(pred.uncalibrated, basis=False)
    cpu, gpu = (_calibrated(base.side(name), name, band, scale) for name in SIDES)
    return replace(base, cpu=cpu, gpu=gpu, uncalibrated=base.snapshot(basis=False),
                   inputs=(*(base.inputs or ()), source))


def _calibrated(side: PredictedSide | None, name: str, band, scale: float) -> PredictedSide | None:
    if side is None or side.parts is None:
        return side
    moved = _moved(side.parts, name, scale)
    old = sum(side.parts.values())
    grown = sum(moved.values()) / old if old > 0 else 1.0
    mid, lo, hi = (None if x is None else max(x * grown + add, 0.0)
                   for x, add in zip((side.seconds, side.low, side.high), (band.mid, band.low, band.high)))
    return PredictedSide(mid if mid is not None else side.seconds, lo, hi, {**moved, "residual": band.mid})


def _moved(parts, side: str, factor: float) -> dict:
    return {k: v * (1.0 if k in MODELLED.get(side, ()) else factor) for k, v in parts.items()}
