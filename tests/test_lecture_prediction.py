"""The per-lecture prediction is one frozen record (jaxci.analysis.prediction.LecturePrediction) whose JSON form only
its own as_dict/from_dict know (issue 72, item 2): every committed audit's predictions read and write back as they
were written, byte for byte, and a reader gets fields, never keys."""

import dataclasses
import json
from pathlib import Path

import pytest

from jaxci.analysis.lecture_record import LectureRecord
from jaxci.analysis.prediction import SECONDS, LecturePrediction, PredictedSide, of_lecture
from jaxci.policy import builds, placement

AUDITS = sorted((Path(__file__).resolve().parents[1] / "audits").glob("*/audit.json"))


@pytest.mark.parametrize("path", AUDITS, ids=lambda p: p.parent.name)
def test_every_committed_prediction_reads_and_writes_back_as_written(path):
    audit = json.loads(path.read_text())
    records = [(lec, family) for lec in audit["lectures"] for family in lec.get("predicted") or {}]
    assert records
    for lec, family in records:
        written = lec["predicted"][family]
        again = of_lecture(lec, family).as_dict()
        assert json.dumps(again) == json.dumps(written), (lec["path"], family)   # keys, order and values


def test_the_record_is_frozen_and_its_sides_are_fields():
    pred = LecturePrediction(PredictedSide(10.0, 9.0, 12.0, {"host": 10.0}), PredictedSide(4.0, 3.0, 5.0),
                             overhead_s=1.0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        pred.basis = "changed"  # type: ignore[misc]
    assert PredictedSide(4.0).band() == (4.0, 4.0, 4.0)   # a band end not given is the middle
    assert [k for k in pred.as_dict() if k in SECONDS] == list(SECONDS)
    assert LecturePrediction.from_dict(pred.as_dict()) == pred


def test_a_figure_that_is_no_seconds_is_not_given():
    """Text, a bool, NaN or more than five days is no run time: the side (or the end) is read as absent."""
    pred = LecturePrediction.from_dict({"cpu_s": 5.0, "cpu_high_s": "7", "gpu_s": True, "overhead_s": 1e308})
    assert pred.cpu == PredictedSide(5.0) and pred.gpu is None and pred.overhead_s is None
    no_cpu = LectureRecord.from_dict({"predicted": {"f": {"gpu_s": 1.0}}})
    assert builds.prediction(no_cpu, "f") is None   # no CPU side: not predicted
    assert LecturePrediction.from_dict(["not", "a", "record"]) is None


def test_an_unknown_key_passes_through_last():
    written = {"cpu_s": 1.0, "future_field": {"x": 1}, "label": "predicted"}
    assert list(LecturePrediction.from_dict(written).as_dict()) == ["cpu_s", "label", "future_field"]


def test_policy_reads_the_record():
    pred = LecturePrediction(PredictedSide(100.0, 90.0, 110.0), PredictedSide(30.0, 20.0, 40.0))
    assert builds.placement(pred, True) == placement.GPU and builds.placement(pred, False) == placement.CPU
    assert builds.lecture_seconds(pred, "gpu") == (30.0, 20.0, 40.0)
    assert placement.place("a.md", pred, None, "", "g4dn.2xlarge").device == placement.GPU


def test_the_parts_and_what_the_model_gives_come_from_one_registry():
    """A prediction's parts and the parts the host factor never moves (the model's) are one table: a record's parts
    are the table's names in its order, and every modelled part is a part."""
    from jaxci.analysis.prediction import MODELLED, PART_TABLE, PARTS
    from jaxci.audit.judging.predicted import Sum

    assert PARTS == tuple(p.name for p in PART_TABLE) and len(set(PARTS)) == len(PARTS)
    assert tuple(Sum().parts) == PARTS
    assert set(MODELLED) == {"cpu", "gpu"} and set(MODELLED["gpu"]) == {"calls", "loops", "backend", "leapfrog"}
    assert MODELLED["cpu"] == () and all(p.why for p in PART_TABLE)
