"""Published incident figures (docs/reference/published-figures.json, read by its one loader,
jaxci.evidence.published, once per report in jaxci.report.build), held against the runner model (`check`) and
drawn beside our measured lines (`points`).

They never enter any number the report computes. The page's reference points are the figures whose workload is
a suite kernel at a stated size: the compiled (warm) rows of the direct-timings table, and the scalar loops of
incident 1.
"""

from __future__ import annotations

from dataclasses import dataclass

from jaxci.analysis.provenance import as_json
from jaxci.evidence.published import PublishedFigure

SCAN = ("loops.Scan.time_warm", (("unroll", 1),))


@dataclass(frozen=True)
class PublishedPoint:
    benchmark: str
    case: tuple
    dtype: str          # "float32", or "unstated" where the incident does not say
    column: str         # the runner's name in the source's table ("CPU runner", "T4 runner": the figure's `runner`)
    n: int
    seconds: float
    what: str
    family: str = ""    # the runner family and device the figure was measured on
    device: str = ""


#: the suite benchmark (and case) each model kernel of a published figure is drawn on
_DRAWN = {"matmul": ("dense.Dense.time_warm", (("op", "matmul"),)),
          "elementwise": ("elementwise.Elementwise.time_warm", ()), "scan": SCAN}


def points(figs: list) -> list[PublishedPoint]:
    """The page's reference points, from the incidents' figures (the one read): warm suite kernels at a stated size; the
    scalar loops' dtype is unstated in the incident."""
    out = []
    for f in figs:
        if f.kernel not in _DRAWN or f.first_call or f.compile_only or f.per_step or f.n is None:
            continue
        bench, case = _DRAWN[f.kernel]
        scan = f.kernel == "scan"
        what = "incident 1: scalar lax.scan" if scan else f.case.replace(", compiled", "")
        out.append(PublishedPoint(bench, case, "unstated" if scan else f.dtype, f.runner or f.family, f.n,
                                  f.published_s, what, f.family, f.device))
    return out


def columns(pts) -> list[tuple[str, str]]:
    """(column, device) of the points, each once: the CPU's first, then by name (a graph's legend order)."""
    return sorted({(p.column, p.device) for p in pts}, key=lambda c: (c[1] != "cpu", c[0]))


def for_kernel(pts, benchmark: str, case: tuple) -> list[PublishedPoint]:
    """Published points of one figure's kernel (a case matches when its stated params agree)."""
    have = dict(case)
    return [p for p in pts if p.benchmark == benchmark and all(have.get(k) == v for k, v in p.case)]


# ---- every published figure, held against the runner model (jaxci published-score, findings) ----

def _interval_ratio(pred: float, f: PublishedFigure) -> float:
    """Predicted over the published value's rounding interval (value +- resolution): 1 inside it, else the ratio
    to its nearer end."""
    lo, hi = f.published_s - f.resolution_s, f.published_s + f.resolution_s
    return pred / lo if pred < lo and lo > 0 else (pred / hi if pred > hi else 1.0)


def _ask(model, f: PublishedFigure, row: dict):
    """Fill row with the model's answer to one figure; the Prediction that says why when it cannot."""
    if f.per_step:
        a = model.predict(f.family, f.kernel, 1_000_000, f.dtype, f.device)
        b = model.predict(f.family, f.kernel, 2_000_000, f.dtype, f.device)
        if a and b:
            row.update(predicted_s=(b.seconds - a.seconds) / 1e6, low_s=(b.low - a.low) / 1e6,
                       high_s=(b.high - a.high) / 1e6, inputs=a.inputs, sources=as_json(a.sources | b.sources))
            return None
        return a if not a else b
    p = model.predict(f.family, f.kernel, f.n, f.dtype, f.device, first_call=f.first_call,
                      compile_only=f.compile_only)
    if p:
        row.update(predicted_s=p.seconds, low_s=min(p.low, p.high), high_s=max(p.low, p.high), inputs=p.inputs,
                   sources=as_json(p.sources))
        return None
    return p


def bound_ends(f: PublishedFigure, low: float, high: float) -> int:
    """How many ends of the predicted band keep a published bound (0: the bound refutes the band)."""
    if f.bound == "lower":
        return sum(x > f.published_s for x in (low, high))
    return sum(x <= f.published_s for x in (low, high))


def bound_verdict(f: PublishedFigure, low: float, high: float) -> str:
    """A published bound scored as a bound: where the band lies against it, never a ratio."""
    ends = bound_ends(f, low, high)
    if f.bound == "lower":
        where = ("above it at both ends of the band" if ends == 2 else
                 "above it at the high end only" if ends == 1 else "below it")
        return f"published is a bound (> {f.published_s:,.0f} s): predicted {where}"
    where = ("inside it at both ends of the band" if ends == 2 else
             "inside it at the low end only" if ends == 1 else "outside it at both ends of the band")
    return f"published is an upper bound (the whole lecture, <= {f.published_s:,.0f} s): predicted {where}"


def check(figs: list[PublishedFigure], model) -> list[dict]:
    """One row per figure: case, family, device, the model question it asks (kernel, n, first_call, compile_only:
    how a decision row finds its checks, jaxci.report.question.Term), published_s, predicted_s, low_s, high_s,
    ratio, why, inputs, sources (what the inputs rest on: jaxci.analysis.provenance.as_json), ratio_interval (to the
    published value's rounding interval) and, for a published bound, `verdict` and `bound_ends` (bound_ends)."""
    import math

    rows = []
    for f in figs:
        row: dict = {"case": f.case, "family": f.family, "device": f.device, "kernel": f.kernel, "n": f.n,
               "first_call": f.first_call, "compile_only": f.compile_only,  # the check's identity, as data
               "published_s": None if math.isnan(f.published_s) else f.published_s,
               "predicted_s": None, "low_s": None, "high_s": None, "ratio": None, "why": f.why, "inputs": "",
               "sources": [], "ratio_interval": None, "verdict": "", "bound_ends": None}
        if f.kernel is not None:
            p = _ask(model, f, row)
            if p is not None:
                row["why"] = p.reason
        pred = row["predicted_s"]
        if pred is not None and f.bound:
            row["verdict"] = bound_verdict(f, row["low_s"], row["high_s"])
            row["bound_ends"] = bound_ends(f, row["low_s"], row["high_s"])
        elif pred is not None and row["published_s"]:
            row["ratio"] = pred / row["published_s"]
            row["ratio_interval"] = _interval_ratio(pred, f)
        elif pred is not None and f.why:
            row["verdict"] = f.why
        rows.append(row)
    return rows
