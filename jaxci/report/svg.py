"""Tiny inline-SVG charts (log-log lines, horizontal bars, a labelled grid): no JavaScript, nothing fetched.

Readable by construction: 12-14 px text, at least three labelled ticks per log axis (1-2-5 steps when a range
spans few decades), a marker on every point (so a one-point series is visible), a legend for every colour,
and every label kept inside the drawing (widths estimated from the font size; long labels are shortened with
"…" and kept whole in a tooltip).
"""

from __future__ import annotations

import math
from html import escape

W, H = 800, 360
L, R, T, B = 78, 280, 36, 50  # margins: the right one holds the legend
FONT = 13
CHAR = 0.6  # average glyph width of sans-serif text, in em: used to keep labels inside the figure


def text_width(text: str, size: float = FONT) -> float:
    return len(text) * size * CHAR


def fit(text: str, width: float, size: float = FONT) -> str:
    """`text` shortened with … so that it fits `width` pixels at `size`."""
    if text_width(text, size) <= width:
        return text
    keep = max(int(width / (size * CHAR)) - 1, 1)
    return text[:keep] + "…"


def _svg(body: str, title: str, width=W, height=H) -> str:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" role="img" viewBox="0 0 {width:.0f} {height:.0f}" '
            f'width="{width:.0f}" height="{height:.0f}" font-family="sans-serif" font-size="{FONT}">'
            f'<title>{escape(title)}</title>{body}</svg>')


def _title(title: str, width: float) -> str:
    shown = fit(title, width - 20, 15)
    return (f'<text x="{width / 2:.1f}" y="22" text-anchor="middle" font-weight="bold" font-size="15">'
            f'{escape(shown)}</text>')


def empty(title: str, message: str = "not measured") -> str:
    body = (f'<rect x="1" y="1" width="{W - 2}" height="{H - 2}" fill="#fafafa" stroke="#ccc"/>' + _title(title, W) +
            f'<text x="{W / 2}" y="{H / 2}" text-anchor="middle" fill="#666" font-size="15">'
            f'{escape(fit(message, W - 40, 15))}</text>')
    return _svg(body, f"{title}: {message}")


def log_ticks(lo: float, hi: float, minimum: int = 3) -> list[float]:
    """Ticks inside [lo, hi]: decades, else 1-2-5 steps, else every integer step, until there are `minimum`."""
    k0, k1 = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
    eps = 1e-9 * hi
    for steps in ((1,), (1, 2, 5), tuple(range(1, 10)), tuple(m / 10 for m in range(10, 100))):
        ticks = [float(f"{m * 10.0 ** k:.6g}") for k in range(k0, k1 + 1) for m in steps
                 if lo - eps <= m * 10.0 ** k <= hi + eps]
        if len(ticks) >= minimum:
            return ticks
    return ticks


def fmt(v: float) -> str:
    """1e6, 2e-5, 300, 0.05: short labels for log ticks."""
    if v >= 1e5 or v < 1e-2:
        e = math.floor(math.log10(v) + 1e-9)
        m = v / 10 ** e
        return f"{m:.3g}e{e}" if abs(m - 1) > 1e-9 else f"1e{e}"
    return f"{v:g}"


def _legend(entries, x0: float, y0: float, width: float) -> list[str]:
    """entries: [(label, colour, dashed, marker)] with marker "circle" | "diamond" | "rect" | None."""
    out = []
    for i, (label, colour, dashed, marker) in enumerate(entries):
        y = y0 + 20 * i
        dash = ' stroke-dasharray="5,3"' if dashed else ""
        if marker == "rect":
            out.append(f'<rect x="{x0}" y="{y - 6}" width="20" height="12" fill="{colour}"/>')
        else:
            if marker != "diamond":
                out.append(f'<line x1="{x0}" x2="{x0 + 20}" y1="{y}" y2="{y}" stroke="{colour}" '
                           f'stroke-width="2"{dash}/>')
            out.append(_marker(x0 + 10, y, colour, marker or "circle"))
        shown = fit(label, width - 28, 12)
        out.append(f'<text x="{x0 + 26}" y="{y + 4}" font-size="12">{escape(shown)}'
                   f'{"<title>" + escape(label) + "</title>" if shown != label else ""}</text>')
    return out


def _marker(x: float, y: float, colour: str, kind: str) -> str:
    if kind == "diamond":
        return (f'<path class="published" d="M{x:.1f},{y - 6:.1f} L{x + 6:.1f},{y:.1f} L{x:.1f},{y + 6:.1f} '
                f'L{x - 6:.1f},{y:.1f} Z" fill="white" stroke="{colour}" stroke-width="2"/>')
    return f'<circle cx="{x:.1f}" cy="{y:.1f}" r="4" fill="{colour}"/>'


