"""`jaxci audit coverage AUDIT_JSON [--published FILE] [--table]`: how much of a repository's published build an
executed audit covers (jaxci.report.coverage), from the audit and its published build as `jaxci audit published`
records it (default: published.json beside the audit, as committed under audits/). Exit 2 with one line when
either file cannot be read."""

from __future__ import annotations

import argparse
from pathlib import Path

from jaxci.commands.argtypes import OneLineParser, refuse

PROG = "jaxci audit coverage"


def parser() -> argparse.ArgumentParser:
    p = OneLineParser(prog=PROG, description=__doc__.splitlines()[0])
    p.add_argument("audit", type=Path, help="an executed audit's JSON (jaxci audit --execute --format json)")
    p.add_argument("--published", type=Path, default=None,
                   help="the published build's record (jaxci audit published; default: published.json beside it)")
    p.add_argument("--table", action="store_true", help="every lecture: seconds, class, why")
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    from jaxci.analysis.lecture_record import AuditView, LectureRecordError
    from jaxci.report import coverage
    from jaxci.results import published_build as pb
    from jaxci.util import safeio

    try:
        audit = safeio.load_json(args.audit)
        build = pb.read(args.published or pb.beside(args.audit))
    except (OSError, ValueError) as exc:
        return refuse(PROG, exc)
    if not isinstance(audit, dict):
        return refuse(PROG, f"{args.audit}: not an audit JSON (an object with 'lectures')")
    try:
        view = AuditView.from_dict(audit)
    except LectureRecordError as exc:
        return refuse(PROG, f"{args.audit}: {exc}")
    rows = coverage.coverage(view, build.seconds)
    print(coverage.summary(rows))
    if args.table:
        print("\n" + coverage.table(rows))
    return 0
