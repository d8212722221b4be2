"""`jaxci runner-decision [AUDITS_DIR] [--format md|json]`: for each committed audit (audits/<repository>@<commit>/),
the runner decision (stay, move, split or shard) with every option's predicted wall minutes, billed minutes and
dollars (jaxci.policy.runner_decision). Exit 2 with one line when the folder holds no readable audit."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from jaxci.commands.argtypes import OneLineParser, refuse


def parser() -> argparse.ArgumentParser:
    from jaxci import REPO_ROOT

    p = OneLineParser(prog="jaxci runner-decision", description=__doc__.splitlines()[0])
    p.add_argument("audits", nargs="?", type=Path, default=REPO_ROOT / "audits", help="the committed audits' folder")
    p.add_argument("--format", choices=("md", "json"), default="md")
    p.add_argument("--shard-plan", type=Path, metavar="DIR",
                   help="also write, for each decision that splits or shards the build, its shard plan as "
                        "DIR/<repository>.json (templates/build-sharded-*.yml read it as .github/jaxci-shards.json)")
    return p


def _write_plans(folder: Path, decisions) -> None:
    from jaxci.util import safewrite
    from jaxci.workflows import sharded

    for d in decisions:
        plan = sharded.plan_of(d)
        if plan is not None:
            folder.mkdir(parents=True, exist_ok=True)
            safewrite.write_text(folder / f"{d.repository}.json", json.dumps(plan.to_doc(), indent=1) + "\n",
                                 option="--shard-plan")
            print(f"jaxci runner-decision: {d.repository}: {len(plan.shards)} shard(s) in {folder / d.repository}.json",
                  file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    from jaxci.catalogue import load_catalogue
    from jaxci.policy import runner_decision as rd
    from jaxci.report import committed_audits
    from jaxci.report import runner_decision as page

    found, problems = committed_audits.load(args.audits)
    for line in problems:
        print(f"jaxci runner-decision: {line}", file=sys.stderr)
    if not found:
        return refuse("jaxci runner-decision", f"{args.audits}: no readable audits/<repository>@<commit>/audit.json")
    catalogue = load_catalogue()
    try:
        builds = page.builds_per_year()
    except ValueError as exc:
        return refuse("jaxci runner-decision", " ".join(str(exc).split()))
    decisions = [(c, d) for c, d in ((c, page.for_committed(c, catalogue)) for c in found) if d is not None]
    if args.shard_plan:
        _write_plans(args.shard_plan, [d for _, d in decisions])
    if args.format == "json":
        print(json.dumps([rd.as_dict(d) for _, d in decisions], indent=1))
    else:
        print("\n".join(f"## {d.repository}\n\n" + page.section(d, c.published, builds) for c, d in decisions),
              end="")
    return 0
