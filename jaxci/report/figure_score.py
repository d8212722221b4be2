"""Every published figure scored against the runner model: transfer-only and leave-one-out, side by side
(`jaxci published-score`, docs/runner-model.md "Scored against the published figures").

For every incident figure of docs/reference/published-figures.json (jaxci.evidence.published):

- transfer-only: predicted with no published input at all (our results and the sourced catalogue only);
- leave-one-out: the model given every published input (jaxci.evidence.inputs: the incidents' figures and
  the achieved rates) except those derived from the figure scored.

A point figure is scored by its ratio to the printed value's rounding interval; a bound (the T4 cell's
"> 2,400 s", the 892 s whole lecture that bounds its cell from above) by inside or outside, never a ratio. The
goal factor is 2x for first calls and compiles, 1.5x for warm figures. Independent model terms are counted once:
figures that read the same term (three GPU scan rows are one per-step slope) are one term, a hit only when all
of them are. Band coverage: how often the published interval meets the prediction's band, with the median band
width (high / low) beside it, since a wide band covers without saying much. Two bands: the spread of the
prediction's inputs, and (leave-one-out only) that band widened by the residuals of the other figures of its
term, else of its class (family, device, kind of term), each predicted leave-two-out (`_residual_band`).
"""

from __future__ import annotations

from pathlib import Path

COLS = ("predicted_s", "low_s", "high_s", "ratio", "ratio_interval", "verdict", "bound_ends", "in_band", "inputs",
        "why")


def goal(f) -> float:
    """The goal factor of issue 36: first calls and compiles within 2x, warm figures within 1.5x."""
    return 2.0 if (f.first_call or f.compile_only or f.kernel == "series") else 1.5


def term(f) -> str:
    """The model term a figure reads: figures of one term are one independent check."""
    if f.kernel == "scan" and not f.compile_only:
        what = "scan per-step slope"
    elif f.kernel in ("matmul", "series") and (f.first_call or f.kernel == "series"):
        what = "matmul compile"
    elif f.kernel == "elementwise" and f.first_call:
        what = "op-mix compile"
    elif f.kernel == "scan":
        what = "scan compile"
    elif f.kernel == "matmul":
        what = "GEMM rate"
    else:
        what = f.kernel or f.case
    return f"{f.family} {f.device}: {what}"


def _score(f, row: dict) -> dict:
    """The columns of one model's answer: ratio (points) or verdict (bounds), and whether the band holds it."""
    out = {k: row.get(k) for k in COLS}
    if row["predicted_s"] is None or row["published_s"] is None or f.bound:
        out["in_band"] = None
        return out
    lo, hi = f.published_s - f.resolution_s, f.published_s + f.resolution_s
    out["in_band"] = not (hi < row["low_s"] or lo > row["high_s"])
    return out


def overridden(cat: dict, sets: list[str]) -> dict:
    """The catalogue with FAMILY.KEY=VALUE figures replaced, for a sensitivity run
    (`--set ubuntu-latest.cpu_physical_cores=4`): FAMILY a catalogue machine (its name may hold dots: the key is
    after the last one), KEY a figure the entry already has, VALUE a finite number above zero in ASCII digits. A
    bad one raises ValueError with the one-line reason."""
    import math

    from jaxci.catalogue import Figure
    from jaxci.util.validate import quoted

    for item in sets:
        name, _, value = item.partition("=")
        family, _, key = name.rpartition(".")
        if family not in cat or not key or not value:
            raise ValueError(f"--set {quoted(item, 80)}: FAMILY.KEY=VALUE with a catalogue family")
        if key not in cat[family].figures:
            known = ", ".join(sorted(cat[family].figures))
            raise ValueError(f"--set {quoted(item, 80)}: {family} has no figure {quoted(key, 40)} (it has: {known})")
        try:
            v = float(value) if value.isascii() else math.nan   # float() reads Arabic digits too
        except ValueError:
            v = math.nan
        if not (math.isfinite(v) and v > 0):
            raise ValueError(f"--set {quoted(item, 80)}: the value is not a finite number above zero in ASCII "
                             "digits")
        cat[family].figures[key] = Figure(v, source="--set (sensitivity run, not a source)")
    return cat


def klass(f) -> str:
    """The figure's family, device and kind of term (throughput, compile, loop, host): where its own term holds
    no other figure, the residuals of this class stand for how far such a term has been off on that runner."""
    what = term(f).split(": ", 1)[1]
    kind = ("compile" if "compile" in what else "loop" if "scan" in what else
            "host" if what == "pure_python" else "throughput")
    return f"{f.family} {f.device}: {kind}"


