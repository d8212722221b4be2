"""`jaxci failures record --out FILE (--cache DIR | --site DIR) [--keep FILE]` |
`jaxci failures skip --known FILE [--config _config.yml | --pages] [--cache DIR [--remove]]`.

Fail once, for Jupyter Book 1.x (jupyter-cache) and mystmd (templates/fail-once-*.yml wire it into a workflow).
record: after the gating build, write the notebooks it failed on with the hash of their code: from the jupyter-cache
folder (`--cache`, Jupyter Book 1.x) or from mystmd's built site (`--site _build/site`); `--keep` carries the
previous record's failures this build skipped while they are unchanged. skip: before a build, the recorded failures
whose notebook is unchanged: one glob a line on stdout; with `--config` they are added to the book's
`execute.exclude_patterns` (Jupyter Book 1.x), with `--pages` each page's front matter gets `execute: {skip: true}`
(mystmd); each skipped notebook is said on stderr with the error it failed with. Every notebook named must lie inside
--project (default: the current folder). Exit 2 with the reason when an input cannot be read (nothing changed then).
A recorded failure that cannot be skipped (a name with a control character, an .ipynb page under --pages, a page
whose front matter is not a mapping) is said on stderr and runs as usual: a record never makes a build fail that
would pass without it. Pages are edited all or none. Every line printed is one line, Markdown-safe and never a
workflow command (jaxci.util.quoting.log), since the templates append it to the step summary.
"""

from __future__ import annotations

import json
import sys

from jaxci.commands.argtypes import OneLineParser, refuse


def _parser() -> OneLineParser:
    parser = OneLineParser(prog="jaxci failures", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="action", required=True)
    rec = sub.add_parser("record", help="write the notebooks the build failed on")
    source = rec.add_mutually_exclusive_group(required=True)
    source.add_argument("--cache", help="the jupyter-cache folder (Jupyter Book 1.x: _build/.jupyter_cache)")
    source.add_argument("--site", help="mystmd's built site folder (_build/site)")
    rec.add_argument("--out", required=True, help="known-failures JSON to write")
    rec.add_argument("--keep", help="the known-failures JSON this build skipped by: its unchanged entries are kept")
    skip = sub.add_parser("skip", help="the recorded failures whose notebook is unchanged, and tell the engine")
    skip.add_argument("--known", required=True, help="known-failures JSON from `jaxci failures record`")
    how = skip.add_mutually_exclusive_group()
    how.add_argument("--config", help="Jupyter Book 1.x: add them to this _config.yml's execute.exclude_patterns")
    how.add_argument("--pages", action="store_true", help="mystmd: set execute: {skip: true} in each page")
    skip.add_argument("--cache", help="a jupyter-cache folder whose project records are checked (and, with "
                      "--remove, lose the skipped notebooks)")
    skip.add_argument("--remove", action="store_true", help="remove them from the jupyter-cache project")
    for sp in (rec, skip):
        sp.add_argument("--project", default=".", help="the folder every notebook lies in; a record naming a file "
                        "outside it is refused (default: the current folder)")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    from jaxci.util import quoting, safewrite
    from jaxci.util.safeio import UnsafeFile
    from jaxci.workflows import failures as fo

    try:
        if args.action == "record":
            safewrite.check_target(args.out, option="--out")  # before anything is read
            keep = fo.load_known(args.keep) if args.keep else None
            data = (fo.record(args.cache, args.project, keep) if args.cache else
                    fo.record_mystmd(args.site, args.project, keep))
            safewrite.write_text(args.out, json.dumps(data, indent=1), option="--out")
            print(f"jaxci failures: {len(data['failures'])} failed notebook(s) recorded in {args.out}",
                  file=sys.stderr)
            return 0
        if args.remove and not args.cache:
            return refuse("jaxci failures", "--remove needs --cache (the jupyter-cache folder)")
        known = fo.load_known(args.known)
        same, notes = fo.unchanged(known, args.project), fo.passed_over(known)
        edits: dict = {}
        if args.pages:  # every page planned before anything is changed; one that cannot be edited runs
            edits, more = fo.plan_pages(args.project, same)
            notes += more
            same = [n for n in same if n in edits]
        patterns = fo.to_skip(args.cache, same, remove=args.remove, project=args.project)
        if args.config and same:  # nothing to skip: the config is left as it is (it may be a link)
            fo.exclude_in_config(args.config, same)
        fo.write_all(edits)
        for note in notes:
            print(quoting.log(f"jaxci failures: {note}"), file=sys.stderr)
        for name in same:
            error = known[name]["error"] or "no message"
            print(quoting.log(f"jaxci failures: skipping {name}: it failed before ({error}) and has not changed "
                              "since; it runs again once its code changes"), file=sys.stderr)
        for pattern in patterns:
            print(pattern)  # a glob matching exactly that notebook, safe in a log and a summary (glob_literal)
    except (fo.FailuresError, OSError, safewrite.UnsafeWrite, UnsafeFile) as exc:
        return refuse("jaxci failures", exc)
    return 0
