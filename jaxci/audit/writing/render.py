"""Audit verdicts as a Markdown table, CSV, JSON, and a short summary for $GITHUB_STEP_SUMMARY.

Rendering is last and pure: records in, text out. Numbers that were not measured print as "-".
"""

from __future__ import annotations

import csv
import io
from collections import Counter

from jaxci.accel import accelerator_run
from jaxci.analysis.prediction import side_keys
from jaxci.audit.judging import classify
from jaxci.audit.judging.every_family import build_totals
from jaxci.audit.judging.host import MEASURED, SCALED
from jaxci.audit.judging.judge import MARGIN, Verdict, pin_list
from jaxci.audit.writing.emit import PIN_HEADING
from jaxci.util import quoting
from jaxci.util.quoting import cell as _cell  # no HTML, comment or @-mention from a file name reaches a summary

COLUMNS = ["lecture", "status", "jax", "float64", "sequential", "nuts", "device_pins", "gpu_narrative",
           "max_elements", "loops", "regime", "recommendation", "basis", "why", "cpu_s", "cpu_compile_s", "gpu_s",
           "gpu_compile_s", "predicted_cpu_s", "predicted_gpu_s", "peak_mib",
           "slowest_cell_s", "timeout_s", "proposed_timeout_s", "over_timeout", "reasons", "errors"]


def _s(value) -> str:
    return "-" if value is None else f"{value:.2f}"


def row(v: Verdict) -> dict:
    s = v.scan
    cpu, gpu = v.runs.get("cpu"), accelerator_run(v.runs)[1]   # headed by its own platform (accelerator_columns)
    slowest = [r.slowest.wall_s for r in v.runs.values() if r.slowest]
    nuts = [n for n in s.nuts if "num_chains" in n]
    return {
        "lecture": v.path,
        "status": v.status,
        "jax": "numpyro" if s.uses_numpyro else ("jax" if s.uses_jax else ""),
        "float64": "yes" if s.float64 else "",
        "sequential": len(s.sequential) or "",
        "nuts": "; ".join(f"{n['num_chains']} chains {n['chain_method']}" for n in nuts)
                or ("yes" if s.nuts else ""),
        "device_pins": len(s.device_pins) or "",
        "gpu_narrative": len(s.gpu_narrative) or "",
        "max_elements": s.max_elements if s.max_elements is not None else "",
        "loops": ", ".join(f"{n} {c}" for c, n in sorted(Counter(loop.cls for loop in s.loops).items())),
        "regime": v.regime,
        "recommendation": v.recommendation,
        "basis": v.basis,
        "why": v.why,
        "cpu_s": _s(cpu.cells_s) if cpu and cpu.cells else "-",
        "cpu_compile_s": _s(cpu.compile_s) if cpu else "-",
        "gpu_s": _s(gpu.cells_s) if gpu and gpu.cells else "-",
        "gpu_compile_s": _s(gpu.compile_s) if gpu else "-",
        "predicted_cpu_s": _predicted(v, "cpu"),
        "predicted_gpu_s": _predicted(v, "gpu"),
        "peak_mib": _peak(v),
        "slowest_cell_s": _s(max(slowest)) if slowest else "-",
        "timeout_s": "none" if v.config and v.timeout is None else (_s(v.timeout) if v.timeout else "-"),
        "proposed_timeout_s": f"{v.proposed_timeout:.0f}" if v.proposed_timeout else "-",
        "over_timeout": "; ".join(v.over_timeout),
        "reasons": "; ".join(v.reasons[1:] if v.why and v.reasons[:1] == [v.why] else v.reasons),  # evidence
        "errors": "; ".join(v.errors),
    }


def _predicted(v: Verdict, device: str) -> str:
    """'predicted 1.23 (0.9..2.1)' on the judged family: never in a measured column."""
    p = v.predicted.get(v.family or "")
    side = p.side(device) if p is not None else None
    if side is None:  # a CPU-only family has no GPU side
        return "-"
    mid, low, high = side.band()
    return f"predicted {mid:.3g} ({low:.3g}..{high:.3g})"


