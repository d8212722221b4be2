"""The findings page, html/findings/index.html: figures (inline SVG) and the findings, beside asv's site.

Written after `asv publish` (which rewrites html/): the page goes into html/findings/ and a link to it is
added to asv's index.html once (re-running adds nothing). The page loads nothing from the network.
"""

from __future__ import annotations

import json
import re
from html import escape
from pathlib import Path

from jaxci.analysis import case_label, case_of, group, is_timing
from jaxci.analysis import crossover as cx
from jaxci.report import svg

LINK_ID = "jaxci-findings-link"
COLOURS = {"cpu": "#1f77b4", "gpu": "#ff7f0e"}
PALETTE = {"cpu": ["#1f77b4", "#17becf", "#9467bd", "#2ca02c"], "gpu": ["#ff7f0e", "#d62728", "#8c564b", "#e377c2"]}
CSS = """body{font-family:sans-serif;margin:2em auto;max-width:1200px;padding:0 1em;color:#222}
figure{display:inline-block;margin:.5em;border:1px solid #ddd;padding:.3em;vertical-align:top}
figcaption{font-size:.85em;color:#555;max-width:560px}
table{border-collapse:collapse;font-size:.8em;margin:.5em 0}td,th{border:1px solid #ccc;padding:2px 5px;text-align:left}
th{background:#f3f3f3}code{background:#f5f5f5}.predicted{color:#666;font-style:italic}"""


def time_vs_size(report) -> list[tuple[str, str, str]]:
    """(id, svg, caption) per kernel with a size axis: cpu and gpu lines per dtype per machine, crossings marked."""
    timed = [r for r in report.records if is_timing(r) and r.ok and isinstance(r.params.get("n"), (int, float))
             and {"dtype", "device"} <= r.params.keys()]
    out = []
    kernels = group(timed, lambda r: (r.benchmark, case_of(r)))
    multi = len(report.machines) > 1
    shade = {m: i for i, m in enumerate(sorted(report.machines))}
    for i, ((bench, case), recs) in enumerate(sorted(kernels.items(), key=str)):
        series = []
        for (machine, device, dtype), line in sorted(group(recs, lambda r: (r.machine, r.params["device"], r.params["dtype"])).items()):
            label = f"{machine[:14] + ' ' if multi else ''}{device} {dtype}"
            colours = PALETTE.get(device, ["#7f7f7f"])
            colour = colours[shade.get(machine, 0) % len(colours)]
            series.append((label, colour, dtype == "float64", [(r.params["n"], r.value) for r in line]))
        marks = [(c.n, f"{c.dtype}{'' if c.cpu_machine == c.gpu_machine else ' ' + c.cpu_machine[:10] + ' cpu'} n≈{c.n:,.0f}") for c in report.crossovers
                 if c.benchmark == bench and c.case == case and c.kind == cx.CROSSING]
        title = case_label(bench, case).replace(".time_warm", "")
        caption = "; ".join(f"{c.dtype} ({c.cpu_machine if c.cpu_machine == c.gpu_machine else c.cpu_machine + ' cpu / ' + c.gpu_machine + ' gpu'}): {c.answer()}" for c in report.crossovers
                            if c.benchmark == bench and c.case == case) or "no crossover computed"
        out.append((f"size-{i}", svg.loglog(title, series, marks), caption))
    if not out:
        out.append(("size-none", svg.empty("time vs size"), "no size-swept timings in these results"))
    return out


def fp64_bars(report) -> tuple[str, str]:
    items = [(f"{s.machine[:10]} {s.device} {s.kernel.split('.')[0]} {s.kernel.split(' ', 1)[1] if ' ' in s.kernel else s.kernel.split('.')[1]}",
              s.ratio, COLOURS.get(s.device, "#2ca02c")) for s in report.fp64_summary]
    return svg.bars("FP64 penalty: float64 / float32 time (largest size)", items, "ratio", reference=1.0), \
        "Bars above the dashed line (ratio 1) mean float64 is slower. " + (
            "" if any(s.device == "gpu" for s in report.fp64_summary) else "gpu: not measured.")


def concurrency_grids(report) -> list[tuple[str, str, str]]:
    out = []
    for i, ((machine, device), cells) in enumerate(sorted(group(report.concurrency, lambda c: (c.machine, c.device)).items())):
        rows = sorted({c.policy for c in cells})
        cols = sorted({c.n_workers for c in cells})
        table = {}
        for c in cells:
            colour = "#b7e4b0" if c.status == "ok" else "#f4b0a8" if c.status.endswith("died") or c.status == "failed" else "#eee"
            slow = c.values.get("slowdown")
            table[(c.policy, c.n_workers)] = (c.status + (f" x{slow:.2g}" if slow is not None else ""), colour)
        out.append((f"concurrency-{i}", svg.grid(f"{machine} {device}: outcome by policy (rows) and N workers", rows, cols, table),
                    "green: every worker finished (with its slowdown); red: workers died"))
    if not out:
        out.append(("concurrency-none", svg.empty("concurrency outcome grid"), "no concurrency suite results"))
    return out


