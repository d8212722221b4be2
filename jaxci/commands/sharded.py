"""`jaxci sharded share --plan FILE --shard NAME --book DIR --engine E` |
`jaxci sharded merge --engine E --book DIR CACHE...`.

A sharded book build (templates/build-sharded-*.yml; jaxci.workflows.sharded). share: in a shard job's checkout,
before the build, tell the engine not to execute any page of another shard (Jupyter Book 1.x: the book's
`_config.yml` execute.exclude_patterns; mystmd: `execute: {skip: true}` in each such page), so the build executes
this shard's pages into its cache. merge: in the last job, each shard's uploaded cache into the book's own
(jupyter-cache's API; mystmd's `_build/execute` files), so the build after it executes nothing that a shard ran.
Exit 2 with one line naming the file when a plan or a cache cannot be used (nothing changed then)."""

from __future__ import annotations

import sys
from pathlib import Path

from jaxci.commands.argtypes import OneLineParser, refuse


def _parser() -> OneLineParser:
    parser = OneLineParser(prog="jaxci sharded", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="action", required=True)
    share = sub.add_parser("share", help="keep this shard's build to its own pages")
    share.add_argument("--plan", required=True, type=Path, help="the shard plan (jaxci runner-decision --shard-plan)")
    share.add_argument("--shard", required=True, help="this job's shard name (the matrix's)")
    merge = sub.add_parser("merge", help="merge the shards' execution caches into the book's")
    merge.add_argument("caches", nargs="+", type=Path, help="each shard's execution cache folder")
    for sp in (share, merge):
        sp.add_argument("--book", type=Path, default=Path("."), help="the book's folder (default: the current one)")
        sp.add_argument("--engine", required=True, choices=("jupyter-book", "mystmd"))
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    from jaxci.workflows import sharded

    try:
        if args.action == "share":
            plan = sharded.load_plan(args.plan)
            others = sharded.keep_to_share(plan, args.shard, args.book, args.engine)
            mine = plan.shard(args.shard)
            print(f"jaxci sharded: shard {mine.name} executes {len(mine.pages)} page(s) on {mine.runs_on} "
                  f"({mine.device}); {len(others)} of other shards are not executed here")
        else:
            n = sharded.merge(args.engine, args.caches, args.book)
            print(f"jaxci sharded: {n} executed notebook(s) from {len(args.caches)} shard cache(s) merged into "
                  f"{args.book / sharded.CACHE[args.engine]}")
    except sharded.ShardError as exc:
        return refuse("jaxci sharded", str(exc))
    sys.stdout.flush()
    return 0
