"""The runner family a lecture repository's build actually runs on, read from its workflows' `runs-on`.

The audit judges that family unless `--machine` names another, which is then a what-if and says so; the report
judges each audited repository for its own runner and shows every other family as a what-if. A build job is a
job that executes the notebooks (jaxci.audit.lecture_ci.workflows: `builds`); a job that runs in a `container:`
is left out, since its purpose is that container's environment (a hosted-notebook image check, say), not the
repository's build. A job's family is its RunsOn `family=` or a GitHub-hosted label that is a catalogue family.
The same reading serves the live workflows (`from_workflows`) and an audit JSON's `ci` block (`from_ci`).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass


@dataclass(frozen=True)
class RunnerUse:
    family: str | None              # the catalogue family most build jobs run on; None: none found
    jobs: tuple = ()                # "file:line (job `id`) on FAMILY" of every build job read
    others: tuple = ()              # other catalogue families build jobs name

    def what_if(self, machine: str | None) -> bool:
        """Judging `machine` is a what-if: the build runs on another family."""
        return bool(machine) and self.family is not None and machine != self.family

    def as_dict(self) -> dict:
        return {"family": self.family, "jobs": list(self.jobs), "others": list(self.others)}


def job_family(family: str | None, raw: str | None, catalogue: dict) -> str | None:
    """A job's catalogue family: its RunsOn family, else its hosted label when the catalogue names it."""
    name = (family or "").split("+")[0] or (raw or "").strip()
    return name if name in catalogue and not catalogue[name].is_lab else None


def _choose(found: list[tuple[str | None, str]]) -> RunnerUse:
    """The most common family among (family, where) build jobs (ties: the first in file order)."""
    named = [f for f, _ in found if f]
    if not named:
        return RunnerUse(None, tuple(w for _, w in found))
    family = Counter(named).most_common(1)[0][0]
    return RunnerUse(family, tuple(w for _, w in found), tuple(sorted(set(named) - {family})))


def from_workflows(workflows, catalogue: dict) -> RunnerUse:
    """From jaxci.audit.lecture_ci.workflows.Workflow objects (before judging: sets the audit's family)."""
    found: list[tuple[str | None, str]] = []
    for job in (j for w in workflows for j in w.jobs if j.builds and not j.container):
        label = job.label
        family = job_family(label.family if label else None, label.raw if label else None, catalogue)
        found.append((family, f"{job.where} (job `{job.id}`) on {family or (label.raw if label else '?')}"))
    return _choose(found)


def from_ci(ci: dict | None, catalogue: dict) -> RunnerUse:
    """From an audit JSON's `ci` block (the report reads committed audits)."""
    found: list[tuple[str | None, str]] = []
    for wf in (ci or {}).get("workflows") or []:
        for job in wf.get("jobs") or [] if isinstance(wf, dict) else []:
            if not isinstance(job, dict) or not job.get("builds") or job.get("container"):
                continue
            runs_on = job.get("runs_on")
            runs_on = runs_on if isinstance(runs_on, dict) else {}
            family = job_family(runs_on.get("family"), runs_on.get("raw"), catalogue)
            found.append((family, f"{job.get('where', '?')} (job `{job.get('id', '?')}`) on "
                                  f"{family or runs_on.get('raw') or '?'}"))
    return _choose(found)
