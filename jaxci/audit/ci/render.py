"""The CI audit as Markdown for a pull-request description, JSON for tools, and a short block for
$GITHUB_STEP_SUMMARY. Rendering is last and pure: a CIReport in, text out.
"""

from __future__ import annotations

import json

from jaxci.audit.ci.report import CIReport


def _cell(text) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


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
             f"`{report.book.file if report.book and report.book.file else 'none'}`, environment "
             f"{', '.join(f'`{f}`' for f in report.env.files) if report.env and report.env.files else 'none'}; "
             f"{len(report.lectures)} lectures, {jax} use JAX or numpyro.", ""]
    if fixes:
        lines += ["| kind | where | finding | why | basis | patched |", "|---|---|---|---|---|---|"]
        for f in fixes:
            patched = "yes" if (f.edits or f.label_edit) else "no"
            lines.append(f"| {f.kind} | `{f.where}` | {_cell(f.message)} | {_cell(f.reason)} | {f.label} "
                         f"| {patched} |")
        lines += ["", "### Fixes", ""]
        for f in fixes:
            head, _, body = f.fix.partition("\n")
            lines.append(f"- **{f.kind}** `{f.where}`: {head}")
            if body:
                lines += ["", "  ```yaml"] + ["  " + x for x in body.splitlines()] + ["  ```", ""]
    else:
        lines.append("No findings.")
    for t in report.tiers:
        lines += ["", f"### Runner tier: `{t.job}` on {t.family} ({'GPU' if t.gpu else 'CPU'}): **{t.recommendation}**",
                  "", f"{t.reason} ({t.label}).", ""]
        if t.rows:
            lines += ["| family | GPU | $/h | build min | $ per build | basis |", "|---|---|---|---|---|---|"]
            for r in t.rows:
                lines.append(f"| {r.family} | {'yes' if r.gpu else 'no'} | {_num(r.price_per_hour, 'g', '-')} | "
                             f"{_num(r.build_s and r.build_s / 60, '.1f')} | {_num(r.dollars, '.3f', '-')} | "
                             f"{_cell(r.label + ': ' + r.basis)} |")
            lines += ["", "Dollars: on-demand EC2 price, RunsOn licence not included."]
    if report.errors:
        lines += ["", "### Could not read", ""] + [f"- {_cell(e)}" for e in report.errors]
    if report.notes:
        lines += [""] + [f"- {_cell(n)}" for n in report.notes]
    if patch:
        lines += ["", "### Patch (`git apply`)", "", "```diff", patch.rstrip("\n"), "```"]
    return "\n".join(lines) + "\n"


def summary(report: CIReport) -> str:
    """A few lines for the job summary: counts per kind and the tier verdicts."""
    counts = {}
    for f in report.findings:
        counts[f.kind] = counts.get(f.kind, 0) + 1
    lines = [f"## jaxci audit: CI ({len(report.findings)} finding(s))", ""]
    lines += [f"- **{k}**: {n}" for k, n in counts.items()] or ["- no findings"]
    lines += [f"- runner tier `{t.job}` ({t.family}): {t.recommendation} ({t.label})" for t in report.tiers]
    if report.errors:
        lines.append(f"- could not read: {len(report.errors)} file(s)")
    return "\n".join(lines) + "\n"
