"""The findings page, html/findings/index.html: the answer sheet first, then guidance, figures and evidence.

Written by `asv publish` itself (its publisher plugin, jaxci/commands/asv_findings.py) or by `jaxci report --html`
after it: the page goes into html/findings/ and asvindex links it from asv's index.html once (re-running adds
nothing), with a notice in error.html for a browser whose CDN scripts cannot load. The page itself loads nothing
from the network.
"""

from __future__ import annotations

import json
import re
from html import escape
from pathlib import Path

from jaxci.analysis import case_label, case_of, group, is_timing
from jaxci.analysis import crossover as cx
from jaxci.report import answers, published, svg
from jaxci.report.asvindex import link_from_asv_index
from jaxci.report.question import Status
from jaxci.util import safewrite

COLOURS = {"cpu": "#1f77b4", "gpu": "#ff7f0e"}
PALETTE = {"cpu": ["#1f77b4", "#17becf", "#9467bd", "#2ca02c"], "gpu": ["#ff7f0e", "#8c564b", "#e377c2", "#bcbd22"]}
#: a published point's colour, by the device it was measured on
PUBLISHED = {"cpu": "#08306b", "gpu": "#7f2704"}
CSS = """body{font-family:sans-serif;margin:0 auto;max-width:1240px;padding:0 1em;color:#222;font-size:15px}
nav{font-size:.9em;margin:.6em 0}h1{font-size:1.5em;margin:.3em 0}h2{margin-top:1.4em}
.headline{font-weight:bold;margin:.3em 0 .6em}
figure{display:inline-block;margin:.5em;border:1px solid #ddd;padding:.3em;vertical-align:top;\
max-width:100%;overflow-x:auto}
figcaption{font-size:.9em;color:#444;max-width:740px}
table{border-collapse:collapse;font-size:.85em;margin:.5em 0}\
td,th{border:1px solid #ccc;padding:2px 5px;text-align:left;vertical-align:top}
th{background:#f3f3f3}code{background:#f5f5f5}
table.answers{width:100%;font-size:.9em}table.answers td:nth-child(1){width:1.5em}\
table.answers td:nth-child(2){width:11em}
table.answers td:nth-child(4){width:16em}.answers h3{margin:.5em 0 .2em;font-size:1.05em}
table.decisions{width:100%;font-size:.86em;margin:.2em 0 .4em}table.decisions td:nth-child(1){width:1.2em}
table.decisions td:nth-child(2){width:9.5em}table.decisions td:nth-child(4){width:6.5em}
table.decisions td:nth-child(5){width:40%;font-size:.86em;color:#555}
.sheet h3{margin:.3em 0 .1em;font-size:1.05em}.regressions td{font-size:.9em}
.st-measured{color:#1a6b1a;font-weight:bold}.st-predicted{color:#8a5a00;font-style:italic}.st-nm{color:#777}"""


def _published_points(report) -> list:
    """The reference points from the figures build() read from the incidents file it was given (never another)."""
    return published.points(getattr(report, "published", None) or [])


def _crossing_caption(items) -> str:
    measured = [c for c in items if c.kind != cx.NOT_MEASURED]
    if not measured:
        return "No crossing: no gpu line."  # the figures' intro says what a crossing is
    return "Crossing of the cpu and gpu lines (measured): " + "; ".join(
        f"{c.dtype} ("
        f"{c.cpu_machine if c.cpu_machine == c.gpu_machine else c.cpu_machine + ' cpu / ' + c.gpu_machine + ' gpu'}): "
        f"{c.answer()}" for c in measured) + "."


