"""A notebook's fixed costs: the measured terms move to a family by the host ratio, the calibrated per-notebook
residual is scored only where it was not fitted, and the audit adds it once to each side of a family's build time."""

import json
import math

import pytest

from jaxci.analysis import provenance as pv
from jaxci.analysis import residual as R
from jaxci.analysis.fixed_costs import FixedCosts, notebook_start
from jaxci.analysis.prediction import LecturePrediction
from jaxci.analysis.primitives import Band
from jaxci.audit.judging import rescaled
from jaxci.audit.judging.every_family import residuals
from jaxci.evidence.inputs import reference
from jaxci.modeldata import fixed_costs
from tests.modelutil import runner_model

COSTS = {"cold": {"kernel start": 0.8, "jax": 0.6}, "warm": {"kernel start": 0.5, "jax": 0.3},
         "probe_s": [0.9, 1.1], "when": "2026-12-05T00:00:00Z", "host": "a test host"}
FITTED = {"host": "a fixture VM", "n": 10_000_000, "probes_s": [0.95, 1.05], "accepts_s": [0.9, 1.1],
          "why": "the fixture VM's own drift"}
RESIDUAL = {"version": 1, "probe_units": 2.0, "low": 1.0, "high": 3.0, "scale": 1.0, "source": "two fixture sets",
            "fitted_on": FITTED}


def _file(tmp_path, residual=True, **calibration):
    path = tmp_path / "costs.json"
    path.write_text(json.dumps(fixed_costs.record(COSTS)))
    beside = tmp_path / fixed_costs.CALIBRATION_NAME
    if residual:
        beside.write_text(json.dumps({**RESIDUAL, **calibration}))
    else:
        beside.unlink(missing_ok=True)
    return path


def test_the_file_reads_as_terms_probes_and_a_residual_band(tmp_path):
    fixed = fixed_costs.load(_file(tmp_path))
    assert fixed.warm == {"kernel start": 0.5, "jax": 0.3} and fixed.cold["jax"] == 0.6
    assert math.isclose(fixed.probe_s, math.sqrt(0.9 * 1.1))
    assert (fixed.residual.mid, fixed.residual.low, fixed.residual.high) == (2.0, 1.0, 3.0)
    assert fixed.residual_source == "two fixture sets"
    assert fixed_costs.load(_file(tmp_path, residual=False)).residual is None
    assert fixed_costs.load(tmp_path / "absent.json") is None
    assert "costs.json" in fixed_costs.load(_file(tmp_path)).source


@pytest.mark.parametrize("text, why", [("{not json", "not valid JSON"),
                                       (json.dumps(fixed_costs.record({**COSTS, "probe_s": []})), "no probe"),
                                       (json.dumps(fixed_costs.record({**COSTS, "warm": {"x": -1}})), "unreadable"),
                                       (json.dumps(COSTS), "not a jaxci-notebook-fixed-costs file"),
                                       (json.dumps({**fixed_costs.record(COSTS), "version": 2}),
                                        "version 2, this jaxci reads 1: measure and write it again with "
                                        "`measure/notebook_fixed_costs.py")])
def test_a_bad_file_is_an_error_naming_it(tmp_path, text, why):
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(fixed_costs.FixedCostsError, match=why) as err:
        fixed_costs.load(path)
    assert str(path) in str(err.value)


def test_the_calibration_applies_only_on_a_host_its_probe_cannot_tell_from_the_fitted_one(tmp_path):
    fixed = fixed_costs.load(_file(tmp_path))
    assert fixed.fitted_on.probes_s == (0.95, 1.05) and fixed.fitted_on.accepts == (0.9, 1.1)
    kept, why = fixed.on_host(0.1, 1_000_000)          # 1.0 s at 10M: inside
    assert kept is fixed and "within" in why
    refused, why = fixed.on_host(0.05, 1_000_000)      # 0.5 s at 10M: a faster host than it was fitted on
    assert refused.residual is None and refused.scale == 1.0
    assert "refused" in why and "jaxci devsets" in why and "--calibrate" in why   # the command that refits
    assert fixed.on_host(None, 1)[0].residual is None   # no probe here: never applied blind


@pytest.mark.parametrize("change, why", [({"version": 2}, "not a version 1"),
                                         ({"fitted_on": {**FITTED, "accepts_s": [1.0, 1.1]}}, "does not hold"),
                                         ({"scale": 0}, "not positive")])
def test_a_bad_calibration_is_an_error_naming_it(tmp_path, change, why):
    path = _file(tmp_path, **change)
    with pytest.raises(fixed_costs.FixedCostsError, match=why) as err:
        fixed_costs.load(path)
    assert fixed_costs.CALIBRATION_NAME in str(err.value)


