"""The decision sheet and the audit place each lecture by one rule (`pinning.placement`): the lectures the sheet
pins on a family are exactly the audit's pin list for that family, and both name the lecture's own CPU kernel."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from jaxci.analysis.lecture_record import AuditView
from jaxci.audit.writing.emit import KERNEL
from jaxci.report import actions, decisions
from jaxci.report.build import build
from tests.committed import committed

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "lectures"
FAMILY = "g4dn.2xlarge"


def _audit(folder: str, tmp_path) -> tuple[dict, str]:
    out, summary = tmp_path / "audit.json", tmp_path / "summary.md"
    subprocess.run([sys.executable, "-m", "jaxci", "audit", str(FIXTURES / folder), "--machine", FAMILY,
                    "--format", "json", "--output", str(out), "--summary", str(summary)],
                   check=True, capture_output=True, cwd=ROOT)
    return json.loads(out.read_text()), summary.read_text()


@pytest.mark.parametrize("folder", ["expert", "model_verdicts"])
def test_sheet_pins_exactly_the_audits_pin_list(folder, tmp_path):
    audit, summary = _audit(folder, tmp_path)
    where = actions.placements(AuditView.from_dict(audit), FAMILY, has_gpu=True)
    assert sorted(where["cpu"]) == sorted(audit["pin_to_cpu"])
    kept = [lec["path"] for lec in audit["lectures"] if lec["recommendation"] == "keep on GPU"]
    assert sorted(where["gpu"]) == sorted(kept)
    if audit["pin_to_cpu"]:
        assert f"kernelspec.name: {KERNEL}" in summary and "Pin to CPU (`JAX_PLATFORMS=cpu`)" not in summary


def test_float64_row_states_the_per_lecture_rule():
    """Row 1 names no blanket default the audit does not apply: where the CPU is faster for float64 it says each
    lecture is placed as the audit places it, pinned per lecture by its kernel."""
    report = build(committed())
    text = decisions.sheet(report, FAMILY).rows[0].decision
    assert "no blanket default" in text and KERNEL in text and "as `jaxci audit` places it" in text


def test_a_lecture_without_a_scan_is_one_answer_in_the_sheet_and_the_whole_build():
    """Whether a lecture is JAX work is one rule (LectureRecord.uses_jax): without a scan it is unknown, so the
    sheet places it under "unknown" and the whole build keeps it on the CPU, never counted as GPU work by one and not
    by the other."""
    from jaxci.analysis.lecture_record import LectureRecord
    from jaxci.policy import wholebuild

    audit = AuditView.from_dict({"lectures": [{"path": "lectures/a.md"}, {"path": "lectures/b.md",
                                                                            "scan": {"uses_jax": False}}]})
    no_scan, plain = audit.lectures
    assert (no_scan.uses_jax, plain.uses_jax, LectureRecord("c.md").uses_jax) == (None, False, None)
    assert actions.placements(audit, FAMILY, has_gpu=True) == {"cpu": [], "gpu": [], "unknown": ["lectures/a.md"]}
    assert wholebuild.today_device(no_scan, has_gpu=True) == "cpu"
