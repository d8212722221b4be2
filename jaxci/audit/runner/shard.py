"""Which lectures one shard of a sharded executed audit runs (`jaxci audit --execute --shard i/N`).

Every shard process computes the same assignment from the same inputs, so N machines agree without talking to
each other: lectures are weighted (a previous audit's measured seconds where given, else a static weight from the
scan), sorted heaviest first with ties broken by path, and each goes to the shard with the least weight so far
(the lowest index on a tie): greedy longest-processing-time, deterministic and within 4/3 of the best split.
"""

from __future__ import annotations

import hashlib
import math
import re
from dataclasses import dataclass
from pathlib import Path

from jaxci.audit.reading.runrecord import LECTURE_S, MAX_SHARDS
from jaxci.util.validate import quoted

_SPEC = re.compile(r"[ ]*([0-9]{1,4})[ ]*/[ ]*([0-9]{1,4})[ ]*", re.ASCII)  # fullmatch: ASCII digits, one line


class ShardError(ValueError):
    """A bad --shard value or shard-times file: the message is one line."""


@dataclass(frozen=True)
class Spec:
    index: int  # 1-based
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def parse(text: str) -> Spec:
    """`i/N` with 1 <= i <= N <= 256 (1-based, as a matrix's `index + 1` reads)."""
    match = _SPEC.fullmatch(str(text))
    if not match:
        raise ShardError(f"--shard {quoted(text, 40)}: expected i/N in ASCII digits, e.g. 2/4")
    index, count = int(match[1]), int(match[2])
    if not 1 <= count <= MAX_SHARDS or not 1 <= index <= count:
        raise ShardError(f"--shard {quoted(text, 40)}: need 1 <= i <= N <= {MAX_SHARDS}")
    return Spec(index, count)


def static_weight(verdict) -> float:
    """A lecture's cost in rough seconds from its scan alone, for balancing only (not a prediction): a kernel's
    start, a little per cell, JAX's import and first compiles, numpyro's and NUTS's compile-heavy start, and
    the elements its loops and largest array touch. Lectures that will not run weigh nothing."""
    scan = verdict.scan
    if scan.status == "unreadable" or getattr(verdict, "excluded", False):
        return 0.0
    weight = 1.0 + 0.02 * scan.code_cells
    if scan.uses_jax or scan.uses_numpyro:
        weight += 2.0
    if scan.uses_numpyro:
        weight += 3.0
    weight += 10.0 * len(scan.nuts)
    for loop in scan.loops:
        weight += 1.0 if loop.trips is None else loop.trips * max(loop.carry or 1, 1) * 1e-8
    return weight + (scan.max_elements or 0) * 1e-8


def measured_weights(audit: dict) -> dict[str, float]:
    """Per lecture, the seconds a previous audit JSON measured (its runs' wall time, kernel start to shutdown,
    summed over platforms); lectures without a measured run are left out (they take their static weight)."""
    out: dict[str, float] = {}
    for lecture in audit.get("lectures", []) if isinstance(audit, dict) else []:
        if not isinstance(lecture, dict) or not isinstance(lecture.get("path"), str):
            continue
        runs = lecture.get("runs")
        walls = [r.get("wall_s") for r in runs.values() if isinstance(r, dict)] if isinstance(runs, dict) else []
        seconds = [float(s) for s in walls if isinstance(s, (int, float)) and s >= 0]
        if seconds:
            out[lecture["path"]] = sum(seconds)
    return out


def weights(verdicts, measured: dict[str, float] | None = None) -> dict[str, float]:
    """Each lecture's weight: measured where a previous audit has it, else static."""
    measured = measured or {}
    return {v.path: measured.get(v.path, static_weight(v)) for v in verdicts}


def assign(weight: dict[str, float], count: int) -> list[list[str]]:
    """The lectures of each shard (index 0 is shard 1/N), each list in path order."""
    shards: list[list[str]] = [[] for _ in range(count)]
    load = [0.0] * count
    for path in sorted(weight, key=lambda p: (-weight[p], p)):
        best = min(range(count), key=lambda i: (load[i], i))
        shards[best].append(path)
        load[best] += weight[path]
    return [sorted(s) for s in shards]


def loads(weight: dict[str, float], shards: list[list[str]]) -> list[float]:
    return [sum(weight[p] for p in s) for s in shards]


def source_digest(verdicts) -> str:
    """One hash over every lecture's path and file bytes: shards of different repositories, or of different
    commits of one, do not merge."""
    h = hashlib.sha256()
    for v in sorted(verdicts, key=lambda v: v.path):
        h.update(v.path.encode() + b"\0")
        try:
            h.update(hashlib.sha256(Path(v.path_abs).read_bytes()).digest() if v.path_abs else b"-")
        except OSError:
            h.update(b"unreadable")
    return h.hexdigest()[:16]


def execution_statistics(text: str) -> dict[str, float]:
    """Document -> seconds from jupyter-book's Execution Statistics page (the `status` page a build writes:
    Document | Modified | Method | Run Time (s) | Status), as Markdown or as the notebook holding it: a
    repository's own published build times balance its first sharded audit. Rows without a number, or not marked
    as completed (✅), are left out."""
    import json

    try:
        nb = json.loads(text)
    except (ValueError, RecursionError):  # Markdown (or JSON nested past Python's parser): read as text
        nb = None
    if isinstance(nb, dict):
        cells = nb.get("cells")
        cells = cells if isinstance(cells, list) else []
        text = "\n".join(_source(c) for c in cells if isinstance(c, dict))
    out: dict[str, float] = {}
    columns = None
    for line in text.splitlines():
        cells = [c.strip() for c in line.split("|")]  # a header may follow other text on its line: same columns
        if "Document" in cells and "Run Time (s)" in cells:
            columns = (cells.index("Document"), cells.index("Run Time (s)"), cells.index("Status")
                       if "Status" in cells else None)
            continue
        if columns is None or len(cells) <= max(c for c in columns if c is not None):
            continue
        doc, seconds, status = cells[columns[0]], cells[columns[1]], cells[columns[2]] if columns[2] else "✅"
        try:
            value = float(seconds) if seconds.isascii() else math.nan
        except ValueError:
            continue
        if doc and status == "✅" and math.isfinite(value) and 0 <= value <= LECTURE_S:  # 1e999 is no weight
            out[doc] = value
    return out


def _source(cell: dict) -> str:
    """A notebook cell's source as text (a list of strings, or a string); anything else is no text."""
    source = cell.get("source", "")
    if isinstance(source, list):
        return "".join(s for s in source if isinstance(s, str))
    return source if isinstance(source, str) else ""


def by_lecture(verdicts, seconds: dict[str, float]) -> dict[str, float]:
    """Published seconds keyed by document name matched to the lectures: the path without its suffix, else its
    file name alone when that is unambiguous."""
    names: dict[str, list[str]] = {}
    for v in verdicts:
        names.setdefault(Path(v.path).stem, []).append(v.path)
    out = {}
    for v in verdicts:
        stem = v.path.rsplit(".", 1)[0]
        if stem in seconds:
            out[v.path] = seconds[stem]
        elif Path(stem).name in seconds and len(names[Path(stem).name]) == 1:
            out[v.path] = seconds[Path(stem).name]
    return out
