"""Small formatting helpers shared by the markdown and HTML renderers."""

from __future__ import annotations

NM = "not measured"


def seconds(v) -> str:
    if v is None:
        return NM
    if v >= 1000:   # a suite or job: "3,440 s", never "3.44e+03 s"
        return f"{v:,.0f} s"
    if v >= 1:
        return f"{v:.3g} s"
    if v >= 1e-3:
        return f"{v * 1e3:.3g} ms"
    return f"{v * 1e6:.3g} µs"


def num(v, fmt="{:.3g}") -> str:
    return NM if v is None else fmt.format(v)


def dollars(v) -> str:
    return NM if v is None else f"${v:.4f}"


def pct(v) -> str:
    return "—" if v is None else f"{v:+.0%}"


def table(header, rows) -> str:
    """A GitHub markdown table; an empty row list gives one 'not measured' row."""
    rows = [list(map(str, r)) for r in rows] or [[NM] + [""] * (len(header) - 1)]
    esc = lambda s: s.replace("|", "\\|")
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(esc(c) for c in r) + " |" for r in rows]
    return "\n".join(lines)
