"""Published measurements as runner-model inputs: the transfer-only score never sees them, the
leave-one-out score does, and no published figure sits in the model as a copied constant."""

from __future__ import annotations

import ast
import json
from dataclasses import replace
from pathlib import Path

import pytest

from jaxci.analysis import provenance as pv
from jaxci.analysis.evidence import CPU_GEMM, SCAN_STEP, SERIES, without
from jaxci.commands import predict
from jaxci.evidence.inputs import figure_id, from_rates, load
from jaxci.evidence.published import read
from jaxci.report import figure_score
from tests.frozen import RESULTS
from tests.modelutil import runner_model

REPO = Path(__file__).resolve().parent.parent
REF = REPO / "docs" / "reference"
FIGURES = REF / "published-figures.json"


@pytest.fixture(scope="module")
def perturbed(tmp_path_factory):
    """The figures file with every published value (each figure's seconds and resolution, each rate) tripled."""
    doc = json.loads(FIGURES.read_text())
    for f in doc["incidents"]:
        if f["published_s"] is not None:
            f["published_s"], f["resolution_s"] = 3 * f["published_s"], 3 * f["resolution_s"]
    for r in doc["rates"]:
        r["value"] = [3 * v for v in r["value"]]
    path = tmp_path_factory.mktemp("published") / "figures.json"
    path.write_text(json.dumps(doc))
    return path


def test_perturbation_moves_every_figure(perturbed):
    """The perturbed copy really multiplies the figures (else the next test proves nothing)."""
    a, b = (from_rates(read(p).rates, "m.md") for p in (FIGURES, perturbed))
    assert len(a) == len(b) and all(y.value.mid == pytest.approx(3 * x.value.mid) and
                                    y.value.low == pytest.approx(3 * x.value.low) for x, y in zip(a, b))
    a = {(f.case, f.family, f.device): f.published_s for f in read().incidents}
    b = {(f.case, f.family, f.device): f.published_s for f in read(perturbed).incidents}
    assert a.keys() == b.keys()
    moved = [k for k in a if a[k] == a[k] and b[k] == pytest.approx(3 * a[k], rel=1e-6)]
    assert len(moved) == len(a) - 1   # the while loop's ratio: no seconds


def test_transfer_only_is_unchanged_when_every_published_figure_is_tripled(perturbed):
    pvp = figure_score
    base = pvp.rows(RESULTS, FIGURES)
    tripled = pvp.rows(RESULTS, perturbed)
    key = ("predicted_s", "low_s", "high_s")
    assert [[r["transfer"][k] for k in key] for r in base] == [[r["transfer"][k] for k in key] for r in tripled]
    # the leave-one-out column does read the published inputs: tripling them moves its predictions
    changed = sum(a["loo"]["predicted_s"] != b["loo"]["predicted_s"] for a, b in zip(base, tripled)
                  if a["loo"]["predicted_s"] is not None)
    assert changed >= 10


def test_no_published_figure_is_a_literal_of_the_model():
    """A figure copied into the model as a constant would pass the perturbation test: the literals of
    jaxci/analysis/ hold none of the published values (those with two or more significant digits)."""
    values = {f.published_s for f in read().incidents if f.published_s == f.published_s}
    distinct = {v for v in values if len(f"{v:g}".replace(".", "").strip("0")) >= 2}
    assert {0.079, 1.82, 0.881, 81.6} <= distinct
    for path in (REPO / "jaxci" / "analysis").glob("*.py"):
        lits = {n.value for n in ast.walk(ast.parse(path.read_text())) if isinstance(n, ast.Constant)
                and isinstance(n.value, float)}
        assert not lits & distinct, (path.name, lits & distinct)


def test_measurements_table_is_read_with_ranges_paths_and_sources():
    ev = from_rates(read().rates, "published-measurements.md")
    t4 = [e for e in ev if e.where == "Tesla T4" and e.term == "gemm_rate"]
    assert len(t4) == 1 and (t4[0].value.low, t4[0].value.high) == (4.17e12, 4.43e12) and t4[0].key == "fp32"
    assert {e.key for e in ev if e.where == "NVIDIA L4"} == {"fp32", "tf32"}
    assert [e.value.mid for e in ev if e.where == "Tesla T4" and e.term == "bandwidth"] == [240e9]
    assert all(e.source.startswith("published-measurements.md: ") and e.figures == frozenset() for e in ev)


