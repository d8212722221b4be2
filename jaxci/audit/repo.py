"""The audit of a lecture repository, end to end: find the lectures and scan each (jaxci.audit.reading), run
them (jaxci.audit.runner), and judge each one's verdict (jaxci.audit.judging).

One lecture's failure (unreadable file, bad notebook, missing kernel, a cell error, a dead kernel) becomes
that lecture's status and error; the others are still audited. benchmarks/notebooks.py imports
`find_lectures` from here: keep that name.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from jaxci.audit.judging import family as fam
from jaxci.audit.judging import judge
from jaxci.audit.judging.judge import Verdict
from jaxci.audit.reading import book
from jaxci.audit.reading.discovery import find_lectures, scan_file
from jaxci.audit.runner.lectures import Runs, platforms_here, run_lectures

if TYPE_CHECKING:
    from jaxci.audit.runner import envcheck

__all__ = ["Runs", "audit_static", "execute", "find_lectures", "platforms_here"]


def audit_static(root: Path, model: fam.FamilyModel | None = None) -> list[Verdict]:
    """Scan and decide every lecture under root, for one family's thresholds (None: built-in)."""
    root = Path(root)
    base = root if root.is_dir() else root.parent
    configs = book.find_configs(base)
    verdicts = []
    for path in find_lectures(root):
        rel = path.relative_to(base).as_posix()
        scan = scan_file(path, rel, base if root.is_dir() else None)
        verdict = Verdict(rel, scan, config=book.config_for(path, configs), path_abs=path)
        if verdict.config:
            if verdict.config.error:
                verdict.notes.append(verdict.config.error)
            verdict.notes += verdict.config.notes
            if verdict.config.exclude and verdict.config.excluded(path):
                verdict.excluded = True
                verdict.notes.append("excluded from execution by exclude_patterns")
                if scan.status == "error":  # the book never runs it: its errors are not failures
                    scan.notes += [f"{e} (excluded from the build: not a failure)" for e in scan.errors]
                    scan.errors, scan.status = [], "ok"
        verdict.notes += scan.notes
        if scan.status != "unreadable":
            judge.decide(verdict, model)
        else:
            verdict.regime, verdict.recommendation, verdict.reasons = "", "", []
        verdicts.append(verdict)
    return verdicts


def execute(verdicts: list[Verdict], runs: Runs, *, model: fam.FamilyModel | None = None,
            families=None) -> envcheck.Preflight:
    """Run every readable lecture as `runs` says, then judge: traced loop sizes and trip counts merged into
    each scan and the lecture re-decided, measured times merged, and the prediction on the family decides.
    `families` (jaxci.audit.judging.every_family.Families): every executed lecture also predicted on each."""
    preflight = run_lectures(verdicts, runs)
    for verdict in verdicts:
        if verdict.runs:
            judge.merge_traced(verdict)
            if verdict.recommendation:
                judge.decide(verdict, model)
        judge.merge(verdict)
        if verdict.runs and verdict.recommendation:
            judge.decide_predicted(verdict, model)
    if families is not None:
        from jaxci.audit.judging import every_family
        from jaxci.audit.runner import host_probe

        preflight.probe = judging_probe(verdicts, runs, host_probe)
        stamp_probes(verdicts, runs, preflight.probe, host_probe)
        every_family.predict_all(verdicts, families, preflight.probe, run_probes(verdicts, host_probe))
        for verdict in verdicts:  # one prediction per lecture and family: the verdict reads the final record
            if verdict.runs and verdict.recommendation:
                judge.decide_on_record(verdict, model)
    return preflight


def judging_probe(verdicts: list[Verdict], runs: Runs, host_probe):
    """The host probe h divides by for runs that carry none of their own: the one given (--host-probe); the
    baseline's when every run was reused (a re-judge must use the speed of the host that ran them, not this
    one's now); else this host's, measured now; None when nothing ran."""
    if not any(v.runs for v in verdicts):
        return None
    if runs.probe is not None:
        return runs.probe
    reuse = runs.reuse
    if runs.baseline_probe is not None and reuse is not None and not reuse.executed:
        return runs.baseline_probe
    return host_probe.probe()


def run_probes(verdicts: list[Verdict], host_probe) -> dict:
    """lecture path -> the probe its first run carries (the run every family's prediction reads), read once here so
    judging reads plain values."""
    out = {}
    for verdict in verdicts:
        run = next((r for _, r in sorted(verdict.runs.items()) if r.host_probe), None)
        probe = host_probe.from_dict(run.host_probe) if run is not None else None
        if probe is not None:
            out[verdict.path] = probe
    return out


def stamp_probes(verdicts: list[Verdict], runs: Runs, probe, host_probe) -> None:
    """Each run keeps the probe of the host when it ran: a run executed now gets this audit's probe (measured
    now when --host-probe names another's), a reused run its own, else the baseline's or the one given; so runs
    executed at different times (and loads) are each moved by their own host factor."""
    reuse = runs.reuse
    now = set(reuse.executed) if reuse is not None else None
    measured = None
    for verdict in verdicts:
        for platform, run in verdict.runs.items():
            if run.host_probe is not None:
                continue
            executed = now is None or f"{verdict.path} [{platform}]" in now
            if executed and runs.probe is not None:
                measured = measured or host_probe.probe()
            chosen = (measured or probe) if executed else (runs.probe or runs.baseline_probe or probe)
            run.host_probe = host_probe.as_dict(chosen) if chosen is not None and chosen.seconds else None
            if executed and reuse is not None:
                reuse.restore(verdict, platform, run)  # the cached record carries its probe too