def loglog(title: str, series, markers=(), xlabel="n", ylabel="seconds", references=()) -> str:
    """series: [(label, colour, dashed, [(x, y), ...])] measured; references: [(label, colour, [(x, y)])] published
    figures drawn as hollow diamonds (never joined to the measured lines); markers: [(x, label)] vertical lines."""
    pts = [(x, y) for *_, p in series for x, y in p if x > 0 and y > 0]
    refs = [(x, y) for *_, p in references for x, y in p if x > 0 and y > 0]
    if not pts:
        return empty(title)
    xs = [x for x, _ in pts + refs] + [x for x, _ in markers if x > 0]
    ys = [y for _, y in pts + refs]
    x0, x1 = min(xs) / 1.6, max(xs) * 1.6
    y0, y1 = min(ys) / 2, max(ys) * 2
    pw, ph = W - L - R, H - T - B
    px = lambda x: L + (math.log10(x) - math.log10(x0)) / (math.log10(x1) - math.log10(x0)) * pw
    py = lambda y: H - B - (math.log10(y) - math.log10(y0)) / (math.log10(y1) - math.log10(y0)) * ph
    out = [_title(title, W - R + 60), f'<rect x="{L}" y="{T}" width="{pw}" height="{ph}" fill="none" stroke="#999"/>']
    xt = log_ticks(x0, x1)
    label_every = max(1, math.ceil(len(xt) * 48 / pw))  # about 48 px per x label
    for i, t in enumerate(xt):
        out.append(f'<line x1="{px(t):.1f}" x2="{px(t):.1f}" y1="{T}" y2="{H - B}" stroke="#e6e6e6"/>')
        if i % label_every == 0:
            out.append(f'<text x="{px(t):.1f}" y="{H - B + 17}" text-anchor="middle">{fmt(t)}</text>')
    yt = log_ticks(y0, y1)
    label_every = max(1, math.ceil(len(yt) * 18 / ph))
    for i, t in enumerate(yt):
        out.append(f'<line x1="{L}" x2="{W - R}" y1="{py(t):.1f}" y2="{py(t):.1f}" stroke="#e6e6e6"/>')
        if i % label_every == 0:
            out.append(f'<text x="{L - 5}" y="{py(t) + 4:.1f}" text-anchor="end">{fmt(t)}</text>')
    out.append(f'<text x="{L + pw / 2}" y="{H - 10}" text-anchor="middle">{escape(xlabel)} (log scale)</text>'
               f'<text x="16" y="{T + ph / 2}" text-anchor="middle" transform="rotate(-90 16 {T + ph / 2})">'
               f'{escape(ylabel)} (log scale)</text>')
    for k, (x, label) in enumerate(markers):
        lx, size = px(x), 12
        label = fit(label, pw - 10, size)
        right = lx + 4 + text_width(label, size) <= W - R - 4
        anchor, tx = ("start", lx + 4) if right or lx - 4 - text_width(label, size) < L else ("end", lx - 4)
        out.append(f'<g class="crossing"><line x1="{lx:.1f}" x2="{lx:.1f}" y1="{T}" y2="{H - B}" stroke="#c00" '
                   f'stroke-width="1.5"/><text x="{tx:.1f}" y="{T + 16 + 15 * k}" fill="#c00" text-anchor="{anchor}" '
                   f'font-size="{size}">{escape(label)}</text></g>')
    legend: list[tuple[str, str, bool, str | None]] = []
    for label, colour, dashed, p in series:
        p = sorted((x, y) for x, y in p if x > 0 and y > 0)
        dash = ' stroke-dasharray="5,3"' if dashed else ""
        if len(p) > 1:
            path = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in p)
            out.append(f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="2"{dash}/>')
        out += [_marker(px(x), py(y), colour, "circle") for x, y in p]
        legend.append((label + (" (one point)" if len(p) == 1 else ""), colour, dashed, "circle"))
    for label, colour, p in references:
        out += [_marker(px(x), py(y), colour, "diamond") for x, y in p if x > 0 and y > 0]
        legend.append((label, colour, False, "diamond"))
    rows = max(1, (H - T - 10) // 20)
    if len(legend) > rows:
        legend = legend[: rows - 1] + [(f"… {len(legend) - rows + 1} more (see the tables)", "#999", False, None)]
    out += _legend(legend, W - R + 14, T + 8, R - 18)
    return _svg("".join(out), title)


def nice_ticks(vmax: float, target: int = 5) -> list[float]:
    """0 and round steps (1, 2, 2.5 or 5 x 10^k) up to the first one at or above vmax."""
    if not vmax > 0:
        return [0.0, 1.0]
    raw = vmax / target
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    count = math.ceil(vmax / step - 1e-9)
    return [float(f"{k * step:.6g}") for k in range(count + 1)]


def hbars(title: str, items, xlabel: str, legend=(), reference: tuple | None = None, fmt_value="{:.3g}") -> str:
    """Horizontal bars, labels on the left, values at the bar ends. items: [(label, value, colour)];
    legend: [(label, colour)] for every colour used; reference: (value, label) drawn as a dashed line."""
    items = [(lab, v, c) for lab, v, c in items if v is not None]
    if not items:
        return empty(title)
    lw = min(max(text_width(lab, 12) for lab, *_ in items) + 12, 300)
    bar_h, top = 24, T + 10 + 20 * len(legend)
    height = top + bar_h * len(items) + 46
    right = W - 70
    ticks = nice_ticks(max([v for _, v, _ in items] + [reference[0] if reference else 0]))
    vmax = ticks[-1]
    sx = lambda v: lw + v / vmax * (right - lw)
    out = [_title(title, W)]
    out += _legend([(lab, col, False, "rect") for lab, col in legend], 20, T + 6, W - 40)
    for v in ticks:
        out.append(f'<line x1="{sx(v):.1f}" x2="{sx(v):.1f}" y1="{top - 4}" y2="{height - 40}" stroke="#e6e6e6"/>'
                   f'<text x="{sx(v):.1f}" y="{height - 24}" text-anchor="middle">{fmt_value.format(v)}</text>')
    out.append(f'<text x="{(lw + right) / 2:.1f}" y="{height - 6}" text-anchor="middle">{escape(xlabel)}</text>')
    for i, (label, value, colour) in enumerate(items):
        y = top + bar_h * i
        shown = fit(label, lw - 12, 12)
        out.append(f'<text x="{lw - 6:.1f}" y="{y + 16}" text-anchor="end" font-size="12">{escape(shown)}'
                   f'<title>{escape(label)}</title></text>'
                   f'<rect class="bar" x="{lw:.1f}" y="{y + 3}" width="{max(sx(value) - lw, 1):.1f}" '
                   f'height="{bar_h - 6}" '
                   f'fill="{colour}"><title>{escape(label)}: {value:.4g}</title></rect>'
                   f'<text x="{sx(value) + 4:.1f}" y="{y + 16}" font-size="12">{fmt_value.format(value)}</text>')
    if reference is not None:
        x = sx(reference[0])
        out.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{top - 4}" y2="{height - 40}" stroke="#c00" '
                   'stroke-dasharray="4,3"/>'
                   f'<text x="{x + 4:.1f}" y="{top - 6}" fill="#c00" font-size="12">{escape(reference[1])}</text>')
    return _svg("".join(out), title, height=height)


def grid(title: str, rows, cols, cells, legend=()) -> str:
    """cells: {(row, col): (text, colour)}; rows/cols: labels. Unmeasured cells read 'not measured'."""
    if not rows or not cols:
        return empty(title)
    cw, ch = 120, 30
    lw = min(max(text_width(str(r)) for r in rows) + 20, 220)
    top = T + 10 + 20 * len(legend)
    width = max(lw + cw * len(cols) + 10, text_width(title, 15) + 30, 360)
    height = top + 24 + ch * len(rows) + 10
    out = [_title(title, width)]
    out += _legend([(lab, col, False, "rect") for lab, col in legend], 20, T + 6, width - 40)
    out.append(f'<text x="{lw - 8}" y="{top + 14}" text-anchor="end" font-size="12" fill="#555">policy \\ N</text>')
    for j, c in enumerate(cols):
        out.append(f'<text x="{lw + cw * j + cw / 2}" y="{top + 14}" text-anchor="middle">{escape(str(c))}</text>')
    for i, r in enumerate(rows):
        y = top + 22 + ch * i
        out.append(f'<text x="{lw - 8}" y="{y + 19}" text-anchor="end">{escape(fit(str(r), lw - 12))}</text>')
        for j, c in enumerate(cols):
            text, colour = cells.get((r, c), ("not measured", "#eee"))
            out.append(f'<rect class="cell" x="{lw + cw * j}" y="{y}" width="{cw - 2}" height="{ch - 2}" '
                       f'fill="{colour}"/>'
                       f'<text x="{lw + cw * j + cw / 2}" y="{y + 19}" text-anchor="middle" font-size="12">'
                       f'{escape(fit(text, cw - 8, 12))}</text>')
    return _svg("".join(out), title, width=width, height=height)
