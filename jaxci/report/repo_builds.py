"""Build minutes and dollars per runner family for each committed audit of a real lecture repository (audits/):
the decision sheet's row 6 when no --audit is given, and the maintainers' report's cost table, from one function
so the two always say the same numbers.
"""

from __future__ import annotations

from dataclasses import dataclass

from jaxci.util.quoting import prose  # a committed audit's name may hold anything: Markdown-safe wherever it is shown


@dataclass(frozen=True)
class RepoBuild:
    repository: str        # repository@commit (7 hex), as the committed audit says it (shown through quoting.prose)
    lectures: int          # lectures with a prediction for the family
    on_gpu: int            # of them, on the GPU (a GPU family's faster device)
    minutes: float         # one sequential build, each lecture on its faster device
    low: float
    high: float
    dollars: float         # one build job on the family, overhead included (jaxci.policy.builds.job_dollars)
    missing: int           # lectures without a prediction for the family (left out of the sum)

    def text(self, has_gpu: bool) -> str:
        gpu = f", {self.on_gpu} on its GPU" if has_gpu else ""
        left = f", {self.missing} without a prediction left out" if self.missing else ""
        return (f"{prose(self.repository)}: {self.lectures} lectures{gpu} ≈ {self.minutes:.1f} min "
                f"({self.low:.1f}-{self.high:.1f}) ≈ ${self.dollars:.2f}{left}")


def repo_builds(report, family: str, entry) -> list[RepoBuild]:
    """One RepoBuild per committed audit that predicts `family` (report.audits, jaxci.results.audits)."""
    from jaxci.policy import builds

    out = []
    for committed in report.audits:
        build = builds.family_build(committed.audit, family, entry.has_gpu)
        if build is None or not build.lectures:
            continue
        out.append(RepoBuild(committed.label, build.lectures, build.on_gpu, build.seconds / 60, build.low / 60,
                             build.high / 60, builds.job_dollars(build.seconds, entry), len(build.missing)))
    return out


def cost_row(report, family: str, entry) -> tuple[str, str, str] | None:
    """Question 6 from the committed audits as (decision, basis, deciding number), or None when none predicts
    the family (jaxci.report.decisions makes the row)."""
    from jaxci.policy import builds

    found = repo_builds(report, family, entry)
    price = entry.value("price_per_hour")
    if not found or price is None:
        return None
    text = "one build: " + " · ".join(b.text(entry.has_gpu) for b in found) + f" (${price:.3f}/h)"
    basis = (f"the committed executed audits ({', '.join(prose(f'audits/{a.name}/') for a in report.audits)}): each "
             f"lecture's prediction for {family} by the runner model from its run here, on its faster device; band = "
             f"sum of the lecture bands; ${price:.3f}/h catalogue + {builds.overhead_minutes():g} min job overhead "
             "(catalogue planning figure)")
    return text, basis, " · ".join(f"{b.minutes:.1f} min ≈ ${b.dollars:.2f}" for b in found)
