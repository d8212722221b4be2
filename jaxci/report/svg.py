"""Tiny inline-SVG charts (log-log lines, bars, a labelled grid): no JavaScript, nothing fetched at view time."""

from __future__ import annotations

import math
from html import escape

W, H = 600, 320
L, R, T, B = 70, 200, 30, 45  # margins: the right one holds the legend


def _svg(body: str, title: str, width=W, height=H) -> str:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" role="img" viewBox="0 0 {width} {height}" '
            f'width="{width}" height="{height}" font-family="sans-serif" font-size="11">'
            f'<title>{escape(title)}</title>{body}</svg>')


def empty(title: str, message: str = "not measured") -> str:
    body = (f'<rect x="1" y="1" width="{W - 2}" height="{H - 2}" fill="#fafafa" stroke="#ccc"/>'
            f'<text x="{W / 2}" y="{T}" text-anchor="middle" font-weight="bold">{escape(title)}</text>'
            f'<text x="{W / 2}" y="{H / 2}" text-anchor="middle" fill="#888" font-size="14">{escape(message)}</text>')
    return _svg(body, f"{title}: {message}")


def _ticks(lo: float, hi: float):
    return [10.0 ** k for k in range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1)]


def _fmt(v: float) -> str:
    if v >= 1e6 or v < 1e-2:
        return f"1e{round(math.log10(v))}" if v > 0 and abs(math.log10(v) - round(math.log10(v))) < 1e-9 else f"{v:.0e}"
    return f"{v:g}"


