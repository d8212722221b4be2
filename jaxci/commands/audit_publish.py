"""`jaxci audit publish RAW_DIR DEST_DIR`: an executed audit of a real repository (measure/repo_audit.sh's
folder) made fit to commit under audits/: names and numbers only (jaxci.audit.writing.publish).

RAW_DIR holds audit.json, run.txt (repository, commit, family, kernel, cpu, start/end load, wall_s) and,
when present, ci.patch and kernel-packages.txt; DEST_DIR receives the scrubbed audit.json, with a `published`
block made from run.txt, and the other files as they are. Exit 2 with one line when RAW_DIR lacks a readable
audit.json or run.txt, holds a link or a file that is not UTF-8 text, or DEST_DIR is RAW_DIR, not a folder or not
writable; everything is read and checked before the first file is written, so a refusal writes nothing.

`jaxci audit publish AUDIT.json... DEST_DIR`: audit JSONs on their own (e.g. the scoring runs a device wrote, with
no run.txt), each scrubbed the same way into DEST_DIR under its own name, its `published` block naming the file.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from jaxci.commands.argtypes import OneLineParser, refuse

COPIED = ("run.txt", "ci.patch", "kernel-packages.txt", "published.json")


def parser() -> argparse.ArgumentParser:
    p = OneLineParser(prog="jaxci audit publish", description=__doc__.splitlines()[0])
    p.add_argument("raw", type=Path, nargs="+",
                   help="the folder measure/repo_audit.sh wrote, or audit JSON files to scrub on their own")
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


def kernel_versions(text: str) -> dict:
    """The kernel's jax, jaxlib and numpyro versions from its `pip freeze` (kernel-packages.txt)."""
    found = {}
    for line in text.splitlines():
        name, sep, version = line.partition("==")
        if sep and name.strip().lower() in ("jax", "jaxlib", "numpyro"):
            found[name.strip().lower()] = version.strip()
    return found


def read_raw(raw: Path) -> tuple[dict, dict]:
    """Everything publish writes, read and checked before a byte is written: the audit, run.txt's facts and the
    copied files' text (regular files inside RAW_DIR: a link is refused, never followed into the folder to
    commit; UTF-8 text). Raises ValueError/OSError subclasses with a one-line message."""
    from jaxci.audit.writing import record
    from jaxci.util import safeio

    audit = record.read(raw / "audit.json")
    copied = {name: safeio.read_text(raw / name, 16 * 1024 * 1024, links=False)
              for name in COPIED if (raw / name).exists() or (raw / name).is_symlink()}
    if "run.txt" not in copied:
        raise FileNotFoundError(f"{raw / 'run.txt'}: no such file")
    return audit, copied


def publish_files(paths: list[Path], dest: Path) -> int:
    """Audit JSON files scrubbed one by one into DEST (the same names), everything read before a byte is
    written."""
    from jaxci.audit.writing import publish, record
    from jaxci.util import safewrite, validate

    try:
        audits = {p.name: record.read(p) for p in paths}
    except (OSError, ValueError) as exc:
        return refuse("jaxci audit publish", validate.one_line(" ".join(str(exc).split())))
    if len(audits) < len(paths):
        return refuse("jaxci audit publish", "two audit files share a name: they would overwrite each other")
    files = {name: record.dumps(publish.publish(audit, {"source": name}), indent=1) + "\n"
             for name, audit in audits.items()}
    try:
        validate.not_an_input("DEST_DIR", dest, [p.parent for p in paths], "the folder of an input")
        safewrite.write_files(validate.folder_to_fill("DEST_DIR", dest), files, option="DEST_DIR")
    except (validate.InputError, safewrite.UnsafeWrite) as exc:
        return refuse("jaxci audit publish", exc)
    print(f"jaxci audit publish: wrote {len(files)} audit file(s) into {dest}", file=sys.stderr)
    return 0


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    from jaxci.audit.writing import publish
    from jaxci.util import safewrite, validate

    if len(args.raw) > 1 or args.raw[0].is_file():
        return publish_files(args.raw, args.dest)
    args.raw = args.raw[0]
    try:
        audit, copied = read_raw(args.raw)
    except (OSError, ValueError) as exc:
        return refuse("jaxci audit publish", f"{args.raw}: {validate.one_line(' '.join(str(exc).split()))}")
    facts = run_facts(copied["run.txt"])
    missing = [k for k in ("repository", "commit") if k not in facts]
    if missing:
        return refuse("jaxci audit publish", f"{args.raw / 'run.txt'}: no {', '.join(missing)} line")
    facts.update(kernel_versions(copied.get("kernel-packages.txt", "")))
    from jaxci.audit.writing.record import dumps

    copied = {**copied, "run.txt": publish.without_host_paths(copied["run.txt"])}
    files = {"audit.json": dumps(publish.publish(audit, facts), indent=1) + "\n", **copied}
    try:
        validate.not_an_input("DEST_DIR", args.dest, [args.raw], "RAW_DIR, the raw audit")
        safewrite.write_files(validate.folder_to_fill("DEST_DIR", args.dest), files, option="DEST_DIR")
    except (validate.InputError, safewrite.UnsafeWrite) as exc:
        return refuse("jaxci audit publish", exc)
    print(f"jaxci audit publish: wrote {args.dest} ({len(audit.get('lectures', []))} lectures)", file=sys.stderr)
    return 0
