"""Markdown and front-matter checks of the static scan: where a lecture's prose talks about the GPU, and the
execution timeout its own metadata (MyST front matter, through jupytext) sets.

A markdown cell is read line by line: MyST directive fences (``` or ::: with `{name}`) are tracked with
nesting, so an admonition (note, warning, dropdown, ...) mentioning the GPU, an `{include}` of a GPU page,
or a sentence outside directives that puts the GPU next to a speed word becomes a `gpu_narrative` finding
("cell N: ..."): text a maintainer must review before pinning that lecture to the CPU. The metadata
timeout is read by the book config's rule (book.check_timeout): `true` is refused, not read as 1 s.
"""

from __future__ import annotations

import re

from jaxci.audit.reading.book import INVALID, check_timeout

ADMONITIONS = {"note", "admonition", "warning", "tip", "important", "attention", "caution", "danger", "error",
               "hint", "seealso", "dropdown"}
GPU_WORD = re.compile(r"\bGPUs?\b|\bCUDA\b|\bT4\b|\baccelerator", re.I)
SPEED_WORD = re.compile(r"\b(fast|faster|fastest|speed|speeds|speed-?up|accelerat\w*|quick\w*|slow\w*|"
                        r"orders? of magnitude|x faster)\b", re.I)
FENCE = re.compile(r"^(?P<fence>`{3,}|:{3,})\{(?P<name>[\w:-]+)\}(?P<arg>.*)$")


def scan_markdown(text: str, index: int, found: list[str], shown: list[str] | None = None) -> None:
    """GPU narrative in one markdown cell (index: its position in the notebook), appended to `found`; the entries
    that show the GPU (a directive or include about it, not prose about its speed) to `shown` as well."""
    shown = [] if shown is None else shown
    lines = text.splitlines()
    inside: list[tuple[str, str, int]] = []  # open directive fences: (fence, name, start line)
    body: dict[int, list[str]] = {}
    plain = []
    for lineno, line in enumerate(lines):
        stripped = line.strip()
        match = FENCE.match(stripped)
        if match:
            name = match["name"].split(":")[-1].lower()
            if name == "include" and re.search(r"gpu", match["arg"], re.I):
                found.append(f"cell {index}: includes {match['arg'].strip()}")
                shown.append(found[-1])
            inside.append((match["fence"], name, lineno))
            body[lineno] = [match["arg"]]
            continue
        if inside and stripped and set(stripped) <= {"`", ":"} and stripped == inside[-1][0]:
            fence, name, start = inside.pop()
            text_in = "\n".join(body.pop(start))
            if name in ADMONITIONS and GPU_WORD.search(text_in):
                found.append(f"cell {index}: {{{name}}} directive mentioning the GPU")
                shown.append(found[-1])
            if inside:  # nested: the outer directive sees the inner text too
                body[inside[-1][2]].append(text_in)
            continue
        if inside:
            body[inside[-1][2]].append(line)
        else:
            plain.append(line)
    for sentence in re.split(r"(?<=[.!?])\s+", " ".join(plain)):
        if GPU_WORD.search(sentence) and SPEED_WORD.search(sentence):
            found.append(f"cell {index}: text about GPU speed: {sentence.strip()[:80]!r}")
            break


#: where a notebook's metadata sets its own per-cell timeout, in the order MyST-NB reads them
TIMEOUT_KEYS = (("execution", "timeout"), ("mystnb", "execution_timeout"))


def timeout_metadata(meta) -> tuple[str, float | None, list[str]]:
    """(origin, seconds, notes) of the notebook's own timeout: origin "" when it sets none; seconds None for
    no limit; a refused value is a note and the next key is read."""
    notes = []
    for outer, inner in TIMEOUT_KEYS:
        block = meta.get(outer)
        if not isinstance(block, dict) or inner not in block:
            continue
        rule = check_timeout(block[inner], f"notebook metadata {outer}.{inner}")
        if rule.problem:
            notes.append(rule.problem + (": ignored" if rule.state == INVALID else ""))
        if rule.state != INVALID:
            return f"notebook metadata {outer}.{inner}", rule.seconds, notes
    return "", None, notes
