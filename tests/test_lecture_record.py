"""An audit's lectures as the policy reads them (jaxci.analysis.lecture_record): the view reads both committed
audits whole, field for field, is read-only, and refuses a malformed lecture entry in one line that names the
lecture and the field; the audit's reader refuses the same entry with the same words."""

import copy
import dataclasses
import json

import pytest

from jaxci import REPO_ROOT
from jaxci.analysis.lecture_record import AuditView, LectureRecord, LectureRecordError
from jaxci.analysis.prediction import LecturePrediction
from jaxci.audit.writing import record

COMMITTED = sorted((REPO_ROOT / "audits").glob("*/audit.json"))


@pytest.mark.parametrize("path", COMMITTED, ids=lambda p: p.parent.name)
def test_the_view_reads_a_committed_audit_whole(path):
    audit = record.read(path)
    view = AuditView.from_dict(audit)
    assert [lec.path for lec in view.lectures] == [lec["path"] for lec in audit["lectures"]]
    for lec, raw in zip(view.lectures, audit["lectures"]):
        assert (lec.status, lec.recommendation, lec.family, lec.timeout_kind) == \
            (raw.get("status"), raw.get("recommendation"), raw.get("family"), raw.get("timeout_kind"))
        assert lec.timeout == raw.get("timeout") and lec.shows_gpu == bool(raw.get("shows_gpu"))
        assert lec.predictions == {f: LecturePrediction.from_dict(p) for f, p in (raw.get("predicted") or {}).items()}
        for platform, run in (raw.get("runs") or {}).items():
            assert (lec.runs[platform].wall_s, lec.runs[platform].status) == (run.get("wall_s"), run.get("status"))
            assert lec.runs[platform].cells_s == tuple(c["wall_s"] for c in run.get("cells") or []
                                                       if c.get("wall_s") is not None)
        assert (lec.selected, lec.not_executed, lec.errors) == \
            (raw.get("selected", True), raw.get("not_executed"), tuple(raw.get("errors") or ()))
        failure = raw.get("failure")
        assert lec.failure is None if failure is None else \
            (lec.failure.by, lec.failure.cause, lec.failure.error, lec.failure.cell) == \
            (failure["by"], failure["cause"], failure["error"], failure["cell"])
        scan = raw.get("scan") or {}
        assert lec.scan is None if not scan else \
            lec.scan.uses_jax == bool(scan.get("uses_jax") or scan.get("uses_numpyro"))
    assert view.families() == {f for raw in audit["lectures"] for f in raw.get("predicted") or {}}
    assert len(COMMITTED) == 2  # both committed audits are read here


def test_the_view_is_read_only():
    lec = LectureRecord.from_dict({"path": "a.md", "runs": {"cpu": {"wall_s": 3.0, "cells": [{"wall_s": 3.0}]}}})
    with pytest.raises(dataclasses.FrozenInstanceError):
        lec.path = "b.md"  # type: ignore[misc]
    with pytest.raises(TypeError):
        lec.runs["gpu"] = lec.runs["cpu"]  # type: ignore[index]
    assert lec.run_on("cuda") == lec.runs["cpu"] and LectureRecord.from_dict({}).run_on("cpu") is None


GOOD = {"path": "intro.md", "timeout": 600, "scan": {"uses_jax": True},
        "runs": {"cpu": {"wall_s": 3.0, "cells": [{"wall_s": 3.0}]}}}
#: (what is changed in the second lecture, the message): each names the lecture and the field, and why
MALFORMED = [
    ({"timeout": "600"}, "lectures[1] ('b.md').timeout: expected seconds (a finite number within 5 days), got str"),
    ({"timeout": float("nan")}, "lectures[1] ('b.md').timeout: expected seconds (a finite number within 5 days), "
                                "got nan"),
    ({"runs": {"cpu": {"wall_s": "3"}}}, "lectures[1] ('b.md').runs['cpu'].wall_s: expected seconds"),
    ({"runs": {"cpu": {"wall_s": 10 ** 7}}}, "lectures[1] ('b.md').runs['cpu'].wall_s: expected seconds (a finite "
                                             "number within 5 days), got 10000000"),
    ({"runs": {"cpu": {"cells": ["3"]}}}, "lectures[1] ('b.md').runs['cpu'].cells[0]: expected an object, got str"),
    ({"runs": [1]}, "lectures[1] ('b.md').runs: expected an object, got list"),
    ({"scan": {"uses_jax": "yes"}}, "lectures[1] ('b.md').scan.uses_jax: expected true or false, got str"),
    ({"shows_gpu": 1}, "lectures[1] ('b.md').shows_gpu: expected true or false, got int"),
    ({"why": ["x"]}, "lectures[1] ('b.md').why: expected text, got list"),
    ({"predicted": {"g4dn.2xlarge": [1.0]}}, "lectures[1] ('b.md').predicted['g4dn.2xlarge']: expected an object, "
                                             "got list"),
    ({"published": {"g4dn.2xlarge": {"seconds": True}}}, "lectures[1] ('b.md').published['g4dn.2xlarge'].seconds: "
                                                         "expected seconds"),
    ({"runs": {"cpu": {"peak_memory": {"host_rss_peak_mib": "big"}}}},
     "lectures[1] ('b.md').runs['cpu'].peak_memory.host_rss_peak_mib: expected MiB (a finite number), got str"),
    ({"errors": "boom"}, "lectures[1] ('b.md').errors: expected a list of text, got str"),
    ({"selected": "no"}, "lectures[1] ('b.md').selected: expected true or false, got str"),
    ({"path": 7}, "lectures[1].path: expected text, got int"),
]


@pytest.mark.parametrize("change,message", MALFORMED, ids=[m.split(": ")[0] for _, m in MALFORMED])
def test_a_malformed_lecture_is_refused_in_one_line_naming_it_and_the_field(change, message):
    audit = {"lectures": [GOOD, {**copy.deepcopy(GOOD), "path": "b.md", **change}]}
    with pytest.raises(LectureRecordError) as err:
        AuditView.from_dict(audit)
    assert str(err.value).startswith(message) and "\n" not in str(err.value)
    assert AuditView.from_dict({"lectures": [GOOD]}).lectures[0].timeout == 600.0


def test_the_audit_reader_refuses_what_the_view_cannot_read(tmp_path):
    """`jaxci report --audit FILE` reads through record.read: the same entry is an AuditError, the same words."""
    path = tmp_path / "audit.json"
    path.write_text(json.dumps({"lectures": [{**GOOD, "timeout": "600"}]}))
    with pytest.raises(record.AuditError, match=r"^lectures\[0\] \('intro.md'\)\.timeout: expected seconds"):
        record.read(path)
    with pytest.raises(LectureRecordError, match=r"^lectures: expected a list, got dict"):
        AuditView.from_dict({"lectures": {}})
    assert AuditView.from_dict({}) == AuditView()
