"""A published check judges the number a row shows: a row whose figure is derived from the very published figure a
check compares against (row 5's compile per fresh jit: the published first call less the warm call) is never
called refuted by a different prediction of that figure."""

from types import SimpleNamespace

from jaxci.report import termcheck
from jaxci.report.decisions import Decision

CASE = "1000x1000 matmul, first call"
ROW = {"family": "g4dn.2xlarge", "device": "gpu", "case": CASE, "published_s": 0.079, "predicted_s": 0.952,
       "ratio": 12.0, "low_s": 0.03, "high_s": 0.99, "inputs": "dispatch floor (TinyOp, lab-h200 gpu)"}


def _annotated(sources: str) -> Decision:
    report = SimpleNamespace(model_checks=[ROW])
    row = Decision(5, "the jax-env action", "predicted", "predicted compile 78 ms per fresh jit", sources=sources)
    return termcheck.annotate(report, "g4dn.2xlarge", row)


def test_a_row_resting_on_the_checked_figure_is_not_refuted_by_it():
    own = _annotated(f"published (incidents.md: {CASE}, T4 runner gpu): compile part 0.078 s")
    assert "not to be trusted" not in own.decision and "no check of this row" in own.basis


def test_an_independent_row_is_still_refuted_by_a_published_check():
    other = _annotated("transfer from lab-h200")
    assert "not to be trusted" in other.decision