def test_a_prediction_labels_its_published_inputs_and_leave_one_out_drops_them():
    ev = load(FIGURES)
    p = runner_model(published=ev).predict("g4dn.2xlarge", "matmul", 1000, "float32", "gpu", first_call=True)
    assert p and pv.derived_from(p.sources, pv.figure_name("1000x1000 matmul, first call", "g4dn.2xlarge", "gpu"))
    from jaxci.analysis.evidence import without
    from jaxci.evidence.inputs import figure_id

    f = next(f for f in read().incidents
             if f.case == "1000x1000 matmul, first call" and f.family == "g4dn.2xlarge")
    q = runner_model(published=without(ev, figure_id(f))).predict("g4dn.2xlarge", "matmul", 1000, "float32", "gpu",
                                                                  first_call=True)
    assert q and not pv.derived_from(q.sources, figure_id(f)) and q.rests_on(pv.PUBLISHED)  # the figure's peers


def test_upper_bound_is_scored_inside_or_outside_never_a_ratio():
    pvp = figure_score
    rows = pvp.rows(RESULTS, FIGURES)
    lecture = [r for r in rows if r["case"].startswith("NUTS lecture pinned to CPU")]
    assert lecture and lecture[0]["kind"] == "upper bound"
    assert lecture[0]["transfer"]["ratio"] is None and "upper bound" in lecture[0]["transfer"]["verdict"]


def test_op_mix_cost_analysis_is_xlas_own_count():
    """The flops and transcendentals the model weighs against bandwidth are XLA's cost analysis of the kernel."""
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp

    from benchmarks.kernels.elementwise import op_mix
    from jaxci.analysis.work import elementwise_ops

    cost = jax.jit(op_mix).lower(jnp.ones(1000, dtype="float32")).compile().cost_analysis()
    cost = cost[0] if isinstance(cost, list) else cost
    assert (cost["flops"], cost["transcendentals"]) == elementwise_ops(1000)


def test_fp64_op_mix_on_a_consumer_gpu_says_which_bound_binds():
    p = runner_model().predict("g4dn.2xlarge", "elementwise", 50_000_000, "float64", "gpu")
    assert p and "XLA cost analysis of the op mix" in p.inputs and "gpu_fp64_tflops 0.25" in p.inputs
    assert ("bandwidth-bound" in p.inputs) != ("arithmetic-bound" in p.inputs)


def test_predict_takes_published_inputs_unless_transfer_only(capsys):
    argv = ["--family", "g4dn.2xlarge", "--kernel", "matmul", "--n", "1000", "--first-call"]
    assert predict.main(argv + ["--transfer-only"]) == 0
    plain = capsys.readouterr().out
    assert predict.main(argv) == 0
    published = capsys.readouterr().out
    assert "published (" not in plain and "part GPU autotuning + code generation" in plain
    assert "published (incidents.md: 1000x1000 matmul, first call, T4 runner gpu)" in published


def test_gpu_series_on_another_architecture_bands_down_to_the_host_side_parts():
    model = runner_model()
    one = model.predict("g4dn.2xlarge", "matmul", 1000, "float32", "gpu", compile_only=True)
    series = model.predict("g4dn.2xlarge", "series", None, "float32", "gpu")
    assert series and series.low < 0.2 * series.seconds and "host-side compile part alone" in series.inputs
    assert series.low >= 5 * one.low   # five host-side parts at least, never below


