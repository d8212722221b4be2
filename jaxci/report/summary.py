"""`jaxci report --format summary`: the decision sheets in a terminal's width, then where the evidence is.

What scripts/bench.sh prints last (it keeps the first 24 lines): the family sheets come first, because they are the
answer; the measured machines are evidence and get one line each, never a family's headline.
"""

from __future__ import annotations

import textwrap

WIDTH = 150


def _cut(line: str, width: int) -> str:
    return line if len(line) <= width else line[: width - 1] + "…"


def sheet_lines(sheet, width: int = WIDTH) -> list[str]:
    """One family's sheet: its title, then one line per row with the row's status."""
    return [_cut(f"Decision sheet: {sheet.title}", width)] + [
        _cut(f"  {d.q} {d.question} [{d.status}]: {d.decision}", width) for d in sheet.rows]


def summary_lines(report, width: int = WIDTH) -> list[str]:
    """The headline, every decision sheet the report draws (--family, else its defaults), one evidence line
    per measured machine."""
    from jaxci.report import answers, decisions

    out = textwrap.wrap(answers.headline(report), width)
    for s in decisions.sheets(report, report.families, report.audit):
        out += sheet_lines(s, width)
    machines = sorted(report.machines)
    if machines:
        out.append(_cut(f"Evidence (measured machines, not a family's answer): {', '.join(machines)}: "
                        "findings.md, Evidence", width))
    return out
