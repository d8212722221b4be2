"""One lecture site's whole build on one runner family, every lecture accounted for: the one function behind the
decision sheet's row 6, the maintainers' report, the audit's `build` block and the report's first screen.

Each lecture is priced from the best evidence it has, and says which:
- *published*: the site's own build published its run time on this family's hardware (a lecture the patch leaves
  where it is keeps that time: it is the very build);
- *executed here*: the runner model's prediction from its run here (a pinned lecture is priced so on the CPU:
  nothing published it there), its band at least the model's held-out error (jaxci.policy.model_error);
- *not predicted*: neither (it could not run here and nothing published it); it is counted, never dropped.
The model's own check is `today`: every lecture predicted from its run here on the device it uses today, no
published figure used, summed beside the published seconds of the same lectures and of the whole build.
Pins come from the one rule (jaxci.policy.placement) on the family's predictions and published seconds.
The audit comes in as its typed view (jaxci.analysis.lecture_record.AuditView), read once by the caller.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from jaxci.analysis.lecture_record import AuditView, LectureRecord
from jaxci.policy import placement
from jaxci.policy.builds import lecture_seconds, prediction
from jaxci.policy.model_error import widened

PUBLISHED, EXECUTED, NOT_PREDICTED = "published", "executed here", "not predicted"


class PublishedTotals(Protocol):
    """What the whole build and its readers read of a site's published build (jaxci.results.published_build's
    PublishedBuild: policy never imports the results reader, so it is named by what it offers)."""

    @property
    def total_s(self) -> float: ...
    @property
    def notebooks(self) -> int: ...
    @property
    def source(self) -> str: ...
    @property
    def executed(self) -> str: ...
    @property
    def family(self) -> str: ...
    @property
    def repository(self) -> str: ...
    @property
    def commit(self) -> str: ...


@dataclass(frozen=True)
class LectureTime:
    path: str
    published_s: float | None       # its published run time on this family's hardware
    today: tuple | None             # (mid, low, high): predicted from its run here, on the device it uses today
    after: tuple | None             # (mid, low, high) after the patch, from `basis`
    basis: str                      # PUBLISHED, EXECUTED or NOT_PREDICTED
    pinned: bool
    placement: placement.Placement | None = None


@dataclass(frozen=True)
class WholeBuild:
    repository: str
    family: str
    runs_on: str | None             # the family the repository's build jobs use
    entry: object                   # the family's catalogue entry (price, GPU)
    published: PublishedTotals | None  # the site's published build on this hardware
    lectures: tuple = ()

    @property
    def what_if(self) -> bool:
        return self.runs_on is not None and self.runs_on != self.family

    def _sum(self, key, i: int, chosen) -> float:
        return sum(getattr(lec, key)[i] for lec in chosen if getattr(lec, key) is not None)

    @property
    def after_s(self) -> tuple[float, float, float]:
        """The build after the patch: (mid, low, high) seconds, lectures without a figure left out (`unpriced`)."""
        mid, low, high = (self._sum("after", i, self.lectures) for i in range(3))
        return mid, low, high

    @property
    def unpriced(self) -> list[str]:
        return [lec.path for lec in self.lectures if lec.after is None]

    @property
    def counts(self) -> dict:
        """How many lectures each basis prices after the patch."""
        out = {PUBLISHED: 0, EXECUTED: 0, NOT_PREDICTED: 0}
        for lec in self.lectures:
            out[lec.basis] += 1
        return out

    def _checked(self) -> list[tuple[str, float, float]]:
        """(path, predicted today, published) of every lecture the model's check holds: both figures known."""
        return [(lec.path, lec.today[0], lec.published_s) for lec in self.lectures
                if lec.today is not None and lec.published_s is not None]

    @property
    def today(self) -> tuple[float, float, int]:
        """(the model's seconds for today's build over the lectures it predicts, their published seconds, how many)."""
        both = self._checked()
        return sum(p for _, p, _ in both), sum(s for *_, s in both), len(both)

    def largest_gaps(self, count: int = 2) -> list[tuple[str, float, float]]:
        """(path, predicted, published) of the lectures whose predicted seconds today lie furthest from their
        published ones, in seconds: where the model's check (`today`) misses most."""
        return sorted(self._checked(), key=lambda t: -abs(t[1] - t[2]))[:count]

    @property
    def coverage(self) -> float | None:
        """The share of the published build's seconds that the model predicts from runs here."""
        total = self.published.total_s if self.published else 0.0
        return self.today[1] / total if total else None

    @property
    def pins(self) -> list[LectureTime]:
        return [lec for lec in self.lectures if lec.pinned]


