"""A predicted sheet row beside the published check of the model term it leans on.

The runner model is held against every published figure (jaxci.report.published.check: report.model_checks, the
findings section "The runner model against the published figures"). A decision row that rests on one of those
terms shows that check next to its band (published value, ratio, source), and a row whose term the check refutes
(off by more than 2x, the model-check section's own yardstick) says so in its decision, so a maintainer sees
which rows to trust. The checks never feed a number: they only label it.
"""

from __future__ import annotations

import dataclasses

from jaxci.analysis import provenance as pv
from jaxci.report.question import Status, Term

SOURCE = "docs/reference/incidents.md"
AGREE = (0.5, 2.0)  # within 2x of the published value (to its rounding interval): the section's own yardstick

@dataclasses.dataclass(frozen=True)
class Check:
    term: str
    case: str
    device: str
    published_s: float | None
    predicted_s: float | None
    ratio: float | None      # predicted / published (to the rounding interval when the check gives one)
    verdict: str             # a published bound's own verdict, else ""
    low_s: float | None = None
    high_s: float | None = None
    ratio_raw: float | None = None  # predicted / the printed value
    on_published: bool = False      # the checked prediction rests on a published figure
    bound_refuted: bool = False     # a published bound that neither end of the predicted band keeps
    row_rests_on_it: bool = False   # the number the row shows is derived from this very published figure

    @property
    def independent(self) -> bool:
        """False when the prediction itself rests on a published figure (jaxci.analysis.evidence), or when the
        row's own number rests on this one: then the check compares a number with its own input, or checks a
        number the row does not show, and proves nothing about the row."""
        return not self.on_published and not self.row_rests_on_it

    def interval(self) -> tuple[float, float]:
        """The printed value's rounding interval, recovered from the two ratios (it is symmetric about the value);
        the value itself when the prediction lies inside it (its width is then not needed)."""
        pub, pred = self.published_s, self.predicted_s
        if pub is None or pred is None:
            raise ValueError(f"{self}: a check needs both the published and the predicted seconds")
        if self.ratio is None or self.ratio == 1.0 or not self.ratio_raw or abs(self.ratio - self.ratio_raw) < 1e-12:
            return pub, pub
        end = pred / self.ratio
        return (end, 2 * pub - end) if end < pub else (2 * pub - end, end)

    @property
    def outside_band(self) -> bool:
        """The published value (to its rounding) lies outside the predicted band: a band too narrow, even
        within 2x."""
        if self.ratio is None or self.low_s is None or self.high_s is None or self.published_s is None:
            return False
        lo, hi = self.interval()
        return hi < self.low_s or lo > self.high_s

    @property
    def refutes(self) -> bool:
        if not self.independent:
            return False
        if self.ratio is None:
            return self.bound_refuted
        return not AGREE[0] <= self.ratio <= AGREE[1]

    def text(self) -> str:
        if self.ratio is None:
            return f"published check ({SOURCE}, {self.case}): {self.verdict}"
        band = (f" (band {self.low_s:.3g} .. {self.high_s:.3g} s)" if None not in (self.low_s, self.high_s) else "")
        return (f"published check ({SOURCE}, {self.case}, {self.device}): predicted {self.predicted_s:.3g} s"
                f"{band} vs published {self.published_s:.3g} s, ratio {self.ratio_raw or self.ratio:.2f}"
                + (f" ({self.ratio:.2f} to its rounding)" if self.ratio_raw and abs(self.ratio - self.ratio_raw)
                   > 0.005 else ""))

    def label(self) -> str:
        if self.row_rests_on_it:
            return "no check of this row: the row's figure is derived from this published figure"
        if not self.independent:
            return "not independent: the prediction uses published figures"
        return ("refutes the term" if self.refutes else "outside the band" if self.outside_band
                else "agrees")


def checks(report, family: str, terms: tuple[Term, ...], has_gpu: bool = True) -> list[Check]:
    """The published checks of `terms` (a question's, jaxci.report.questions) on this family's devices (none: no
    check exists). A check is found by the model question it asks (kernel, size, first call: its own fields), never
    by its caption."""
    out = []
    for t in terms:
        if t.device == "gpu" and not has_gpu:
            continue
        for row in getattr(report, "model_checks", None) or []:
            if row.get("family") != family or not t.checks(row) or row.get("predicted_s") is None:
                continue
            ratio = row.get("ratio_interval") if row.get("ratio_interval") is not None else row.get("ratio")
            out.append(Check(t.name, row["case"], t.device, row.get("published_s"), row["predicted_s"], ratio,
                             row.get("verdict") or "", row.get("low_s"), row.get("high_s"), row.get("ratio"),
                             any(s.get("kind") == pv.PUBLISHED for s in row.get("sources") or ()),
                             bound_refuted=row.get("bound_ends") == 0))
    return out


def annotate(report, family: str, decision, has_gpu: bool = True):
    """The row with its published checks beside its band, and a warning in its decision for each term a check
    refutes; a measured or unmeasured row is returned as it is."""
    if decision.status != Status.PREDICTED:
        return decision
    found = [dataclasses.replace(c, row_rests_on_it=pv.derived_from(decision.sources,
                                                                    pv.figure_name(c.case, family, c.device)))
             for c in checks(report, family, decision.asks.terms, has_gpu)]
    if not found:
        return decision
    text = decision.decision
    for c in found:
        if c.refutes:
            how = f"{c.ratio:.2g}x the published figure" if c.ratio is not None else c.verdict
            text += (f" (check: its term for {c.term} is {how} ({c.case}, {SOURCE}): the published check refutes "
                     "it, so this row's number is not to be trusted)")
        elif c.outside_band and c.independent:
            text += (f" (check: the published {c.published_s:,.4g} s for {c.case} lies outside this term's "
                     f"predicted band {c.low_s:,.4g} .. {c.high_s:,.4g} s: the band is too narrow)")
    basis = decision.basis + "; " + "; ".join(f"{c.text()} ({c.label()})" for c in found)
    return dataclasses.replace(decision, decision=text, basis=basis)
