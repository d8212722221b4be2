"""The calibration of a published build's lectures: what a runner's notebook takes beyond the executed audit's
prediction, fitted on published Execution Statistics and scored only on lectures it was not fitted on.

A build runs each notebook in a fresh kernel on the runner, and pays there what no measurement here sees: the
runner's disk and page cache, the engine's bookkeeping, the GPU's libraries on first use. And the host factor moves
this host's seconds by a pure-Python probe, which does not move whole lectures (NumPy, SciPy, numba, compiles,
plots) as it moves pure Python. A `Fit` has both, in one of three forms (`FORMS`):

    predicted with the calibration = predicted + scalable x (scale - 1) + offset x the family's probe

`scalable` is what the host factor moved (the GPU's modelled parts never); `offset` is in units of the family's
published pure-Python probe, so it moves between families as host work does. The model's form is `both`
(docs/runner-model.md, "A notebook's fixed costs"). It is scored two ways, never on the lecture it predicts:
leave-one-lecture-out (fitted on the other lectures of its set) and cross-set (fitted on the other development
set). Lectures whose cells raised here (an environment cause) are scored but never fitted on.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass


@dataclass(frozen=True)
class Scored:
    """One lecture: its published seconds, prediction (without any residual) and the family's probe (seconds)."""

    lecture: str
    published_s: float
    predicted_s: float
    probe_s: float
    calibrates: bool = True  # False: a cell raised here, so its time is short for the kernel's environment
    #: of predicted_s, the seconds measured here and moved by the host factor (what a scale corrects); None: all
    scalable_s: float | None = None

    def gap(self) -> float:
        """(published - predicted) in probe units."""
        return (self.published_s - self.predicted_s) / self.probe_s


@dataclass(frozen=True)
class Fit:
    """predicted x scale + offset x the family's probe: `offset` the per-notebook residual (probe units), `scale`
    a correction of the host factor (1 unless the form fits one)."""

    offset: float = 0.0
    scale: float = 1.0

    def apply(self, s: Scored) -> float:
        scalable = s.predicted_s if s.scalable_s is None else s.scalable_s
        return s.predicted_s + scalable * (self.scale - 1.0) + self.offset * s.probe_s


#: the forms a calibration may take: the per-notebook offset alone (the model's), a host scale alone, or both
FORMS = ("offset", "scale", "both")


def fit(lectures: list[Scored], form: str = "offset") -> Fit:
    """The calibration over the lectures that calibrate (Fit() without any): `offset` the median gap; `scale` the
    median published / predicted; `both` the scale over the longer half (where fixed costs weigh least), then the
    median gap left."""
    use = [s for s in lectures if s.calibrates]
    if not use:
        return Fit()
    if form == "offset":
        return Fit(statistics.median(s.gap() for s in use))
    if form == "scale":
        return Fit(0.0, _scale(use))
    scale = _scale(sorted(use, key=lambda s: s.predicted_s)[len(use) // 2:])
    return Fit(statistics.median((s.published_s - Fit(0.0, scale).apply(s)) / s.probe_s for s in use), scale)


def _scale(lectures: list[Scored]) -> float:
    """The median scale that makes a lecture's scalable seconds meet its published time (lectures with none
    scalable left out; 1 without any)."""
    got = [(s.published_s - s.predicted_s + s.scalable_s) / s.scalable_s if s.scalable_s is not None
           else s.published_s / s.predicted_s for s in lectures
           if (s.scalable_s if s.scalable_s is not None else s.predicted_s) > 0]
    return statistics.median(got) if got else 1.0


def leave_one_out(lectures: list[Scored], form: str = "offset") -> list[float]:
    """Each lecture's prediction with the calibration of the other lectures of its set."""
    return [fit([s for s in lectures if s is not one], form).apply(one) for one in lectures]


def cross_set(calibrated_on: list[Scored], scored: list[Scored], form: str = "offset") -> list[float]:
    """The scored set's predictions with the calibration fitted on the other set."""
    f = fit(calibrated_on, form)
    return [f.apply(s) for s in scored]


@dataclass(frozen=True)
class Score:
    """The scoreboard of one set under one scoring: within 2x, summed build and median ratio."""

    lectures: int
    within_2x: int
    summed: float
    median: float

    @property
    def share_within_2x(self) -> float:
        return self.within_2x / self.lectures if self.lectures else 0.0


def within_2x(ratio: float) -> bool:
    """The scoreboard's one rule: predicted / published between 0.5 and 2."""
    return 0.5 <= ratio <= 2.0


def score(lectures: list[Scored], predicted: list[float]) -> Score:
    """predicted / published per lecture: how many within 0.5-2, the summed ratio and the median ratio."""
    ratios = [p / s.published_s for s, p in zip(lectures, predicted)]
    published = sum(s.published_s for s in lectures)
    return Score(len(lectures), sum(1 for r in ratios if within_2x(r)),
                 sum(predicted) / published if published else float("nan"),
                 statistics.median(ratios) if ratios else float("nan"))
