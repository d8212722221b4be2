"""A case that was published on the family is answered with the published figure, labelled published, with no
band of our own around it; a leave-one-out model (the figure left out) predicts it instead."""

from jaxci.analysis.evidence import without
from jaxci.evidence.inputs import reference
from tests.modelutil import runner_model


def test_a_published_case_is_the_published_figure_labelled_published():
    published = reference()
    model = runner_model(published=published, lab=False)
    first = model.predict("ubuntu-latest", "elementwise", 50_000_000, "float32", "cpu", first_call=True)
    warm = model.predict("ubuntu-latest", "elementwise", 50_000_000, "float32", "cpu")
    assert (first.label, first.seconds, first.low, first.high) == ("published", 0.816, 0.816, 0.816)
    assert (warm.label, warm.seconds) == ("published", 0.381) and "no spread published" in warm.inputs
    other = model.predict("ubuntu-latest", "elementwise", 40_000_000, "float32", "cpu")
    assert other.label == "predicted" and other.low < other.high   # not the published case: a band of its own
    case = next(e for e in published if e.term == "case_warm" and e.where == "ubuntu-latest" and e.n == 50_000_000)
    loo = runner_model(published=without(published, next(iter(case.figures))), lab=False)
    assert loo.predict("ubuntu-latest", "elementwise", 50_000_000, "float32", "cpu").label == "predicted"
