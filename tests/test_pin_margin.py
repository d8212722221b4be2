"""The pin margin (jaxci.policy.margins) is the committed record's figure (docs/reference/pin-margin.json, written by
`jaxci accel-score ... --margin-record`): the factor within which the predicted accelerator/CPU ratio met the
measured one on 80% of the lectures measured on both sides. The record is re-made from the committed scoring runs,
so a change of the model that moves the ratio error fails here until the record (and the margin) follow."""

import json
import subprocess
import sys
from pathlib import Path

from jaxci.analysis import accel_score as A
from jaxci.policy import margins
from jaxci.util import versioned

REPO = Path(__file__).resolve().parents[1]
RECORD = REPO / "docs" / "reference" / "pin-margin.json"


def _record() -> dict:
    return versioned.load(RECORD, A.MARGIN_FORMAT, A.MARGIN_VERSION, 1 << 20, ValueError,
                          "jaxci accel-score AUDIT... --family F --margin-record docs/reference/pin-margin.json")


def test_the_policy_margin_is_the_records_figure_both_ways():
    margin = _record()["margin"]
    assert margins.GPU_SLOWER == round(margin, 2)
    assert margins.GPU_FASTER == round(1 / margin, 2)


def test_the_record_lists_each_lecture_it_rests_on_and_each_it_could_not_use():
    doc = _record()
    errors = sorted(max(r["ratio_error"], 1 / r["ratio_error"]) for r in doc["lectures"])
    assert doc["margin"] == errors[-(-len(errors) * 4 // 5) - 1]   # the 80th-percentile error, as implied_margin
    assert all(n["why"] for n in doc["not_scored"])


def test_the_record_is_what_the_committed_scoring_runs_give_today(tmp_path):
    doc = _record()
    runs = sorted((REPO / "scoring").glob(f"{doc['family']}@*/*.json"))
    assert sorted(p.name for p in runs) == doc["sources"]
    out = tmp_path / "margin.json"
    subprocess.run([sys.executable, "-m", "jaxci", "accel-score", *map(str, runs), "--family", doc["family"],
                    "--platform", doc["platform"], "--margin-record", str(out)], check=True, capture_output=True,
                   cwd=REPO)
    assert json.loads(out.read_text()) == doc


def test_the_tpu_page_shows_the_commands_table():
    """docs/tpu.md's scoring table is `jaxci accel-score`'s output on the committed runs, never edited by hand."""
    runs = sorted((REPO / "scoring").glob("lab-tpu-v5e@*/*.json"))
    out = subprocess.run([sys.executable, "-m", "jaxci", "accel-score", *map(str, runs), "--family", "lab-tpu-v5e"],
                         check=True, capture_output=True, text=True, cwd=REPO).stdout
    assert out.strip() in (REPO / "docs" / "tpu.md").read_text()