def time_vs_size(report) -> list[tuple[str, str, str]]:
    """(id, svg, caption) per kernel with a size axis: cpu and gpu lines per dtype per machine, crossings marked,
    published incident figures for the same kernel drawn as hollow diamonds."""
    timed = [r for r in report.records if is_timing(r) and r.ok and isinstance(r.params.get("n"), (int, float))
             and {"dtype", "device"} <= r.params.keys()]
    pub = _published_points(report)
    out = []
    kernels = group(timed, lambda r: (r.benchmark, case_of(r)))
    multi = len(report.machines) > 1
    # one shade per machine among the machines with lines of that device (the first gpu machine is orange)
    shade = {d: {m: i for i, m in enumerate(sorted({r.machine for r in timed if r.params["device"] == d}))}
             for d in {r.params["device"] for r in timed}}
    for i, ((bench, case), recs) in enumerate(sorted(kernels.items(), key=str)):
        series = []
        lines = group(recs, lambda r: (r.machine, r.params["device"], r.params["dtype"]))
        for (machine, device, dtype), line in sorted(lines.items()):
            label = f"{machine + ' ' if multi else ''}{device} {dtype}"
            colours = PALETTE.get(device, ["#7f7f7f"])
            colour = colours[shade[device].get(machine, 0) % len(colours)]
            series.append((label, colour, dtype == "float64", [(r.params["n"], r.value) for r in line]))
        refs = []
        mine = published.for_kernel(pub, bench, case)
        for column, device in published.columns(mine):
            pts = [(p.n, p.seconds) for p in mine if p.column == column]
            if pts:
                dtype = {p.dtype for p in mine}.pop()
                refs.append((f"published: {column}" + (f", {dtype}" if dtype != "unstated" else ""),
                             PUBLISHED.get(device, "#7f7f7f"), pts))
        items = [c for c in report.crossovers if c.benchmark == bench and c.case == case]
        marks = [(c.n, f"{c.dtype}{'' if c.cpu_machine == c.gpu_machine else ' ' + c.cpu_machine + ' cpu'} "
                       f"n≈{c.n:,.0f}")
                 for c in items if c.kind == cx.CROSSING]
        title = case_label(bench, case).replace(".time_warm", "")
        caption = _crossing_caption(items)
        if refs:
            caption += " Diamonds: published, not measured." + (  # what they are: the figures' intro
                " The incident does not state their dtype." if any(p.dtype == "unstated" for p in mine) else "")
        out.append((f"size-{i}", svg.loglog(title, series, marks, references=refs), caption))
    return out  # no size-swept timing: no panel


DEVICE_COLOURS = {"cpu": COLOURS["cpu"], "gpu": COLOURS["gpu"], "host": "#2ca02c"}


def fp64_bars(report) -> tuple[str, str] | None:
    if not report.fp64_summary:
        return None  # no panel
    multi = len({s.machine for s in report.fp64_summary}) > 1
    items = [(s.kernel.replace(".time_warm", "") + (f" · {s.machine}" if multi else ""), s.ratio,
              DEVICE_COLOURS.get(s.device, "#7f7f7f")) for s in report.fp64_summary]
    legend = [(f"device {d}", c) for d, c in DEVICE_COLOURS.items() if any(s.device == d for s in report.fp64_summary)]
    body = svg.hbars("FP64 penalty: float64 time / float32 time at the largest size", items, "float64 / float32 time",
                     legend=legend, reference=(1.0, "1 = no penalty"))
    gpu = any(s.device == "gpu" for s in report.fp64_summary)
    return body, "Bars right of the dashed line (ratio 1) mean float64 is slower (measured)." + (
        "" if gpu else " No gpu bar: no GPU in these results.")


def concurrency_grids(report) -> list[tuple[str, str, str]]:
    out = []
    legend = [("every worker finished (slowdown beside)", "#b7e4b0"), ("workers died", "#f4b0a8"),
              ("skipped / not measured", "#eee")]
    drawn = [(k, cells) for k, cells in sorted(group(report.concurrency, lambda c: (c.machine, c.device)).items())
             if any(c.status == "ok" or c.workers_died or c.status == "failed" for c in cells)]
    for i, ((machine, device), cells) in enumerate(drawn):
        rows = sorted({c.policy for c in cells})
        cols = sorted({c.n_workers for c in cells})
        table = {}
        for c in cells:
            colour = ("#b7e4b0" if c.status == "ok"
                      else "#f4b0a8" if c.workers_died or c.status == "failed" else "#eee")
            slow = c.values.get("slowdown")
            table[(c.policy, c.n_workers)] = (c.status + (f" x{slow:.2g}" if slow is not None else ""), colour)
        out.append((f"concurrency-{i}",
                    svg.grid(f"{machine} {device}: outcome by memory policy and N workers", rows, cols, table, legend),
                    "Rows: memory policies; columns: N kernels at once (measured)."))
    return out  # nothing measured: no panel (the decision sheet says not measured, with the command)


