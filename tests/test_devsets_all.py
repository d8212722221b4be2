"""Every published lecture of each development set scored or counted as coverage lost (issue 70, item 1): the
committed record re-scores to its own board and fails on a changed figure; the audit's runs are predicted again
through the audit's own step, from its JSON alone, exactly as the audit recorded them; a lecture without a
prediction is lost with its cause, never dropped; the weighted figures and the 60 s+ row count what they say."""

from __future__ import annotations

import copy
import json

import pytest

from jaxci import REPO_ROOT
from jaxci.analysis import devsets as D
from jaxci.analysis import devsets_audit as A
from jaxci.analysis import devsets_score as S
from jaxci.analysis.prediction import LecturePrediction
from jaxci.audit.writing.record import read
from jaxci.commands import devsets as cmd
from jaxci.commands.devsets_repredict import repredicted
from jaxci.results import published_build

RECORD = REPO_ROOT / "docs" / "reference" / "dev-sets-all.json"
FILTERED = REPO_ROOT / "docs" / "reference" / "dev-sets.json"
AUDITS = {"g4dn.2xlarge": REPO_ROOT / "audits" / "lecture-python.myst@40e15dc" / "audit.json",
          "ubuntu-latest": REPO_ROOT / "audits" / "lecture-python-advanced.myst@b83d6da" / "audit.json"}


def _record() -> dict:
    return D.parse_record(json.loads(RECORD.read_text()))


def test_the_committed_record_re_scores_and_holds_every_published_lecture():
    data = _record()
    assert D.check_record(data) == []
    for family, path in AUDITS.items():
        build = published_build.read(published_build.beside(path))
        one = data["sets"][family]
        names = [r["lecture"] for r in one["lectures"]] + [r["lecture"] for r in one["lost"]]
        assert sorted(names) == sorted(n for n, s in build.seconds.items() if s > 0)   # none dropped
        assert one["build_s"] == round(build.total_s, 2)
        assert all(r["cause"] for r in one["lost"])
    assert cmd.main(["--table", str(RECORD), "--check", "--format", "json"]) == 0


def test_a_changed_figure_fails_the_check():
    moved = copy.deepcopy(_record())
    moved["sets"]["ubuntu-latest"]["lectures"][0]["ratio_cross"] *= 3
    assert any("ubuntu-latest cross-set" in line for line in D.check_record(moved))
    dropped = copy.deepcopy(_record())
    dropped["sets"]["g4dn.2xlarge"]["lost"].pop()
    assert any("the build" in line for line in D.check_record(dropped))   # a lost lecture cannot go missing


def test_the_runs_are_predicted_again_as_the_audit_recorded_them():
    audit = read(AUDITS["ubuntu-latest"])
    again = repredicted(audit, "ubuntu-latest")
    n = 0
    for old, new in zip(audit["lectures"], again["lectures"]):
        before, after = old["predicted"].get("ubuntu-latest"), new["predicted"].get("ubuntu-latest")
        assert bool(before) == bool(after), old["path"]
        if before:
            n += 1
            before = A.uncalibrated(LecturePrediction.from_dict(before))
            assert LecturePrediction.from_dict(after).cpu.seconds == pytest.approx(before.cpu.seconds, rel=1e-9), \
                old["path"]
    assert n == 66


def _lecture(name, status="ok", predicted=None, failure=None, cells=()):
    return {"path": f"lectures/{name}.md", "status": status, "failure": failure, "not_executed": "",
            "runs": {"cpu": {"status": status, "cells": list(cells)}},
            "predicted": {"fam": predicted} if predicted else {}}


def test_a_lecture_without_a_prediction_is_lost_with_its_cause():
    parts = {"host": 8.0, "start-up": 2.0}
    audit = {"lectures": [
        _lecture("a", predicted={"family_kind": "cpu", "cpu_s": 10.0, "cpu_low_s": 9.0, "cpu_high_s": 11.0,
                                 "parts": {"cpu": parts}}),
        _lecture("b", status="error", failure={"by": "harness", "cause": "no-network", "cell": 3,
                                               "error": "URLError"}),
        _lecture("c", predicted={"family_kind": "cpu", "cpu_s": 5.0, "cpu_low_s": 5.0, "cpu_high_s": 5.0,
                                 "parts": {"cpu": parts}}, cells=[{"status": "ok", "expected_error": "E"}])]}
    build = published_build.PublishedBuild("o/r", "abc", "2026-01-01", "fam",
                                           {"a": 20.0, "b": 70.0, "c": 4.0, "d": 6.0})
    recs, lost = A.records(audit, build)
    assert [r["lecture"] for r in recs] == ["a", "c"] and recs[0]["ratio"] == 0.5
    assert [r["raised"] for r in recs] == [False, True]   # a cell raised: scored, never calibrated on
    assert {x.lecture: x.cause for x in lost} == {"b": "harness: no-network, cell 3: URLError",
                                                  "d": "not in the audit"}


