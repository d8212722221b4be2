"""`jaxci sharded share --plan FILE --shard NAME --book DIR --engine E` |
`jaxci sharded merge --engine E --book DIR CACHE...` | `jaxci sharded patch --plan FILE --checkout DIR --workflow REL`.

A sharded book build (templates/build-sharded-*.yml; jaxci.workflows.sharded). share: in a shard job's checkout,
before the build, tell the engine not to execute any page of another shard (Jupyter Book 1.x: the book's
`_config.yml` execute.exclude_patterns; mystmd: `execute: {skip: true}` in each such page), so the build executes
this shard's pages into its cache. merge: in the last job, each shard's uploaded cache into the book's own
(jupyter-cache's API; mystmd's `_build/execute` files), so the build after it executes nothing that a shard ran.
patch: the audited repository's own build workflow rewritten as that sharded build (its set-up steps kept, the GPU
shard on its own runner label) and the plan, as a patch to `git apply` from the checkout's root, its header the
runner decision it carries out (jaxci.workflows.sharded_workflow; Jupyter Book 1.x).
Exit 2 with one line naming the file when a plan or a cache cannot be used (nothing changed then)."""

from __future__ import annotations

import sys
from pathlib import Path

from jaxci.commands.argtypes import OneLineParser, refuse


def _sha(value: str) -> str:
    import argparse
    import re

    if not re.fullmatch(r"[0-9a-f]{40}", value):
        raise argparse.ArgumentTypeError(f"{value[:60]!r} is not a full commit SHA (40 hex digits)")
    return value


def _parser() -> OneLineParser:
    parser = OneLineParser(prog="jaxci sharded", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="action", required=True)
    share = sub.add_parser("share", help="keep this shard's build to its own pages")
    share.add_argument("--plan", required=True, type=Path, help="the shard plan (jaxci runner-decision --shard-plan)")
    share.add_argument("--shard", required=True, help="this job's shard name (the matrix's)")
    merge = sub.add_parser("merge", help="merge the shards' execution caches into the book's")
    merge.add_argument("caches", nargs="+", type=Path, help="each shard's execution cache folder")
    patch = sub.add_parser("patch", help="the repository's build workflow as that sharded build, as a patch")
    patch.add_argument("--plan", required=True, type=Path, help="the shard plan (jaxci runner-decision --shard-plan)")
    patch.add_argument("--checkout", required=True, type=Path, help="the audited repository's checkout")
    patch.add_argument("--workflow", required=True, help="its workflow that builds the book, relative to the root "
                       "(e.g. .github/workflows/cache.yml)")
    patch.add_argument("--jaxci-ref", default="0" * 40, type=_sha, help="the jax-ci-bench commit (a full SHA) the "
                       "workflow installs jaxci from (default: 40 zeros, to be replaced, as in the templates)")
    patch.add_argument("--audits", type=Path, default=None, help="the committed audits (default: this repository's "
                       "audits/): the decision the header says")
    for sp in (share, merge):
        sp.add_argument("--book", type=Path, default=Path("."), help="the book's folder (default: the current one)")
        sp.add_argument("--engine", required=True, choices=("jupyter-book", "mystmd"))
    return parser


def _patch(args) -> str:
    """The patch, its header the decision the plan carries out (from the committed audit of its repository)."""
    from jaxci import REPO_ROOT
    from jaxci.catalogue import load_catalogue
    from jaxci.report import committed_audits
    from jaxci.report import runner_decision as page
    from jaxci.workflows import sharded, sharded_workflow

    plan = sharded.load_plan(args.plan)
    catalogue = load_catalogue()
    found, _ = committed_audits.load(args.audits or REPO_ROOT / "audits")
    committed = next((c for c in found if c.label == plan.repository), None)
    d = page.for_committed(committed, catalogue) if committed is not None else None
    if d is None:
        raise sharded.ShardError(f"{args.plan}: no committed audit of {plan.repository} with a runner decision")
    header = (f"jaxci sharded patch: the runner decision, carried out. {page.headline(d, page.builds_per_year())}\n"
              f"Apply from the repository's root with `git apply`; {sharded_workflow.PLAN_PATH} is the shard plan; "
              f"jaxci installs from jax-ci-bench@{args.jaxci_ref}.")
    return sharded_workflow.patch(args.checkout, args.workflow, plan, d.today, catalogue, header, args.jaxci_ref)


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
        elif args.action == "patch":
            print(_patch(args), end="")
        else:
            n = sharded.merge(args.engine, args.caches, args.book)
            print(f"jaxci sharded: {n} executed notebook(s) from {len(args.caches)} shard cache(s) merged into "
                  f"{args.book / sharded.CACHE[args.engine]}")
    except sharded.ShardError as exc:
        return refuse("jaxci sharded", str(exc))
    sys.stdout.flush()
    return 0