def test_the_committed_calibration_records_its_host():
    fixed = fixed_costs.load()
    assert fixed.residual is not None and fixed.fitted_on is not None
    low, high = fixed.fitted_on.accepts
    assert low <= min(fixed.fitted_on.probes_s) and max(fixed.fitted_on.probes_s) <= high


def test_a_section_is_replaced_and_the_rest_kept():
    text = "# t\n\nintro\n\n## Measured here\n\nold\n\n## Calibrated residual\n\nkept\n"
    out = fixed_costs.with_section(text, "## Measured here", "new")
    assert "old" not in out and "new" in out and "kept" in out and out.index("new") < out.index("kept")
    assert fixed_costs.with_section("# t\n", "## Calibrated residual", "r").endswith("## Calibrated residual\n\nr\n")


def test_the_terms_move_by_the_family_probe_and_the_residual_by_its_own():
    fixed = FixedCosts({"kernel start": 1.0}, {"kernel start": 2.0}, (1.0,), "here", Band.of(2.0, 1.0, 3.0), "fit")
    band, inputs, basis = notebook_start(fixed, "f", (0.5, "published probe"), None, cold=False)
    assert math.isclose(band.mid, 1.0 * 0.5 + 2.0 * 0.5) and math.isclose(band.high, 0.5 + 1.5)
    assert pv.sources_of(inputs) == {pv.Source(pv.MEASURED, "here"), pv.Source(pv.CALIBRATED, "fit")}
    cold, _, _ = notebook_start(fixed, "f", (0.5, "published probe"), None, cold=True)
    assert math.isclose(cold.mid, 2.0 * 0.5 + 1.0)
    unscaled, inputs, _ = notebook_start(fixed, "f", None, None, cold=False)
    assert unscaled.mid == 1.0 and pv.sources_of(inputs) == {pv.Source(pv.MEASURED, "here")}  # no residual either
    scaled = FixedCosts({"kernel start": 1.0}, {}, (1.0,), "here", Band.of(0.0), "fit", scale=2.0)
    assert notebook_start(scaled, "f", (0.5, "probe"), None, cold=False)[0].mid == 1.0   # 1 x 0.5 x 2
    assert notebook_start(scaled, "f", None, None, cold=False)[0].mid == 1.0   # no host ratio to correct


def test_the_residual_is_never_scored_on_the_lecture_it_predicts():
    lectures = [R.Scored("a", 10.0, 8.0, 1.0), R.Scored("b", 10.0, 6.0, 1.0), R.Scored("c", 100.0, 0.0, 1.0)]
    loo = R.leave_one_out(lectures)
    assert loo == [8.0 + 52.0, 6.0 + 51.0, 0.0 + 3.0]   # each from the other two gaps' median
    other = [R.Scored("x", 5.0, 4.0, 2.0)]              # gap 0.5 probe units
    assert R.cross_set(other, lectures) == [8.5, 6.5, 0.5]
    raised = [R.Scored("a", 10.0, 8.0, 1.0), R.Scored("r", 10.0, 1.0, 1.0, calibrates=False)]
    assert R.fit(raised).offset == 2.0                    # a lecture whose cells raised never calibrates


def test_the_scoreboard_counts_within_2x_summed_and_median():
    lectures = [R.Scored("a", 10.0, 0, 1.0), R.Scored("b", 10.0, 0, 1.0), R.Scored("c", 10.0, 0, 1.0)]
    s = R.score(lectures, [5.0, 10.0, 30.0])
    assert (s.lectures, s.within_2x, s.summed, s.median) == (3, 2, 1.5, 1.0)


def test_the_residual_is_added_once_to_each_side_after_host_scaling():
    rec = {"cpu_s": 10.0, "cpu_low_s": 9.0, "cpu_high_s": 11.0, "gpu_s": 4.0, "gpu_low_s": 3.0, "gpu_high_s": 5.0,
           "parts": {"cpu": {"host": 10.0}, "gpu": {"host": 4.0}}, "inputs": []}
    rec = LecturePrediction.from_dict(rec)
    scaled = rescaled.host_scaled(rec, 2.0, "probe")
    once = rescaled.with_residual(scaled, Band(1.0, 0.5, 2.0), "the residual, 1 s: fit")
    twice = rescaled.with_residual(once, Band(1.0, 0.5, 2.0), "the residual, 1 s: fit")
    assert twice.cpu.band() == (21.0, 18.5, 24.0)
    assert (twice.gpu.seconds, twice.gpu.parts["residual"]) == (9.0, 1.0)
    assert twice.inputs == ("the residual, 1 s: fit",)
    again = rescaled.host_scaled(twice, 2.0, "probe")
    assert again.cpu.seconds == 20.0 and again.uncalibrated is None   # rescaled from the unscaled figures
    anew = rescaled.with_residual(again, Band(1.0, 0.5, 2.0), "residual, worded otherwise")
    assert anew.cpu.seconds == 21.0 and anew.inputs == ("residual, worded otherwise",)   # replaced, whatever its words


