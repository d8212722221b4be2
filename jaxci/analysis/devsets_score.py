"""A development set scored against the whole published build (issue 70, item 1): every lecture of the build is
either scored (published, predicted, band, ratio under each scoring, weight) or counted as coverage lost (with its
cause), never dropped; the figures are weighted by published seconds, and the lectures of LONG_S or more are their
own row.

The figures of one row (a set, a scoring, all lectures or the long ones), over the scored lectures:
- `within_2x`: how many lie within 2x (jaxci.analysis.residual.within_2x), and `seconds_within_2x`: the share of
  their published seconds that does (a lecture weighs its published seconds);
- `summed`: summed predicted / summed published, the build the row covers, which is the error weighted by published
  seconds;
- `median` and `weighted_median`: the ratios' median, and the one weighted by published seconds (the smallest
  ratio at which the lectures up to it hold half the row's published seconds);
- `coverage`: the row's scored published seconds over all its published seconds (scored + lost).
The goals (issue 70), per set by cross-set scoring: coverage at least 90%; summed within 1.15x; of the lectures of
60 s or more (lost ones count as not within), 80% within 2x by count and by published seconds. They are measured in
a change's closing note, never asserted in a test.

Pure Python: the records carry plain numbers, so another table (a GPU/CPU ratio's) can reuse them.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field

from jaxci.analysis.residual import within_2x
from jaxci.util.quoting import cell

#: the scorings of the protocol (docs/runner-model.md, "Scoring a model change")
SCORINGS = ("as predicted", "leave-one-lecture-out", "cross-set")
#: the share of the scored published seconds the model's error band leaves out at each end (`error_band`)
ERROR_TAIL = 0.1
#: a lecture of this many published seconds or more is a long one: its own row
LONG_S = 60.0
#: the goals, by cross-set scoring
GOAL_COVERAGE = 0.90
GOAL_SUMMED = 1.15
GOAL_LONG_WITHIN = 0.80


@dataclass(frozen=True)
class Lecture:
    """One scored lecture: its published and predicted seconds, the prediction's band (None: not recorded), the
    ratio predicted / published under each scoring, and what the prediction is mostly made of."""

    lecture: str
    published_s: float
    predicted_s: float
    low_s: float | None
    high_s: float | None
    ratios: dict  # scoring -> predicted / published (a scoring not made: absent)
    dominant: str = ""
    calibrates: bool = True


@dataclass(frozen=True)
class Lost:
    """A lecture of the published build with no prediction: its published seconds are coverage lost."""

    lecture: str
    published_s: float
    cause: str


@dataclass
class SetScore:
    """One development set: its family, where its runs and published build come from, the build's published
    seconds (every lecture with a time), and each lecture scored or lost."""

    family: str
    source: str
    build_s: float
    lectures: list = field(default_factory=list)   # [Lecture]
    lost: list = field(default_factory=list)       # [Lost]

    def weight(self, published_s: float) -> float:
        """A lecture's share of the whole build's published seconds."""
        return published_s / self.build_s if self.build_s else 0.0


def weighted_quantile(pairs: list[tuple[float, float]], q: float) -> float | None:
    """The smallest value whose own and smaller values hold at least the share `q` of the weight; `pairs`:
    (value, weight)."""
    total = sum(w for _, w in pairs)
    if not pairs or total <= 0:
        return None
    held = 0.0
    for value, weight in sorted(pairs):
        held += weight
        if held >= total * q:
            return value
    return sorted(pairs)[-1][0]


def weighted_median(pairs: list[tuple[float, float]]) -> float | None:
    """The smallest value whose own and smaller values hold at least half the weight; `pairs`: (value, weight)."""
    return weighted_quantile(pairs, 0.5)


def error_band(sets: list[SetScore], scoring: str = "cross-set", tail: float = ERROR_TAIL) -> tuple | None:
    """(low, high, lectures): the predicted / published ratios between which the middle 1 - 2 x `tail` of the scored
    lectures' published seconds lie, pooled over the sets, by `scoring` (held out: the model was not fitted where it
    is scored). A build's lecture predicted at s seconds publishes, on this evidence, s / high .. s / low."""
    pairs = [(x.ratios[scoring], x.published_s) for one in sets for x in one.lectures if scoring in x.ratios]
    low, high = weighted_quantile(pairs, tail), weighted_quantile(pairs, 1 - tail)
    return None if low is None or high is None else (low, high, len(pairs))


