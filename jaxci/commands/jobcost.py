"""`python -m jaxci.commands.jobcost FAMILY=SUITE_MINUTES ...`: the cost table for measured suite times.

One row per family (every catalogue family when none is given): suite, overhead and job minutes, billed
seconds, price and dollars per run, by the model of jaxci.policy.jobcost. A family without a measured suite
time reads "not measured", never a guess. Exit 2 on an unknown family or a figure that is not a number.
"""

from __future__ import annotations

import argparse
import math

from jaxci.catalogue import CatalogueError, catalogue_defaults, load_catalogue
from jaxci.commands.argtypes import OneLineParser, ascii_float, refuse
from jaxci.policy.jobcost import JobCost, job_cost
from jaxci.util.bounds import JOB_S


def _measured(items: list[str], catalogue: dict) -> dict[str, float]:
    measured = {}
    for item in items:
        name, _, minutes = item.partition("=")
        if name not in catalogue:
            raise CatalogueError(f"{item}: unknown family {name!r}")
        try:
            measured[name] = minutes_of(minutes)
        except argparse.ArgumentTypeError as exc:
            raise CatalogueError(f"{item}: suite minutes: {exc}") from None
    return measured


def minutes_of(text: str) -> float:
    """argparse `type` of a job's minutes: ASCII digits, finite, 0 to the longest a job may run (util.bounds)."""
    value = ascii_float(text)
    if not (math.isfinite(value) and 0 <= value <= JOB_S / 60):
        raise argparse.ArgumentTypeError(f"{text!r}: expected minutes from 0 to {JOB_S / 60:,.0f} (5 days)")
    return value


def _fmt(value: float | None, spec: str) -> str:
    return "not measured" if value is None else format(value, spec)


def _row(cost: JobCost) -> str:
    return (f"| {cost.family} | {_fmt(cost.suite_minutes, '.1f')} | {cost.overhead_minutes:.1f} | "
            f"{_fmt(cost.job_minutes, '.1f')} | {_fmt(cost.billed_seconds, '.0f')} | {cost.price_per_hour} | "
            f"{_fmt(cost.dollars, '.3f')} | {cost.billing_rule or '-'} |")


def main(argv: list[str] | None = None) -> int:
    parser = OneLineParser(prog="python -m jaxci.commands.jobcost", description=__doc__.splitlines()[0])
    parser.add_argument("suites", nargs="*", metavar="FAMILY=MINUTES", help="measured full-scale suite minutes")
    parser.add_argument("--overhead-minutes", type=minutes_of, help="measured job overhead (default: catalogue)")
    args = parser.parse_args(argv)
    try:
        catalogue, defaults = load_catalogue(), catalogue_defaults()
        measured = _measured(args.suites, catalogue)
        print("| family | suite min | overhead min | job min | billed s | $/h | $ per run | rule |")
        print("|---|---|---|---|---|---|---|---|")
        for name in measured or catalogue:
            cost = job_cost(catalogue[name], defaults, measured.get(name), overhead_minutes=args.overhead_minutes)
            print(_row(cost))
        print(f"\nsuite minutes: {'measured, as given' if measured else 'not measured'}; overhead: "
              f"{'measured, as given' if args.overhead_minutes is not None else cost.overhead_source}; "
              "prices: catalogue on-demand (RunsOn licence not included). Model: jaxci/policy/jobcost.py docstring.")
    except (CatalogueError, ValueError) as exc:
        return refuse("jaxci jobcost", exc)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