def test_a_series_left_out_takes_the_other_runners_surplus_never_its_own():
    """Both published runners' fresh-jit series cost more than their compile parts and warm calls add up to. Scored
    leave-one-out, a series takes that surplus from the other runner's published series, labelled, never from its
    own; and it moves when the other runner's series does (the term reads it, it is no constant)."""
    ev = load(FIGURES)
    series = {f.family: f for f in read().incidents if f.kernel == "series"}
    for family, device, other in (("g4dn.2xlarge", "gpu", "CPU runner"), ("ubuntu-latest", "cpu", "T4 runner")):
        left = without(ev, figure_id(series[family]))
        p = runner_model(published=left).predict(family, "series", None, "float32", device)
        own = "T4 runner" if other == "CPU runner" else "CPU runner"
        device_of = {"CPU runner": "cpu", "T4 runner": "gpu"}
        assert p and "series surplus" in p.basis
        assert p.rests_on(pv.PUBLISHED, f"incidents.md: fresh-jit series 100-3000, {other} {device_of[other]}")
        assert not p.rests_on(pv.PUBLISHED, f"incidents.md: fresh-jit series 100-3000, {own} {device_of[own]}")
        tripled = [replace(e, value=e.value.scale(3.0)) if e.term == SERIES else e for e in left]
        q = runner_model(published=tripled).predict(family, "series", None, "float32", device)
        assert q.seconds > p.seconds


def test_numpy_without_its_own_figure_takes_the_familys_published_jax_rate_and_our_ratio():
    """Nearest evidence for NumPy's matmul on a family: its own published JAX CPU matmul rate, times NumPy's rate
    over JAX's measured on one machine here; only the ratio is carried. It follows the published JAX rate."""
    ev = load(FIGURES)
    numpy = next(f for f in read().incidents
                 if f.kernel == "numpy_matmul" and f.family == "ubuntu-latest")
    left = without(ev, figure_id(numpy))
    p = runner_model(published=left).predict("ubuntu-latest", "numpy_matmul", 3000, "float64", "cpu")
    assert p and "published JAX CPU matmul rate" in p.basis and "NumPy float64 / JAX float32" in p.inputs
    assert "3000x3000 matmul, compiled, CPU runner" in p.inputs and "NumPy 3000x3000" not in p.inputs
    doubled = [replace(e, value=e.value.scale(2.0)) if e.term == CPU_GEMM else e for e in left]
    q = runner_model(published=doubled).predict("ubuntu-latest", "numpy_matmul", 3000, "float64", "cpu")
    assert q.seconds == pytest.approx(p.seconds / 2)
    plain = runner_model().predict("ubuntu-latest", "numpy_matmul", 3000, "float64", "cpu")
    assert not plain.rests_on(pv.PUBLISHED) and plain.rests_on(pv.MEASURED)   # transfer-only: our NumPy rate


def test_a_gpu_floor_moves_by_the_familys_published_scan_step_over_the_refs_measured_one():
    """Nearest evidence for a GPU call's dispatch floor on a family: the ref's measured floor times the family's
    published scalar-scan step over the ref's measured step (both launch + sync latency). It follows the
    published step, and a family without one (g5, A10G) keeps the host ratio, said."""
    ev = load(FIGURES)
    plain = runner_model().predict("g4dn.2xlarge", "dispatch", None)
    p = runner_model(published=ev).predict("g4dn.2xlarge", "dispatch", None)
    step = pv.figure_name("scalar scan per step", "g4dn.2xlarge", "gpu")
    assert "GPU launch + sync latency" in p.inputs and pv.derived_from(p.sources, step)
    assert "GPU launch + sync latency" not in plain.inputs and not plain.rests_on(pv.PUBLISHED)
    doubled = [replace(e, value=e.value.scale(2.0)) if e.term == SCAN_STEP else e for e in ev]
    q = runner_model(published=doubled).predict("g4dn.2xlarge", "dispatch", None)
    assert q.seconds == pytest.approx(2 * p.seconds)
    g5 = runner_model(published=ev).predict("g5.2xlarge", "dispatch", None)
    assert "GPU launch + sync latency" not in g5.inputs and "host" in g5.inputs
    g5_plain = runner_model().predict("g5.2xlarge", "dispatch", None)
    assert g5.seconds == pytest.approx(g5_plain.seconds)
