"""An audit JSON read back from a file (`jaxci report --audit FILE`): checked once, here, with the rules the
command line applies to the same values, so the report, the decision sheets and the build-cost and memory
advice all receive a record whose fields have the types they read and whose seconds are finite, non-negative
and bounded (a string lecture would be an AttributeError, a cpu_s of -1e6 would print "≈ -16666.7 min").

The record keeps the shape `jaxci audit --format json` writes (jaxci.audit.writing.render.to_json); the fields that
nothing reads back pass through as they are. Pure Python apart from the one read through safeio.

The format is versioned: every writer writes through `dumps` ("format": FORMAT, "version": VERSION, strict JSON,
every value of a JSON type: nothing turned into text by `default=str`), and `validated` refuses another format or
version with the command that writes the current one. An audit with neither field was written before the version
existed (issue 72) in version 1's shape, and is read as version 1 (the committed audits carry the field).

Version 2 records as fields what version 1 left in its sentences: a lecture's `selected` (False: left out by
`--only`) and `timeout_kind` (whose per-cell timeout applies: jaxci.policy.timeouts' NOTEBOOK_TIMEOUT or
BOOK_TIMEOUT). A version-1 audit is upgraded here, once, on reading (`_upgraded_v1`): nothing else reads the
version-1 sentences, and every writer writes version 2.
"""

from __future__ import annotations

import json

from jaxci.analysis.lecture_record import AuditView, LectureRecordError
from jaxci.analysis.prediction import SECONDS as PREDICTED_SECONDS
from jaxci.analysis.prediction import TEXTS as PREDICTED_TEXTS
from jaxci.audit.reading import runrecord
from jaxci.policy.timeouts import BOOK_TIMEOUT, NOTEBOOK_TIMEOUT
from jaxci.util import safeio
from jaxci.util.validate import InputError, one_line

#: the largest audit read (an executed audit of a few hundred lectures is well under 10 MiB)
LIMIT = 64 * 1024 * 1024
MAX_LECTURES = 100_000
FORMAT, VERSION = "jaxci-audit", 2
#: the versions read (an older one is upgraded to VERSION on reading)
READ = (1, 2)
#: writes an audit of the current version
RERUN = "jaxci audit REPO --execute --format json"


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


def stamped(doc: dict) -> dict:
    """`doc` with its format and version first (the rest in its own order)."""
    return {"format": FORMAT, "version": VERSION, **{k: v for k, v in doc.items() if k not in ("format", "version")}}


def dumps(doc: dict, indent: int = 2) -> str:
    """The audit JSON as every writer writes it: stamped, strict JSON (a NaN or infinity is a ValueError), and a
    value that is no JSON type (a path, a set) a TypeError here, never its str() written silently."""
    return json.dumps(stamped(doc), indent=indent, allow_nan=False)


def _version(data: dict) -> int:
    """The audit's version; refuse another format or version (neither field: before versioning, version 1)."""
    found = (data.get("format"), data.get("version"))
    if found == (None, None):
        return 1
    if found[0] != FORMAT or found[1] not in READ or isinstance(found[1], bool):
        raise AuditError(f"format {found[0]!r} version {found[1]!r}: this jaxci reads {FORMAT} versions "
                         f"{', '.join(map(str, READ))}: run the audit again with `{RERUN}`")
    return found[1]


#: what version 1 wrote in place of version 2's fields, each one whole sentence of its own writer (compared whole,
#: never searched): the reason of a lecture `--only` left out (jaxci.commands.audit_shard), and the origin of a
#: notebook's own timeout (jaxci.audit.judging.judge.Verdict)
V1_NOT_SELECTED = "not selected for execution (--only): static verdict stands"
V1_NOTEBOOK_ORIGIN = "notebook metadata"


def _upgraded_v1(lec: dict) -> dict:
    """A version-1 lecture record with version 2's fields: `selected` and `timeout_kind` (the upgrade step)."""
    origin = lec.get("timeout_origin")
    kind = None if not origin else NOTEBOOK_TIMEOUT if origin == V1_NOTEBOOK_ORIGIN else BOOK_TIMEOUT
    return {**lec, "selected": lec.get("not_executed") != V1_NOT_SELECTED, "timeout_kind": kind}


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
    version = _version(data)
    if len(data["lectures"]) > MAX_LECTURES:
        raise AuditError(f"lectures: {len(data['lectures']):,} records, at most {MAX_LECTURES:,}")
    lectures = data["lectures"]
    if version == 1:
        lectures = [_upgraded_v1(runrecord.mapping(f"lectures[{i}]", lec)) for i, lec in enumerate(lectures)]
    out = {**data, "lectures": [_lecture(f"lectures[{i}]", lec) for i, lec in enumerate(lectures)]}
    if "families" in data:
        out["families"] = _texts("families", data["families"])
    try:  # the typed view the policy reads (jaxci.analysis.lecture_record): refused here, once, if it cannot be read
        AuditView.from_dict(out)
    except LectureRecordError as exc:
        raise AuditError(str(exc)) from None
    return stamped({**out, **_checked_top(data)})


