"""The CI audit as Markdown for a pull-request description, JSON for tools, and a short block for
$GITHUB_STEP_SUMMARY. Rendering is last and pure: a CIReport in, text out.

Every text a pull request can shape (a workflow's file name, a job id, a `run:` line, a label, what a message
quotes of them) reaches Markdown through jaxci.util.quoting only: places and commands as code spans (`code`),
messages as prose (`prose`: no HTML comment, tag or @-mention outside a code span, one line), table cells with
their `|` escaped, the patch in a fence longer than any backtick run it holds.
"""

from __future__ import annotations

import json
from collections import Counter

from jaxci.audit.lecture_ci.report import CIReport
from jaxci.util.quoting import code, fenced, prose


def _cell(text) -> str:
    return prose(text).replace("|", "\\|")


def _at(where) -> str:
    """A place (file:line) or a job key in a table cell: one code span."""
    return code(where, table=True)


def _num(value, spec, missing="not measured") -> str:
    return missing if value is None else format(value, spec)


def to_json(report: CIReport, patch: str | None = None) -> str:
    data = report.as_dict()
    data["patch"] = report.patch() if patch is None else patch
    return json.dumps(data, indent=2, default=str)


def to_markdown(report: CIReport, patch: str | None = None) -> str:
    patch = report.patch() if patch is None else patch
    fixes = report.findings
    jax = sum(f.uses_jax for f in report.lectures)
    lines = [f"## CI audit: {len(fixes)} finding(s)", "",
             f"Read {len(report.workflows)} workflow(s), book config "
             f"{code(report.book.file) if report.book and report.book.file else '`none`'}, environment "
             f"{', '.join(code(f) for f in report.env.files) if report.env and report.env.files else 'none'}; "
             f"{len(report.lectures)} lectures, {jax} use JAX or numpyro.", ""]
    if fixes:
        lines += ["| kind | where | finding | why | basis | patched |", "|---|---|---|---|---|---|"]
        for f in fixes:
            patched = "yes" if (f.edits or f.label_edit) else "no"
            lines.append(f"| {f.kind} | {_at(f.where)} | {_cell(f.message)} | {_cell(f.reason)} | {_cell(f.label)} "
                         f"| {patched} |")
        lines += ["", "### Fixes", ""]
        for f in fixes:
            head, _, body = f.fix.partition("\n")
            lines.append(f"- **{f.kind}** {code(f.where)}: {prose(head)}")
            if body:
                lines += [""] + ["  " + x for x in fenced(body, "yaml")] + [""]
    else:
        lines.append("No findings.")
    for t in report.tiers:
        lines += ["", f"### Runner tier: {code(t.job)} on {prose(t.family)} ({'GPU' if t.gpu else 'CPU'}): "
                  f"**{prose(t.recommendation)}**", "", f"{prose(t.reason)} ({prose(t.label)}).", ""]
        if t.rows:
            lines += ["| family | GPU | $/h | build min | $ per build | basis |", "|---|---|---|---|---|---|"]
            for r in t.rows:
                lines.append(f"| {_cell(r.family)} | {'yes' if r.gpu else 'no'} | {_num(r.price_per_hour, 'g', '-')} | "
                             f"{_num(r.build_s and r.build_s / 60, '.1f')} | {_num(r.dollars, '.3f', '-')} | "
                             f"{_cell(r.label + ': ' + r.basis)} |")
            lines += ["", "Dollars: on-demand EC2 price, RunsOn licence not included."]
    lines += _installs(report) + _decision(report.decision)
    if report.errors:
        lines += ["", "### Could not read", ""] + [f"- {_cell(e)}" for e in report.errors]
    if report.notes:
        lines += [""] + [f"- {_cell(n)}" for n in report.notes]
    if patch:
        lines += ["", "### Patch (`git apply`)", ""] + fenced(patch.rstrip("\n"), "diff")
    return "\n".join(lines) + "\n"


def _installs(report: CIReport) -> list[str]:
    """Every jax / jaxlib / numpyro install line, each with its file:line, pinned or not."""
    if not report.installs:
        return []
    out = ["", f"### Install lines ({len(report.installs)}: jax, jaxlib, numpyro in workflows and the files they "
           "install)", "", "| where | package | as written | pinned |", "|---|---|---|---|"]
    for x in report.installs:
        out.append(f"| {_at(x.where)} | {x.name} | {code(x.text, table=True)} | {_cell(x.version or 'no')} |")
    return out


def _money(value) -> str:
    return "no price" if value is None else f"${value:.3f}"


def _dur(seconds: float) -> str:
    return f"{seconds / 60:.1f} min" if seconds >= 60 else f"{seconds:.1f} s"


def _decision(d) -> list[str]:
    """The tier decision: predicted build time and dollars per option, the choice, GPU-hours a year."""
    if d is None:
        return []
    out = ["", f"### Tier decision for {code(d.job)} ({prose(d.family)}): predicted", ""]
    if d.chosen is not None:
        out.append(f"**Recommended: {d.chosen.name}**: build {_dur(d.chosen.build_s)}, {_money(d.chosen.dollars)} "
                   f"per build. Rule: {d.rule}.")
    else:
        out.append(f"No option with a price keeps every GPU-winning lecture on a GPU. Rule: {d.rule}.")
    before, after = d.gpu_hours_year
    if before is not None:
        out.append(f"\nGPU-hours a year at {d.builds_per_year} builds: {before:,.1f} as written ({d.before.name}), "
                   f"{after:,.1f} with the recommendation (predicted).")
    elif d.builds_per_year is None:
        out.append("\nGPU-hours a year: give --builds-per-year N (count them from the workflow's runs).")
    out += ["", f"GPU-winning lectures on {prose(d.family)}: {', '.join(map(code, d.gpu_winning)) or 'none'}."
            + (f" Left on the GPU (narrative): {', '.join(map(code, d.narrative))}." if d.narrative else ""), "",
            "| option | build (band high) | $ per build | GPU-hours per build | lectures on a GPU "
            "| keeps GPU winners |",
            "|---|---|---|---|---|---|"]
    for o in d.shown():
        out.append(f"| {_cell(o.name)} | {_dur(o.build_s)} ({_dur(o.build_high_s)}) | {_money(o.dollars)} | "
                   f"{o.gpu_hours:.3f} | {len(o.on_gpu)} | {'yes' if o.keeps_fast else 'no'} |")
    out += ["", "Predicted: each executed lecture's measured seconds outside jitted calls (on the machine that ran "
            "--execute, not scaled) plus the runner model's predicted seconds of its JAX work on the family. Dollars: "
            "(job overhead + build) billed per the catalogue, on-demand price, RunsOn licence not included; lab "
            f"machines have no price. {len(d.shown())} of {len(d.options)} options shown (all in --format json)."]
    if d.missing:
        out.append("Not predicted: " + "; ".join(map(prose, d.missing[:8])) + (" ..." if len(d.missing) > 8 else ""))
    return out


def summary(report: CIReport) -> str:
    """A few lines for the job summary: counts per kind and the tier verdicts."""
    counts = Counter(f.kind for f in report.findings)
    lines = [f"## jaxci audit: CI ({len(report.findings)} finding(s))", ""]
    lines += [f"- **{k}**: {n}" for k, n in counts.items()] or ["- no findings"]
    lines += [f"- runner tier {code(t.job)} ({prose(t.family)}): {prose(t.recommendation)} ({prose(t.label)})"
              for t in report.tiers]
    if report.errors:
        lines.append(f"- could not read: {len(report.errors)} file(s)")
    return "\n".join(lines) + "\n"