def cost_bars(report) -> tuple[str, str]:
    items = []
    for c in report.costs:
        if c.job_dollars is not None:
            items.append((f"{c.family}{' (predicted)' if c.label == 'predicted' else ''}", c.job_dollars,
                          "#1f77b4" if c.label == "measured" else "#bbbbbb"))
    missing = [c.family for c in report.costs if c.job_dollars is None]
    return svg.bars("Cost of one bench job per family (US$)", items, "dollars"), \
        "blue: measured on that family; grey: predicted (same suite wall time as a measured machine of the same kind)." + \
        (f" Not predicted: {', '.join(missing)}." if missing else "")


def _md_inline(text: str) -> str:
    text = escape(text)
    text = re.sub(r"`([^`]+)`", r"<code>\1</code>", text)
    return re.sub(r"\*\*([^*]+)\*\*", r"<b>\1</b>", text)


def markdown_to_html(md: str) -> str:
    """Just enough markdown for what findings.py writes: headings, tables, bullets, paragraphs."""
    out, rows, items = [], [], []

    def flush():
        if rows:
            head, body = rows[0], rows[2:]
            out.append("<table><tr>" + "".join(f"<th>{_md_inline(c)}</th>" for c in head) + "</tr>" +
                       "".join("<tr>" + "".join(f"<td>{_md_inline(c)}</td>" for c in r) + "</tr>" for r in body) + "</table>")
            rows.clear()
        if items:
            out.append("<ul>" + "".join(f"<li>{_md_inline(i)}</li>" for i in items) + "</ul>")
            items.clear()

    for line in md.splitlines():
        if line.startswith("|"):
            rows.append([c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]])
            continue
        if line.startswith("- "):
            items.append(line[2:])
            continue
        flush()
        if line.startswith("#"):
            level = len(line) - len(line.lstrip("#"))
            out.append(f"<h{level + 1}>{_md_inline(line.lstrip('#').strip())}</h{level + 1}>")
        elif line.strip():
            out.append(f"<p>{_md_inline(line)}</p>")
    flush()
    return "\n".join(out)


def _figure(fid: str, body: str, caption: str) -> str:
    return f'<figure class="jaxci-figure" id="{fid}">{body}<figcaption>{escape(caption)}</figcaption></figure>'


def render(report, findings: str, guidance: str) -> str:
    size = "".join(_figure(*f) for f in time_vs_size(report))
    fp64 = _figure("fp64", *fp64_bars(report))
    conc = "".join(_figure(*f) for f in concurrency_grids(report))
    cost = _figure("cost", *cost_bars(report))
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>jax-ci-bench findings</title>
<style>{CSS}</style></head><body>
<p><a href="../index.html">← asv benchmarks</a> · <a href="findings.md">findings.md</a> · <a href="guidance.md">guidance.md</a>
· <a href="report.json">report.json</a></p>
<h1>jax-ci-bench findings</h1>
<p>Generated {escape(report.generated)} from <code>{escape(report.results_dir)}</code>. Machines: {escape(", ".join(sorted(report.machines)) or "none")}.</p>
<h2>Time vs size per kernel</h2>
<p>Blues: cpu, oranges/reds: gpu (one shade per machine); solid: float32, dashed: float64; red lines: measured crossings (log interpolation).</p>
<section id="figures-size">{size}</section>
<h2>FP64 penalty</h2><section id="figures-fp64">{fp64}</section>
<h2>Concurrency outcome</h2><section id="figures-concurrency">{conc}</section>
<h2>Cost per family</h2><section id="figures-cost">{cost}</section>
<hr><section id="findings">{markdown_to_html(findings)}</section>
<hr><section id="guidance">{markdown_to_html(guidance)}</section>
</body></html>
"""


def link_from_asv_index(html_dir: Path) -> str:
    """Add one link to findings/ into asv's index.html; returns what happened (asv publish rewrites the file)."""
    index = html_dir / "index.html"
    if not index.is_file():
        return f"{index} not found: run `asv publish` first, then `jaxci report` again to link the page"
    text = index.read_text(encoding="utf-8")
    if f'id="{LINK_ID}"' in text:
        return "link already present"
    link = (f'<li><p class="navbar-text"><a id="{LINK_ID}" class="navbar-link" href="findings/index.html">'
            f'Findings</a></p></li>')
    anchor = '<ul class="nav navbar-nav navbar-left">'
    if anchor in text:
        text = text.replace(anchor, anchor + link, 1)
    else:
        text = re.sub(r"(<body[^>]*>)", lambda m: m[1] + f'<p><a id="{LINK_ID}" href="findings/index.html">Findings</a></p>', text, count=1)
    index.write_text(text, encoding="utf-8")
    return "link added"


def write_page(report, html_dir: Path, findings: str, guidance: str, data: dict) -> tuple[Path, str]:
    out = Path(html_dir) / "findings"
    out.mkdir(parents=True, exist_ok=True)
    (out / "findings.md").write_text(findings, encoding="utf-8")
    (out / "guidance.md").write_text(guidance, encoding="utf-8")
    (out / "report.json").write_text(json.dumps(data, indent=1, default=str), encoding="utf-8")
    (out / "index.html").write_text(render(report, findings, guidance), encoding="utf-8")
    return out / "index.html", link_from_asv_index(Path(html_dir))
