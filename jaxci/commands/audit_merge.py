"""`jaxci audit merge SHARD.json ... [--format json|md] [--output FILE]`: the shards of a sharded executed audit
(`jaxci audit PATH --execute --shard i/N --format json`) combined into the one audit.

Exit status: 0 merged; 1 merged, and a lecture failed (as `jaxci audit` says it); 2 a shard file unreadable, or
shards that do not make one audit (overlapping, missing, of different N, of different repositories or options):
said in one line, nothing written.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from jaxci.commands.argtypes import OneLineParser, refuse


def parser() -> argparse.ArgumentParser:
    p = OneLineParser(prog="jaxci audit merge", description=__doc__.splitlines()[0])
    p.add_argument("shards", type=Path, nargs="+", help="the shards' audit JSON files, in any order")
    p.add_argument("--format", choices=["json", "md"], default="json",
                   help="json: the audit as one unsharded run writes it (default); md: a short table of it")
    p.add_argument("--output", type=Path, help="write here instead of stdout")
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    from jaxci.audit.writing import merge
    from jaxci.audit.writing.record import AuditError, dumps, read
    from jaxci.util import safewrite
    from jaxci.util.safewrite import UnsafeWrite
    from jaxci.util.validate import InputError

    try:
        if args.output:
            from jaxci.util.validate import not_an_input, writable_file

            writable_file("--output", args.output)
            not_an_input("--output", args.output, args.shards, "one of the shards")
        docs = []
        for path in args.shards:
            try:
                docs.append(read(path))
            except AuditError as exc:
                raise InputError(f"{path}: {exc}") from None
        merged = merge.merge(docs, [str(p) for p in args.shards])
        try:
            text = dumps(merged) if args.format == "json" \
                else merge.to_markdown(merged)
        except ValueError as exc:  # a number no JSON reader takes (NaN, Infinity): never written
            raise InputError(f"the merged audit holds a number that is not finite ({exc})") from None
        if args.output:
            safewrite.write_text(args.output, text, option="--output")
        else:
            sys.stdout.write(text)
    except (merge.MergeError, InputError, UnsafeWrite) as exc:
        return refuse("jaxci audit merge", exc)
    lectures = merged["lectures"]
    print(f"jaxci audit merge: {len(docs)} shard(s), {len(lectures)} lectures", file=sys.stderr)
    return 1 if merged.get("failed") else 0
