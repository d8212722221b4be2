"""`jaxci failures record --cache DIR --out FILE` | `jaxci failures skip --cache DIR --known FILE [--remove]`.

record: after the gating build, write the notebooks the jupyter-cache project failed on (with the hash of their
code). skip: in the other builders, print the recorded failures whose notebook is unchanged, one path a line
(for myst-nb's `nb_execution_excludepatterns`, as globs matching just that file), and with --remove take them out
of the jupyter-cache project. Every notebook a cache record names must lie inside --project (default: the current
folder). Exit 2 with the reason when the cache or the file cannot be read.
"""

from __future__ import annotations

import json
import sys

from jaxci.commands.argtypes import OneLineParser


def main(argv: list[str] | None = None) -> int:
    parser = OneLineParser(prog="jaxci failures", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="action", required=True)
    rec = sub.add_parser("record", help="write the notebooks the cache failed on")
    rec.add_argument("--cache", required=True, help="the jupyter-cache folder (e.g. _build/.jupyter_cache)")
    rec.add_argument("--out", required=True, help="known-failures JSON to write")
    skip = sub.add_parser("skip", help="print (and --remove) recorded failures whose notebook is unchanged")
    skip.add_argument("--cache", required=True, help="the jupyter-cache folder")
    skip.add_argument("--known", required=True, help="known-failures JSON from `jaxci failures record`")
    skip.add_argument("--remove", action="store_true", help="remove them from the jupyter-cache project")
    for sp in (rec, skip):
        sp.add_argument("--project", default=".", help="the folder every notebook of the cache lies in; a record "
                        "naming a file outside it is refused (default: the current folder)")
    args = parser.parse_args(argv)

    from jaxci.util import safewrite
    from jaxci.workflows.failures import FailuresError, load_known, record, to_skip

    try:
        if args.action == "record":
            safewrite.check_target(args.out, option="--out")  # before the cache is read
            data = record(args.cache, args.project)
            safewrite.write_text(args.out, json.dumps(data, indent=1), option="--out")
            print(f"jaxci failures: {len(data['failures'])} failed notebook(s) recorded in {args.out}",
                  file=sys.stderr)
        else:
            for pattern in to_skip(args.cache, load_known(args.known), remove=args.remove, project=args.project):
                print(pattern)  # a glob matching exactly that notebook (jaxci.util.quoting.glob_literal)
    except (FailuresError, OSError, safewrite.UnsafeWrite) as exc:
        print(f"jaxci failures: {exc}", file=sys.stderr)
        return 2
    return 0