def rows(results_dir: Path, figures_file: Path, sets=()) -> list[dict]:
    """One row per published figure: its case, kind, term and goal, and both models' scored answers."""
    from jaxci.analysis.evidence import without
    from jaxci.analysis.model import RunnerModel
    from jaxci.catalogue import load_catalogue
    from jaxci.evidence.inputs import figure_id, of
    from jaxci.evidence.published import read
    from jaxci.report.published import check
    from jaxci.results.records import load_results

    rs = load_results(results_dir)
    records, cat = rs.latest(), overridden(load_catalogue(include_lab=True), list(sets))
    transfer = RunnerModel.from_results(records, rs.machines, cat)     # no published input at all
    published = read(figures_file)
    evidence = of(published)

    def leave_out(f, *others) -> dict:
        """f checked against the model given every published input except those derived from f and others."""
        ev = without(evidence, figure_id(f))
        for g in others:
            ev = without(ev, figure_id(g))
        return check([f], RunnerModel.from_results(records, rs.machines, cat, ev))[0]

    out, figs = [], list(published.incidents)
    for f in figs:
        t, o = check([f], transfer)[0], leave_out(f)
        out.append({"case": f.case, "family": f.family, "device": f.device, "published_s": t["published_s"],
                    "kind": ("ratio, no seconds" if t["published_s"] is None else
                             {"lower": "lower bound", "upper": "upper bound"}.get(f.bound, "point")),
                    "term": term(f), "goal": goal(f), "transfer": _score(f, t), "loo": _score(f, o),
                    "resolution_s": f.resolution_s})
    for f, r in zip(figs, out):
        _residual_band(f, r, figs, out, leave_out)
    return out


def residual_group(f, figs, out) -> tuple[str, list]:
    """The other scored point figures whose residuals widen f's band: those of f's own term, else (none there)
    those of its class (klass)."""
    pts = [(g, o) for g, o in zip(figs, out) if g is not f and o["kind"] == "point" and o["published_s"]]
    same = [(g, o) for g, o in pts if o["term"] == term(f)]
    if same:
        return "term", same
    return "class", [(g, o) for g, o in pts if klass(g) == klass(f)]


def _residual_band(f, r: dict, figs, out, leave_out) -> None:
    """Widen the leave-one-out band by the residuals (published / predicted) of the other figures of its term
    (else its class), each predicted leave-two-out: without f's inputs *and* its own. With f's inputs in, the
    other figure of a two-figure term is predicted from f itself, so its residual would restate f's own miss.
    Each residual widens the band both ways (x 1/R .. x R, R = max(r, 1/r)): it measures how far the term has
    been off, and one or two residuals do not establish a sign."""
    c = r["loo"]
    c["band_low_s"], c["band_high_s"], c["in_resid_band"], c["residuals"] = c["low_s"], c["high_s"], None, []
    if c["predicted_s"] is None or r["kind"] != "point" or r["published_s"] is None:
        return
    c["residuals_from"], group = residual_group(f, figs, out)
    for g, o in group:
        p = leave_out(g, f)["predicted_s"]
        if p:
            c["residuals"].append({"figure": f"{g.case} | {g.family} {g.device}", "r": o["published_s"] / p})
    wide = max([1.0] + [max(x["r"], 1 / x["r"]) for x in c["residuals"]])
    c["band_low_s"] = min(c["low_s"], c["predicted_s"] / wide)
    c["band_high_s"] = max(c["high_s"], c["predicted_s"] * wide)
    lo, hi = r["published_s"] - r["resolution_s"], r["published_s"] + r["resolution_s"]
    c["in_resid_band"] = not (hi < c["band_low_s"] or lo > c["band_high_s"])


def _hit(r: dict, col: str) -> bool | None:
    """Within the goal factor (points, to the rounding interval) or inside (bounds); None: not predicted."""
    c = r[col]
    if c["predicted_s"] is None:
        return None
    if r["kind"].endswith("bound"):
        return c["bound_ends"] != 0
    x = c["ratio_interval"]
    return x is not None and 1 / r["goal"] <= x <= r["goal"]


