"""How much of a repository's published build an executed audit covers (`jaxci audit coverage`; issue 69, item 7).

Each lecture of the published build (jaxci.results.published_build: its run times) is counted once, in the first
class that holds:

- `executed`: every run of the lecture completed here;
- `stopped by the harness`: it ran here until the harness stopped it (its `failure` record says `by: harness`,
  with the cause: no network, the audit's cell timeout, the kernel's environment);
- `failed`: it ran here and failed on its own;
- `not executed`: not run here (its `not_executed` says why), or not in the audit at all.

The headline is the executed lectures' share of the published seconds; the others' shares follow.
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

from jaxci.analysis.lecture_record import AuditView, Failure, LectureRecord
from jaxci.util.quoting import cell

CLASSES = ("executed", "stopped by the harness", "failed", "not executed")


class Covered(NamedTuple):
    """One published lecture: its published seconds, the class it falls in, and why (empty when executed)."""

    document: str
    seconds: float
    klass: str
    why: str


def lecture_class(lecture: LectureRecord | None) -> tuple[str, str]:
    """(class, why) of one audit lecture record (None: not in the audit)."""
    if lecture is None:
        return "not executed", "not in the audit"
    if not lecture.runs or lecture.not_executed:
        return "not executed", lecture.not_executed or "no run"
    if all(r.status == "ok" for r in lecture.runs.values()):
        return "executed", ""
    failure = lecture.failure or Failure()
    where = f"cell {failure.cell}: {failure.error or failure.cause}"
    if failure.by == "harness":
        return "stopped by the harness", f"{failure.cause} ({where})"
    return "failed", "; ".join(lecture.errors) or where


def coverage(audit: AuditView, seconds: dict[str, float]) -> list[Covered]:
    """Every published lecture (document -> published seconds) classed by the audit, heaviest first."""
    by_name = {Path(lec.path).stem: lec for lec in audit.lectures}
    rows = [Covered(doc, s, *lecture_class(by_name.get(doc))) for doc, s in seconds.items()]
    return sorted(rows, key=lambda r: (-r.seconds, r.document))


def summary(rows: list[Covered]) -> str:
    """The published total, then each class's lectures and share of the published seconds."""
    total = sum(r.seconds for r in rows)
    lines = [f"published: {len(rows)} lectures, {total:,.0f} s"]
    for name in CLASSES:
        part = [r for r in rows if r.klass == name]
        share = sum(r.seconds for r in part)
        lines.append(f"{name}: {len(part)} lectures, {share:,.0f} s = {100 * share / total:.1f}%" if total else
                     f"{name}: {len(part)} lectures")
    return "\n".join(lines)


def table(rows: list[Covered]) -> str:
    """Every lecture: published seconds, class, why (Markdown)."""
    body = [f"| {cell(r.document)} | {r.seconds:,.1f} | {r.klass} | {cell(r.why)} |" for r in rows]
    return "\n".join(["| lecture | published s | class | why |", "|---|---|---|---|", *body])
