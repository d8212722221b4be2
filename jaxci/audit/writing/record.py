"""An audit JSON read back from a file (`jaxci report --audit FILE`): checked once, here, with the rules the
command line applies to the same values, so the report, the decision sheets and the build-cost and memory
advice all receive a record whose fields have the types they read and whose seconds are finite, non-negative
and bounded (a string lecture would be an AttributeError, a cpu_s of -1e6 would print "≈ -16666.7 min").

The record keeps the shape `jaxci audit --format json` writes (jaxci.audit.writing.render.to_json); the fields that
nothing reads back pass through as they are. Pure Python apart from the one read through safeio.
"""

from __future__ import annotations

from jaxci.audit.reading import runrecord
from jaxci.util import safeio
from jaxci.util.validate import InputError, one_line

#: the largest audit read (an executed audit of a few hundred lectures is well under 10 MiB)
LIMIT = 64 * 1024 * 1024
MAX_LECTURES = 100_000
PREDICTED_SECONDS = ("cpu_s", "cpu_low_s", "cpu_high_s", "gpu_s", "gpu_low_s", "gpu_high_s")


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
    try:
        return _validated(data)
    except runrecord.RecordError as exc:
        raise AuditError(str(exc)) from None


def _validated(data) -> dict:
    if not isinstance(data, dict) or not isinstance(data.get("lectures"), list):
        raise AuditError("not an audit JSON (`jaxci audit --execute --format json`): expected an object "
                         "with a list of lectures")
    if len(data["lectures"]) > MAX_LECTURES:
        raise AuditError(f"lectures: {len(data['lectures']):,} records, at most {MAX_LECTURES:,}")
    out = {**data, "lectures": [_lecture(f"lectures[{i}]", lec) for i, lec in enumerate(data["lectures"])]}
    if "families" in data:
        families = runrecord.sequence("families", data["families"])
        out["families"] = [runrecord.text(f"families[{i}]", f) for i, f in enumerate(families)]
    return out


def _lecture(where: str, lec) -> dict:
    lec = runrecord.mapping(where, lec)
    out = {**lec, "path": runrecord.text(f"{where}.path", lec.get("path", "?"))}
    for key in ("proposed_timeout",):  # per-cell seconds a workflow would be given (`timeout` may be -1: none)
        if lec.get(key) is not None:
            out[key] = runrecord.seconds(f"{where}.{key}", lec[key], runrecord.CELL_S, "seconds")
    if lec.get("predicted") is not None:
        predicted = runrecord.mapping(f"{where}.predicted", lec["predicted"])
        out["predicted"] = {runrecord.text(f"{where}.predicted key", family):
                            _prediction(f"{where}.predicted[{family!r}]", p) for family, p in predicted.items()}
    if lec.get("runs") is not None:
        out["runs"] = {runrecord.text(f"{where}.runs key", platform): runrecord.run(f"{where}.runs[{platform!r}]", run)
                       for platform, run in runrecord.mapping(f"{where}.runs", lec["runs"]).items()}
    return out


def _prediction(where: str, pred) -> dict:
    pred = runrecord.mapping(where, pred)
    out = {**pred, **{k: runrecord.seconds(f"{where}.{k}", pred[k], runrecord.LECTURE_S, "seconds")
                      for k in PREDICTED_SECONDS if k in pred}}
    for key in ("basis", "label"):
        if key in pred:
            out[key] = runrecord.text(f"{where}.{key}", pred[key], limit=4000)
    return out
