"""`jaxci audit shard-plan PUBLISHED_JSON [--shards N ...] [--setup-s S] [--overhead F] [--format text|json]`: a
repository's published build (`jaxci audit published`'s record, as committed beside an audit) split over N shards
by the audit's own assignment, with each N's predicted wall time (jaxci.report.shard_plan: labelled predicted, its
model stated). Exit 2 with one line when the record cannot be read or a number is out of range."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from jaxci.audit.reading.runrecord import MAX_SHARDS
from jaxci.commands.argtypes import OneLineParser, ascii_float, ascii_int, refuse

PROG = "jaxci audit shard-plan"


def parser() -> argparse.ArgumentParser:
    p = OneLineParser(prog=PROG, description=__doc__.splitlines()[0])
    p.add_argument("published", type=Path, help="a published build's record (jaxci audit published --output)")
    p.add_argument("--shards", type=ascii_int, nargs="+", default=[8], metavar="N",
                   help=f"N to simulate, 1-{MAX_SHARDS} (default 8)")
    p.add_argument("--setup-s", type=ascii_float, default=0.0, help="per-shard set-up seconds (default 0: not counted)")
    p.add_argument("--overhead", type=ascii_float, default=1.0,
                   help="the audit's time per published second (default 1)")
    p.add_argument("--format", choices=["text", "json"], default="text")
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    from jaxci.report import shard_plan
    from jaxci.results import published_build as pb

    if args.setup_s < 0 or args.overhead <= 0:
        return refuse(PROG, "--setup-s must be >= 0 and --overhead > 0")
    if not all(1 <= n <= MAX_SHARDS for n in args.shards):
        return refuse(PROG, f"--shards: each N from 1 to {MAX_SHARDS}")
    try:
        build = pb.read(args.published)
    except pb.PublishedError as exc:
        return refuse(PROG, exc)
    if not build.seconds:
        return refuse(PROG, f"{args.published}: no run times to split")
    plans = [shard_plan.plan(build.seconds, n, args.setup_s, args.overhead) for n in args.shards]
    if args.format == "json":
        print(json.dumps({"source": build.source, "plans": plans, "refused": build.refused}, indent=2))
    else:
        print(shard_plan.render(plans, build.refused))
    return 0