def today_device(lec: LectureRecord, has_gpu: bool) -> str:
    """The device a lecture uses in today's build: the GPU on a GPU family when it imports JAX and does not pin
    itself to the CPU in its own code, else the CPU."""
    pinned = lec.scan is not None and lec.scan.pinned_cpu
    return "gpu" if has_gpu and lec.uses_jax and not pinned else "cpu"


def placed(lec: LectureRecord, family: str, published_s: float | None, source: str,
           has_gpu: bool) -> placement.Placement:
    """The one pin rule on one lecture record; where it cannot decide (not predicted), the audit's verdict stands."""
    if not has_gpu or not lec.uses_jax:
        return placement.Placement(lec.path, placement.CPU, None, None, "no GPU work to place")
    pred = lec.prediction(family)
    if pred is not None and pred.unexplained:  # a slow cell the model does not explain: measure
        return placement.Placement(lec.path, None, None, None, f"{pred.unexplained}: measure")
    found = placement.place(lec.path, pred, published_s, source, family)
    if found.device is None and lec.recommendation == placement.PIN_CPU:
        return placement.Placement(found.path, placement.CPU, found.cpu, found.gpu, lec.why or found.why)
    return found


def shows_the_gpu(lec: LectureRecord) -> bool:
    """A lecture whose purpose is to show the GPU backend is never pinned: the verdict's flag, `shows_gpu`, as the
    audit wrote it (jaxci.policy.placement.narrative_of of the scan's gpu_shown; the committed audits carry it)."""
    return lec.shows_gpu


def lecture_time(lec: LectureRecord, family: str, has_gpu: bool, published) -> LectureTime:
    """One lecture's seconds today and after the patch, with the basis of the figure after."""
    path = lec.path
    pub = published.lecture(path) if published is not None else None
    pred = prediction(lec, family)
    device = today_device(lec, has_gpu)
    found = placed(lec, family, pub, published.source if published else "", has_gpu)
    pinned = has_gpu and device == "gpu" and found.device == placement.CPU and not shows_the_gpu(lec)
    today = lecture_seconds(pred, device) if pred else None
    if pinned and pred:
        after, basis = widened(lecture_seconds(pred, "cpu")), EXECUTED
    elif pub is not None and not pinned:
        after, basis = (pub, pub, pub), PUBLISHED
    elif today is not None:
        after, basis = widened(today), EXECUTED
    else:
        after, basis = None, NOT_PREDICTED
    return LectureTime(path, pub, today, after, basis, pinned, found if has_gpu else None)


def whole_build(audit: AuditView, repository: str, family: str, entry, published=None, catalogue=None,
                runs_on: str | None = None) -> WholeBuild:
    """The whole build of one audited repository on `family` (catalogue `entry`); `published` is used only when
    it ran on the family's hardware (jaxci.policy.placement.published_for)."""
    usable = placement.published_for(published, family, catalogue or {}) if published is not None else None
    lectures = tuple(lecture_time(lec, family, entry.has_gpu, usable) for lec in audit.lectures)
    return WholeBuild(repository, family, runs_on, entry, usable, lectures)


def compared(here: WholeBuild, own: WholeBuild) -> tuple[float, float, int]:
    """A what-if against the build as it runs: (seconds here, seconds on its own runner, lectures) over the lectures
    both price from a figure (published or predicted), each after its own family's pins."""
    theirs = {lec.path: lec.after for lec in own.lectures if lec.after is not None}
    both = [(lec.after[0], theirs[lec.path][0]) for lec in here.lectures
            if lec.after is not None and lec.path in theirs]
    return sum(a for a, _ in both), sum(b for _, b in both), len(both)


def as_dict(build: WholeBuild) -> dict:
    """The audit JSON's `build` block: the same figures the report shows, as numbers."""
    mid, low, high = build.after_s
    predicted, published, n = build.today
    pub = build.published
    return {"family": build.family, "runs_on": build.runs_on, "what_if": build.what_if,
            "published": None if pub is None else {"seconds": pub.total_s, "notebooks": pub.notebooks,
                                                   "executed": pub.executed, "source": pub.source},
            "after_patch_s": {"mid": mid, "low": low, "high": high}, "lectures": build.counts,
            "unpriced": build.unpriced, "pins": [lec.path for lec in build.pins],
            "model_check": {"predicted_s": predicted, "published_s": published, "lectures": n,
                            "coverage": build.coverage}}