#: a run's peak memory figures (jaxci.audit.runner NotebookRun.peak_memory), in the order shown
PEAKS = (("device_peak_mib", "device"), ("live_buffers_mib", "live buffers"), ("host_rss_peak_mib", "host RSS"))


def _peak(v: Verdict) -> str:
    """Each run's measured peak memory, every kind labelled ('cpu: live buffers 7.6, host RSS 180 MiB'); the
    concurrency advice (jaxci.report.memory_advice) reads the same figures from the JSON."""
    out = []
    for platform, run in v.runs.items():
        peak = run.peak_memory or {}
        kinds = [f"{label} {peak[key]:,.4g}" for key, label in PEAKS if isinstance(peak.get(key), (int, float))]
        if kinds:
            out.append(f"{platform}: {', '.join(kinds)} MiB")
    return "; ".join(out) or "-"


def to_json(verdicts: list[Verdict], executed: bool) -> str:
    per_family = {"per_family": build_totals(verdicts)} if executed else {}
    from jaxci.audit.writing.record import dumps

    return dumps({"executed": executed, "lectures": [v.as_dict() for v in verdicts], **per_family,
                  "pin_to_cpu": pin_list(verdicts),
                  "failed": [v.path for v in verdicts if v.failed],
                  "timeout_model": f"slowest measured cell x {MARGIN:g}, rounded up to a minute, >= 60 s"})


def accelerator_columns(verdicts: list[Verdict]) -> dict:
    """{column: heading}: the measured accelerator columns are headed by what ran them, so a TPU's seconds are
    never shown as a GPU's (gpu_s -> tpu_s); a GPU audit keeps its columns."""
    ran = {p for v in verdicts if (p := accelerator_run(v.runs)[0]) is not None} - {"cuda", "rocm", "gpu"}
    if not ran:
        return {}
    name = "_".join(sorted(ran))
    return {"gpu_s": f"{name}_s", "gpu_compile_s": f"{name}_compile_s"}


def to_csv(verdicts: list[Verdict]) -> str:
    out = io.StringIO()
    heading = accelerator_columns(verdicts)
    writer = csv.DictWriter(out, fieldnames=[heading.get(c, c) for c in COLUMNS], lineterminator="\n")
    writer.writeheader()
    for v in verdicts:
        writer.writerow({heading.get(k, k): value for k, value in row(v).items()})
    return out.getvalue()


def to_markdown(verdicts: list[Verdict], executed: bool) -> str:
    columns = [c for c in COLUMNS if executed or c not in
               ("cpu_s", "cpu_compile_s", "gpu_s", "gpu_compile_s", "slowest_cell_s", "proposed_timeout_s",
                "over_timeout", "predicted_cpu_s", "predicted_gpu_s", "peak_mib")]
    heading = accelerator_columns(verdicts)
    lines = ["| " + " | ".join(heading.get(c, c) for c in columns) + " |", "|" + "---|" * len(columns)]
    for v in verdicts:
        r = row(v)
        lines.append("| " + " | ".join(_cell(r[c]) for c in columns) + " |")
    text = "\n".join(lines) + "\n"
    if executed and not any(v.family for v in verdicts):  # no --machine: every family, summed
        text += per_family_markdown(verdicts)
    return text


def _band(t: dict, side: str) -> str:
    """A family's summed side (jaxci.audit.judging.every_family.build_totals: the prediction's keys, summed)."""
    mid, low, high = (t.get(key) for key in side_keys(side))
    if mid is None:
        return "-"
    return f"{mid:.3g} ({low:.3g}..{high:.3g})"


