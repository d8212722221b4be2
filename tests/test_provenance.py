"""Every prediction names what it rests on as structured sources (jaxci.analysis.provenance): code and tests read
them, never the sentences. Transfer-only means no published source; leave-one-out drops the scored figure's."""

import json
import re
from pathlib import Path

import pytest

from jaxci.analysis import primitives as P
from jaxci.analysis import provenance as pv
from jaxci.analysis.estimate import measure_command
from jaxci.analysis.evidence import without
from jaxci.analysis.kernels import KERNEL
from jaxci.analysis.model import RunnerModel
from jaxci.catalogue import load_catalogue
from jaxci.evidence.inputs import figure_id, reference
from jaxci.evidence.published import read
from jaxci.results.records import load_results
from tests.frozen import RESULTS
from tests.modelutil import runner_model

KINDS = {pv.MEASURED, pv.PUBLISHED, pv.CATALOGUE, pv.REGISTRATION, pv.CALIBRATED}
CASES = [(k, n, dev) for k, n, dev in (("matmul", 1000, "gpu"), ("matmul", 1000, "cpu"), ("elementwise", 10**6, "gpu"),
                                        ("dispatch", None, "gpu"), ("scan", 10**5, "gpu"), ("fori", 10**4, "cpu"),
                                        ("while", None, "cpu"), ("kalman_grad", None, "gpu"), ("series", None, "gpu"),
                                        ("nuts", 3200, "cpu"), ("numpy_matmul", 3000, "cpu"),
                                        ("backend_start", None, "gpu"))]


@pytest.fixture(scope="module")
def models():
    return runner_model(), runner_model(published=reference())


def test_the_cases_cover_every_kernel_the_frozen_results_can_answer():
    assert {k for k, _, _ in CASES} == set(KERNEL) - {"solve", "cholesky", "pure_python", "notebook_start"}


@pytest.mark.parametrize("kernel,n,device", CASES)
def test_every_prediction_rests_on_named_sources_and_transfer_only_on_no_published_one(models, kernel, n, device):
    transfer, nearest = (m.predict("g4dn.2xlarge", kernel, n, "float64", device) for m in models)
    assert transfer and nearest, (transfer.reason, nearest.reason)
    assert transfer.rests_on(pv.MEASURED) and (nearest.rests_on(pv.MEASURED) or nearest.rests_on(pv.PUBLISHED))
    for p in (transfer, nearest):
        assert {s.kind for s in p.sources} <= KINDS
        assert all(s.origin for s in p.sources)
        assert json.loads(json.dumps(p.to_dict()))["sources"] == pv.as_json(p.sources)
    assert not transfer.rests_on(pv.PUBLISHED)
    published = [s for s in nearest.sources if s.kind == pv.PUBLISHED]
    assert all(s.origin.split(":")[0] in ("incidents.md", "published-measurements.md") for s in published)


def test_a_published_case_rests_on_its_own_figure_alone(models):
    p = models[1].predict("g4dn.2xlarge", "matmul", 1000, "float32", "gpu")
    assert p.label == "published" and {s.kind for s in p.sources} == {pv.PUBLISHED}
    assert pv.derived_from(p.sources, pv.figure_name("1000x1000 matmul, compiled", "g4dn.2xlarge", "gpu"))


def test_a_sentence_is_shown_once_and_carries_the_sources_of_what_it_cites():
    floor = pv.measured("m1", "floor 10 µs")
    ratio = pv.catalogue("f", pv.catalogue("m1", "host ratio 1.2 (catalogue)"))
    moved = pv.cite(f"{floor}, x {ratio}", floor, ratio, "a rule")
    assert moved.sources == {pv.Source(pv.MEASURED, "m1"), pv.Source(pv.CATALOGUE, "f"), pv.Source(pv.CATALOGUE, "m1")}
    shown = pv.render([floor, "a rule", floor, moved])
    assert shown == "floor 10 µs; a rule; floor 10 µs, x host ratio 1.2 (catalogue)"
    assert pv.sources_of([floor, "a rule"]) == {pv.Source(pv.MEASURED, "m1")}


def test_leave_one_out_never_rests_on_the_figure_it_scores_and_the_full_model_does():
    """`jaxci published-score` scores each published figure by a model given every other one: no input of
    that prediction may come from the scored figure, read from its sources rather than trusted to `without`."""
    rs = load_results(RESULTS)
    cat = load_catalogue(include_lab=True)
    ev = reference()
    used = {fig for e in ev for fig in e.figures}
    scored = 0
    for f in read().incidents:
        if f.kernel is None or f.per_step:
            continue
        ask = dict(family=f.family, kernel=f.kernel, n=f.n, dtype=f.dtype, device=f.device, first_call=f.first_call,
                   compile_only=f.compile_only)
        loo = RunnerModel.from_results(rs.latest(), rs.machines, cat, without(ev, figure_id(f))).predict(**ask)
        assert not pv.derived_from(loo.sources, figure_id(f)), f.case
        full = RunnerModel.from_results(rs.latest(), rs.machines, cat, ev).predict(**ask)
        if figure_id(f) in used and full:
            scored += 1
            assert pv.derived_from(full.sources, figure_id(f)), f.case
    assert scored >= 10


def test_a_refusal_names_the_suite_benchmark_that_would_answer_it(models):
    """Without a prediction, `needs` is the benchmark whose results would give one (jaxci predict prints its asv
    command); a refusal no measurement would lift (a bad argument) needs nothing."""
    rs = load_results(RESULTS)
    cpu_only = RunnerModel.from_results([r for r in rs.latest() if r.params.get("device", "cpu") == "cpu"],
                                        rs.machines, load_catalogue(include_lab=True))
    gpu = cpu_only.predict("g4dn.2xlarge", "matmul", 1000, "float32", "gpu")
    assert not gpu and gpu.needs == P.TINY and gpu.to_dict()["needs"] == P.TINY
    assert models[0].predict("g4dn.2xlarge", "matmul", 1000, "float16", "gpu").needs == ""
    assert measure_command(P.TINY, "g4dn.2xlarge") == r"asv run --bench '^dispatch\.TinyOp\.' --machine g4dn.2xlarge"
    suite = Path(__file__).resolve().parents[1] / "benchmarks"
    for needs in (P.TINY, P.DENSE, P.ELEMENTWISE, P.BANDWIDTH_T, P.SCAN, P.FORI, P.WHILE, P.COLD, P.SERIES, P.KALMAN,
                  P.NUTS_STEP, P.NUTS_STEPS, P.HOST_LINALG):
        module, cls, _ = needs.split(".")
        assert re.search(rf"^class {cls}\b", (suite / f"{module}.py").read_text(), re.M), needs


def test_a_description_names_each_kind_once_measured_first():
    sources = {pv.Source(pv.CATALOGUE, "f"), pv.Source(pv.MEASURED, "m2"), pv.Source(pv.MEASURED, "m1"),
               pv.Source(pv.PUBLISHED, "incidents.md: a"), pv.Source(pv.PUBLISHED, "incidents.md: b"),
               pv.Source(pv.PUBLISHED, "published-measurements.md: c")}
    assert pv.describe(sources) == ("measured m1, m2; published incidents.md: a, incidents.md: b, "
                                    "published-measurements.md: c; catalogue f")
    assert pv.describe(sources, brief=True) == ("measured on m1, m2; published: incidents.md (2), "
                                                "published-measurements.md (1); catalogue")
    assert pv.describe(frozenset()) == ""
