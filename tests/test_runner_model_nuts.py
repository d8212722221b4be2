"""The runner model's NUTS term: iterations x leapfrog steps per iteration (the sampler's count,
from any machine) x seconds per step on the family's device (NutsLeapfrogStep, else the Kalman gradient as a
labelled proxy) + compile. Synthetic results with known truth: every expected number is computed from them."""

from types import SimpleNamespace

import pytest

from jaxci.analysis import primitives as P
from jaxci.analysis import provenance as pv
from jaxci.catalogue import load_catalogue
from jaxci.evidence.published import PublishedFigure
from jaxci.report import decisions, questions, rows, termcheck
from jaxci.report.published import check
from tests.modelutil import runner_model
from tests.synth import SynthResults

STEPS = {"float32": 500.0, "float64": 1000.0}     # leapfrog steps in NutsLeapfrogStep's 10 + 10 draws
PER_STEP = {"float32": 3e-3, "float64": 2.5e-3}   # s per step on the CPU machine
COMPILE = {"float32": 8.0, "float64": 10.0}
GRAD = 0.04                                       # s per Kalman gradient on the lab GPU
ITERS = 3200


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    s = SynthResults(tmp_path_factory.mktemp("nuts"))
    s.machine("lab-epyc-2c", kind="lab", cores="2")
    s.machine("lab-h200", gpu="1 x NVIDIA H200", backend="cuda13", kind="lab", cores="16")
    step = (["dtype", "device"], [["float32", "float64"], ["cpu", "gpu"]])
    cpu_only = lambda table: lambda dtype, device: table[dtype] if device == "cpu" else float("nan")  # noqa: E731
    s.add("lab-epyc-2c", "nuts.NutsLeapfrogStep.track_leapfrog_steps", *step, cpu_only(STEPS), unit="leapfrog steps")
    s.add("lab-epyc-2c", "nuts.NutsLeapfrogStep.track_s_per_leapfrog_step", *step, cpu_only(PER_STEP),
          unit="seconds/leapfrog step")
    s.add("lab-epyc-2c", "nuts.NutsLeapfrogStep.track_compile_s", *step, cpu_only(COMPILE))
    s.add("lab-h200", "kalman.KalmanGrad.time_warm", ["variant", "k", "n", "dtype", "device"],
          [["sequential"], [11], [96], ["float64"], ["gpu"]], lambda **_: GRAD)
    return runner_model(s.save())


def test_cpu_nuts_is_iterations_x_steps_x_cost_plus_compile(model):
    p = model.predict("g4dn.2xlarge", "nuts", ITERS, "float64", "cpu")
    per_iter = STEPS["float64"] / 20
    assert p.seconds == pytest.approx(ITERS * per_iter * PER_STEP["float64"] + COMPILE["float64"])
    # band: the float32 / float64 step counts; compile once .. once per chain of 4
    assert p.low == pytest.approx(ITERS * STEPS["float32"] / 20 * PER_STEP["float64"] + COMPILE["float64"])
    assert p.high == pytest.approx(ITERS * per_iter * PER_STEP["float64"] + 4 * COMPILE["float64"])
    assert p.rests_on(pv.MEASURED) and "proxy" not in p.basis


def test_gpu_nuts_takes_the_kalman_gradient_as_a_labelled_proxy(model):
    p = model.predict("g4dn.2xlarge", "nuts", ITERS, "float64", "gpu")
    assert p.seconds == pytest.approx(ITERS * STEPS["float64"] / 20 * GRAD)     # the count from the CPU machine
    assert "proxy" in p.basis and "proxy" in p.inputs and "compile not included" in p.inputs


def test_nuts_needs_iterations_and_a_step_count(model, tmp_path):
    assert "iterations" in model.predict("g4dn.2xlarge", "nuts", None, "float64", "gpu").reason
    s = SynthResults(tmp_path).machine("lab-h200", gpu="1 x NVIDIA H200", backend="cuda13", kind="lab")
    s.add("lab-h200", "kalman.KalmanGrad.time_warm", ["variant", "k", "n", "dtype", "device"],
          [["sequential"], [11], [96], ["float64"], ["gpu"]], lambda **_: GRAD)
    assert runner_model(s.save()).predict("g4dn.2xlarge", "nuts", ITERS, "float64", "gpu").needs == P.NUTS_STEPS


def test_a_published_bound_is_reported_above_or_below_never_as_a_ratio(model):
    above = PublishedFigure("cell", "g4dn.2xlarge", "gpu", 2400.0, kernel="nuts", n=ITERS, dtype="float64",
                            bound="lower")
    below = PublishedFigure("cell", "g4dn.2xlarge", "gpu", 1e6, kernel="nuts", n=ITERS, dtype="float64", bound="lower")
    a, b = check([above, below], model)
    assert a["ratio"] is None and a["bound_ends"] == 2 and "above it at both ends" in a["verdict"]
    assert b["ratio"] is None and b["bound_ends"] == 0 and "below it" in b["verdict"]
    # the sheet's check refutes a band from that count, however the verdict reads
    found = [termcheck.checks(SimpleNamespace(model_checks=[{**r, "case": "NUTS state-space cell", "verdict": "x"}]),
                              "g4dn.2xlarge", questions.SAMPLER.terms) for r in (a, b)]
    assert [[c.refutes for c in f] for f in found] == [[False], [True]]


def test_the_sampler_row_of_a_decision_sheet_follows_the_predicted_nuts_times(model):
    """Question 4 on a family without NUTS results: the device the incident-shaped run belongs on, from the
    model's CPU and GPU predictions (here the CPU wins by construction: 2.5 ms per step against a 40 ms gradient)."""
    cat = load_catalogue()
    report = SimpleNamespace(nuts=[], model=model, machines={})
    row = rows._sampler(report, "g4dn.2xlarge", cat["g4dn.2xlarge"])
    cpu = model.predict("g4dn.2xlarge", "nuts", decisions.NUTS_ITERATIONS, "float64", "cpu")
    gpu = model.predict("g4dn.2xlarge", "nuts", decisions.NUTS_ITERATIONS, "float64", "gpu")
    assert cpu.high < gpu.low
    assert row.status == decisions.PREDICTED and row.decision.startswith("pin NUTS lectures shaped like the incident")
    assert "4 chains x 800 iterations" in row.basis and "chain method not decided" in row.basis
    cpu_only = rows._sampler(report, "c7i.2xlarge", cat["c7i.2xlarge"])
    assert cpu_only.status == decisions.PREDICTED and cpu_only.decision.startswith("NUTS on the CPU")
