"""A published check judges the number a row shows: a row whose figure is derived from the very published figure a
check compares against (row 5's compile per fresh jit: the published first call less the warm call) is never
called refuted by a different prediction of that figure."""

from types import SimpleNamespace

from jaxci.analysis import provenance as pv
from jaxci.analysis.sampler import SamplerRow
from jaxci.report import decisions, questions, rows, termcheck
from jaxci.report.decisions import QuestionDecision

CASE = "1000x1000 matmul, first call"
ROW = {"family": "g4dn.2xlarge", "device": "gpu", "case": CASE, "kernel": "matmul", "n": 1000, "first_call": True,
       "published_s": 0.079, "predicted_s": 0.952,
       "ratio": 12.0, "low_s": 0.03, "high_s": 0.99, "sources": [{"kind": pv.MEASURED, "origin": "lab-h200"}]}


def _annotated(*sources: pv.Source) -> QuestionDecision:
    report = SimpleNamespace(model_checks=[ROW])
    row = QuestionDecision(
        questions.ENVIRONMENT, 5, "the jax-env action", decisions.PREDICTED, "predicted compile 78 ms per fresh jit",
        sources=frozenset(sources))
    return termcheck.annotate(report, "g4dn.2xlarge", row)


def test_a_row_resting_on_the_checked_figure_is_not_refuted_by_it():
    own = _annotated(pv.Source(pv.PUBLISHED, f"incidents.md: {CASE}, T4 runner gpu",
                               frozenset({pv.figure_name(CASE, "g4dn.2xlarge", "gpu"), "another | g4dn.2xlarge gpu"})))
    assert "not to be trusted" not in own.decision and "no check of this row" in own.basis


def test_an_independent_row_is_still_refuted_by_a_published_check():
    other = _annotated(pv.Source(pv.MEASURED, "lab-h200"))
    assert "not to be trusted" in other.decision
    scan = pv.Source(pv.PUBLISHED, "incidents.md: scan", frozenset({pv.figure_name("scalar scan", "g4dn.2xlarge",
                                                                                   "gpu")}))
    another_case = _annotated(scan)
    assert "not to be trusted" in another_case.decision


def test_question_4_shows_the_measured_chain_methods_per_device():
    """The sampler row names the device of each measured best, and a family without its own measurement shows the
    table measured elsewhere beside its prediction and the chain method it decides (made-up rows)."""
    def row(device, ess):
        return SamplerRow("lab", (("device", device), ("draws", 200), ("dtype", "float64"), ("model", "m")),
                          {("vectorized", 4): ess[0], ("sequential", 4): ess[1], ("parallel", 4): None}, {}, "")

    best, table = rows._chain_methods([row("cpu", (106.0, 85.0)), row("gpu", (54.9, 33.5))])
    assert best == {"cpu": (("vectorized", 4), 106.0), "gpu": (("vectorized", 4), 54.9)}
    assert table == ("CPU (m, float64, 200 draws): vectorized x4 106, sequential x4 85 ESS/s; "
                     "GPU (m, float64, 200 draws): vectorized x4 54.9, sequential x4 33.5 ESS/s")
