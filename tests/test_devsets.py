"""The development-set protocol in one module (jaxci.analysis.devsets, issue 70): the committed record re-scores to
its own scoreboard and fails on a changed figure; the runs are scored as predicted, leave-one-lecture-out (never on
the lecture predicted) and cross-set; the calibration is written as data with the host it was fitted on."""

from __future__ import annotations

import copy
import json

import pytest

from jaxci import REPO_ROOT
from jaxci.analysis import devsets as D
from jaxci.analysis import residual as R
from jaxci.analysis.prediction import MODELLED
from jaxci.commands import devsets as cmd
from jaxci.modeldata import fixed_costs

FIX = REPO_ROOT / "tests" / "fixtures" / "devsets"
RECORD = REPO_ROOT / "docs" / "reference" / "dev-sets.json"


def test_the_committed_record_re_scores_to_its_scoreboard():
    data = D.parse_table(json.loads(RECORD.read_text()))
    assert {f: len(s["lectures"]) for f, s in data["sets"].items()} == {"g4dn.2xlarge": 89, "ubuntu-latest": 63}
    assert D.check(data) == []
    cross = {r["set"]: r for r in data["board"] if r["scoring"] == "cross-set"}
    assert (cross["g4dn.2xlarge"]["within_2x"], cross["ubuntu-latest"]["within_2x"]) == (88, 58)
    assert (cross["ubuntu-latest"]["summed"], cross["ubuntu-latest"]["median"]) == (1.07, 1.07)


def test_a_changed_figure_fails_the_check():
    data = D.parse_table(json.loads(RECORD.read_text()))
    moved = copy.deepcopy(data)
    moved["sets"]["ubuntu-latest"]["lectures"][0]["ratio_cross"] *= 3
    assert D.check(moved) and "ubuntu-latest cross-set" in D.check(moved)[0]
    assert cmd.main(["--table", str(RECORD), "--check", "--format", "json"]) == 0


def _sets(monkeypatch):
    probes = {"g4dn.2xlarge": 0.881, "ubuntu-latest": 0.599}
    monkeypatch.setattr(cmd, "family_probe", probes.__getitem__)
    return {"g4dn.2xlarge": D.parse_run(json.loads((FIX / "gpu-set.json").read_text()), 0.881, MODELLED),
            "ubuntu-latest": D.parse_run(json.loads((FIX / "cpu-set.json").read_text()), 0.599, MODELLED)}


def test_the_runs_are_scored_never_on_the_lecture_they_predict(monkeypatch):
    runs = _sets(monkeypatch)
    sets = {f: r[0] for f, r in runs.items()}
    g = sets["g4dn.2xlarge"]
    assert g[1].scalable_s == 16.0 and g[0].scalable_s == 4.0   # the GPU's modelled calls are not what h moved
    assert not g[4].calibrates                                  # a cell raised here: scored, never fitted on
    preds = D.predictions(sets, "both")
    assert preds["g4dn.2xlarge"]["leave-one-lecture-out"] == R.leave_one_out(g, "both")
    assert preds["g4dn.2xlarge"]["cross-set"] == R.cross_set(sets["ubuntu-latest"], g, "both")
    moved = [R.Scored(s.lecture, s.published_s * (9 if i == 0 else 1), s.predicted_s, s.probe_s, s.calibrates,
                      s.scalable_s) for i, s in enumerate(g)]
    assert R.leave_one_out(moved, "both")[0] == preds["g4dn.2xlarge"]["leave-one-lecture-out"][0]
    rows = D.board({f: [s.published_s for s in ls] for f, ls in sets.items()}, preds)
    assert len(rows) == 6 and all(r["lectures"] in (4, 5) for r in rows)


def test_the_calibration_is_written_as_data_the_model_reads(monkeypatch, tmp_path):
    _sets(monkeypatch)
    out = tmp_path / fixed_costs.CALIBRATION_NAME
    argv = ["--set", f"g4dn.2xlarge={FIX / 'gpu-set.json'}", "--set", f"ubuntu-latest={FIX / 'cpu-set.json'}",
            "--calibrate", str(out)]
    assert cmd.main(argv) == 0
    found = json.loads(out.read_text())
    assert found["version"] == 1 and found["fitted_on"]["probes_s"] == [1.1, 1.2, 1.25, 1.4]
    assert found["fitted_on"]["accepts_s"] == [1.1, 1.4]
    band, source, scale, host = fixed_costs.calibration(out)
    assert band.low <= band.mid <= band.high and scale == found["scale"] and host.accepts == (1.1, 1.4)
    assert "fixture-gpu.notebooks@aaaa111" in source


@pytest.mark.parametrize("accepts, said", [("3,1", "LOW must be below HIGH"), ("x,y", "expected a number"),
                                           ("1", "expected LOW,HIGH"), ("nan,1", "finite number above zero"),
                                           ("1.2,1.3", "does not hold the probes")])
def test_an_accepted_range_its_loader_would_refuse_is_never_written(accepts, said, monkeypatch, tmp_path, capsys):
    """Issue 83 item 7: `--accepts 3,1` wrote a calibration every audit's loader then refused; `x,y` was a
    traceback. One line, exit 2, nothing written."""
    _sets(monkeypatch)
    out = tmp_path / fixed_costs.CALIBRATION_NAME
    argv = ["--set", f"g4dn.2xlarge={FIX / 'gpu-set.json'}", "--set", f"ubuntu-latest={FIX / 'cpu-set.json'}",
            "--calibrate", str(out), "--accepts", accepts]
    try:
        code = cmd.main(argv)
    except SystemExit as exc:   # argparse's refusal of the option
        code = exc.code
    assert code == 2 and not out.exists()
    err = capsys.readouterr().err
    assert said in err and err.count("\n") == 1, err


def test_a_file_that_is_not_a_set_is_refused(tmp_path):
    with pytest.raises(D.DevSetError, match="version 1"):
        D.parse_table({})
    with pytest.raises(D.DevSetError, match="published_builds"):
        D.parse_run({}, 0.881, MODELLED)
    bad = tmp_path / "x.json"
    bad.write_text("{not json")
    assert cmd.main(["--table", str(bad)]) == 2