def per_family_markdown(verdicts: list[Verdict]) -> str:
    """The build per family, summed over the executed lectures (predicted, with bands, and each family's h), and the
    largest measured peak memory: what a tier decision needs from one execution."""
    totals = build_totals(verdicts)
    if not totals:
        return ""
    ran = sum(1 for v in verdicts if v.runs)
    lines = ["", f"**Predicted build per family** (runner model, from {ran} lecture(s) executed here; seconds summed "
             "over the lectures predicted, band ends summed; h moves this host's measured parts to the family's "
             "host):", "", "| family | kind | lectures | every lecture on its CPU, s | every lecture on its GPU, s "
             "| host factor h |", "|---|---|---|---|---|---|"]
    for name, t in totals.items():
        h = t["host_factor"]
        factor = (f"{h['value']:.3g} ({h['low']:.3g}..{h['high']:.3g}){'' if h['label'] == MEASURED else ', predicted'}"
                  if h["label"] in SCALED
                  else "not measured (x 1)")
        lines.append(f"| {name} | {t['kind']} | {t['lectures']} | {_band(t, 'cpu')} | {_band(t, 'gpu')} | "
                     f"{_cell(factor)} |")
    sources = dict.fromkeys(t["host_factor"]["source"] for t in totals.values()
                            if t["host_factor"]["label"] in SCALED)
    lines += [""] + [f"- h: {_cell(s)}" for s in sources]
    calibration = dict.fromkeys(rec.calibration for v in verdicts for rec in (v.predicted or {}).values()
                                if rec.calibration)
    lines += [f"- calibration: {_cell(s)}" for s in calibration]
    top = max(((max(_peak_values(v)), v.path) for v in verdicts if _peak_values(v)), default=None)
    if top:
        lines.append(f"- largest measured peak memory: {top[0]:,.4g} MiB ({_cell(top[1])}; per lecture in "
                     "`peak_mib`)")
    return "\n".join(lines) + "\n"


def _peak_values(v: Verdict) -> list:
    return [run.peak_memory[key] for run in v.runs.values() if run.peak_memory for key, _ in PEAKS
            if isinstance(run.peak_memory.get(key), (int, float))]


def summary(verdicts: list[Verdict], executed: bool) -> str:
    """Headline counts, the pin list, failures and timeouts: what a CI job summary page needs."""
    counts = Counter(v.recommendation for v in verdicts if v.recommendation)
    jax = sum(1 for v in verdicts if v.scan.uses_jax or v.scan.uses_numpyro)
    lines = [f"## jaxci audit: {len(verdicts)} lectures, {jax} use JAX or numpyro"
             + (" (executed)" if executed else " (static scan)"), ""]
    lines += [f"- **{rec}**: {n}" for rec, n in sorted(counts.items())]
    family = next((v.family for v in verdicts if v.family), None)
    bases = Counter(v.basis for v in verdicts if v.basis and (v.scan.uses_jax or v.scan.uses_numpyro))
    lines += ["", f"Judged for **{family}**" if family else "Judged with built-in thresholds (no `--machine`)"]
    if bases:
        lines[-1] += ": verdicts resting on " + ", ".join(f"{b} ({n})" for b, n in sorted(bases.items()))
    pins = pin_list(verdicts)
    if pins:
        lines += ["", PIN_HEADING + ":", ""] + [f"- {quoting.code(p)}" for p in pins]
    failed = [v for v in verdicts if v.failed]
    if failed:
        lines += ["", f"**{len(failed)} lecture(s) failed:**", ""]
        lines += [f"- {quoting.code(v.path)} ({_cell(v.status)}): {_cell('; '.join(v.errors))}" for v in failed]
    over = [(v.path, o) for v in verdicts for o in v.over_timeout]
    if over:
        lines += ["", "Cells over the configured timeout:", ""] + [f"- {quoting.code(p)} {_cell(o)}" for p, o in over]
    proposed = [v.proposed_timeout for v in verdicts if v.proposed_timeout]
    if proposed:
        lines += ["", f"Proposed per-cell timeout for the slowest lecture: {max(proposed):.0f} s "
                      f"(model: slowest measured cell x {MARGIN:g}, rounded up to a minute, at least 60 s)."]
    skipped = [v for v in verdicts if v.not_executed]
    if executed and skipped:
        lines += ["", "Not executed (not failures):", ""] + [f"- {quoting.code(v.path)}: {_cell(v.not_executed)}"
                                                             for v in skipped]
    if not executed:
        lines += ["", "Static scan only: run `jaxci audit --execute` to measure cell times."]
    regimes = ", ".join(f"{k} = {t}" for k, t in classify.REGIMES.items())
    lines += ["", f"Regimes: {regimes}.", ""]
    return "\n".join(lines)
