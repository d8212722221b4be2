"""Run a repository's lectures, one after another, each on every chosen platform (the verdicts are judged
afterwards, by jaxci.audit.judging).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from jaxci.audit.runner import envcheck


def platforms_here() -> list[str]:
    """cpu always; cuda where NVML sees a GPU."""
    from jaxci.nvml import gpu_present

    return ["cpu", "cuda"] if gpu_present() else ["cpu"]


def run_lectures(verdicts: list, *, platforms: list[str], cell_timeout: float = 600, kernel_name: str | None = None,
                 progress: bool = True, env: dict | None = None) -> envcheck.Preflight:
    """Run every readable lecture on each platform with the instrumented runner, into its verdict's `runs`.

    Lectures the book excludes are not run; lectures importing a module the kernel's environment lacks
    are not run either (said once, in the returned preflight), so a missing module never reads as a
    lecture failure.
    """
    from tqdm import tqdm

    from jaxci.audit.runner import envcheck
    from jaxci.audit.runner.kernel import run_notebook

    readable = [v for v in verdicts if v.scan.status != "unreadable"]
    for v in readable:
        if v.excluded:
            v.not_executed = "excluded from execution by the book's exclude_patterns"
    preflight = envcheck.check([v for v in readable if not v.excluded], kernel_name)
    for v in readable:
        missing = preflight.missing_for(v.path)
        if missing and not v.not_executed:
            v.not_executed = (f"needs {', '.join(missing)}, missing in kernel "
                              f"{preflight.kernel_of.get(v.path, '?')!r}: static verdict stands")
    todo = [(v, p) for v in readable if not v.not_executed for p in platforms]
    bar = tqdm(todo, desc="executing lectures", unit="run", disable=not progress, leave=False)
    for verdict, platform in bar:
        bar.set_postfix_str(f"{verdict.path} [{platform}]")
        verdict.runs[platform] = run_notebook(verdict.path_abs, timeout=cell_timeout, platform=platform,
                                              kernel_name=kernel_name, env=env)
        verdict.notes += [n for n in verdict.runs[platform].notes if n not in verdict.notes]
    bar.close()
    return preflight
