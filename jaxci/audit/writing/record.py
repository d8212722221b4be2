"""An audit JSON read back from a file (`jaxci report --audit FILE`): checked once, here, with the rules the
command line applies to the same values, so the report, the decision sheets and the build-cost and memory
advice all receive a record whose fields have the types they read and whose seconds are finite, non-negative
and bounded (a string lecture would be an AttributeError, a cpu_s of -1e6 would print "≈ -16666.7 min").

The record keeps the shape `jaxci audit --format json` writes (jaxci.audit.writing.render.to_json); the fields that
nothing reads back pass through as they are. Pure Python apart from the one read through safeio.
"""

from __future__ import annotations

import math

from jaxci.util import safeio
from jaxci.util.validate import InputError, number, one_line, quoted

#: the largest audit read (an executed audit of a few hundred lectures is well under 10 MiB)
LIMIT = 64 * 1024 * 1024
MAX_LECTURES = 100_000
#: a cell's seconds: at most a day, the bound of --slowest-cell-s and --cell-timeout
CELL_S = 86_400
#: a whole lecture's seconds: at most 5 days, the longest a self-hosted runner's job may run
LECTURE_S = 5 * 86_400
#: memory in MiB: at most 4 TiB, the bound of jaxci env's --device-memory-mib and --peak-mib
MEMORY_MIB = 4 * 1024 * 1024
PREDICTED_SECONDS = ("cpu_s", "cpu_low_s", "cpu_high_s", "gpu_s", "gpu_low_s", "gpu_high_s")
PEAK_MIB = ("device_peak_mib", "live_buffers_mib", "host_rss_peak_mib")


class AuditError(InputError):
    """The audit file was refused; the message names the field (e.g. lectures[2].predicted['g4dn.2xlarge']
    .cpu_s) and why, in one line."""


def read(path) -> dict:
    """The audit JSON at `path`, read through safeio and validated (AuditError for an unreadable or bad one)."""
    try:
        data = safeio.load_json(path, LIMIT)
    except (OSError, ValueError) as exc:
        raise AuditError(f"cannot read the audit JSON: {one_line(exc)}") from None
    return validated(data)


def validated(data) -> dict:
    """The audit document with every field a consumer reads checked: types, one-line strings, finite
    non-negative bounded numbers (None where the audit did not measure one)."""
    if not isinstance(data, dict) or not isinstance(data.get("lectures"), list):
        raise AuditError("not an audit JSON (`jaxci audit --execute --format json`): expected an object "
                         "with a list of lectures")
    if len(data["lectures"]) > MAX_LECTURES:
        raise AuditError(f"lectures: {len(data['lectures']):,} records, at most {MAX_LECTURES:,}")
    out = {**data, "lectures": [_lecture(f"lectures[{i}]", lec) for i, lec in enumerate(data["lectures"])]}
    if "families" in data:
        out["families"] = [_text(f"families[{i}]", f) for i, f in enumerate(_list("families", data["families"]))]
    return out


def _lecture(where: str, lec) -> dict:
    lec = _dict(where, lec)
    out = {**lec, "path": _text(f"{where}.path", lec.get("path", "?"))}
    if lec.get("predicted") is not None:
        out["predicted"] = {_text(f"{where}.predicted key", family): _prediction(f"{where}.predicted[{family!r}]", p)
                            for family, p in _dict(f"{where}.predicted", lec["predicted"]).items()}
    if lec.get("runs") is not None:
        out["runs"] = {_text(f"{where}.runs key", platform): _run(f"{where}.runs[{platform!r}]", run)
                       for platform, run in _dict(f"{where}.runs", lec["runs"]).items()}
    return out


def _prediction(where: str, pred) -> dict:
    pred = _dict(where, pred)
    out = {**pred, **{k: _number(f"{where}.{k}", pred[k], LECTURE_S, "seconds")
                      for k in PREDICTED_SECONDS if k in pred}}
    for key in ("basis", "label"):
        if key in pred:
            out[key] = _text(f"{where}.{key}", pred[key], limit=4000)
    return out


def _run(where: str, run) -> dict:
    run = _dict(where, run)
    out = dict(run)
    if "wall_s" in run:
        out["wall_s"] = _number(f"{where}.wall_s", run["wall_s"], LECTURE_S, "seconds")
    if "status" in run:
        out["status"] = _text(f"{where}.status", run["status"])
    if "cells" in run:
        out["cells"] = [_cell(f"{where}.cells[{i}]", c) for i, c in enumerate(_list(f"{where}.cells", run["cells"]))]
    if run.get("peak_memory") is not None:
        peak = _dict(f"{where}.peak_memory", run["peak_memory"])
        out["peak_memory"] = {**peak, **{k: _number(f"{where}.peak_memory.{k}", peak[k], MEMORY_MIB, "MiB")
                                         for k in PEAK_MIB if k in peak}}
    return out


def _cell(where: str, cell) -> dict:
    cell = _dict(where, cell)
    return {**cell, "wall_s": _number(f"{where}.wall_s", cell["wall_s"], CELL_S, "seconds")} if "wall_s" in cell \
        else cell


# ---- one rule per kind of value ----

def _dict(where: str, value) -> dict:
    if not isinstance(value, dict):
        raise AuditError(f"{where}: expected an object, got {_kind(value)}")
    return value


def _list(where: str, value) -> list:
    if not isinstance(value, list):
        raise AuditError(f"{where}: expected a list, got {_kind(value)}")
    return value


def _text(where: str, value, limit: int = 1000) -> str:
    """A string of one line (it is printed in the sheets' tables and messages), at most `limit` characters."""
    if not isinstance(value, str):
        raise AuditError(f"{where}: expected a string, got {_kind(value)}")
    if any(ord(c) < 32 or ord(c) == 127 for c in value) or len(value) > limit:
        raise AuditError(f"{where}: {quoted(value, 80)}: must be one line of at most {limit:,} characters")
    return value


def _number(where: str, value, high: float, unit: str) -> float | None:
    """A finite number in [0, high] (validate.number, as the command line checks seconds); None where the
    audit did not measure it; a bool or a string is refused, not read as 1 or parsed."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise AuditError(f"{where}: expected a number, got {_kind(value)}")
    if isinstance(value, int) and not -high <= value <= high:  # a 400-digit integer: no float() overflow
        value = math.copysign(math.inf, value)
    try:
        return number(where, value, low=0, high=high, unit=unit, low_inclusive=True)
    except InputError as exc:
        raise AuditError(str(exc)) from None


def _kind(value) -> str:
    return f"{type(value).__name__} {quoted(value, 40)}" if isinstance(value, str) else \
        f"{type(value).__name__} {one_line(value, 40)}"
