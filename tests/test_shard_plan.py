"""`jaxci audit shard-plan`: a published build's run times split over N shards by the audit's own assignment,
each N's predicted wall (labelled predicted, its model stated); once measure/shard_plan.py, which read a snapshot's
status.ipynb. Small made-up records; no timing is asserted."""

from __future__ import annotations

import json

import pytest

from jaxci.commands import audit
from jaxci.report import shard_plan
from jaxci.results import published_build as pb

SECONDS = {"long": 100.0, "a": 40.0, "b": 30.0, "c": 20.0, "d": 10.0}


def _record(tmp_path, seconds=SECONDS):
    path = tmp_path / "published.json"
    build = pb.PublishedBuild("owner/site.notebooks", "c0ffee", "2026-12-01", "g4dn.2xlarge", seconds,
                              {"e": "not a run time"})
    path.write_text(json.dumps(build.as_dict()))
    return path


def test_the_longest_lecture_bounds_the_wall_whatever_the_shards():
    p = shard_plan.plan(SECONDS, 2, 60.0, 1.1)
    assert sorted(p["loads_s"]) == [100.0, 100.0] and p["slowest_over_mean"] == 1.0
    assert p["predicted_wall_s"] == pytest.approx(60 + 110) and p["label"] == "predicted"
    four = shard_plan.plan(SECONDS, 4, 0.0, 1.0)
    assert max(four["loads_s"]) == 100.0 and four["longest"] == ("long", 100.0)


def test_the_command_prints_each_n_and_the_rows_that_are_not_times(tmp_path, capsys):
    assert audit.main(["shard-plan", str(_record(tmp_path)), "--shards", "2", "4"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "5 notebooks, 200 s summed; the longest long 100 s"
    assert out[1].startswith("  2 shards: 100, 100 s; slowest / mean 1.00; predicted wall 1.7 min")
    assert out[-1] == "  not a time: e: not a run time"


def test_json_carries_the_source_and_every_plan(tmp_path, capsys):
    assert audit.main(["shard-plan", str(_record(tmp_path)), "--format", "json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["source"] == "site.notebooks@c0ffee" and [p["shards"] for p in got["plans"]] == [8]


@pytest.mark.parametrize("extra, says", [(["--shards", "0"], "--shards: each N from 1 to"),
                                         (["--overhead", "0"], "--overhead > 0")])
def test_a_bad_number_is_one_line_and_exit_2(tmp_path, capsys, extra, says):
    assert audit.main(["shard-plan", str(_record(tmp_path)), *extra]) == 2
    err = capsys.readouterr().err
    assert err.startswith("jaxci audit shard-plan: ") and says in err and err.count("\n") == 1


def test_a_record_without_run_times_is_refused(tmp_path, capsys):
    assert audit.main(["shard-plan", str(_record(tmp_path, {}))]) == 2
    assert "no run times to split" in capsys.readouterr().err
