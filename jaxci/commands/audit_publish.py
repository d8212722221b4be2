"""`jaxci audit publish RAW_DIR DEST_DIR`: an executed audit of a real repository (measure/repo_audit.sh's
folder) made fit to commit under audits/: names and numbers only (jaxci.audit.writing.publish).

RAW_DIR holds audit.json, run.txt (repository, commit, family, kernel, cpu, start/end load, wall_s) and,
when present, ci.patch and kernel-packages.txt; DEST_DIR receives the scrubbed audit.json, with a `published`
block made from run.txt, and the other files as they are. Exit 2 with one line when RAW_DIR lacks a readable
audit.json or run.txt; nothing is written then.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from jaxci.commands.argtypes import OneLineParser, refuse

COPIED = ("run.txt", "ci.patch", "kernel-packages.txt", "published.json")


def parser() -> argparse.ArgumentParser:
    p = OneLineParser(prog="jaxci audit publish", description=__doc__.splitlines()[0])
    p.add_argument("raw", type=Path, help="the folder measure/repo_audit.sh wrote")
    p.add_argument("dest", type=Path, help="the folder to commit, e.g. audits/lecture-python.myst@40e15dc")
    return p


def run_facts(text: str) -> dict:
    """run.txt's `key: value` lines as a dict (the last of a repeated key wins)."""
    facts = {}
    for line in text.splitlines():
        key, sep, value = line.partition(": ")
        if sep:
            facts[key.strip()] = value.strip()
    return facts


def kernel_versions(path: Path) -> dict:
    """The kernel's jax, jaxlib and numpyro versions from its `pip freeze` (kernel-packages.txt), when there."""
    from jaxci.util import safeio

    if not path.is_file():
        return {}
    found = {}
    for line in safeio.read_text(path, 1024 * 1024).splitlines():
        name, sep, version = line.partition("==")
        if sep and name.strip().lower() in ("jax", "jaxlib", "numpyro"):
            found[name.strip().lower()] = version.strip()
    return found


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    from jaxci.audit.writing import publish, record
    from jaxci.util import safeio, safewrite

    try:
        audit = record.read(args.raw / "audit.json")
        facts = run_facts(safeio.read_text(args.raw / "run.txt", 1024 * 1024))
    except (record.AuditError, OSError, ValueError) as exc:
        return refuse("jaxci audit publish", f"{args.raw}: {' '.join(str(exc).split())}")
    missing = [k for k in ("repository", "commit") if k not in facts]
    if missing:
        return refuse("jaxci audit publish", f"{args.raw / 'run.txt'}: no {', '.join(missing)} line")
    facts.update(kernel_versions(args.raw / "kernel-packages.txt"))
    args.dest.mkdir(parents=True, exist_ok=True)
    safewrite.write_text(args.dest / "audit.json", json.dumps(publish.publish(audit, facts), indent=1) + "\n",
                         option="DEST_DIR")
    for name in COPIED:
        if (args.raw / name).is_file():
            safewrite.write_text(args.dest / name, safeio.read_text(args.raw / name, 16 * 1024 * 1024),
                                 option="DEST_DIR")
    print(f"jaxci audit publish: wrote {args.dest} ({len(audit.get('lectures', []))} lectures)", file=sys.stderr)
    return 0
