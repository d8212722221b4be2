"""The executed audits of real lecture repositories committed under audits/<repository>@<commit>/
(`jaxci audit publish`): read for the decision sheet's row 6 and the maintainers' report.

A folder whose audit.json cannot be read is said in one line (which folder, why) and left out; every other
audit is still read.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from jaxci.analysis.lecture_record import AuditView
from jaxci.results.published_build import PublishedBuild


@dataclass(frozen=True)
class CommittedAudit:
    name: str           # the folder's name: repository@commit
    audit: dict         # the published audit JSON (its `published` block says where and how it ran)
    published: PublishedBuild | None = None  # the published build beside it (published.json)

    @cached_property
    def view(self) -> AuditView:
        """The audit's lectures as the policy reads them, read once."""
        return AuditView.from_dict(self.audit)

    @property
    def facts(self) -> dict:
        return self.audit.get("published") or {}

    @property
    def repository(self) -> str:
        return self.facts.get("repository") or self.name.split("@")[0]

    @property
    def commit(self) -> str:
        return self.facts.get("commit") or self.name.partition("@")[2]

    @property
    def label(self) -> str:
        return f"{self.repository}@{self.commit[:7]}"


def beside(results_dir) -> Path:
    """Where a results folder's audits are committed: audits/ next to it (this checkout's results/ -> audits/)."""
    return Path(results_dir).resolve().parent / "audits"


def load(folder: Path) -> tuple[list[CommittedAudit], list[str]]:
    """Every audits/*/audit.json under `folder`, by name, and one line per folder that could not be read."""
    from jaxci.audit.writing import record

    found: list[CommittedAudit] = []
    problems: list[str] = []
    if not folder.is_dir():
        return found, problems
    for sub in sorted(p for p in folder.iterdir() if p.is_dir()):
        path = sub / "audit.json"
        try:
            audit = record.read(path)
        except record.AuditError as exc:
            problems.append(f"{path}: {exc}")
            continue
        published, problem = _published(sub)
        problems += [problem] if problem else []
        found.append(CommittedAudit(sub.name, audit, published))
    return found, problems


def _published(folder: Path):
    """(the published build beside an audit, or None; the line saying why it could not be read, or '')."""
    from jaxci.results import published_build

    path = folder / "published.json"
    if not path.exists():
        return None, ""
    try:
        return published_build.read(path), ""
    except published_build.PublishedError as exc:
        return None, f"{exc} (the audit is read without its published build)"
