"""The timeout rule: no advice lowers a repository's timeout without a measurement of the
lecture it would cut; a timed lecture gets its own `execution: timeout:` at 3x its slowest cell at the high end
of its band on the family; the job's timeout-minutes comes from the same predicted build.

The fixture repository (tests/fixtures/timeout_book) says 2,400 s per cell in its book config and has one
lecture, nuts.md, predicted at 900 s on the g4dn CPU (band 750 .. 1,000 s); intro.md is never timed."""

import copy
import json

import pytest

from jaxci import REPO_ROOT
from jaxci.analysis.lecture_record import AuditView, LectureRecord
from jaxci.catalogue import catalogue_defaults
from jaxci.policy import timeouts
from jaxci.report import decisions
from jaxci.report.build import build
from tests.frozen import RESULTS as FROZEN_RESULTS
from tests.suiteutil import python

BOOK = REPO_ROOT / "tests" / "fixtures" / "timeout_book"
FAMILY = "g4dn.2xlarge"
#: the executed run on the audit's machine (one slow cell of 540 s in a 600 s lecture) and the runner model's
#: prediction for the family (hand-written in the audit's schema: nothing here is a timing of this machine)
NUTS_RUN = {"cpu": {"status": "ok", "wall_s": 600.0, "cells": [{"wall_s": 540.0}, {"wall_s": 60.0}]}}
NUTS_PRED = {FAMILY: {"cpu_s": 900.0, "cpu_low_s": 750.0, "cpu_high_s": 1000.0,
                      "gpu_s": 6000.0, "gpu_low_s": 5000.0, "gpu_high_s": 6500.0, "basis": "fixture"}}
INTRO_PRED = {FAMILY: {"cpu_s": 5.0, "cpu_high_s": 6.0, "gpu_s": 8.0, "gpu_high_s": 9.0, "basis": "fixture"}}


@pytest.fixture(scope="module")
def static_audit():
    """The static audit of the fixture (`jaxci audit BOOK --format json`): each lecture's timeout from the book."""
    proc = python("-m", "jaxci", "audit", str(BOOK), "--format", "json", "--no-ci", "--no-progress",
                  cwd=REPO_ROOT)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout)


def _view(static, *, intro_timed: bool) -> AuditView:
    return AuditView.from_dict(_audit(static, intro_timed=intro_timed))


def _audit(static, *, intro_timed: bool) -> dict:
    audit = copy.deepcopy(static)
    for lec in audit["lectures"]:
        if lec["path"].endswith("nuts.md"):
            lec["runs"], lec["predicted"] = NUTS_RUN, NUTS_PRED
        elif intro_timed:
            lec["runs"] = {"cpu": {"status": "ok", "wall_s": 4.0, "cells": [{"wall_s": 4.0}]}}
            lec["predicted"] = INTRO_PRED
    return audit


def test_the_book_config_is_read_as_the_repository_value(static_audit):
    assert timeouts.book_value(AuditView.from_dict(static_audit)) == (2400.0, "_config.yml execute.timeout")


def test_one_lecture_timed_gets_its_own_timeout_and_the_book_keeps_2400(static_audit):
    advice = timeouts.from_audit(_view(static_audit, intro_timed=False), FAMILY, True, catalogue_defaults())
    nuts, = advice.lectures
    # the slowest cell's share (540 / 600) of the lecture's high end (1,000 s) = 900 s; 3 x 900 s = 2,700 s
    assert nuts.slowest_high_s == pytest.approx(900.0) and nuts.seconds == 2700
    assert advice.raised == [nuts]                      # above the 2,400 s it has today
    assert advice.book_s == 2400 and not advice.lowered  # intro.md is not timed: the book is not cut
    assert advice.unmeasured == ["lectures/intro.md"]
    assert advice.job_minutes is None and advice.job_missing == ["lectures/intro.md"]


def test_every_lecture_timed_sizes_the_job_from_the_same_build(static_audit):
    advice = timeouts.from_audit(_view(static_audit, intro_timed=True), FAMILY, True, catalogue_defaults())
    assert {t.path: t.seconds for t in advice.lectures} == {"lectures/intro.md": 60, "lectures/nuts.md": 2700}
    assert advice.book_s == 2700 and not advice.lowered
    # the build's high end on g4dn: nuts on its CPU 1,000 s + intro on its CPU 6 s (its GPU is slower):
    # ceil((6 + 1,006 / 60) x 1.5) = 35 minutes
    assert advice.job_minutes == 35


def test_nothing_is_lowered_without_a_measurement():
    # never a built-in number: without a timed lecture the repository keeps its own, whatever it is
    for current in (2400.0, 30.0, None):
        advice = timeouts.advise(current, {"a.md": (None, current), "b.md": (None, current)})
        assert advice.book_s == current and not advice.lectures and not advice.lowered
    # a timed lecture that needs less than the book does not pull the book down while another is untimed
    advice = timeouts.advise(2400.0, {"fast.md": (10.0, 2400.0), "untimed.md": (None, 2400.0)})
    assert advice.book_s == 2400.0 and not advice.lowered and advice.raised == []


def test_the_sheet_row_7_shows_it(static_audit):
    report = build(FROZEN_RESULTS, incidents=None, families=[FAMILY])
    one = _audit(static_audit, intro_timed=False)
    row = decisions.sheet(report, FAMILY, one).rows[6]
    assert "`lectures/nuts.md`: `execution: timeout: 2700` in its front matter" in row.decision
    assert "keep the repository's own `2400` s (_config.yml execute.timeout)" in row.decision
    assert "job: keep its own `timeout-minutes`" in row.decision and "never cut: `lectures/intro.md`" in row.basis
    assert "600" not in row.decision  # no built-in per-cell default
    both = _audit(static_audit, intro_timed=True)
    row = decisions.sheet(report, FAMILY, both).rows[6]
    assert "book-wide `timeout: 2700` s" in row.decision and "job `timeout-minutes: 35`" in row.decision
    untimed = decisions.sheet(report, FAMILY, static_audit).rows[6]
    assert untimed.status == decisions.NOT_MEASURED and "keep the repository's own `2400` s" in untimed.decision


def test_without_an_audit_row_7_names_no_number():
    report = build(FROZEN_RESULTS, incidents=None, families=[FAMILY])
    row = decisions.sheet(report, FAMILY).rows[6]
    assert row.status == decisions.NOT_MEASURED and "keep the repository's own value" in row.decision
    assert "timeout: 600" not in row.decision and "timeout-minutes: 90" not in row.decision


@pytest.mark.parametrize("cpu_s", [True, "12", float("nan")])
def test_a_prediction_without_a_number_is_not_priced_nor_timed(cpu_s):
    """One rule reads an audit's figures for the build's price and its timeouts: a boolean, text or NaN in
    `cpu_s` is no prediction for either."""
    from jaxci.policy import builds

    lecture = {"path": "a.md", "predicted": {FAMILY: {"cpu_s": cpu_s, "gpu_s": 2.0}}}
    assert builds.prediction(LectureRecord.from_dict(lecture), FAMILY) is None
    assert builds.family_build(AuditView.from_dict({"lectures": [lecture]}), FAMILY, True) is None  # no lecture priced
