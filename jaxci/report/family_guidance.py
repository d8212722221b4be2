"""Guidance per lecture type, written for one runner family: measured on it where it was, else predicted for it.

A lab machine's measurement is evidence about that machine's hardware (an H200 runs FP64 at 1:2, a T4 at 1:32), so
it never reads as a family's guidance: here only the family's own measurements, the runner model's predictions for
the family (jaxci.analysis.model, with their band) and its decision sheet's rows appear; the measured machines'
own lines are the evidence section (`scoped` + guidance_lines.guidance_sections over those machines).
"""

from __future__ import annotations

import dataclasses

from jaxci.analysis import crossover as cx
from jaxci.report import guidance_lines as gl
from jaxci.report import questions
from jaxci.report.guidance_lines import BIG, PIN_CODE, SEQ, PinLine


def scoped(report, machines: set):
    """The report as if it held only `machines`' measurements (a crossover only when both its lines are theirs);
    the model, catalogue and predictions stay whole."""
    def keep(m):
        return m in machines

    return dataclasses.replace(
        report, machines={m: f for m, f in report.machines.items() if keep(m)},
        records=[r for r in report.records if keep(r.machine)],
        crossovers=[c for c in report.crossovers if keep(c.cpu_machine) and keep(c.gpu_machine)],
        device_ratios=[d for d in report.device_ratios if keep(d.machine)],
        fp64_summary=[s for s in report.fp64_summary if keep(s.machine)],
        cold=[c for c in report.cold if keep(c.machine)], nuts=[r for r in report.nuts if keep(r.machine)],
        safe_n={k: n for k, n in report.safe_n.items() if keep(k[0])})


def evidence_machines(report, families) -> set:
    """The measured machines that are not one of the sheets' families: their lines are evidence only."""
    return {m for m in report.machines if m not in families}


def _predicted(report, family, prefixes) -> list[str]:
    """The runner model's crossovers for the family (never a measurement), then what it could not predict."""
    lines, missing = [], []
    for p in sorted((p for p in report.predicted_crossovers if p.family == family and p.measured is None
                     and p.benchmark.startswith(prefixes)), key=lambda p: (p.kernel, p.dtype)):
        where = f"on {family}; predicted by the runner model, findings.md §2"
        if p.kind == cx.CROSSING:
            band = f", band n ≈ {p.low:,.0f} .. {p.high:,.0f}" if p.low and p.high else ""
            lines.append(f"- **{p.kernel}** ({p.dtype}): the GPU wins from n ≈ {p.n:,.0f} ({where}{band}).")
        elif p.kind == cx.GPU_ALWAYS and p.points:
            lines.append(f"- **{p.kernel}** ({p.dtype}): the GPU wins at every size asked, from n = "
                         f"{p.points[0][0]:,} ({where}).")
        elif p.kind == cx.NONE_IN_RANGE and p.points:
            lines.append(PinLine(f"- **{p.kernel}** ({p.dtype}): the CPU wins at every size asked, up to n = "
                                 f"{p.points[-1][0]:,} ({where}): {PIN_CODE}"))
        else:
            missing.append(f"{p.kernel} {p.dtype}")
    if missing:
        lines.append(f"- not predicted on {family} (not measured there, and the model has no line for them): "
                     f"{', '.join(missing)}; other machines' measurements of them are evidence about their own "
                     "hardware, not this family's.")
    return lines


def _row(sheet, question, basis: bool = False) -> str:
    """The sheet's row for `question` (found by its question, never by its place), as a guidance line."""
    d = sheet.row(question)
    return f"- {d.decision} ({d.status}; decision sheet row {d.q}" + (f": {d.basis})." if basis else ").")


def sections(report, family: str, sheet) -> list[tuple[str, list[str]]]:
    """(title, lines) per lecture type for one family; every line says measured, predicted, published or not
    measured, and names the family or the sheet row it repeats."""
    entry = report.catalogue.get(family)
    gpu = bool(entry and entry.has_gpu)
    scope = scoped(report, {family})
    gl.note_versions(report)
    no_gpu = [f"- no GPU on {family} (catalogue, not measured): every lecture runs on its CPU (decision sheet row "
              f"{questions.number(questions.CROSSOVER)})."]

    large = gl.measured_large(scope) or (_predicted(report, family, BIG) if gpu else no_gpu)
    small = gl.measured_small(scope)
    if not small:
        small = (_predicted(report, family, SEQ) if gpu else []) + [_row(sheet, questions.FP64)]
        if gpu:
            small.append(gl.SCAN_PUBLISHED)
    nuts = gl.measured_nuts(scope) or [_row(sheet, questions.SAMPLER)]
    compiles = gl._compile_lines(scope, fallback=False) or [_row(sheet, questions.ENVIRONMENT)]
    several = gl.measured_safe(scope) or [_row(sheet, questions.CONCURRENCY)]
    if gpu and not gl.measured_safe(scope):
        several.append(gl.PREALLOCATE_PUBLISHED)
    whole = gl._cpu_advice(scope, ("notebooks.",)) + [_row(sheet, questions.HYGIENE, basis=True)]
    return [("Large-array lectures (matmul, solves, elementwise maps over big arrays)", large),
            ("Small float64 sequential lectures (scalar loops, Kalman filters, iterations to convergence)", small),
            ("NUTS lectures (numpyro)", nuts),
            ("Lectures with many fresh compiles", compiles),
            ("Several kernels at once (parallel notebook execution on one GPU)", several),
            ("Whole notebooks and timeouts", whole)]
