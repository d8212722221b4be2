"""The shape of a decision question and of its row on a sheet, as data (the registry is jaxci.report.questions).

A question is one object: its identity and titles, its rule (a function of the family's context that returns an
Answer), the model terms its prediction leans on (each a published check's identity, never a caption pattern) and
where its evidence lives. A row is addressed by its question, never by its position, and what a later step needs to
know about a row is a typed field of the Answer, never a phrase looked for in its sentence.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from jaxci.analysis.lecture_record import AuditView


class Status(StrEnum):
    """Where a row's decision comes from (its value is the word the sheets print)."""

    MEASURED = "measured"
    PREDICTED = "predicted"
    NOT_MEASURED = "not measured"


@dataclass(frozen=True)
class Answer:
    """What a question's rule decides for one family."""

    decision: str              # what to do (markdown inline)
    status: Status
    basis: str                 # band and inputs, the machine measured on, or the command that would measure it
    sources: frozenset = frozenset()  # what the row's number rests on (a published check of one proves nothing)
    number: str = ""           # the one number that decides the row ("" where nothing was measured or predicted)
    prices_alternative: bool = False  # the row already prices another family's build (no cheaper list is added)


@dataclass(frozen=True)
class Term:
    """A model term a row's prediction rests on, and the published figures that check it: those the model is
    asked about on `device` with this kernel (and size, and first call), read from the check's own fields."""

    device: str
    kernel: str
    name: str                  # the term in words, for the row's warning
    n: int | None = None       # None: any size
    first_call: bool = False

    def checks(self, row: dict) -> bool:
        """Whether a published check row (jaxci.report.published.check) tests this term."""
        return (row.get("device") == self.device and row.get("kernel") == self.kernel
                and bool(row.get("first_call")) == self.first_call and not row.get("compile_only")
                and (self.n is None or row.get("n") == self.n))


@dataclass(frozen=True)
class Context:
    """What a rule reads: the report, the family and its catalogue entry, the audit (or None) and its view."""

    report: Any
    family: str
    entry: Any
    audit: dict | None = None
    view: AuditView | None = None   # the audit's lectures as the policy reads them, read once for every sheet


@dataclass(frozen=True)
class Question:
    """One decision question: identity, titles, rule, the published checks of its terms, its evidence."""

    key: str                   # identity: rows, links and checks are addressed by it
    title: str                 # the sheet's short title
    heading: str               # the findings evidence section's title (numbered by the registry's order)
    how: str                   # what run would measure a missing answer
    evidence_doc: str          # the committed document that explains its evidence, relative to docs/report/
    rule: Callable[[Context], Answer]
    terms: tuple[Term, ...] = ()
    results_are_evidence: bool = True  # a measured answer's evidence is the family's own results


@dataclass(frozen=True)
class QuestionDecision:
    """One row of a sheet: the question it answers (and its place), and the answer."""

    asks: Question
    q: int                     # its number on the sheet (the registry's order, from 1)
    decision: str
    status: Status
    basis: str
    sources: frozenset = frozenset()
    number: str = ""

    @property
    def question(self) -> str:
        return self.asks.title

    @classmethod
    def of(cls, asks: Question, q: int, answer: Answer) -> QuestionDecision:
        return cls(asks, q, answer.decision, answer.status, answer.basis, answer.sources, answer.number)