def summary(out: list[dict], col: str) -> dict:
    """Counts for one column: figures within goal (warm / first-call split), terms, bounds, band coverage."""
    pts = [r for r in out if r["kind"] == "point" and r["published_s"] is not None]
    pred = [r for r in pts if r[col]["predicted_s"] is not None]
    warm = [r for r in pred if r["goal"] == 1.5]
    first = [r for r in pred if r["goal"] == 2.0]
    terms: dict[str, list] = {}
    for r in pred + [r for r in out if r["kind"].endswith("bound") and r[col]["predicted_s"] is not None]:
        terms.setdefault(r["term"], []).append(_hit(r, col))
    bounds = [r for r in out if r["kind"].endswith("bound")]
    banded = [r for r in pred if r[col]["in_band"] is not None]
    resid = [r for r in pred if r[col].get("in_resid_band") is not None]
    return {"figures": len(out), "points": len(pts), "predicted": len(pred),
            "warm_within_1.5x": sum(bool(_hit(r, col)) for r in warm), "warm": len(warm),
            "first_within_2x": sum(bool(_hit(r, col)) for r in first), "first": len(first),
            "within_2x": sum(0.5 <= r[col]["ratio_interval"] <= 2 for r in pred if r[col]["ratio_interval"]),
            "terms": len(terms), "terms_within_goal": sum(all(v) for v in terms.values()),
            "bounds": len(bounds), "bounds_inside": sum(bool(_hit(r, col)) for r in bounds),
            "band_covered": sum(r[col]["in_band"] for r in banded), "banded": len(banded),
            "resid_band_covered": sum(r[col]["in_resid_band"] for r in resid), "resid_banded": len(resid),
            "band_width": _median([r[col]["high_s"] / r[col]["low_s"] for r in banded if r[col]["low_s"]]),
            "resid_band_width": _median([r[col]["band_high_s"] / r[col]["band_low_s"] for r in resid
                                         if r[col]["band_low_s"]])}


def _median(xs: list) -> float | None:
    """The median band width (high / low): a covered figure says little when its band is wide."""
    xs = sorted(xs)
    return None if not xs else (xs[len(xs) // 2] if len(xs) % 2 else (xs[len(xs) // 2 - 1] + xs[len(xs) // 2]) / 2)


def _line(name: str, s: dict) -> str:
    cov = f"{s['band_covered']}/{s['banded']}" + (f" ({100 * s['band_covered'] / s['banded']:.0f}%)"
                                                  if s["banded"] else "")
    cov += f", median width x{s['band_width']:.2g}" if s["band_width"] else ""
    rcov = (f"{s['resid_band_covered']}/{s['resid_banded']} ({100 * s['resid_band_covered'] / s['resid_banded']:.0f}%)"
            f", median width x{s['resid_band_width']:.2g}" if s["resid_banded"] else "— (no published input)")
    return (f"| {name} | {s['predicted']}/{s['points']} | {s['warm_within_1.5x']}/{s['warm']} | "
            f"{s['first_within_2x']}/{s['first']} | {s['within_2x']}/{s['predicted']} | "
            f"{s['terms_within_goal']}/{s['terms']} | {s['bounds_inside']}/{s['bounds']} | {cov} | {rcov} |")


def _s(x) -> str:
    return "—" if x is None else f"{x:.3g}"


def _cell(r: dict, col: str) -> str:
    c = r[col]
    if c["predicted_s"] is None:
        return "not predicted"
    band = f"{_s(c['predicted_s'])} [{_s(c['low_s'])}..{_s(c['high_s'])}]"
    if r["kind"].endswith("bound"):
        return f"{band} {'inside' if _hit(r, col) else 'OUTSIDE'}"
    if r["kind"] != "point":
        return f"{band} (nothing in seconds to score)"
    mark = " (out of band)" if c["in_band"] is False else ""
    if col == "loo" and c.get("residuals"):
        wide = max(max(x["r"], 1 / x["r"]) for x in c["residuals"])
        mark += (f" resid band ({c['residuals_from']}, {len(c['residuals'])} figure(s), x{wide:.2g}) "
                 f"[{_s(c['band_low_s'])}..{_s(c['band_high_s'])}]" + ("" if c["in_resid_band"] else " (out)"))
    return f"{band} x{_s(c['ratio_interval'])}{mark}"


def render(out: list[dict], sums: dict, results_dir: Path) -> str:
    """The Markdown table of every figure, then the two models' scores (docs/runner-model.md quotes it)."""
    lines = ["| case | family | device | published_s | kind | goal | transfer-only: predicted [band] x ratio | "
             "leave-one-out: predicted [band] x ratio | why not |", "|---|---|---|---|---|---|---|---|---|"]
    for r in out:
        why = r["transfer"]["why"] if r["transfer"]["predicted_s"] is None else ""
        if r["loo"]["predicted_s"] is None and r["loo"]["why"] != why:
            why += (" / " if why else "") + "loo: " + r["loo"]["why"]
        lines.append(f"| {r['case']} | {r['family']} | {r['device']} | {_s(r['published_s'])} | {r['kind']} | "
                     f"{r['goal']:g}x | {_cell(r, 'transfer')} | {_cell(r, 'loo')} | {why} |")
    lines += ["", "| score | predicted | warm within 1.5x | first/compile within 2x | all within 2x | independent "
              "terms within goal | bounds inside | band coverage (inputs) | band coverage (inputs + residuals of "
              "its term, leave-two-out) |", "|---|---|---|---|---|---|---|---|---|",
              _line("transfer-only", sums["transfer"]), _line("leave-one-out", sums["loo"]),
              "", f"(ratios to the published value's rounding interval; results: {results_dir})"]
    return "\n".join(lines)
