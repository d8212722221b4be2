"""`jaxci inputs ...`: validate workflow inputs before a label or command is built, plan and follow the jobs.

Subcommands:
  plan          bench.yml: families/scale/filter/commits -> matrix (runs-on label, spot, timeout per family)
  upgrade       jax-upgrade.yml: base/head SHAs -> matrix of the CPU and GPU family of env_matrix/upgrade.toml
  status        inside a family job: record which suite is running and how each ended (survives a cancel)
  collect       after all families: merge their results into results/ and say what happened to each one,
                a runner that vanished on spot capacity reported as a spot interruption, not a regression
  suites        the suite modules of benchmarks/, one per line (what scripts/run-suites.sh runs)
  requirements  the bench extra's requirement lines of the named projects (what a runner job installs)

A refused input exits 2 with one line naming the input and the reason (the library: jaxci.workflows.inputs,
jaxci.workflows.plan, jaxci.workflows.status, jaxci.workflows.collect, jaxci.workflows.suites).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from jaxci.catalogue import CatalogueError, load_catalogue
from jaxci.commands.argtypes import OneLineParser, ascii_int, refuse
from jaxci.util import safewrite
from jaxci.util.validate import one_line
from jaxci.workflows import status as run_status
from jaxci.workflows.collect import collect, outcome_markdown
from jaxci.workflows.inputs import InputError, validate_suite
from jaxci.workflows.plan import bench_requirements, check_suite_filters, plan, upgrade_plan, write_outputs
from jaxci.workflows.suites import suites


def _parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog="jaxci inputs", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("plan", help="bench.yml inputs -> matrix")
    for name in ("families", "scale", "bench", "commits"):
        p.add_argument(f"--{name}", default="")
    p.add_argument("--run-id", required=True)
    p.add_argument("--github-output")
    u = sub.add_parser("upgrade", help="jax-upgrade.yml base/head -> matrix")
    u.add_argument("--base", required=True)
    u.add_argument("--head", required=True)
    u.add_argument("--run-id", required=True)
    u.add_argument("--github-output")
    s = sub.add_parser("status", help="record suite progress in a family job")
    s.add_argument("file", type=Path)
    s.add_argument("action", choices=("init", "start", "end", "finish"))
    s.add_argument("--family")
    s.add_argument("--spot", choices=("true", "false"))
    s.add_argument("--suite")
    s.add_argument("--exit", type=ascii_int)
    s.add_argument("--log", type=Path)
    c = sub.add_parser("collect", help="merge family artifacts, report each family's outcome")
    c.add_argument("--matrix", required=True, help="the plan's matrix JSON")
    c.add_argument("--incoming", type=Path, required=True)
    c.add_argument("--results", type=Path, default=Path("results"))
    su = sub.add_parser("suites", help="the suite modules of benchmarks/, one per line")
    su.add_argument("--check-filters", metavar="TEXT", help="instead: check JAXCI_SUITE_FILTERS (SUITE=REGEX ...) "
                    "as scripts/run-suites.sh takes it, and print each pair")
    r = sub.add_parser("requirements", help="requirement lines of the bench extra (pyproject.toml), one per line")
    r.add_argument("names", nargs="+", metavar="PROJECT", help="e.g. asv virtualenv nvidia-ml-py")
    r.add_argument("--extra", default="bench", choices=("bench", "audit", "test"),
                   help="the pyproject.toml extra to read (default bench)")
    return parser


def _status(args) -> int:
    """`status FILE init|start|end|finish`; exit 1 when the suite that ended failed (the job fails; the
    other suites still run)."""
    if args.action == "init":
        if args.family not in load_catalogue():
            raise InputError(f"family {args.family!r} is not in the catalogue")
        run_status.init(args.file, args.family, args.spot == "true")
    elif args.action in ("start", "end"):
        suite = validate_suite(f"status {args.action}", args.suite)
        if args.action == "start":
            run_status.start(args.file, suite)
            return 0
        if args.exit is None:
            raise InputError("status end: --exit is required (asv's exit status for this suite)")
        if not -999_999 <= args.exit <= 999_999:   # what a status file records (1-6 digits): a process exit is 0-255
            raise InputError(f"status end: --exit {args.exit if abs(args.exit) < 10**12 else '(too many digits)'}: "
                             "expected a process exit status (asv's, 0-255)")
        log = _log_tail(args.log)
        return 1 if run_status.end(args.file, suite, args.exit, log).suites[suite].failed else 0
    else:
        print(run_status.finish(args.file).markdown())
    return 0


#: how much of the end of asv's log `status end` reads: asv says "No benchmarks selected" at its end
LOG_TAIL = 1024 * 1024


def _log_tail(path: Path | None) -> str:
    """The last LOG_TAIL bytes of asv's log ('' without one): a 3 GiB log is never read whole."""
    from jaxci.util import safeio

    if path is None or not path.is_file():
        return ""
    return safeio.read_tail(path, LOG_TAIL).decode(errors="replace")


def _collect(args) -> int:
    from jaxci.util import safeio

    if len(args.matrix) > 1024 * 1024:
        raise InputError(f"--matrix: {len(args.matrix):,} characters; the plan's matrix is a few KiB")
    try:  # the plan's matrix nests 3 deep: {"include": [{...}]}
        matrix = safeio.parse_json(args.matrix, "--matrix", max_depth=8)
    except safeio.UnsafeFile as exc:
        raise InputError(f"--matrix is not the plan's JSON: {exc.reason}") from None
    print(outcome_markdown(collect(matrix, args.incoming, args.results, load_catalogue())))
    return 0


def _run(args) -> int:
    if args.command in ("plan", "upgrade") and args.github_output:  # refused before the plan is said
        safewrite.check_target(args.github_output, option="--github-output")
    if args.command == "plan":
        result = plan(args.families, args.scale, args.bench, args.commits, args.run_id)
        print(f"jaxci inputs: families {', '.join(result.families)}; scale {result.scale}; "
              f"filter {result.bench or '(all)'}; commits {' '.join(result.commits)}; "
              f"publish {result.publish}", file=sys.stderr)
        print(write_outputs(result.outputs(), args.github_output), end="")
    elif args.command == "upgrade":
        print(write_outputs(upgrade_plan(args.base, args.head, args.run_id), args.github_output), end="")
    elif args.command == "status":
        return _status(args)
    elif args.command == "collect":
        return _collect(args)
    elif args.command == "suites":
        print("\n".join(check_suite_filters(args.check_filters) if args.check_filters is not None else suites()))
    else:
        print("\n".join(bench_requirements(args.names, extra_name=args.extra)))
    return 0


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return _run(args)
    except (InputError, CatalogueError, safewrite.UnsafeWrite) as exc:  # UnsafeWrite: a FIFO, a link, a failed write
        return refuse("jaxci inputs", f"refused: {exc}")
    except OSError as exc:  # a status or output path that is a folder, unwritable, on a full disk
        return refuse("jaxci inputs", f"cannot write: {one_line(exc, 200)}")


if __name__ == "__main__":
    raise SystemExit(main())
