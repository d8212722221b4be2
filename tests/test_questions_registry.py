"""The decision questions are one registry (jaxci.report.questions): rows are found by their question, decisions
travel as typed fields, and a published check is found by the model question it asks. Each test would fail if a
reworded sentence or caption, or a reordered row, changed what the code decides.

Content and wiring only, from the committed results and made-up answers; never a timing."""

import dataclasses
from types import SimpleNamespace

import pytest

from jaxci.report import decisions, findings, maintainers, questions, rows, termcheck
from jaxci.report.build import build
from jaxci.report.question import Answer, Question, Status, Term
from tests.committed import committed

RESULTS = committed()


@pytest.fixture(scope="module")
def report():
    return build(RESULTS)


def _fresh(report):
    """The report without its memoised sheets (a test that changes the registry must not see old sheets)."""
    return dataclasses.replace(report)


def test_every_row_is_its_question_in_the_registrys_order(report):
    sheet = decisions.sheet(report, "g4dn.2xlarge")
    assert [d.asks for d in sheet.rows] == list(questions.REGISTRY)
    assert [d.q for d in sheet.rows] == list(range(1, len(questions.REGISTRY) + 1))
    for q in questions.REGISTRY:
        assert sheet.row(q).asks is q and sheet.row(q).question == q.title
        assert isinstance(sheet.row(q).status, Status)
    assert len({q.key for q in questions.REGISTRY}) == len(questions.REGISTRY)


def test_a_toy_question_reaches_every_view_from_the_registry_alone(report, monkeypatch):
    """The extension point: a question registered here (and nowhere else) gets its row on every sheet, its numbered
    evidence section on the findings page and its linked row on a maintainers' page."""
    toy = Question("toy", "Toy question", "Toy evidence", "run the toy suite", "../toy.md",
                   lambda ctx: Answer(f"toy answer for {ctx.family}", Status.PREDICTED, "toy basis", number="42"))
    monkeypatch.setattr(questions, "REGISTRY", (*questions.REGISTRY, toy))
    fresh = _fresh(report)
    sheet = decisions.sheet(fresh, "g4dn.2xlarge")
    row = sheet.row(toy)
    assert row.q == len(questions.REGISTRY) and row.decision == "toy answer for g4dn.2xlarge"
    assert f"## {len(questions.REGISTRY)}. Toy evidence" in findings._evidence(fresh)
    assert "[predicted](../toy.md)" in maintainers.answers_md(sheet.rows, "g4dn.2xlarge", site=False)


def test_the_cheaper_families_follow_the_cost_answers_flag_not_its_words(monkeypatch):
    """Row 6 adds the cheaper families unless its answer prices a partner family: a flag of the answer, so a
    repository named "x alone y" (a committed audit's name is anything) or a reworded partner clause changes
    nothing."""
    cat = {"a": object()}
    monkeypatch.setattr(rows.actions, "cheaper", lambda catalogue, family: "cheaper per hour: b")
    ctx = SimpleNamespace(report=SimpleNamespace(catalogue=cat), family="a", entry=None, audit=None, view=None)
    for words, priced, added in (("one build: x alone y", False, True), ("one build; b on its own ≈ $1", True, False)):
        monkeypatch.setattr(rows, "_cost", lambda *a, w=words, p=priced: Answer(w, Status.PREDICTED, "",
                                                                                  prices_alternative=p))
        assert rows.cost(ctx).decision.endswith("cheaper per hour: b") is added


def test_a_published_check_is_found_by_its_model_question_not_its_caption():
    """A reworded caption keeps its check; a caption that reads like a term's but asks another question does not."""
    term = Term("gpu", "matmul", "the compile of a fresh jit", n=1000, first_call=True)
    base = {"family": "f", "device": "gpu", "predicted_s": 1.0, "published_s": 0.5, "ratio": 2.0}
    reworded = {**base, "case": "a fresh 1k matmul, its first call", "kernel": "matmul", "n": 1000,
                "first_call": True}
    lookalike = {**base, "case": "1000x1000 matmul, first call", "kernel": "matmul", "n": 3000, "first_call": True}
    found = termcheck.checks(SimpleNamespace(model_checks=[reworded, lookalike]), "f", (term,))
    assert [c.case for c in found] == ["a fresh 1k matmul, its first call"]


def test_the_committed_checks_reach_the_same_rows_as_the_captions_did(report):
    """The published checks each question's terms find in the committed incidents: the cases the caption patterns
    matched before the checks carried their identity."""
    cases = {q.key: sorted({c.case for c in termcheck.checks(report, "g4dn.2xlarge", q.terms)})
             for q in questions.REGISTRY if q.terms}
    assert cases == {
        "crossover": ["1000x1000 matmul, compiled", "3000x3000 matmul, compiled"],
        "sampler": ["NUTS lecture pinned to CPU (whole lecture: the cell and the rest)",
                    "NUTS state-space cell (> timeout, a bound)"],
        "environment": ["1000x1000 matmul, first call"]}
