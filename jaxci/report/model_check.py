"""The findings section "The runner model against the published figures": every figure of
docs/reference/incidents.md beside the model's prediction, band and ratio, or why the model cannot predict it.

The published figures are an outside check: they are read after every model input is fixed and never enter it
(jaxci.report.build.model_checks; tests/test_runner_model.py proves predictions are identical without the file).
"""

from __future__ import annotations

from jaxci.report.text import table


def _s(x) -> str:
    return "—" if x is None else f"{x:.3g} s"


def model_section(report):
    """(title, markdown) for findings.md, or None when the report read no incidents file."""
    rows = getattr(report, "model_checks", None)
    if not rows:
        return None
    shown = [[r["case"], r["family"], r["device"], _s(r["published_s"]),
              ("predicted " + _s(r["predicted_s"])) if r["predicted_s"] is not None else "not predicted",
              f"{_s(r['low_s'])} .. {_s(r['high_s'])}" if r["low_s"] is not None else "—",
              _ratio(r), r["why"] if r["predicted_s"] is None else (r.get("verdict") or r["inputs"][:200])]
             for r in rows]
    hit = [r for r in rows if r["ratio"] is not None]
    within = sum(0.5 <= r["ratio"] <= 2.0 for r in hit)
    within_iv = sum(0.5 <= (r.get("ratio_interval") or r["ratio"]) <= 2.0 for r in hit)
    text = ("Every published runner figure (docs/reference/incidents.md) beside the runner model's prediction "
            "(docs/runner-model.md): *predicted* from measured results and sourced catalogue figures, with its band; "
            "the published figures check the model and never feed it. "
            f"{sum(r['predicted_s'] is not None for r in rows)} of {len(rows)} predicted; of the {len(hit)} with a "
            f"ratio, {within} within 2x of the printed value and {within_iv} within 2x of its rounding interval "
            "(the printed value +- half a unit of its last digit: 0.001 s is 0.0005-0.0015 s).\n\n"
            + table(["case", "family", "device", "published", "model", "band", "ratio (to interval)",
                     "inputs / why not"], shown))
    return "The runner model against the published figures", text


def _ratio(r) -> str:
    if r["ratio"] is None:
        return "—"
    iv = r.get("ratio_interval")
    return f"{r['ratio']:.2f}" + (f" ({iv:.2f})" if iv is not None and abs(iv - r["ratio"]) > 0.005 else "")
