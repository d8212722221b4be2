"""Question 6 from lecture builds: build minutes and dollars per family from an audit JSON with
per-lecture predictions (a hand-written fixture in the audit's schema), and question 7's policy from its cells."""

import json

import pytest

from jaxci import REPO_ROOT
from jaxci.analysis.lecture_record import AuditView
from jaxci.catalogue import catalogue_defaults, load_catalogue
from jaxci.policy import builds as buildcost
from jaxci.report import decisions
from jaxci.report.build import build
from tests import synth
from tests.frozen import RESULTS as FROZEN_RESULTS

AUDIT = json.loads((REPO_ROOT / "tests" / "fixtures" / "report" / "audit_predicted.json").read_text())
VIEW = AuditView.from_dict(AUDIT)


def _usd(seconds, family):
    cat, defaults = load_catalogue(), catalogue_defaults()
    billed = max(seconds + defaults["job_overhead_minutes"].value * 60, defaults["billing_minimum_seconds"].value)
    return billed * cat[family].value("price_per_hour") / 3600


def test_family_builds_from_the_predictions():
    gpu = buildcost.family_build(VIEW, "g4dn.2xlarge", True)
    # each lecture on its faster device: vfi gpu 30, kalman cpu 60 (its GPU is slower), wealth gpu 20
    assert (gpu.seconds, gpu.low, gpu.high, gpu.lectures, gpu.on_gpu) == (110, 95, 130, 3, 2)
    assert gpu.missing == ["lectures/unpredicted.md"]
    cpu = buildcost.family_build(VIEW, "c7i.2xlarge", False)
    assert (cpu.seconds, cpu.low, cpu.high, cpu.on_gpu) == (150, 140, 165, 0)
    assert buildcost.family_build(VIEW, "g5.2xlarge", True) is None


def test_split_fleet_sends_only_gpu_faster_lectures_to_the_gpu():
    cat = load_catalogue()
    split = buildcost.split_build(VIEW, "g4dn.2xlarge", "c7i.2xlarge", cat)
    # vfi: GPU 30 < c7i 90 -> GPU; kalman: g4dn's CPU is its faster device -> c7i 45; wealth: GPU 20 > c7i 15 -> c7i
    assert (split.gpu.seconds, split.gpu.lectures, split.cpu.seconds, split.cpu.lectures) == (30, 1, 60, 2)
    assert split.wall_s == 60
    assert split.dollars == pytest.approx(_usd(30, "g4dn.2xlarge") + _usd(60, "c7i.2xlarge"))
    assert buildcost.partner(VIEW, cat, "g4dn.2xlarge") == "c7i.2xlarge"


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    return build(synth.gpu_set(tmp_path_factory.mktemp("synth")), families=["g4dn.2xlarge", "c7i.2xlarge"],
                 audit=AUDIT)


def test_row_6_and_7_read_the_audit(report):
    g4dn, c7i = decisions.sheets(report, report.families, report.audit)
    cost = g4dn.rows[5]
    assert cost.status == "predicted" and "one build of 3 lectures, 2 on its GPU ≈ 1.8 min (1.6-2.2)" in cost.decision
    assert f"≈ ${_usd(110, 'g4dn.2xlarge'):.2f}" in cost.decision and "c7i.2xlarge alone ≈ 2.5 min" in cost.decision
    assert "split (1 GPU-faster lecture(s) on g4dn.2xlarge, 2 on c7i.2xlarge" in cost.decision
    assert "1 lecture(s) without a prediction" in cost.basis
    assert c7i.rows[5].status == "predicted" and "one build of 3 lectures ≈ 2.5 min" in c7i.rows[5].decision
    # row 7 by policy.timeouts: every lecture timed, so the book-wide value follows the rule: kalman (on the CPU,
    # high end 60 s) x its slowest-cell share 40/50 = 48 s -> 3 x 48 s, rounded up to a minute = 180 s
    hygiene = g4dn.rows[6]
    assert "book-wide `timeout: 180` s (every lecture timed" in hygiene.decision
    # unpredicted.md has no prediction: the build is not predicted whole, so the job keeps its own limit
    assert "job: keep its own `timeout-minutes` (1 lecture(s) without a prediction" in hygiene.decision


