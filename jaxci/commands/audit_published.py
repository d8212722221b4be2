"""`jaxci audit published SNAPSHOT --commit C --family F --repository OWNER/NAME --output FILE`: a lecture site's
published build (a `*.notebooks` repository's status.ipynb at one commit) as the versioned record the pin rule,
the whole-build accounting and the report read (jaxci.results.published_build). Exit 2 with one line when the
snapshot, the commit or the table cannot be read, or the family is not in the catalogue; nothing is written then.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from jaxci.commands.argtypes import OneLineParser, positive_float, refuse


def parser() -> argparse.ArgumentParser:
    p = OneLineParser(prog="jaxci audit published", description=__doc__.splitlines()[0])
    p.add_argument("snapshot", type=Path, help="a *.notebooks repository: a git directory or a work tree")
    p.add_argument("--commit", required=True, help="the commit whose status.ipynb to read")
    p.add_argument("--family", required=True, help="the catalogue runner family the site's build ran on")
    p.add_argument("--repository", default=None,
                   help="the snapshot's OWNER/NAME as published (default: the snapshot folder's name)")
    p.add_argument("--cap", type=positive_float, default=None,
                   help="the series' cell timeout in seconds: a run time at it is a stopped run, not a time")
    p.add_argument("--output", type=Path, required=True, help="where to write the record (JSON)")
    return p


def status_text(snapshot: Path, commit: str) -> tuple[str, str]:
    """(status.ipynb's text at `commit`, the full commit) from a bare or work-tree git directory (a relative
    path is the caller's: git runs inside the snapshot). Its size is bounded by the record's own limit."""
    from jaxci.results.published_build import LIMIT
    from jaxci.util.git import git, show_text

    snapshot = snapshot.resolve()
    git_dir = snapshot / ".git" if (snapshot / ".git").exists() else snapshot
    full = git(snapshot, f"--git-dir={git_dir}", "rev-parse", "--verify", f"{commit}^{{commit}}", timeout=60)
    return show_text(snapshot, f"--git-dir={git_dir}", spec=f"{full}:status.ipynb", limit=LIMIT, timeout=60), full


def _checked_outputs(args) -> None:
    """--output writable and not the snapshot's own status.ipynb; --repository one printable OWNER/NAME. Raises
    InputError before anything is read."""
    from jaxci.util.validate import InputError, not_an_input, plain, writable_file

    writable_file("--output", args.output)
    not_an_input("--output", args.output, [args.snapshot / "status.ipynb"], "the snapshot's status.ipynb")
    if args.repository is not None:
        name = plain("--repository", args.repository)
        if name.count("/") != 1 or not all(name.split("/")):
            raise InputError(f"--repository {name}: expected OWNER/NAME")


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    from jaxci.catalogue import CatalogueError, load_catalogue
    from jaxci.results import published_build as pb
    from jaxci.util import safewrite
    from jaxci.util.git import GitError
    from jaxci.util.validate import InputError

    try:
        _checked_outputs(args)
        if args.family not in load_catalogue():
            return refuse("jaxci audit published", f"--family {args.family!r}: not a catalogue family")
        text, commit = status_text(args.snapshot, args.commit)
        rows = pb.parse_status(text, args.cap)
    except (CatalogueError, GitError, pb.PublishedError, InputError, OSError) as exc:
        return refuse("jaxci audit published", exc)
    name = args.repository or args.snapshot.resolve().name
    record = pb.from_rows(rows, name, commit, args.family)
    try:
        safewrite.write_text(args.output, json.dumps(record.as_dict(), indent=1, sort_keys=True) + "\n",
                             option="--output")
    except safewrite.UnsafeWrite as exc:
        return refuse("jaxci audit published", exc)
    print(f"jaxci audit published: wrote {args.output} ({len(record.seconds)} run times, "
          f"{record.total_s:,.0f} s; {len(record.refused)} rows refused)", file=sys.stderr)
    return 0