def loglog(title: str, series, markers=(), xlabel="n", ylabel="seconds") -> str:
    """series: [(label, colour, dashed, [(x, y), ...])]; markers: [(x, label)] drawn as vertical lines."""
    pts = [(x, y) for *_, p in series for x, y in p if x > 0 and y > 0]
    if not pts:
        return empty(title)
    xs, ys = [x for x, _ in pts] + [x for x, _ in markers if x > 0], [y for _, y in pts]
    x0, x1 = min(xs) / 1.5, max(xs) * 1.5
    y0, y1 = min(ys) / 2, max(ys) * 2
    px = lambda x: L + (math.log10(x) - math.log10(x0)) / (math.log10(x1) - math.log10(x0)) * (W - L - R)
    py = lambda y: H - B - (math.log10(y) - math.log10(y0)) / (math.log10(y1) - math.log10(y0)) * (H - T - B)
    out = [f'<text x="{(L + W - R) / 2}" y="18" text-anchor="middle" font-weight="bold">{escape(title)}</text>',
           f'<rect x="{L}" y="{T}" width="{W - L - R}" height="{H - T - B}" fill="none" stroke="#999"/>']
    for t in _ticks(x0, x1):
        if x0 <= t <= x1:
            out.append(f'<line x1="{px(t):.1f}" x2="{px(t):.1f}" y1="{T}" y2="{H - B}" stroke="#eee"/>'
                       f'<text x="{px(t):.1f}" y="{H - B + 14}" text-anchor="middle">{_fmt(t)}</text>')
    for t in _ticks(y0, y1):
        if y0 <= t <= y1:
            out.append(f'<line x1="{L}" x2="{W - R}" y1="{py(t):.1f}" y2="{py(t):.1f}" stroke="#eee"/>'
                       f'<text x="{L - 4}" y="{py(t) + 4:.1f}" text-anchor="end">{_fmt(t)}</text>')
    out.append(f'<text x="{(L + W - R) / 2}" y="{H - 8}" text-anchor="middle">{escape(xlabel)} (log)</text>'
               f'<text x="14" y="{(T + H - B) / 2}" text-anchor="middle" transform="rotate(-90 14 {(T + H - B) / 2})">'
               f'{escape(ylabel)} (log)</text>')
    for k, (x, label) in enumerate(markers):
        out.append(f'<g class="crossing"><line x1="{px(x):.1f}" x2="{px(x):.1f}" y1="{T}" y2="{H - B}" stroke="#c00" '
                   f'stroke-width="1.5"/><text x="{px(x) - 3:.1f}" y="{H - B - 6 - 13 * k}" fill="#c00" text-anchor="end" '
                   f'font-size="10">{escape(label)}</text></g>')
    for i, (label, colour, dashed, p) in enumerate(series):
        p = sorted((x, y) for x, y in p if x > 0 and y > 0)
        dash = ' stroke-dasharray="5,3"' if dashed else ""
        if len(p) > 1:
            path = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in p)
            out.append(f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="2"{dash}/>')
        out += [f'<circle cx="{px(x):.1f}" cy="{py(y):.1f}" r="3" fill="{colour}"/>' for x, y in p]
        ly = T + 10 + 16 * i
        out.append(f'<line x1="{W - R + 8}" x2="{W - R + 28}" y1="{ly}" y2="{ly}" stroke="{colour}" stroke-width="2"{dash}/>'
                   f'<text x="{W - R + 32}" y="{ly + 4}" font-size="10">{escape(label[:30])}</text>')
    return _svg("".join(out), title)


def bars(title: str, items, ylabel: str, reference: float | None = None) -> str:
    """items: [(label, value, colour)]; a horizontal reference line (e.g. ratio 1) when given."""
    items = [(lab, v, c) for lab, v, c in items if v is not None]
    if not items:
        return empty(title)
    width = max(W, L + 40 + 26 * len(items))
    top = max([v for _, v, _ in items] + [reference or 0]) * 1.15 or 1.0
    inner = H - T - B - 60
    py = lambda v: T + inner - v / top * inner
    bw = (width - L - 20) / len(items)
    out = [f'<text x="{width / 2}" y="18" text-anchor="middle" font-weight="bold">{escape(title)}</text>',
           f'<line x1="{L}" x2="{width - 10}" y1="{T + inner}" y2="{T + inner}" stroke="#999"/>',
           f'<text x="14" y="{T + inner / 2}" text-anchor="middle" transform="rotate(-90 14 {T + inner / 2})">{escape(ylabel)}</text>']
    for k in range(5):
        v = top * k / 4
        out.append(f'<text x="{L - 4}" y="{py(v) + 4:.1f}" text-anchor="end">{v:.3g}</text>'
                   f'<line x1="{L}" x2="{width - 10}" y1="{py(v):.1f}" y2="{py(v):.1f}" stroke="#eee"/>')
    if reference is not None:
        out.append(f'<line x1="{L}" x2="{width - 10}" y1="{py(reference):.1f}" y2="{py(reference):.1f}" '
                   f'stroke="#c00" stroke-dasharray="4,3"/>')
    for i, (label, value, colour) in enumerate(items):
        x = L + i * bw + bw * 0.15
        out.append(f'<rect class="bar" x="{x:.1f}" y="{py(value):.1f}" width="{bw * 0.7:.1f}" '
                   f'height="{max(T + inner - py(value), 0.5):.1f}" fill="{colour}"><title>{escape(label)}: {value:.4g}</title></rect>'
                   f'<text x="{x + bw * 0.35:.1f}" y="{T + inner + 8}" transform="rotate(50 {x + bw * 0.35:.1f} {T + inner + 8})" '
                   f'font-size="9">{escape(label[:28])}</text>')
    return _svg("".join(out), title, width=width)


def grid(title: str, rows, cols, cells) -> str:
    """cells: {(row, col): (text, colour)}; rows/cols: labels. Unmeasured cells read 'not measured'."""
    if not rows or not cols:
        return empty(title)
    cw, ch, lw = 90, 26, 150
    width, height = lw + cw * len(cols) + 10, T + 20 + ch * (len(rows) + 1)
    out = [f'<text x="{width / 2}" y="18" text-anchor="middle" font-weight="bold">{escape(title)}</text>']
    for j, c in enumerate(cols):
        out.append(f'<text x="{lw + cw * j + cw / 2}" y="{T + 14}" text-anchor="middle">{escape(str(c))}</text>')
    for i, r in enumerate(rows):
        y = T + 20 + ch * i
        out.append(f'<text x="{lw - 6}" y="{y + 17}" text-anchor="end">{escape(str(r))}</text>')
        for j, c in enumerate(cols):
            text, colour = cells.get((r, c), ("not measured", "#eee"))
            out.append(f'<rect class="cell" x="{lw + cw * j}" y="{y}" width="{cw - 2}" height="{ch - 2}" fill="{colour}"/>'
                       f'<text x="{lw + cw * j + cw / 2}" y="{y + 17}" text-anchor="middle" font-size="10">{escape(text)}</text>')
    return _svg("".join(out), title, width=width, height=height)
