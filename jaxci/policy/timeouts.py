"""Per-cell and job timeouts: one rule, and the promise that advice never breaks the build it is meant to fix.

- A per-cell timeout is CELL_MARGIN x the lecture's slowest cell, rounded up to a whole minute, at least
  MIN_CELL_S, at most MAX_CELL_S (`cell_timeout`). The slowest cell is taken at the HIGH end of its band on
  the family the build runs on (`slowest_cell_high`), so a prediction's uncertainty widens the timeout, never
  narrows it.
- A job's `timeout-minutes` is jaxci.policy.jobcost's rule (ceil((job overhead + build) x timeout_margin)) applied
  to the same predicted build, at the high end of its band (`job_timeout_minutes`).
- No advice lowers a repository's per-cell timeout below what it has without a measurement (or prediction) of
  every lecture it would cut (`advise`): a measured lecture gets its own `execution: timeout:` in its front
  matter (MyST-NB and jupyter-book read a notebook's own value before the book's); the book-wide value is the
  repository's own (read from its book config, jaxci.audit.reading.book), changed (up or down) only when every lecture
  it governs is measured. Without a repository value and without a measurement there is nothing
  to advise: "keep what you have", never a built-in number.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from jaxci.analysis.lecture_record import AuditView, LectureRecord
from jaxci.analysis.prediction import MOST_SECONDS
from jaxci.policy import builds
from jaxci.policy.concurrency import ENGINE_NAMES, JB1, MYSTMD, NBCLIENT

#: the rule: a per-cell timeout of 3x the slowest cell (3x: a cold cache, a slower runner of the same family
#: and a loaded host all at once still finish; incidents.md's NUTS lecture ran 1.9x its prediction)
CELL_MARGIN = 3.0
#: never advise a per-cell timeout under a minute (kernel start-up and imports alone can take tens of seconds)
MIN_CELL_S = 60
#: the longest per-cell timeout advised: 5 days, the limit of a self-hosted runner's job
MAX_CELL_S = MOST_SECONDS   # a job's longest seconds (jaxci.util.bounds, through analysis)
#: GitHub's own job limit when a workflow sets no timeout-minutes
GITHUB_DEFAULT_JOB_MIN = 360
#: where a lecture's per-cell timeout comes from, as the audit records it (`timeout_kind`): the notebook's own
#: metadata, or the book (its config, or the builder's default)
NOTEBOOK_TIMEOUT, BOOK_TIMEOUT = "notebook", "book"


def cell_timeout(slowest_cell_s: float) -> int:
    """The one per-cell rule: CELL_MARGIN x the slowest cell, rounded up to a minute, within [MIN, MAX]."""
    wanted = slowest_cell_s * CELL_MARGIN
    if not math.isfinite(wanted) or wanted >= MAX_CELL_S:
        return MAX_CELL_S
    return int(max(MIN_CELL_S, math.ceil(wanted / 60) * 60))


def rule_text() -> str:
    return f"{CELL_MARGIN:g} x the slowest cell, rounded up to a minute, at least {MIN_CELL_S} s"


def slowest_cell_high(measured_slowest_s: float | None, measured_whole_s: float | None,
                      predicted_high_s: float | None) -> float | None:
    """The lecture's slowest cell at the high end of its band on the family: the measured run's slowest-cell share
    of the lecture x the lecture's predicted high end there; the whole predicted high when the run has no cells;
    the measured slowest cell itself without a prediction (measured on the family); None: nothing known."""
    if predicted_high_s is None:
        return measured_slowest_s
    if measured_slowest_s and measured_whole_s and measured_whole_s > 0:
        return predicted_high_s * min(1.0, measured_slowest_s / measured_whole_s)
    return predicted_high_s


def job_timeout_minutes(build_high_s: float, defaults: dict) -> int:
    """timeout-minutes of one build job: jaxci.policy.jobcost's rule on the build at the high end of its band."""
    from jaxci.policy.jobcost import job_timeout

    return job_timeout(build_high_s / 60, defaults)


@dataclass
class LectureTimeout:
    path: str
    seconds: int              # the lecture's own `execution: timeout:` to set
    slowest_high_s: float     # the slowest cell it is sized from (high end of its band on the family)
    current_s: float | None   # what applies to it today (its own metadata, else the book's; None: no limit)


@dataclass
class TimeoutAdvice:
    book_s: float | None                     # the book-wide per-cell value advised (None: no limit, as it has)
    book_current_s: float | None             # the repository's own value today
    book_origin: str                         # where the repository's value was read ("" when none is known)
    lectures: list = field(default_factory=list)   # [LectureTimeout] for the measured / predicted lectures
    unmeasured: list = field(default_factory=list)  # lecture paths with no measurement: they keep the book's
    job_minutes: int | None = None           # from the predicted build (None: not measured, keep the job's own)
    job_missing: list = field(default_factory=list)  # lectures without a prediction: the build is not sized whole

    @property
    def lowered(self) -> bool:
        """True when the book-wide value goes below the repository's own (only with every lecture measured)."""
        if self.book_s == self.book_current_s:
            return False
        return self.book_current_s is None or (self.book_s is not None and self.book_s < self.book_current_s)

    @property
    def raised(self) -> list:
        """The lectures whose own `execution: timeout:` must go above what applies to them today."""
        return [t for t in self.lectures if t.current_s is not None and t.seconds > t.current_s]