def cost_bars(report) -> tuple[str, str] | None:
    items = [(f"{c.family}{' (predicted)' if c.label == 'predicted' else ''}", c.job_dollars,
              "#1f77b4" if c.label == "measured" else "#bbbbbb") for c in report.costs if c.job_dollars is not None]
    if not items:
        return None  # no panel: the evidence says why
    missing = [c.family for c in report.costs if c.job_dollars is None]
    legend = [(lab, col) for lab, col in (("measured on that family", "#1f77b4"), ("predicted", "#bbbbbb"))
              if any(c == col for *_, c in items)]
    return svg.hbars("Cost of one bench job per family (US$)", items, "US$ per job", legend=legend,
                     fmt_value="${:.3f}"), \
        "Predicted: the suite wall time of a measured machine of the same kind, at this family's price." + \
        (f" No cost for: {', '.join(missing)}." if missing else "")


def _md_inline(text: str) -> str:
    text = escape(text, quote=False)
    text = re.sub(r"`([^`]+)`", r"<code>\1</code>", text)
    text = re.sub(r"\[([^\]]+)\]\((#[\w\-]+|[\w][\w./\-]*(?:#[\w\-]+)?)\)", r'<a href="\2">\1</a>', text)
    text = re.sub(r"\*\*([^*]+)\*\*", r"<b>\1</b>", text)
    return re.sub(r"(?<![\w*])\*([^*\s][^*]*)\*(?![\w*])", r"<i>\1</i>", text)


def markdown_to_html(md: str) -> str:
    """Just enough markdown for what findings.py writes: headings (with GitHub's anchors), tables, bullets,
    paragraphs, code, bold, italics, in-page links and relative links (no scheme: never a script)."""
    out: list = []
    rows: list = []
    items: list = []

    def flush():
        if rows:
            head, body = rows[0], rows[2:]
            out.append("<table><tr>" + "".join(f"<th>{_md_inline(c)}</th>" for c in head) + "</tr>" +
                       "".join("<tr>" + "".join(f"<td>{_md_inline(c)}</td>" for c in r) + "</tr>" for r in body) +
                       "</table>")
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
            title = line.lstrip("#").strip()
            out.append(f'<h{level + 1} id="{answers.slug(title)}">{_md_inline(title)}</h{level + 1}>')
        elif line.strip():
            out.append(f"<p>{_md_inline(line)}</p>")
    flush()
    return "\n".join(out)


def _figure(fid: str, body: str, caption: str) -> str:
    return f'<figure class="jaxci-figure" id="{fid}">{body}<figcaption>{escape(caption)}</figcaption></figure>'


#: the CSS class of each row status (a row's status is a Status, never read from its words)
_STATUS_CLASS = {Status.MEASURED: "st-measured", Status.PREDICTED: "st-predicted", Status.NOT_MEASURED: "st-nm"}


def _status(status: Status) -> str:
    return f'<span class="{_STATUS_CLASS[status]}">{_md_inline(status)}</span>'


def decisions_html(report) -> str:
    """The decision sheet per runner family: seven decisions, each with its status and where it comes from."""
    from jaxci.report import decisions

    parts = []
    for s in decisions.sheets(report, report.families, report.audit):
        rows = "".join(f"<tr><td>{d.q}</td><td>{escape(d.question)}</td><td>{_md_inline(d.decision)}</td>"
                       f"<td>{_status(d.status)}</td><td>{_md_inline(d.basis)}</td></tr>" for d in s.rows)
        parts.append(f'<div class="sheet"><h3 id="{answers.slug("decision sheet " + s.family)}">Decision sheet: '
                     f'{_md_inline(s.title)}</h3><table class="answers decisions"><tr><th>#</th><th>question</th>'
                     f"<th>decision</th><th>status</th><th>from (band, inputs; or the command that measures it)</th>"
                     f"</tr>{rows}</table></div>")
    return "\n".join(parts) + f'<p class="fail-once">{_md_inline(decisions.FAIL_ONCE)}</p>'


def regressions_html(report) -> str:
    from jaxci.report import regressions

    md = regressions.regressions_md(report)
    if not md:
        return ""
    return ('<section id="regressions" class="regressions"><h2 id="regressions-across-jax-releases-summary">'
            "Regressions across JAX releases (measured)</h2>" + markdown_to_html(md) + "</section>")


