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
              f"{r['ratio']:.2f}" if r["ratio"] is not None else "—",
              r["why"] if r["predicted_s"] is None else r["inputs"][:200]] for r in rows]
    hit = [r for r in rows if r["ratio"] is not None]
    within = sum(0.5 <= r["ratio"] <= 2.0 for r in hit)
    text = ("Every published runner figure (docs/reference/incidents.md) beside the runner model's prediction "
            "(docs/runner-model.md): *predicted* from measured results and sourced catalogue figures, with its band; "
            "the published figures check the model and never feed it. "
            f"{len(hit)} of {len(rows)} predicted, {within} of them within 2x.\n\n"
            + table(["case", "family", "device", "published", "model", "band", "ratio", "inputs / why not"], shown))
    return "The runner model against the published figures", text
