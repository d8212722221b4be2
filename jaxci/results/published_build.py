"""A lecture site's published build as data: per lecture, the run time its own CI published on a runner family.

QuantEcon's `*.notebooks` repositories commit jupyter-book's Execution Statistics (`status.ipynb`: Document |
Modified | Method | Run Time (s) | Status) on every publish. `jaxci audit published SNAPSHOT --commit C --family F
--output FILE` reads that table once and writes it as a versioned JSON record beside the committed audit
(audits/REPO@COMMIT/published.json); every reader (the one pin rule, the whole-build accounting, the report) goes
through `read`, never through the notebook or prose. A row that is not a run time (a failed run, a number that is
not finite, a run stopped at the series' cell timeout) is kept with its reason and never counted.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path

from jaxci.util.bounds import JOB_S


#: the record's format; `read` refuses any other with the command that writes the current one
FORMAT = "jaxci-published-build"
VERSION = 1
REWRITE = "jaxci audit published SNAPSHOT --commit COMMIT --family FAMILY --output FILE"
HEADER = ("Document", "Modified", "Method", "Run Time (s)", "Status")
OK_MARKS = ("✅",)
#: a run time within this fraction of the cap is a run stopped there, not a time
CAP_TOLERANCE = 0.02
#: the largest record read (a site of a few hundred lectures is tens of KiB)
LIMIT = 4 * 1024 * 1024


class PublishedError(ValueError):
    """A published-build record or table that cannot be used; one line naming the file and the cause."""


@dataclass(frozen=True)
class Row:
    document: str
    modified: str
    method: str
    seconds: float | None
    status: str
    refused: str = ""  # why this row is not a time ('' when it is one)


@dataclass(frozen=True)
class PublishedBuild:
    """Where the build ran and was published, and its lectures' run times (by document name, no suffix)."""

    repository: str            # the *.notebooks repository that published it (owner/name)
    commit: str                # its commit holding status.ipynb
    executed: str              # the date of the newest run in the table (YYYY-MM-DD)
    family: str                # the catalogue runner family the site's build ran on
    seconds: dict = field(default_factory=dict)    # document -> run time (s)
    refused: dict = field(default_factory=dict)    # document -> why its row is no run time

    @property
    def total_s(self) -> float:
        return sum(self.seconds.values())

    @property
    def notebooks(self) -> int:
        return len(self.seconds) + len(self.refused)

    @property
    def source(self) -> str:
        """Short: what a pin's reason cites (the report's build line gives the date and the family)."""
        return f"{self.repository.rsplit('/', 1)[-1]}@{self.commit[:8]}"

    def lecture(self, path: str) -> float | None:
        """The published seconds of one lecture, by its path (lectures/NAME.md -> NAME), or None."""
        return self.seconds.get(Path(path).stem)

    def as_dict(self) -> dict:
        return {"format": FORMAT, "version": VERSION, **asdict(self)}


def parse_status(text: str, cap: float | None = None) -> list[Row]:
    """The Execution Statistics rows of a status.ipynb's text, each refused with a reason when it is not a time.
    The notebook is parsed with its nesting bounded (jaxci.util.safeio) and each cell's shape checked: a cell that
    is not an object, or a source that is not text (or a list of text), holds no table, never a traceback."""
    from jaxci.util import safeio

    try:
        nb = safeio.parse_json(text, "status.ipynb")
    except ValueError as exc:  # safeio.UnsafeFile: why (not JSON, nested too deep)
        raise PublishedError(f"status.ipynb is not JSON: {getattr(exc, 'reason', exc)}") from None
    cells = nb.get("cells") if isinstance(nb, dict) else None
    for cell in cells if isinstance(cells, list) else []:
        source = cell.get("source", "") if isinstance(cell, dict) else None
        if isinstance(source, list) and all(isinstance(x, str) for x in source):
            source = "".join(source)
        rows = table_rows(source, cap) if isinstance(source, str) else []
        if rows:
            return rows
    raise PublishedError("status.ipynb has no Execution Statistics table (" + " | ".join(HEADER) + ")")


def table_rows(markdown: str, cap: float | None) -> list[Row]:
    """The table's rows in one Markdown cell ([] when it has none); the header may follow other text on its line."""
    lines = markdown.splitlines()
    for i, line in enumerate(lines):
        if tuple(_cells(line)[-len(HEADER):]) == HEADER:
            return [_row(_cells(body), cap) for body in lines[i + 2:] if len(_cells(body)) == len(HEADER)]
    return []