def _split(findings: str) -> tuple[str, str]:
    """findings.md -> (guidance and extra sections, evidence); the answers are rendered from the sheets."""
    g = findings.find("\n## Evidence: answers per measured machine")
    g = g if g >= 0 else findings.find("\n## Guidance per lecture type")
    e = findings.find("\n## Evidence: machines and runs")
    if g < 0 or e < 0:
        return "", findings
    return findings[g:e], findings[e:]


def render(report, findings: str, guidance: str) -> str:
    tag = "SYNTHETIC data (tests/synth.py), not measurements. " if any(
        answers.is_synthetic(f) for f in report.machines.values()) else ""
    fig = lambda fid, body, caption: _figure(fid, body, tag + caption)
    size = "".join(fig(*f) for f in time_vs_size(report))
    fp64_bar, cost_bar = fp64_bars(report), cost_bars(report)
    fp64 = f'<h3>FP64 penalty</h3><section id="figures-fp64">{fig("fp64", *fp64_bar)}</section>' if fp64_bar else ""
    conc = "".join(fig(*f) for f in concurrency_grids(report))
    cost = (f'<h3 id="figures-suite-cost">The benchmark suite itself: one bench job per family (not a lecture '
            f'build)</h3><section id="figures-cost">{fig("cost", *cost_bar)}</section>' if cost_bar else "")
    middle, evidence = _split(findings)
    regressions = regressions_html(report)
    reg_nav = ' · <a href="#regressions">regressions</a>' if regressions else ""
    conc_section = (f'<h3>Concurrency outcome</h3><section id="figures-concurrency">{conc}</section>' if conc else "")
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>jax-ci-bench findings</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>{CSS}</style></head><body>
<nav><a href="../index.html">← asv benchmarks</a> · <a href="#answers">decision sheets</a>{reg_nav}
· <a href="#evidence-answers-per-measured-machine">measured machines</a>\
 · <a href="#guidance-per-lecture-type">guidance</a>
· <a href="#figures">figures</a>
· <a href="#evidence-machines-and-runs">evidence</a> · <a href="#the-benchmark-suite-itself">suite cost</a>
· <a href="findings.md">findings.md</a>\
 · <a href="guidance.md">guidance.md</a>
· <a href="report.json">report.json</a></nav>
<h1>jax-ci-bench findings: seven decisions per runner family</h1>
<p class="report-link"><strong>For maintainers: <a href="report.html">the report</a></strong>: per runner family,
the seven answers, the lectures to pin, build minutes and dollars per audited repository, and the JAX pin.</p>
<section id="answers" class="answers">{decisions_html(report)}</section>
<p>Status: <span class="st-measured">measured</span> on that family; <span class="st-predicted">predicted</span> by the
runner model (band, inputs); <span class="st-nm">not measured</span>, with the command that measures it.
{escape(answers.headline(report))} Generated {escape(report.generated)} from
<code>{escape(report.results_dir)}</code>.</p>
{regressions}
<section id="guidance">{markdown_to_html(middle)}</section>
<h2 id="figures">Figures</h2>
<p>Time vs size: blues cpu, oranges/reds gpu (one shade per machine); solid float32, dashed float64; dots are measured
medians; hollow diamonds are published incident timings (docs/reference/incidents.md: a reference drawn beside our
measurements, never measured here);\
 red lines: measured crossings (where both a cpu and a gpu line have two or more sizes; the lines drawn are
measured).</p>
<section id="figures-size">{size}</section>
{fp64}
{conc_section}
{cost}
<section id="findings">{markdown_to_html(evidence)}</section>
</body></html>
"""


def write_page(report, html_dir: Path, findings: str, guidance: str, data: dict,
               maintainers: str = "") -> tuple[Path, str]:
    """html_dir/findings/ (its five files; report.html the maintainers' report) and the link from asv's
    index.html (asvindex); every write through safewrite, inside html_dir (a link there that leads elsewhere is
    refused, never written through)."""
    html_dir = Path(html_dir)
    html_dir.mkdir(parents=True, exist_ok=True)
    out = safewrite.make_folder(html_dir / "findings", within=html_dir)
    for name, text in (("findings.md", findings), ("guidance.md", guidance),
                       ("report.json", json.dumps(data, indent=1, default=str)),
                       ("index.html", render(report, findings, guidance)), ("report.html", maintainers)):
        safewrite.write_text(out / name, text, within=html_dir)
    return out / "index.html", link_from_asv_index(html_dir, report)