def render_error_band(sets: list[SetScore]) -> str:
    found = error_band(sets)
    if found is None:
        return "The model's error band: no scored lecture.\n"
    low, high, n = found
    return (f"The model's error band (cross-set, the middle {1 - 2 * ERROR_TAIL:.0%} of the published seconds of "
            f"{n} scored lectures): predicted / published {low:.2f} to {high:.2f}.\n")


def row_figures(scored: list[tuple[float, float]], lost_s: list[float]) -> dict:
    """One row's figures (module docstring) from `scored` = [(published s, ratio)] and the lost lectures' seconds."""
    pub = sum(p for p, _ in scored)
    inside = [(p, r) for p, r in scored if within_2x(r)]
    whole = pub + sum(lost_s)
    return {"lectures": len(scored), "lost": len(lost_s), "within_2x": len(inside),
            "seconds_within_2x": round(sum(p for p, _ in inside) / pub, 3) if pub else None,
            "summed": round(sum(p * r for p, r in scored) / pub, 2) if pub else None,
            "median": round(statistics.median(r for _, r in scored), 2) if scored else None,
            "weighted_median": _round(weighted_median([(r, p) for p, r in scored])),
            "coverage": round(pub / whole, 3) if whole else None}


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 2)


def board(sets: list[SetScore]) -> list[dict]:
    """Per set and scoring, the row of all its lectures and the row of its long ones (`of`: "all" or "60 s+")."""
    rows = []
    for one in sets:
        for scoring in SCORINGS:
            have = [x for x in one.lectures if scoring in x.ratios]
            if not have:
                continue
            for of, keep in (("all", lambda s: True), (f"{LONG_S:g} s+", lambda s: s >= LONG_S)):
                scored = [(x.published_s, x.ratios[scoring]) for x in have if keep(x.published_s)]
                lost = [x.published_s for x in one.lost if keep(x.published_s)]
                rows.append({"set": one.family, "scoring": scoring, "of": of, **row_figures(scored, lost)})
    return rows


def goals(rows: list[dict]) -> list[dict]:
    """Each set's goals (module docstring) from its cross-set rows: the figure, the goal and whether it is met."""
    out = []
    for row in rows:
        if row["scoring"] != "cross-set":
            continue
        if row["of"] == "all":
            cov, summed = row["coverage"] or 0.0, row["summed"]
            out += [_goal(row, "coverage of the build's published seconds", f"{cov:.1%}",
                          f">= {GOAL_COVERAGE:.0%}", cov >= GOAL_COVERAGE),
                    _goal(row, "the build: summed predicted / published", f"{summed:.2f}",
                          f"within {GOAL_SUMMED}x", summed is not None and 1 / GOAL_SUMMED <= summed <= GOAL_SUMMED)]
        else:
            n = row["lectures"] + row["lost"]
            share = row["within_2x"] / n if n else 0.0
            weighted = (row["seconds_within_2x"] or 0.0) * (row["coverage"] or 0.0)
            out.append(_goal(row, f"lectures of {LONG_S:g} s or more within 2x (lost ones not within)",
                             f"{row['within_2x']} of {n} ({share:.0%}); {weighted:.0%} of their seconds",
                             f">= {GOAL_LONG_WITHIN:.0%} (both)",
                             n > 0 and share >= GOAL_LONG_WITHIN and weighted >= GOAL_LONG_WITHIN))
    return out


def _goal(row: dict, what: str, figure: str, goal: str, met: bool) -> dict:
    return {"set": row["set"], "goal": what, "figure": figure, "wanted": goal, "met": met}


# ---- markdown -------------------------------------------------------------------------------------------------