def _checked_top(data: dict) -> dict:
    """The audit-wide fields the reports read (a committed audit's `published` facts, its pin list, the CI audit's
    install lines), each the type its reader expects (a list `published` would be an AttributeError deep in the
    maintainers' report)."""
    out: dict = {}
    if data.get("published") is not None:
        published = runrecord.mapping("published", data["published"])
        out["published"] = {runrecord.text("published key", k): runrecord.text(f"published.{k}", v)
                            for k, v in published.items()}
    if data.get("pin_to_cpu") is not None:
        out["pin_to_cpu"] = _texts("pin_to_cpu", data["pin_to_cpu"])
    if data.get("ci") is not None:
        ci = runrecord.mapping("ci", data["ci"])
        if ci.get("installs") is not None:
            ci = {**ci, "installs": [_install(f"ci.installs[{i}]", x) for i, x in
                                     enumerate(runrecord.sequence("ci.installs", ci["installs"]))]}
        out["ci"] = ci
    if data.get("execution") is not None:
        out["execution"] = _execution(data["execution"])
    return out


def _execution(value) -> dict:
    """Which runs an audit made and reused (`--baseline` reads its keys): {keys: {path: {platform: key}},
    reused: [text]}."""
    value = runrecord.mapping("execution", value)
    keys = runrecord.mapping("execution.keys", value.get("keys") or {})
    return {**value, "keys": {runrecord.text("execution.keys key", path): {
        runrecord.text(f"execution.keys[{path!r}] key", platform): runrecord.text(f"execution.keys[{path!r}]"
                                                                                 f"[{platform!r}]", key)
        for platform, key in runrecord.mapping(f"execution.keys[{path!r}]", runs).items()}
        for path, runs in keys.items()}, "reused": _texts("execution.reused", value.get("reused") or [])}


def _install(where: str, value) -> dict:
    """One install line of the CI audit: name, version (None when unpinned) and where, text each."""
    value = runrecord.mapping(where, value)
    return {**value, **{k: runrecord.text(f"{where}.{k}", value[k]) for k in ("name", "version", "where", "entry")
                        if value.get(k) is not None}}


def _texts(where: str, value) -> list[str]:
    """A list of one-line strings."""
    return [runrecord.text(f"{where}[{i}]", x) for i, x in enumerate(runrecord.sequence(where, value))]


def _message(where: str, value) -> str:
    """Text a writer quotes (an error, why a lecture was not run): a string of at most 4,000 characters, any
    characters (every Markdown writer escapes it: jaxci.util.quoting)."""
    if not isinstance(value, str) or len(value) > 4000:
        raise AuditError(f"{where}: expected a string of at most 4,000 characters, got {runrecord.kind(value)}")
    return value


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
    for key in ("status", "recommendation", "family"):
        if lec.get(key) is not None:
            out[key] = runrecord.text(f"{where}.{key}", lec[key])
    if not isinstance(lec.get("selected", True), bool):
        raise AuditError(f"{where}.selected: expected true or false, got {runrecord.kind(lec['selected'])}")
    if lec.get("timeout_kind") not in (None, NOTEBOOK_TIMEOUT, BOOK_TIMEOUT):
        raise AuditError(f"{where}.timeout_kind: expected {NOTEBOOK_TIMEOUT!r}, {BOOK_TIMEOUT!r} or null, got "
                         f"{runrecord.kind(lec['timeout_kind'])}")
    if lec.get("not_executed") is not None:
        out["not_executed"] = _message(f"{where}.not_executed", lec["not_executed"])
    if lec.get("errors") is not None:
        errors = runrecord.sequence(f"{where}.errors", lec["errors"])
        out["errors"] = [_message(f"{where}.errors[{i}]", e) for i, e in enumerate(errors)]
    if lec.get("scan") is not None:
        out["scan"] = runrecord.mapping(f"{where}.scan", lec["scan"])
    if lec.get("published") is not None:
        published = runrecord.mapping(f"{where}.published", lec["published"])
        out["published"] = {runrecord.text(f"{where}.published key", family):
                            _published(f"{where}.published[{family!r}]", p) for family, p in published.items()}
    if lec.get("runs") is not None:
        out["runs"] = {runrecord.text(f"{where}.runs key", platform): runrecord.run(f"{where}.runs[{platform!r}]", run)
                       for platform, run in runrecord.mapping(f"{where}.runs", lec["runs"]).items()}
    return out


def _published(where: str, value) -> dict:
    """A family's own published run time of the lecture: its seconds (finite, at most 5 days) and source."""
    value = runrecord.mapping(where, value)
    out = {**value, "seconds": runrecord.seconds(f"{where}.seconds", value.get("seconds"), runrecord.LECTURE_S)}
    if value.get("source") is not None:
        out["source"] = runrecord.text(f"{where}.source", value["source"])
    return out


def _prediction(where: str, pred) -> dict:
    """A lecture's prediction on one family (jaxci.analysis.prediction.LecturePrediction's JSON form): its seconds
    and band ends finite and bounded, its basis and label one-line text; read by the policy through the record."""
    pred = runrecord.mapping(where, pred)
    out = {**pred, **{k: runrecord.seconds(f"{where}.{k}", pred[k], runrecord.LECTURE_S, "seconds")
                      for k in PREDICTED_SECONDS if k in pred}}
    for key in PREDICTED_TEXTS:
        if key in pred:
            out[key] = runrecord.text(f"{where}.{key}", pred[key], limit=4000)
    return out
