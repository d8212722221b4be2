"""Run a repository's lectures, one after another, each on every chosen platform (the verdicts are judged
afterwards, by jaxci.audit.judging).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from jaxci.audit.runner import envcheck
    from jaxci.audit.runner.cache import Reuse
    from jaxci.audit.runner.host_probe import Probe


@dataclass(frozen=True)
class Runs:
    """How an audit executes its lectures: the platforms, each cell's timeout, the kernel and the extra variables of
    its environment, the previous audit's runs to reuse (jaxci.audit.runner.cache.Reuse), and the progress shown
    (with `weights`: lecture -> rough seconds, for its expected finish)."""
    platforms: tuple
    cell_timeout: float = 600
    kernel_name: str | None = None
    env: dict | None = None
    reuse: Reuse | None = None
    progress: bool = True
    weights: dict | None = None
    probe: Probe | None = None           # the probe to judge with, given (--host-probe): never measured again
    baseline_probe: Probe | None = None  # the baseline's recorded probe: used when every run is reused


def platforms_here() -> list[str]:
    """cpu always, and this machine's accelerator (cuda, rocm or tpu: jaxci.accel) where it has one."""
    from jaxci.accel import accelerator_platform

    accelerator = accelerator_platform()
    return ["cpu", accelerator] if accelerator else ["cpu"]


def run_lectures(verdicts: list, runs: Runs) -> envcheck.Preflight:
    """Run every readable lecture on each platform with the instrumented runner, into its verdict's `runs`.

    Lectures the book excludes are not run; lectures importing a module the kernel's environment lacks
    are not run either (said once, in the returned preflight), so a missing module never reads as a
    lecture failure. `runs.reuse` keys every run and supplies unchanged ones from a previous audit instead of
    executing them.
    """
    from jaxci.audit.runner import envcheck
    from jaxci.audit.runner.kernel import run_notebook
    from jaxci.audit.runner.progress import Progress

    readable = [v for v in verdicts if v.scan.status != "unreadable"]
    for v in readable:
        if v.excluded:
            v.not_executed = "excluded from execution by the book's exclude_patterns"
    platforms, reuse, progress, weights = list(runs.platforms), runs.reuse, runs.progress, runs.weights
    preflight = envcheck.check([v for v in readable if not v.excluded], runs.kernel_name)
    for v in readable:
        missing = preflight.missing_for(v.path)
        if missing and not v.not_executed:
            v.not_executed = (f"needs {', '.join(missing)}, missing in kernel "
                              f"{preflight.kernel_of.get(v.path, '?')!r}: static verdict stands")
    todo, keys = [], {}
    for verdict, platform in ((v, p) for v in readable if not v.not_executed for p in platforms):
        key = keys[verdict.path, platform] = reuse.key(verdict, platform, preflight.kernel_of.get(
            verdict.path, "python3")) if reuse else None
        previous = reuse.lookup(verdict, platform, key) if reuse else None
        if previous is None:
            todo.append((verdict, platform))
        else:
            verdict.runs[platform] = previous
    if reuse and progress and reuse.reused:
        print(f"jaxci audit: {len(reuse.reused)} run(s) reused (unchanged since the previous audit), "
              f"{len(todo)} to execute", file=sys.stderr, flush=True)
    label = {(v.path, p): f"{v.path} ({p})" for v, p in todo}
    shown = Progress(list(label.values()), {label[v.path, p]: (weights or {}).get(v.path, 0.0) for v, p in todo}
                     if weights else None, enabled=progress)
    for verdict, platform in todo:
        shown.begin(label[verdict.path, platform])
        run = verdict.runs[platform] = run_notebook(verdict.path_abs, timeout=runs.cell_timeout, platform=platform,
                                                    kernel_name=runs.kernel_name, env=runs.env,
                                                    allow_errors=bool(getattr(verdict.config, "allow_errors", 0)))
        if reuse:
            reuse.store(verdict, platform, keys[verdict.path, platform], run)
        shown.end(label[verdict.path, platform], run.wall_s or 0.0)
    shown.close()
    for verdict in readable:
        verdict.runs = {p: verdict.runs[p] for p in platforms if p in verdict.runs}  # platform order, reused or not
        for run in verdict.runs.values():
            verdict.notes += [n for n in run.notes if n not in verdict.notes]
    return preflight