def test_row_6_sets_the_published_build_beside_the_predicted_one():
    """Where the audit's lectures carry the family's published run times (measure/published_builds.py
    --save-audit), row 6 sums them beside the predicted seconds of the same lectures; other families say nothing."""
    audit = json.loads(json.dumps(AUDIT))
    for lec, seconds in zip(audit["lectures"][:2], (60.0, 120.0)):
        lec["published"] = {"g4dn.2xlarge": {"seconds": seconds, "source": "snap@abc status.ipynb"}}
    whole = buildcost.family_build(AuditView.from_dict(audit), "g4dn.2xlarge", True)
    assert (whole.published.seconds, whole.published.lectures) == (180.0, 2)
    assert whole.published.predicted == 30 + 60   # vfi on its GPU, kalman on its CPU: as placed in the build
    assert buildcost.family_build(AuditView.from_dict(audit), "c7i.2xlarge", False).published is None
    report = build(FROZEN_RESULTS, incidents=None, families=["g4dn.2xlarge"], audit=audit)
    (sheet,) = decisions.sheets(report, report.families, audit)
    assert ("published on g4dn.2xlarge: 3.0 min for 2 of these lectures (predicted 1.5 min for the same, x0.50; "
            "snap@abc status.ipynb)") in sheet.rows[5].decision


def test_row_7_job_timeout_from_the_whole_predicted_build():
    audit = {"lectures": [lec for lec in AUDIT["lectures"] if lec["path"] != "lectures/unpredicted.md"]}
    report = build(FROZEN_RESULTS, incidents=None, families=["g4dn.2xlarge", "c7i.2xlarge"], audit=audit)
    g4dn, c7i = decisions.sheets(report, report.families, audit)
    # jobcost's rule on the build's high end: g4dn vfi gpu 45 + kalman cpu 60 + wealth gpu 25 = 130 s:
    # ceil((6 + 130 / 60) x 1.5) = 13; c7i 100 + 45 + 20 = 165 s: ceil((6 + 2.75) x 1.5) = 14
    assert "job `timeout-minutes: 13`" in g4dn.rows[6].decision
    assert "job `timeout-minutes: 14`" in c7i.rows[6].decision


def test_without_predictions_row_6_says_how_to_measure(report):
    plain = build(report.results_dir, families=["g5.2xlarge"], audit={"lectures": [{"path": "x.md"}]})
    (sheet,) = decisions.sheets(plain, plain.families, plain.audit)
    row = sheet.rows[5]
    assert row.status == "not measured"
    assert "jaxci audit LECTURE_REPO --execute --machine g5.2xlarge --format json" in row.basis


@pytest.mark.slow
def test_rows_6_and_7_from_a_real_executed_audit(small_lectures_executed):
    """End to end: `jaxci audit --execute --machine g4dn.2xlarge --format json` on fixture lectures (the session's
    one execution of them), then `jaxci report --audit`: the audit's predicted records are what question 6 adds up,
    its measured cells what question 7 sizes (the two commands agree on the schema)."""
    audit = small_lectures_executed
    assert audit.returncode == 0, audit.stderr[-3000:]
    data = json.loads(audit.json_path.read_text())
    executed = [lec for lec in data["lectures"] if (lec.get("predicted") or {}).get("g4dn.2xlarge")]
    assert executed and all("colab-free-t4" in lec["predicted"] for lec in executed)
    one = buildcost.family_build(AuditView.from_dict(data), "g4dn.2xlarge", True)
    assert one.lectures == len(executed) and one.low <= one.seconds <= one.high
    report = build(FROZEN_RESULTS, incidents=None, families=["g4dn.2xlarge"], audit=data)
    (sheet,) = decisions.sheets(report, ["g4dn.2xlarge"], audit=data)
    row6, row7 = sheet.rows[5], sheet.rows[6]
    assert row6.status == decisions.PREDICTED and f"one build of {len(executed)} lectures" in row6.decision
    assert row7.status == decisions.PREDICTED and "at the high end of the lecture's predicted band" in row7.basis