def advise(book_current_s: float | None, lectures: dict, *, book_origin: str = "", build_high_s: float | None = None,
           defaults: dict | None = None) -> TimeoutAdvice:
    """The timeout advice for one repository. `lectures`: path -> (slowest cell at the high end on the family, or
    None when not measured; the per-cell value that applies to it today, None for no limit). `build_high_s`:
    the predicted build at the high end of its band, for the job's timeout-minutes (with `defaults`)."""
    out = TimeoutAdvice(book_current_s, book_current_s, book_origin)
    for path, (slowest, current) in sorted(lectures.items()):
        if slowest is None:
            out.unmeasured.append(path)
            continue
        out.lectures.append(LectureTimeout(path, cell_timeout(slowest), slowest, current))
    if out.lectures and not out.unmeasured:
        # every lecture the book governs is measured: the book-wide value may follow the rule, up or down
        out.book_s = max(t.seconds for t in out.lectures)
    if build_high_s is not None and defaults is not None:
        out.job_minutes = job_timeout_minutes(build_high_s, defaults)
    return out


def _measured(lecture: LectureRecord, platform: str) -> tuple[float | None, float | None]:
    """(slowest cell, whole) seconds of the audit's executed run of a lecture, on `platform` where it ran."""
    run = lecture.run_on(platform)
    if run is None:
        return None, None
    cells = run.cells_s
    whole = run.wall_s
    return (max(cells) if cells else None), (whole if whole is not None else (sum(cells) or None))


def book_value(audit: AuditView) -> tuple[float | None, str]:
    """The repository's own book-wide per-cell timeout as the audit read it from its book config
    (jaxci.audit.reading.book), with where; (None, "") when no lecture follows a config that sets one."""
    from collections import Counter

    seen = Counter((lec.timeout, lec.timeout_origin) for lec in audit.lectures
                   if lec.timeout_origin and lec.timeout_kind == BOOK_TIMEOUT)
    if not seen:
        return None, ""
    (value, origin), _ = seen.most_common(1)[0]
    return value, str(origin)


def from_audit(audit: AuditView, family: str, has_gpu: bool, defaults: dict | None = None) -> TimeoutAdvice:
    """`advise` for one family from an executed audit (its view, read once): each lecture's slowest cell at the high
    end of its predicted band on the device it is placed on there (jaxci.policy.builds), else as the audit measured
    it; the job's timeout-minutes from the same predicted build, only when every lecture is predicted."""
    lectures = {}
    for lec in audit.lectures:
        pred = builds.prediction(lec, family)
        device = builds.placement(pred, has_gpu) if pred else ("gpu" if has_gpu else "cpu")
        slowest, whole = _measured(lec, "cuda" if device == "gpu" else "cpu")
        seconds = builds.lecture_seconds(pred, device) if pred else None
        high = seconds[2] if seconds is not None else None
        lectures[lec.path] = (slowest_cell_high(slowest, whole, high), lec.timeout)
    current, origin = book_value(audit)
    build = builds.family_build(audit, family, has_gpu)
    high = build.high if build is not None and not build.missing else None  # only a build every lecture is in
    out = advise(current, lectures, book_origin=origin, build_high_s=high, defaults=defaults)
    out.job_missing = build.missing if build is not None else sorted(lectures)
    return out


#: where each engine takes a lecture's own per-cell timeout (None: it has no such setting), and its fail-once
#: template (templates/; None: not wired). mystmd 1.8.3 reads `skip`, `depends_on_env` and `cache` under a page's
#: `execute` front matter, and no timeout: its build is bounded by the job's timeout-minutes alone.
PER_CELL = {JB1: "`execution: timeout: N` in the lecture's front matter (MyST-NB), the book's `execute.timeout`",
            MYSTMD: None, NBCLIENT: "`NotebookClient(nb, timeout=N)` per notebook in the script"}
FAIL_ONCE = {JB1: "templates/fail-once-jupyter-book.yml", MYSTMD: "templates/fail-once-mystmd.yml", NBCLIENT: None}


def engine_hygiene(engine: str) -> str:
    """Question 7 in one engine's terms: where its per-cell timeout goes and how it fails once."""
    cell = PER_CELL[engine] or "none to set (a page's `execute` takes no timeout): the job's `timeout-minutes` " \
        "is the only bound"
    gate = f"fail once with `{FAIL_ONCE[engine]}`" if FAIL_ONCE[engine] else \
        "fail once: not wired (record failures with `jaxci failures` and leave them out of the script's list)"
    return f"{ENGINE_NAMES[engine]}: per-cell timeout {cell}; {gate}"
