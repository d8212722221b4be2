"""Small formatting helpers shared by the markdown and HTML renderers."""

from __future__ import annotations

import re

from jaxci.util.quoting import line

NM = "not measured"
_PIPE = re.compile(r"(?<!\\)\|")


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
    esc = lambda s: _PIPE.sub(r"\\|", line(s))  # one line; a pipe already escaped (quoting.cell) kept as it is
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(esc(c) for c in r) + " |" for r in rows]
    return "\n".join(lines)


def repeated_sentences(text: str, min_chars: int = 40) -> dict[str, int]:
    """Sentences said more than once in `text` (whitespace-normalised, at least `min_chars` long), with how
    often: the "each fact once" measure of the findings page. Sentences end at '.', ';', '!' or '?'
    followed by a space, or at a line or table-cell break; numbers stay in, so the same words about two machines
    are two sentences."""
    import re
    from collections import Counter

    sentences = (" ".join(part.split()).strip(" .;-*") for line in re.split(r"[\n\r|\t]+", text)
                 for part in re.split(r"(?<=[.;!?])\s+", line))
    counts = Counter(s for s in sentences if len(s) >= min_chars)
    return {s: n for s, n in counts.items() if n > 1}


def repeats(text: str, min_chars: int = 40) -> int:
    """How many sentence occurrences repeat an earlier one (0: every sentence said once)."""
    return sum(n - 1 for n in repeated_sentences(text, min_chars).values())


class Notes:
    """Model inputs said once: each distinct input part (a reference timing, a catalogue figure, a scaling
    assumption) gets a label I1, I2, ...; table cells cite the labels and `md()` lists each part once."""

    def __init__(self, prefix: str = "I"):
        self.prefix = prefix
        self.ids: dict = {}

    def _label(self, part: str) -> str:
        if part not in self.ids:
            self.ids[part] = f"{self.prefix}{len(self.ids) + 1}"
        return self.ids[part]

    def cite(self, inputs: str) -> str:
        """'cpu: a; b | gpu: c' -> 'cpu: I1, I2 · gpu: I3' (a device prefix stays; the parts become labels)."""
        groups = []
        for group in (g.strip() for g in (inputs or "").split(" | ") if g.strip()):
            head, sep, rest = group.partition(": ")
            if not sep or head not in ("cpu", "gpu"):
                head, rest = "", group
            labels = ", ".join(self._label(p.strip()) for p in rest.split("; ") if p.strip())
            groups.append(f"{head}: {labels}" if head else labels)
        return " · ".join(groups) or "—"

    def md(self, title: str = "Inputs cited above") -> str:
        if not self.ids:
            return ""
        return f"{title}:\n\n" + "\n".join(f"- **{label}**: {part}" for part, label in self.ids.items())