def _cells(line: str) -> list[str]:
    parts = line.strip().split("|")
    return [p.strip() for p in parts[1:-1]] if len(parts) > 2 and line.strip().endswith("|") else []


def _row(cells: list[str], cap: float | None) -> Row:
    document, modified, method, seconds, status = cells
    try:
        value = float(seconds) if seconds.isascii() and len(seconds) < 32 else None
    except ValueError:
        value = None
    if value is not None and not _is_seconds(value):  # inf, 1e308 or -50 is no run time
        value = None
    return Row(document, modified, method, value, status, refusal(value, status, cap))


def refusal(seconds: float | None, status: str, cap: float | None) -> str:
    """Why a published row is not a run time ('' when it is one)."""
    if seconds is None:
        return "run time not a finite, non-negative number of at most 5 days"
    if status not in OK_MARKS:
        return f"status {status!r}: not a completed run"
    if cap and abs(seconds - cap) <= CAP_TOLERANCE * cap:
        return f"{seconds:,.0f} s is at the series' cell timeout ({cap:,.0f} s): a run stopped there, not a time"
    return ""


def from_rows(rows: list[Row], repository: str, commit: str, family: str) -> PublishedBuild:
    """The record of one published table (the newest `Modified` date is the build's). A name the table lists twice
    is no run time (which of its rows is the build's is not known: said, with both); a name that is not one
    printable line is refused under its escaped form (the record's readers take printable names only)."""
    from jaxci.util.quoting import line

    dates = sorted(r.modified[:10] for r in rows if r.modified[:4].isdigit())
    seen: dict[str, list[Row]] = {}
    for r in rows:
        seen.setdefault(r.document, []).append(r)
    seconds, refused = {}, {}
    for name, mine in seen.items():
        shown = line(name, 200)
        if shown != name or not name.isprintable():
            refused[shown] = "the name is not one printable line"
        elif len(mine) > 1:
            refused[name] = (f"listed {len(mine)} times in the table (" + ", ".join(
                f"{r.seconds:,.0f} s {r.status}" if r.seconds is not None else r.status for r in mine)
                + "): not one run time")
        elif mine[0].refused:
            refused[name] = mine[0].refused
        else:
            seconds[name] = mine[0].seconds
    return PublishedBuild(repository, commit, dates[-1] if dates else "unknown", family, seconds, refused)


def read(path: str | Path) -> PublishedBuild:
    """The record at `path`; PublishedError (one line) for anything but this format's current version."""
    from jaxci.util import versioned

    doc = versioned.load(path, FORMAT, VERSION, LIMIT, PublishedError, f"write it again with `{REWRITE}`", "record")
    return _checked(path, doc)


def _checked(path, doc: dict) -> PublishedBuild:
    texts = {k: doc.get(k) for k in ("repository", "commit", "executed", "family")}
    bad = [k for k, v in texts.items() if not isinstance(v, str) or not v or not v.isprintable()]
    fields = {k: v for k, v in texts.items() if isinstance(v, str)}
    seconds, refused = doc.get("seconds"), doc.get("refused")
    if bad:
        raise PublishedError(f"{path}: field {bad[0]!r} is not one printable line")
    if not isinstance(seconds, dict) or not all(_is_seconds(v) for v in seconds.values()):
        raise PublishedError(f"{path}: 'seconds' is not a mapping of lecture names to run times (0 to 5 days)")
    if not isinstance(refused, dict) or not all(isinstance(v, str) for v in refused.values()):
        raise PublishedError(f"{path}: 'refused' is not a mapping of lecture names to reasons")
    if not all(isinstance(k, str) and k.isprintable() for k in [*seconds, *refused]):
        raise PublishedError(f"{path}: a lecture name is not one printable line")
    return PublishedBuild(**fields, seconds={k: float(v) for k, v in seconds.items()}, refused=dict(refused))


#: a lecture's longest run time: a job's (util.bounds)
MOST_SECONDS = JOB_S


def _is_seconds(value) -> bool:
    """A lecture's run time: a number from 0 to MOST_SECONDS; 1e308 would sum to inf in every reader."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) \
        and 0 <= value <= MOST_SECONDS


def beside(audit_json: str | Path) -> Path:
    """Where a committed audit's published build is kept: published.json in the audit's folder."""
    return Path(audit_json).parent / "published.json"
