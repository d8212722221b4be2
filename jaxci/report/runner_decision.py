"""The runner decision of each committed audit (jaxci.policy.runner_decision) as a maintainer reads it: one
sentence with the option taken and its saving, then every option's wall minutes, billed minutes and dollars with
their bands, all predicted from the runs here (the published build beside, labelled)."""

from __future__ import annotations

from jaxci.policy import runner_decision as rd
from jaxci.util.quoting import cell, prose

#: the committed record of full builds a year per audited repository (format jaxci-builds-per-year, version 1)
BUILDS_FORMAT, BUILDS_VERSION = "jaxci-builds-per-year", 1


def builds_per_year(path=None) -> dict[str, tuple[int, str]]:
    """repository name (without @commit) -> (full builds a year, source) from docs/reference/builds-per-year.json
    ({} without the file); ValueError naming the file and the field for a malformed one."""
    from pathlib import Path

    from jaxci import REPO_ROOT
    from jaxci.util.versioned import load

    path = Path(path) if path else REPO_ROOT / "docs" / "reference" / "builds-per-year.json"
    if not path.is_file():
        return {}
    doc = load(path, BUILDS_FORMAT, BUILDS_VERSION, 1 << 20, ValueError, "write it again in this version's shape")
    repos = doc.get("repositories")
    out = {}
    for name, one in (repos.items() if isinstance(repos, dict) else ()):
        n = one.get("full_builds") if isinstance(one, dict) else None
        if type(n) is not int or not 0 < n <= 10_000 or not isinstance(one.get("source"), str):
            raise ValueError(f"{path}: repositories.{name}: full_builds (1 to 10,000) and a source are needed")
        out[name] = (n, one["source"])
    return out


def yearly(d: rd.Decision, builds: dict) -> str:
    """What the chosen option saves a year, at the repository's full builds a year (its record, sourced)."""
    found = builds.get(d.repository.split("@")[0])
    if found is None:
        return "$ a year: not counted (no builds-a-year record for this repository)."
    n, source = found
    stay, chosen = d.options[0], d.chosen
    saved = (stay.dollars[0] - chosen.dollars[0]) * n
    hours = (stay.wall_min[0] - chosen.wall_min[0]) * n / 60
    return (f"At {n} full builds a year ({source}): ${chosen.dollars[0] * n:,.0f} a year against "
            f"${stay.dollars[0] * n:,.0f} staying (${saved:,.0f} saved), {hours:,.0f} hours of build wall time saved.")


def runs_on(committed, catalogue: dict) -> str | None:
    """The family the repository's build jobs use, from its audit's `ci` block (None: not read)."""
    from jaxci.audit.lecture_ci.runner_use import from_ci

    return from_ci(committed.audit.get("ci"), catalogue).family


def for_committed(committed, catalogue: dict) -> rd.Decision | None:
    """The decision of one committed audit (report.committed_audits.CommittedAudit) for the family its build jobs
    run on; None where that family is not known."""
    family = runs_on(committed, catalogue)
    if family is None or family not in catalogue:
        return None
    return rd.decide(committed.view, committed.label, family, catalogue,
                     rd.published_minutes(committed.published, family))


def _band(t: tuple, fmt: str = "{:.1f}") -> str:
    return f"{fmt.format(t[0])} ({fmt.format(t[1])}-{fmt.format(t[2])})"


def headline(d: rd.Decision, builds: dict | None = None) -> str:
    """One sentence: the option taken, its wall minutes against today's build, and what it saves a build."""
    stay, chosen = d.options[0], d.chosen
    if chosen is stay:
        return (f"{prose(d.repository)}: stay on {d.today} (predicted {_band(stay.wall_min)} min a build; today "
                f"{d.today_min:.1f} min, {d.today_kind}); no option's band stays within today's build.")
    year = " " + yearly(d, builds) if builds is not None else ""
    return (f"{prose(d.repository)}: {chosen.name} — predicted {_band(chosen.wall_min)} min a build against "
            f"{d.today_min:.1f} min today ({d.today_kind}), ${chosen.dollars[0]:.2f} a build "
            f"(${chosen.dollars[1]:.2f}-{chosen.dollars[2]:.2f}) against ${stay.dollars[0]:.2f} staying.{year}")


def table(d: rd.Decision) -> list[str]:
    """Every option: jobs, wall minutes (band), billed minutes, $ a build (band)."""
    lines = ["| option | jobs | wall min (band) | billed min | $ a build (band) |", "|---|---|---|---|---|"]
    for o in d.options:
        mark = " **(taken)**" if o is d.chosen else ""
        limits = f" ({'; '.join(o.limits)})" if o.limits else ""
        lines.append(f"| {cell(o.name)}{mark}{limits} | {len(o.jobs)} | {_band(o.wall_min)} | {o.billed_min:.1f} | "
                     f"{_band(o.dollars, '{:.2f}')} |")
    return lines


def left_out_line(d: rd.Decision, published) -> str:
    """The lectures no option prices, with their published minutes on today's family where known: counted, never
    dropped (a long one among them would change every option)."""
    if not d.left_out:
        return "none"
    known = [published.lecture(p) for p in d.left_out] if published is not None else []
    minutes = sum(s for s in known if s) / 60
    said = f"; {minutes:.1f} min of today's published build" if known and any(known) else ""
    return f"{len(d.left_out)}: {', '.join(cell(x) for x in d.left_out)}{said}"


def section(d: rd.Decision, published=None, builds: dict | None = None) -> str:
    """The decision as a page section: the sentence, the rule, the table, what could flip it."""
    out = [headline(d, builds or {}), "",
           f"Rule: {d.rule}. Every figure is predicted by the runner model from the lectures' runs here, over the "
           f"{d.priced} lectures predicted on every family (left out: {left_out_line(d, published)}); "
           "each job pays "
           f"{rd.SETUP_MIN[0]:g}-{rd.SETUP_MIN[1]:g} min of set-up (the band's low end: a cached environment); a "
           "shard plan puts the lectures longest-first onto the least loaded runner.", "", *table(d)]
    if d.flips:
        out += ["", f"Could flip: {', '.join(cell(x) for x in d.flips)} (each predicted faster on the GPU by the "
                f"margin in the middle but not over its band); measure: {d.measure}."]
    return "\n".join(out) + "\n"


def decisions_md(report) -> str:
    """The report's first section: each committed audit's decision in one sentence and its options' table (the
    details, its rule and what could flip it: docs/runner-decision.md, `jaxci runner-decision`)."""
    decisions = [d for d in (for_committed(c, report.catalogue) for c in report.audits) if d is not None]
    if not decisions:
        return ""
    try:
        builds, said = builds_per_year(), []
    except ValueError as exc:   # a malformed record: said in the report, never a traceback
        builds, said = {}, [f"Builds a year not counted: {' '.join(str(exc).split())}"]
    parts = said + [f"### {prose(d.repository)}\n\n{headline(d, builds)}\n\n" + "\n".join(table(d))
                    for d in decisions]
    return ("## The runner decision\n\nStay, move, split or shard, per audited repository: every option predicted "
            "by the runner model from the lectures' runs here, each job paying its set-up; the rule takes the "
            "cheapest option whose wall-time band stays within today's build (`jaxci runner-decision`: the rule, "
            "the lectures left out and what could flip it, docs/runner-decision.md). Not yet applied by the patch "
            "below, which pins lectures on today's runner.\n\n" + "\n\n".join(parts) + "\n")
