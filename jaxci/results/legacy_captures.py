"""LEGACY, read once: the process starts of a capture summary committed before its record existed (issue 72).

Before issue 72 a capture's probed process starts were committed only as a Python dict printed into a line of its
summary for a person (results/<machine>/capture-<commit>-<time>.md), e.g.

    - process start (import JAX + one op): {'cpu': 1.31, 'gpu': 3.54}

This module is the only place that form is parsed, and `jaxci import --upgrade-summaries` its only caller: it
writes each such summary's record (jaxci.results.captures, the data every reader takes) once. Nothing else reads a
summary's prose. Delete this module when no summary without a record is left anywhere (the committed ones were
upgraded in issue 72).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from jaxci.results import captures
from jaxci.util import safeio, safewrite

START_LINE = re.compile(r"^- process start \(import JAX \+ one op\): (.*)$", re.M)
STARTED_LINE = re.compile(r"^- started (\S+Z),", re.M)
COMMIT_LINE = re.compile(r"^- commit ([0-9a-f]{7,40}) ", re.M)
SUMMARY_LIMIT = 4 * 1024 * 1024


class LegacyError(ValueError):
    """A summary whose record cannot be written: one line naming the file and the cause."""


def record(summary: Path) -> captures.CaptureRecord:
    """The record of one old summary: its machine (the folder), commit, start and probed process starts."""
    text = safeio.read_bytes(summary, SUMMARY_LIMIT, links=False).decode("utf-8")
    started, commit = STARTED_LINE.search(text), COMMIT_LINE.search(text)
    if not started or not commit:
        raise LegacyError(f"{summary}: no '- started' or '- commit' line: not a capture summary")
    found = START_LINE.search(text)
    try:
        value = ast.literal_eval(found.group(1).strip()) if found else None   # a literal only: never evaluated
        start_s = captures.starts(value, str(summary))
    except (ValueError, SyntaxError, MemoryError, RecursionError) as exc:
        raise LegacyError(f"{summary}: process start line unreadable ({str(exc)[:80]})") from None
    return captures.CaptureRecord(summary.parent.name, commit.group(1), started.group(1), summary.name, start_s)


def upgrade(results_dir: Path) -> list[Path]:
    """Write the record of every capture summary under `results_dir` that has none; the records written. Every
    summary is read before anything is written: one that cannot be read stops the upgrade, naming it."""
    todo = [p for p in sorted(Path(results_dir).glob("*/capture-*.md")) if not p.with_suffix(".toml").exists()]
    records = [(p.with_suffix(".toml"), record(p)) for p in todo]
    for path, rec in records:
        safewrite.write_text(path, captures.text(rec))
    return [path for path, _ in records]
