"""Time and price of one runner job, from the catalogue: the job timeout a workflow sets, and what a run costs.

A bench job is billed for all of it, not only the benchmark seconds: runner boot, checkout, installing the
pins (jax[cuda13] is gigabytes of wheels), the suite, and EC2's 60-second billing minimum (GitHub-hosted
runners round up to whole minutes instead). The model, stated once and used by both functions:

    job_minutes    = overhead_minutes + suite_minutes x runs       (runs: commits benchmarked in the job)
    timeout        = ceil(job_minutes x timeout_margin)
    billed_seconds = max(job_seconds, billing_minimum)             runs-on (EC2 bills per second)
                   = ceil(job_seconds / increment) x increment     github (per minute, rounded up)
    dollars        = billed_seconds / 3600 x price_per_hour        (on-demand; RunsOn's licence is extra)

Pure functions over catalogue records: nothing here measures or guesses; a missing figure stays None.
The cost table for measured suite times: `python -m jaxci.commands.jobcost FAMILY=SUITE_MINUTES ...`.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

from jaxci.catalogue import CatalogueError, Figure, Machine


def _default(defaults: dict[str, Figure], key: str) -> float:
    figure = defaults.get(key)
    if figure is None or figure.value is None:
        raise CatalogueError(f"machines.toml [defaults] needs a sourced {key} = {{value, source}}")
    return float(figure.value)


def planned_suite_minutes(machine: Machine, defaults: dict[str, Figure]) -> tuple[float, str]:
    """The suite time a timeout is planned with: the family's own figure, else the [defaults] ceiling."""
    own = machine.figure("suite_minutes")
    if own.value is not None:
        return float(own.value), f"catalogue suite_minutes ({own.source})"
    return _default(defaults, "suite_minutes_unmeasured"), (
        f"[defaults] suite_minutes_unmeasured ({defaults['suite_minutes_unmeasured'].source}); "
        f"{machine.name}: {own.reason}")


def timeout_minutes(machine: Machine, defaults: dict[str, Figure], runs: int = 1) -> int:
    """timeout-minutes for a job that benchmarks `runs` commits on this family."""
    if runs < 1:
        raise ValueError("runs must be at least 1")
    suite, _ = planned_suite_minutes(machine, defaults)
    return job_timeout(suite * runs, defaults)


def job_timeout(work_minutes: float, defaults: dict[str, Figure]) -> int:
    """The one job-timeout rule: ceil((the catalogue's job overhead + the job's work) x timeout_margin). The bench
    jobs (timeout_minutes) and the lecture builds (jaxci.policy.timeouts.job_timeout_minutes) both use it."""
    return math.ceil((_default(defaults, "job_overhead_minutes") + work_minutes) * _default(defaults, "timeout_margin"))


@dataclass(frozen=True)
class JobCost:
    family: str
    runner: str
    suite_minutes: float | None
    suite_source: str
    overhead_minutes: float
    overhead_source: str
    job_minutes: float | None
    billed_seconds: float | None
    billing_rule: str
    price_per_hour: float | None
    dollars: float | None
    note: str

    def as_dict(self) -> dict:
        return asdict(self)


def billed_seconds(runner: str, job_seconds: float, defaults: dict[str, Figure]) -> tuple[float, str]:
    if runner == "github":
        step = _default(defaults, "github_billing_increment_seconds")
        return math.ceil(job_seconds / step) * step, f"GitHub-hosted: rounded up to {step:g} s"
    minimum = _default(defaults, "billing_minimum_seconds")
    return max(job_seconds, minimum), f"EC2 per second, {minimum:g} s minimum"


def build_job(machine: Machine, build_s: float, defaults: dict[str, Figure]) -> tuple[float, float | None]:
    """(job seconds, dollars or None) of one lecture-build job of `build_s` on `machine`: the catalogue's job
    overhead + the build, billed by the runner's rule at the catalogue price; None where there is no price (a
    lab machine). The CI audit's tier decision and the report's question 6 both price builds with it."""
    cost = job_cost(machine, defaults, build_s / 60)
    if cost.job_minutes is None:  # never: a given build time always gives the job's minutes
        raise ValueError(f"{machine.name}: no job minutes for a {build_s:g} s build")
    return cost.job_minutes * 60, None if machine.is_lab else cost.dollars


def job_cost(machine: Machine, defaults: dict[str, Figure], suite_minutes: float | None, *,
             suite_source: str = "measured", overhead_minutes: float | None = None,
             overhead_source: str = "measured", runs: int = 1) -> JobCost:
    """Cost of one job on `machine`. suite_minutes None (not measured) gives dollars None, never a guess."""
    if overhead_minutes is None:
        overhead_minutes = _default(defaults, "job_overhead_minutes")
        overhead_source = f"catalogue planning figure ({defaults['job_overhead_minutes'].source})"
    price = machine.figure("price_per_hour")
    per_hour = None if price.value is None else float(price.value)
    note = "on-demand price; RunsOn licence not included" if machine.runner == "runs-on" else \
        "GitHub-hosted standard runner"
    if suite_minutes is None:
        return JobCost(machine.name, machine.runner, None, "not measured", overhead_minutes, overhead_source,
                       None, None, "", per_hour, None, note + "; suite time not measured")
    job = overhead_minutes + suite_minutes * runs
    billed, rule = billed_seconds(machine.runner, job * 60, defaults)
    dollars = None if per_hour is None else billed / 3600 * per_hour
    return JobCost(machine.name, machine.runner, suite_minutes, suite_source, overhead_minutes, overhead_source,
                   job, billed, rule, per_hour, dollars, note)