def _pct(value: float | None) -> str:
    return "" if value is None else f"{value:.0%}"


def _num(value: float | None) -> str:
    return "" if value is None else f"{value:.2f}"


def render_board(rows: list[dict]) -> str:
    lines = ["| set | scoring | lectures | scored | within 2x | seconds within 2x | summed | median ratio | "
             "weighted median | coverage |", "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        n = r["lectures"]
        share = f"{r['within_2x']} ({r['within_2x'] / n:.0%})" if n else "0"
        lines.append(f"| {r['set']} | {r['scoring']} | {r['of']} | {n} of {n + r['lost']} | {share} | "
                     f"{_pct(r['seconds_within_2x'])} | {_num(r['summed'])} | {_num(r['median'])} | "
                     f"{_num(r['weighted_median'])} | {_pct(r['coverage'])} |")
    return "\n".join(lines) + "\n"


def render_goals(found: list[dict]) -> str:
    lines = ["| set | goal (cross-set) | figure | wanted | met |", "|---|---|---|---|---|"]
    lines += [f"| {g['set']} | {g['goal']} | {g['figure']} | {g['wanted']} | {'yes' if g['met'] else '**no**'} |"
              for g in found]
    return "\n".join(lines) + "\n"


def _band(x: Lecture) -> str:
    return "" if x.low_s is None or x.high_s is None else f"{x.low_s:.3g}..{x.high_s:.3g}"


def render_long(one: SetScore) -> list[str]:
    """The set's lectures of LONG_S or more, scored or lost, longest first: the build's cost in one table."""
    long = sorted([(x.published_s, x.lecture, x) for x in [*one.lectures, *one.lost] if x.published_s >= LONG_S],
                  key=lambda t: (-t[0], t[1]))
    if not long:
        return []
    lines = ["", f"Lectures of {LONG_S:g} s or more on {one.family}, longest first:", "",
             "| lecture | published s | weight | ratio | ratio LOLO | ratio cross-set | or lost: cause |",
             "|---|---|---|---|---|---|---|"]
    for pub, name, x in long:
        ratios = [_num(x.ratios.get(s)) for s in SCORINGS] if isinstance(x, Lecture) else [""] * len(SCORINGS)
        why = x.cause if isinstance(x, Lost) else ""
        lines.append(f"| {name} | {pub:.1f} | {one.weight(pub):.2%} | {' | '.join(ratios)} | {why} |")
    return lines


def render_lectures(sets: list[SetScore]) -> str:
    """Per set: each scored lecture's row (weight: its share of the build's published seconds), then the lost."""
    lines = []
    for one in sets:
        lines += ["", f"## {one.family}", "", f"{one.source}; the build's published seconds: {one.build_s:,.1f}.", "",
                  "| lecture | published s | weight | predicted s | band | ratio | ratio LOLO | ratio cross-set | "
                  "dominant |", "|---|---|---|---|---|---|---|---|---|"]
        for x in sorted(one.lectures, key=lambda x: x.lecture):
            cols = " | ".join(_num(x.ratios.get(s)) for s in SCORINGS)
            mark = "" if x.calibrates else " (not calibrated on)"
            lines.append(f"| {cell(x.lecture)}{mark} | {x.published_s:.1f} | {one.weight(x.published_s):.2%} | "
                         f"{x.predicted_s:.1f} | {_band(x)} | {cols} | {cell(x.dominant)} |")
        lines += render_long(one)
        if one.lost:
            lost_s = sum(x.published_s for x in one.lost)
            lines += ["", f"Coverage lost on {one.family}: {len(one.lost)} lectures, {lost_s:,.1f} s "
                          f"({one.weight(lost_s):.1%} of the build).", "",
                      "| lecture | published s | weight | cause |", "|---|---|---|---|"]
            lines += [f"| {cell(x.lecture)} | {x.published_s:.1f} | {one.weight(x.published_s):.2%} | {cell(x.cause)} |"
                      for x in sorted(one.lost, key=lambda x: (-x.published_s, x.lecture))]
    return "\n".join(lines) + "\n"