def test_a_calibrated_scale_moves_the_measured_parts_and_never_the_modelled_ones():
    rec = {"cpu_s": 10.0, "cpu_low_s": 10.0, "cpu_high_s": 10.0, "gpu_s": 6.0, "gpu_low_s": 6.0, "gpu_high_s": 6.0,
           "parts": {"cpu": {"host": 10.0}, "gpu": {"host": 4.0, "calls": 2.0}}, "inputs": []}
    out = rescaled.with_residual(LecturePrediction.from_dict(rec), Band.of(0.0), "per-notebook residual 0 s: fit",
                                 scale=1.5)
    assert (out.cpu.seconds, out.gpu.seconds) == (15.0, 8.0)            # the GPU's modelled calls stay 2 s
    assert out.gpu.parts == {"host": 6.0, "calls": 2.0, "residual": 0.0}
    assert rescaled.with_residual(out, Band.of(0.0), "x", scale=1.5).cpu.seconds == 15.0   # never twice


def test_the_runner_model_answers_notebook_start_per_family_from_the_file(tmp_path):
    model = runner_model(published=reference(), lab=False, fixed=fixed_costs.load(_file(tmp_path)))
    cpu = model.predict("ubuntu-latest", "notebook_start", None, device="cpu")
    gpu = model.predict("g4dn.2xlarge", "notebook_start", None, device="gpu")
    probe = math.sqrt(0.9 * 1.1)
    assert math.isclose(cpu.seconds, 0.8 * 0.599 / probe + 2.0 * 0.599, rel_tol=1e-6)  # terms x h + residual
    backend = model.predict("g4dn.2xlarge", "backend_start", None, device="gpu")
    assert math.isclose(gpu.seconds, 0.8 * 0.881 / probe + backend.seconds + 2.0 * 0.881, rel_tol=1e-6)
    assert cpu.rests_on(pv.CALIBRATED, "two fixture sets") and cpu.rests_on(pv.PUBLISHED)  # the family's probe
    bare = runner_model(published=reference(), lab=False)
    assert bare.predict("ubuntu-latest", "notebook_start", None, device="cpu").seconds is None


def test_the_audit_adds_the_residual_where_the_family_publishes_a_probe(tmp_path):
    fixed = fixed_costs.load(_file(tmp_path))
    (band, source, scale), = residuals("ubuntu-latest", reference(), fixed).values()
    assert scale == 1.0
    assert (band.mid, band.low, band.high) == pytest.approx((2.0 * 0.599, 0.599, 3.0 * 0.599))
    assert "calibrated (two fixture sets)" in source
    (c7i, c7i_source, _), = residuals("c7i.2xlarge", reference(), fixed).values()   # its probe predicted (issue 70)
    assert c7i.mid < band.mid and "predicted probe" in c7i_source
    assert residuals("c7i.2xlarge", [], fixed) == {} and residuals("ubuntu-latest", reference(), None) == {}


def test_a_scale_corrects_only_the_seconds_measured_here():
    """The `scale` and `both` forms move what the host factor moved (scalable_s), never the modelled GPU parts."""
    lectures = [R.Scored("a", 20.0, 10.0, 1.0, scalable_s=10.0), R.Scored("b", 40.0, 20.0, 1.0, scalable_s=20.0),
                R.Scored("c", 13.0, 8.0, 1.0, scalable_s=5.0)]   # 3 s modelled, 5 s measured: x2 gives 13
    f = R.fit(lectures, "scale")
    assert f == R.Fit(0.0, 2.0) and f.apply(lectures[2]) == 13.0
    both = R.fit([R.Scored("s1", 3.0, 1.0, 1.0), R.Scored("s2", 3.0, 1.0, 1.0), R.Scored("l1", 20.0, 10.0, 1.0),
                  R.Scored("l2", 40.0, 20.0, 1.0)], "both")
    assert (both.scale, both.offset) == (2.0, 0.5)   # the scale from the longer half, the median gap left
    assert R.fit([], "both") == R.Fit()