def test_the_weighted_figures_count_lost_seconds_and_long_lectures():
    one = S.SetScore("fam", "fixture", 200.0, [
        S.Lecture("short", 10.0, 30.0, None, None, {"cross-set": 3.0}),
        S.Lecture("long", 90.0, 99.0, None, None, {"cross-set": 1.1})],
        [S.Lost("gone", 100.0, "harness: no-network")])
    rows = {r["of"]: r for r in S.board([one])}
    assert rows["all"] == {"set": "fam", "scoring": "cross-set", "of": "all", "lectures": 2, "lost": 1,
                           "within_2x": 1, "seconds_within_2x": 0.9, "summed": 1.29, "median": 2.05,
                           "weighted_median": 1.1, "coverage": 0.5}
    assert (rows["60 s+"]["lectures"], rows["60 s+"]["lost"], rows["60 s+"]["coverage"]) == (1, 1, 0.474)
    met = {g["goal"].split()[0]: g["met"] for g in S.goals(S.board([one]))}
    assert met == {"coverage": False, "the": False, "lectures": False}   # 1 of 2 long ones within 2x: not 80%
    assert S.weighted_median([(1.0, 1.0), (5.0, 3.0)]) == 5.0 and S.weighted_median([]) is None


def test_the_filtered_record_scores_against_the_whole_build():
    builds = {f: published_build.read(published_build.beside(p)) for f, p in AUDITS.items()}
    sets = A.from_filtered(*D.from_table(D.parse_table(json.loads(FILTERED.read_text()))), builds)
    for one in sets:
        held = {x.lecture for x in one.lectures} | {x.lecture for x in one.lost}
        assert held == {n for n, s in builds[one.family].seconds.items() if s > 0}
        assert all(x.cause.startswith("not in the set") for x in one.lost)


def test_mismatched_inputs_are_refused(tmp_path):
    path = str(AUDITS["ubuntu-latest"])
    assert cmd.main(["--from-audit", path, "--published", path, "--published", path]) == 2
    bad = tmp_path / "r.json"
    bad.write_text(json.dumps({"version": 2, "sets": {"f": {"build_s": 0}}}))
    assert cmd.main(["--table", str(bad)]) == 2
    with pytest.raises(SystemExit):   # a record is written only from what --from-audit scored
        cmd.main(["--table", str(RECORD), "--record", str(tmp_path / "x.json")])
    assert not (tmp_path / "x.json").exists()


def test_the_page_shows_the_commands_output(capsys):
    """docs/dev-sets.md holds what the commands it names print: its tables are never edited by hand."""
    page = (REPO_ROOT / "docs" / "dev-sets.md").read_text()
    published = [str(published_build.beside(p)) for p in AUDITS.values()]
    for argv in (["--table", str(RECORD), "--lectures"],
                 ["--table", str(FILTERED), "--lectures", *[x for p in published for x in ("--published", p)]]):
        assert cmd.main(argv) == 0
        out = capsys.readouterr().out
        board, rest = out.split("\n\n", 1)
        goals, error, lectures = rest.split("\n\n", 2)
        sections = [s.split("\n", 1)[1] for s in ("\n" + lectures).split("\n## ")[1:]]
        assert len(sections) == 2   # one per set: every set's lecture table is held to the page, not the last only
        for part in (board, goals, error, *sections):
            assert part.strip() in page


def test_the_calibration_is_fitted_from_the_committed_audits_in_the_form_asked(tmp_path):
    """`--calibrate` with `--from-audit`: the protocol's candidate calibration from every scored lecture, with the
    host probes its runs recorded (nothing executed; the committed calibration is not touched)."""
    from jaxci.commands import devsets as cmd

    out, rec = tmp_path / "cal.json", tmp_path / "rec.json"
    assert cmd.main(["--from-audit", str(AUDITS["g4dn.2xlarge"]), "--from-audit", str(AUDITS["ubuntu-latest"]),
                     "--form", "offset", "--record", str(rec),
                     "--calibrate", str(out)]) == 0
    assert D.parse_record(json.loads(rec.read_text()))["form"] == "offset"   # both files asked for are written
    cal = json.loads(out.read_text())
    assert cal["form"] == "offset" and cal["scale"] == 1.0 and cal["low"] <= cal["probe_units"] <= cal["high"]
    probes = cal["fitted_on"]["probes_s"]
    assert probes == sorted(probes) and cal["fitted_on"]["accepts_s"] == [probes[0], probes[-1]]


def test_the_record_is_scored_in_the_committed_calibrations_form():
    """The record describes the model the audits apply: `jaxci devsets` scores in the committed calibration's form
    unless told otherwise (it was kept in form `both` while the committed calibration was `offset`)."""
    from jaxci.modeldata import fixed_costs

    assert _record()["form"] == fixed_costs.committed_form()


def test_a_calibration_without_a_form_is_refused_with_its_path(tmp_path):
    from jaxci.modeldata import fixed_costs

    path = tmp_path / "notebook-calibration.json"
    path.write_text(json.dumps({"version": 1, "probe_units": 1.0}))
    with pytest.raises(fixed_costs.FixedCostsError, match="names no form"):
        fixed_costs.committed_form(path)
    assert fixed_costs.committed_form(tmp_path / "none.json") is None
