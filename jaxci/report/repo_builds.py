"""Each committed audit of a real lecture repository (audits/) as a whole build on one runner family: the decision
sheet's row 6, the maintainers' report's build section and its pins, all from jaxci.policy.wholebuild.whole_build,
so the page, the sheet and the patch say the same numbers.

A repository is judged for the family its build jobs run on (jaxci.audit.lecture_ci.runner_use); every other
family is a what-if and says so. A repository on a CPU runner stays on the CPU.
"""

from __future__ import annotations

from jaxci.policy import wholebuild as wb
from jaxci.report.runner_decision import runs_on
from jaxci.util.quoting import prose  # a committed audit's name may hold anything: Markdown-safe wherever it is shown


def build_of(report, committed, family: str, entry) -> wb.WholeBuild:
    """One committed audit's whole build on `family` (published seconds used where they ran on its hardware)."""
    catalogue = report.catalogue
    return wb.whole_build(committed.view, committed.label, family, entry, committed.published, catalogue,
                          runs_on(committed, catalogue))


def own_build(report, build: wb.WholeBuild) -> wb.WholeBuild | None:
    """The same repository's build on the family its jobs run on (for a what-if's comparison)."""
    committed = next((c for c in report.audits if c.label == build.repository), None)
    family = build.runs_on
    if committed is None or family is None or family not in report.catalogue:
        return None
    return build_of(report, committed, family, report.catalogue[family])


def what_if_line(report, build: wb.WholeBuild) -> str:
    """What moving the build to this family would cost or save, on the lectures priced on both."""
    own = own_build(report, build)
    if own is None:
        return "what moving here would change: not known (its own runner is not in the catalogue)"
    here, there, n = wb.compared(build, own)
    if not n:
        return f"what moving here would change: not predicted (no lecture priced on both {build.family} and " \
               f"{own.family})"
    verb = "saves" if here < there else "costs"
    return (f"what moving here would change: {minutes(here)} for the {n} lectures priced on both, against "
            f"{minutes(there)} on {own.family}: {verb} {minutes(abs(there - here))} a build (predicted: a what-if)")


def decision_line(report, repository: str) -> str:
    """The repository's runner decision in one sentence (jaxci.report.runner_decision.headline: the report's first
    section, every family's page and the sheet's row 6 say this same sentence)."""
    from jaxci.report import runner_decision as page

    committed = next((c for c in report.audits if c.label == repository), None)
    d = page.for_committed(committed, report.catalogue) if committed is not None else None
    if d is None:
        return "the runner decision: not made (its runner is not known, or no lecture is predicted on every family)"
    return "the runner decision: " + page.headline(d)


def repo_builds(report, family: str, entry=None) -> list[wb.WholeBuild]:
    """Every committed audit's whole build on `family`, those that build there first."""
    entry = entry if entry is not None else report.catalogue[family]
    builds = [build_of(report, c, family, entry) for c in report.audits]
    return sorted(builds, key=lambda b: b.what_if)


def minutes(seconds: float) -> str:
    return f"{seconds / 60:,.1f} min"


def dollars(entry, seconds: float) -> str:
    from jaxci.policy.builds import job_dollars

    return f"${job_dollars(seconds, entry):.2f}" if entry.value("price_per_hour") is not None else "no price"


def published_line(build: wb.WholeBuild) -> str:
    """'published: 108.9 min on g4dn.2xlarge, 2026-08-14, 145 notebooks (source)', or why there is none."""
    pub = build.published
    if pub is None:
        return f"no published build on {build.family}'s hardware"
    return (f"published: {minutes(pub.total_s)} on {pub.family}, {prose(pub.executed)}, {pub.notebooks} notebooks "
            f"({prose(pub.repository + '@' + pub.commit[:8])} status.ipynb)")


def after_line(build: wb.WholeBuild) -> str:
    """The build after the patch, its band, dollars, and what prices each lecture."""
    mid, low, high = build.after_s
    counts = build.counts
    unpriced = build.unpriced
    left = (f"; {len(unpriced)} neither published nor predicted, left out ({', '.join(map(prose, unpriced[:3]))}"
            f"{' …' if len(unpriced) > 3 else ''})" if unpriced else "")
    change = "after the patch" if build.pins else "as it is (nothing to pin)"
    return (f"{change}: {minutes(mid)} (band {low / 60:,.1f}-{high / 60:,.1f}) ≈ {dollars(build.entry, mid)}: "
            f"{counts[wb.PUBLISHED]} lectures at their published seconds, {counts[wb.EXECUTED]} predicted from "
            f"their runs here ({len(build.pins)} pinned to the CPU){left}")


def check_line(build: wb.WholeBuild) -> str:
    """The model's own check: today's build predicted from runs here, no published figure used."""
    predicted, published, n = build.today
    if build.published is None or not n:
        return "the model's check: no published build on this hardware to hold it against"
    ratio = predicted / published if published else float("nan")
    share = build.coverage or 0.0
    gaps = "; ".join(f"{prose(path)} {predicted_s:,.0f} s predicted, {published_s:,.0f} s published"
                     for path, predicted_s, published_s in build.largest_gaps())
    return (f"the model's check (no published figure used): {minutes(predicted)} predicted from runs here for "
            f"the {n} lectures it predicts, against their published {minutes(published)} ({ratio:.2f}x); they "
            f"are {share:.0%} of the published build's seconds (its calibration was fitted on the development sets, "
            "these lectures among them where this build is one: held-out scores in docs/tuning-log.md); the "
            f"largest misses: {gaps}")


def verdict_line(build: wb.WholeBuild, has_gpu: bool) -> str:
    """Where the repository builds and whether this family is a what-if."""
    if build.what_if:
        return f"a what-if: its build jobs run on {build.runs_on}"
    if not has_gpu:
        return "stays on the CPU: its build jobs run on this family, which has no GPU"
    return "its build jobs run on this family"


def cost_row(report, family: str, entry) -> tuple[str, str, str] | None:
    """Question 6 from the committed audits as (decision, basis, deciding number), or None when there are none
    (jaxci.report.decisions makes the row)."""
    found = repo_builds(report, family, entry)
    if not found or entry.value("price_per_hour") is None:
        return None
    parts, numbers = [], []
    for b in found:
        mid = b.after_s[0]
        parts.append(f"{decision_line(report, b.repository)} On {family}: {prose(b.repository)} "
                     f"({verdict_line(b, entry.has_gpu)}): {after_line(b)}"
                     + (f"; {published_line(b)}" if b.published else ""))
        numbers.append(f"{minutes(mid)} ≈ {dollars(entry, mid)}")
    basis = ("the committed executed audits and the sites' published builds (audits/*/published.json): each "
             "lecture at its published seconds on this hardware unless the patch moves it, else its prediction "
             "from its run here (jaxci.policy.wholebuild); "
             f"${entry.value('price_per_hour'):.3f}/h catalogue + job overhead (catalogue planning figure)")
    return "one build: " + " · ".join(parts), basis, " · ".join(numbers)
