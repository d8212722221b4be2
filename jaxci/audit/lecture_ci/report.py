"""What the CI audit returns: findings (each with file:line evidence, its reason, what it rests on, and the
edits that fix it) and the report that holds them with everything that was read. Plain records, no rules.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from jaxci.audit.lecture_ci import edits as ed
from jaxci.audit.lecture_ci import settings, workflows

if TYPE_CHECKING:
    from jaxci.audit.lecture_ci.decision import JobDecision

RUNNER_TIER, SPOT, JOB_TIMEOUT, CELL_TIMEOUT = "runner-tier", "spot", "job-timeout", "cell-timeout"
MEMORY, VERSIONS, CACHE, FAIL_ONCE = "memory-policy", "versions", "compile-cache", "fail-once"
KINDS = (RUNNER_TIER, SPOT, JOB_TIMEOUT, CELL_TIMEOUT, MEMORY, VERSIONS, CACHE, FAIL_ONCE)


@dataclass
class Finding:
    kind: str
    where: str                 # file:line of the evidence
    message: str
    reason: str
    label: str                 # measured | predicted | static verdicts | policy | not measured
    fix: str = ""
    inputs: dict = field(default_factory=dict)
    edits: list = field(default_factory=list)
    job: str | None = None     # file:line of the job it concerns
    by_label: bool = False     # its fix is a change to the job's RunsOn label (set where the finding is made)
    label_edit: bool = False   # fixed through the job's RunsOn label edit (made once per job)
    label_file: str = ""       # the workflow file that label edit changes

    def as_dict(self) -> dict:
        d = asdict(self)
        d["patched"] = bool(self.edits) or self.label_edit
        d.pop("edits")
        d.pop("label_edit")
        d.pop("by_label")
        d.pop("label_file")
        return d


@dataclass
class CIReport:
    root: str
    workflows: list = field(default_factory=list)
    book: settings.BookSettings | None = None
    env: settings.EnvSettings | None = None
    lectures: list = field(default_factory=list)
    tiers: list = field(default_factory=list)
    findings: list = field(default_factory=list)
    errors: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    edits: list = field(default_factory=list)
    installs: list = field(default_factory=list)   # every jax / jaxlib / numpyro install line (installs.InstallLine)
    decision: JobDecision | None = None  # build time and dollars per fleet (executed)

    def patch(self) -> str:
        """The --ci-patch diff: every edit outside a job that runs in a container (its own environment: the one
        rule the --emit-config patch applies too, edits.outside_containers)."""
        kept, _ = ed.outside_containers(self.edits, ed.container_spans(self))
        return ed.unified_diff(Path(self.root), kept) if kept else ""

    def as_dict(self) -> dict:
        b, e = self.book, self.env
        return {
            "root": self.root,
            "workflows": [{"file": w.file, "name": w.name, "triggers": [str(t) for t in w.triggers], "error": w.error,
                           "jobs": [_job_dict(j) for j in w.jobs]} for w in self.workflows],
            "book": None if b is None else {"file": b.file, "mode": b.mode, "timeout": b.timeout,
                                            "timeout_state": b.timeout_state,
                                            "timeout_where": b.where(b.timeout_line) if b.timeout_line else None,
                                            "exclude": b.exclude, "error": b.error},
            "environment": None if e is None else {
                "files": e.files, "python": e.python, "python_where": e.python_where, "errors": e.errors,
                "packages": {n: {"spec": r.spec, "version": r.version, "where": r.where, "manager": r.manager}
                             for n, r in e.packages.items()}},
            "lectures": {"total": len(self.lectures), "jax": sum(f.uses_jax for f in self.lectures),
                         "executed_measured": sum(f.measured for f in self.lectures)},
            "installs": [x.as_dict() for x in self.installs],
            "tiers": [t.as_dict() for t in self.tiers],
            "decision": self.decision.as_dict() if self.decision is not None else None,
            "findings": [f.as_dict() for f in self.findings],
            "errors": self.errors, "notes": self.notes,
        }


def _job_dict(j: workflows.Job) -> dict:
    lab = j.label
    return {"id": j.id, "where": j.where, "timeout_minutes": j.timeout_minutes,
            "runs_on": None if lab is None else {"raw": lab.raw, "kind": lab.kind, "family": lab.family,
                                                 "image": lab.image, "spot": lab.spot, "other": lab.other},
            "jax_env": {k: v[0] for k, v in j.env.items()}, "builds": j.builds, "publishes": j.publishes,
            "container": j.container}
