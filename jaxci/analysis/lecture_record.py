"""An audit's lectures as the policy reads them: one frozen, typed, read-only record per lecture (`LectureRecord`),
built once from the audit JSON by `AuditView.from_dict`, the only code that knows the keys the policy reads
(jaxci.policy: builds, timeouts, the whole build; the reports build the view, hand it on and read it: the pins, the
build's cost and timeouts, the lectures that could not run, the memory advice, the audit's coverage).

Each field has one type: a figure is seconds (jaxci.analysis.prediction.number's rule) or None where the audit has
none, a text is a str or None, a flag a bool. A lecture entry whose field has another type is refused with
`LectureRecordError`, one line naming the lecture and the field (`lectures[3] ('intro.md').runs['cpu'].wall_s:
expected seconds ..., got str`), never read as absent. The prediction per family is
jaxci.analysis.prediction.LecturePrediction, read by its own `from_dict`. Fields nothing in the policy reads stay in
the audit JSON (jaxci.audit.writing.record reads and checks the whole document).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from jaxci.analysis.prediction import LecturePrediction, number

#: a run's peak memory figures in MiB (audit.json's `runs[platform].peak_memory`): a GPU's bytes in use, JAX's live
#: arrays, the host's resident set
PEAK_KEYS = ("device_peak_mib", "live_buffers_mib", "host_rss_peak_mib")


class LectureRecordError(ValueError):
    """A lecture entry of an audit was refused: the message names the lecture and the field, in one line."""


@dataclass(frozen=True)
class RunSummary:
    """One executed run of a lecture (audit.json's `runs[platform]`): its whole seconds and each cell's, where
    measured (a cell without seconds is left out), and its peak memory by PEAK_KEYS (those measured)."""

    wall_s: float | None = None
    cells_s: tuple[float, ...] = ()
    status: str | None = None       # "ok" where it completed
    peak_mib: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}))


@dataclass(frozen=True)
class Failure:
    """Why an executed lecture stopped (audit.json's `failure`): who stopped it (`by`: "harness" or the lecture),
    the cause, the error's name and the cell (None: not given)."""

    by: str | None = None
    cause: str | None = None
    error: str | None = None
    cell: int | None = None


@dataclass(frozen=True)
class PublishedTime:
    """A family's own published run time of the lecture (audit.json's `published[family]`)."""

    seconds: float | None
    source: str = ""


@dataclass(frozen=True)
class ScanFacts:
    """What the static scan found that the policy decides on: JAX (or numpyro) imported, and a pin to the CPU in
    the lecture's own code."""

    uses_jax: bool = False
    pinned_cpu: bool = False


@dataclass(frozen=True)
class LectureRecord:
    """One lecture of an audit, as the policy reads it. `scan` is None where the audit has no scan (or an empty
    one); `timeout` is the per-cell seconds that apply to it today (-1: none, None: not read), from
    `timeout_origin`, of kind `timeout_kind` (jaxci.policy.timeouts' NOTEBOOK_TIMEOUT or BOOK_TIMEOUT);
    `selected` False: left out by `--only`; `not_executed` why it did not run, `errors` and `failure` what failed
    where it did."""

    path: str
    status: str | None = None
    selected: bool = True
    not_executed: str | None = None
    errors: tuple[str, ...] = ()
    failure: Failure | None = None
    recommendation: str | None = None
    why: str | None = None
    family: str | None = None          # the family the audit judged it for
    shows_gpu: bool = False
    timeout: float | None = None
    timeout_origin: str | None = None
    timeout_kind: str | None = None
    scan: ScanFacts | None = None
    runs: Mapping[str, RunSummary] = field(default_factory=lambda: MappingProxyType({}))
    predictions: Mapping[str, LecturePrediction] = field(default_factory=lambda: MappingProxyType({}))
    published: Mapping[str, PublishedTime] = field(default_factory=lambda: MappingProxyType({}))

    def prediction(self, family: str) -> LecturePrediction | None:
        """The lecture's prediction on `family`, None where it has none."""
        return self.predictions.get(family)

    @property
    def uses_jax(self) -> bool | None:
        """Does it import JAX or numpyro: the static scan's answer, None without a scan (unknown: the readers place
        it nowhere rather than guess; the whole build keeps it on the CPU, where it runs without a GPU either way)."""
        return None if self.scan is None else self.scan.uses_jax

    def run_on(self, platform: str) -> RunSummary | None:
        """The run on `platform`, else the CPU's, else the first (None: not executed)."""
        return self.runs.get(platform) or self.runs.get("cpu") or next(iter(self.runs.values()), None)

    @classmethod
    def from_dict(cls, data, where: str = "lecture") -> LectureRecord:
        """The record of one lecture entry of the audit JSON; LectureRecordError names the field it refuses."""
        if not isinstance(data, Mapping):
            raise LectureRecordError(f"{where}: expected an object, got {_kind(data)}")
        path = _text(where, "path", data.get("path"))
        path = "?" if path is None else path
        at = f"{where} ({path!r})"
        return cls(path=path, status=_text(at, "status", data.get("status")),
                   selected=_flag(at, "selected", data.get("selected", True)),
                   not_executed=_text(at, "not_executed", data.get("not_executed")),
                   errors=_texts(at, "errors", data.get("errors")),
                   failure=_failure(f"{at}.failure", data.get("failure")),
                   recommendation=_text(at, "recommendation", data.get("recommendation")),
                   why=_text(at, "why", data.get("why")), family=_text(at, "family", data.get("family")),
                   shows_gpu=_flag(at, "shows_gpu", data.get("shows_gpu")),
                   timeout=_seconds(at, "timeout", data.get("timeout")),
                   timeout_origin=_text(at, "timeout_origin", data.get("timeout_origin")),
                   timeout_kind=_text(at, "timeout_kind", data.get("timeout_kind")),
                   scan=_scan(at, data.get("scan")),
                   runs=_each(at, "runs", data.get("runs"), _run),
                   predictions=_each(at, "predicted", data.get("predicted"), _prediction),
                   published=_each(at, "published", data.get("published"), _published))


@dataclass(frozen=True)
class AuditView:
    """An audit's lectures, each a LectureRecord, in the audit's order: what the policy functions take."""

    lectures: tuple[LectureRecord, ...] = ()

    def families(self) -> set[str]:
        """Every family some lecture has a prediction for."""
        return {f for lec in self.lectures for f in lec.predictions}

    @classmethod
    def from_dict(cls, audit) -> AuditView:
        """The view of an audit JSON document (its `lectures`; none: an empty view), read once."""
        if not isinstance(audit, Mapping):
            raise LectureRecordError(f"audit: expected an object, got {_kind(audit)}")
        lectures = audit.get("lectures")
        if lectures is None:
            return cls()
        if not isinstance(lectures, (list, tuple)):
            raise LectureRecordError(f"lectures: expected a list, got {_kind(lectures)}")
        return cls(tuple(LectureRecord.from_dict(lec, f"lectures[{i}]") for i, lec in enumerate(lectures)))


# ---- the fields, each checked where it is read -------------------------------------------------------------


def _kind(value) -> str:
    return "null" if value is None else type(value).__name__


def _text(where: str, key: str, value) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise LectureRecordError(f"{where}.{key}: expected text, got {_kind(value)}")


def _texts(where: str, key: str, value) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, (list, tuple)):
        raise LectureRecordError(f"{where}.{key}: expected a list of text, got {_kind(value)}")
    for i, x in enumerate(value):
        if not isinstance(x, str):
            raise LectureRecordError(f"{where}.{key}[{i}]: expected text, got {_kind(x)}")
    return tuple(value)


def _flag(where: str, key: str, value) -> bool:
    if value is None or isinstance(value, bool):
        return bool(value)
    raise LectureRecordError(f"{where}.{key}: expected true or false, got {_kind(value)}")


def _seconds(where: str, key: str, value) -> float | None:
    """A figure of seconds (jaxci.analysis.prediction.number's rule); None: not given."""
    if value is None:
        return None
    seconds = number(value)
    if seconds is None:
        numeric = isinstance(value, (int, float)) and not isinstance(value, bool)
        shown = repr(value)[:40] if numeric else _kind(value)  # a number out of range is shown, shortened
        raise LectureRecordError(f"{where}.{key}: expected seconds (a finite number within 5 days), got {shown}")
    return seconds


def _each(where: str, key: str, value, read) -> Mapping:
    """An object of entries by name (a platform, a family), each read by `read(where, entry)`; None: none."""
    if value is None:
        return MappingProxyType({})
    if not isinstance(value, Mapping):
        raise LectureRecordError(f"{where}.{key}: expected an object, got {_kind(value)}")
    return MappingProxyType({_name(where, key, k): read(f"{where}.{key}[{k!r}]", v) for k, v in value.items()})


def _name(where: str, key: str, name) -> str:
    if not isinstance(name, str):
        raise LectureRecordError(f"{where}.{key}: expected names as text, got {_kind(name)}")
    return name


def _object(where: str, value) -> Mapping:
    if not isinstance(value, Mapping):
        raise LectureRecordError(f"{where}: expected an object, got {_kind(value)}")
    return value


def _run(where: str, value) -> RunSummary:
    run = _object(where, value)
    cells = run.get("cells") or []
    if not isinstance(cells, (list, tuple)):
        raise LectureRecordError(f"{where}.cells: expected a list, got {_kind(cells)}")
    cell_s = (_seconds(f"{where}.cells[{i}]", "wall_s", _object(f"{where}.cells[{i}]", c).get("wall_s"))
              for i, c in enumerate(cells))
    return RunSummary(_seconds(where, "wall_s", run.get("wall_s")), tuple(s for s in cell_s if s is not None),
                      _text(where, "status", run.get("status")), _peaks(f"{where}.peak_memory", run.get("peak_memory")))


def _failure(where: str, value) -> Failure | None:
    if value is None:
        return None
    failure = _object(where, value)
    cell = failure.get("cell")
    if cell is not None and (isinstance(cell, bool) or not isinstance(cell, int)):
        raise LectureRecordError(f"{where}.cell: expected a cell number, got {_kind(cell)}")
    return Failure(_text(where, "by", failure.get("by")), _text(where, "cause", failure.get("cause")),
                   _text(where, "error", failure.get("error")), cell)


def _peaks(where: str, value) -> Mapping[str, float]:
    """A run's peak memory figures (MiB, each a finite number; None: not measured)."""
    if value is None:
        return MappingProxyType({})
    peak = _object(where, value)
    out = {}
    for key in PEAK_KEYS:
        mib = peak.get(key)
        if mib is None:
            continue
        if isinstance(mib, bool) or not isinstance(mib, (int, float)) or not math.isfinite(mib):
            raise LectureRecordError(f"{where}.{key}: expected MiB (a finite number), got {_kind(mib)}")
        out[key] = float(mib)
    return MappingProxyType(out)


def _prediction(where: str, value) -> LecturePrediction:
    pred = LecturePrediction.from_dict(_object(where, value))
    assert pred is not None  # from_dict reads every mapping
    return pred


def _published(where: str, value) -> PublishedTime:
    pub = _object(where, value)
    source = _text(where, "source", pub.get("source")) or ""
    return PublishedTime(_seconds(where, "seconds", pub.get("seconds")), source)


def _scan(where: str, value) -> ScanFacts | None:
    if value is None:
        return None
    scan = _object(f"{where}.scan", value)
    if not scan:
        return None
    uses = (_flag(f"{where}.scan", "uses_jax", scan.get("uses_jax"))
            or _flag(f"{where}.scan", "uses_numpyro", scan.get("uses_numpyro")))
    return ScanFacts(uses, _flag(f"{where}.scan", "pinned_cpu", scan.get("pinned_cpu")))
