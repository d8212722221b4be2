"""`jaxci upgrade-check`: asv continuous between two JAX pins (jaxci.results.upgrade), locally or in CI.

Local mode (--old/--new) clones this checkout into a work folder and adds two pin commits; CI mode
(--base/--head/--machine) compares two commits of the checkout it runs in on a registered family.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

from jaxci.catalogue import CatalogueError, load_catalogue
from jaxci.commands.argtypes import OneLineParser, ascii_int, refuse
from jaxci.results.upgrade import CheckResult, UpgradeConfig, load_config, local_check, local_env, report, run_check
from jaxci.util import safewrite
from jaxci.util.git import GitError
from jaxci.util.validate import InputError, bench_filter, full_sha, jax_version, one_line, writable_file


def _parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog="jaxci upgrade-check",
                           description="asv continuous between two JAX pins, with the one slowdown "
                                       "factor of env_matrix/upgrade.toml.")
    parser.add_argument("--old", help="local mode: the JAX version before (e.g. 0.10.1)")
    parser.add_argument("--new", help="local mode: the JAX version after (e.g. 0.10.2)")
    parser.add_argument("--base", help="CI mode: the base commit")
    parser.add_argument("--head", help="CI mode: the head commit")
    parser.add_argument("--machine", help="CI mode: the registered catalogue family")
    parser.add_argument("--bench", action="append", default=[], help="asv --bench regex (repeatable: union)")
    parser.add_argument("--rounds", type=ascii_int, help="asv rounds per benchmark (default: asv's own)")
    parser.add_argument("--workdir", type=Path, help="local mode: where the clone goes (kept)")
    parser.add_argument("--summary", default=os.environ.get("GITHUB_STEP_SUMMARY"),
                        help="append the markdown report here (default: $GITHUB_STEP_SUMMARY)")
    return parser


def _local(args, config: UpgradeConfig) -> tuple[CheckResult, str]:
    """Two pin commits in a clone of this checkout, measured on this machine at CI scale."""
    old, new = jax_version("--old", args.old), jax_version("--new", args.new)
    if args.workdir is not None and args.workdir.exists() and not args.workdir.is_dir():
        raise InputError(f"--workdir {args.workdir}: is a file, not a folder")
    if args.workdir is not None and (args.workdir / "repo").exists():
        raise InputError(f"--workdir {args.workdir}: already holds {args.workdir / 'repo'} from an earlier "
                         f"check; give a new or empty folder, or remove {args.workdir / 'repo'}")
    local_env(Path("."))  # JAXCI_OFFLINE checked before anything is cloned or built
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="jaxci-upgrade-"))
    workdir.mkdir(parents=True, exist_ok=True)
    try:
        result, base, head = local_check(old, new, args.bench, config.factor, workdir, rounds=args.rounds)
    finally:
        if not args.workdir:
            shutil.rmtree(workdir, ignore_errors=True)
    return result, f"JAX {old} -> {new} on this machine (CI scale; {base[:8]} -> {head[:8]})"


def _ci(args, config: UpgradeConfig) -> tuple[CheckResult, str]:
    """Two commits of the checkout at hand, on a registered catalogue family, at the configured scale."""
    base, head = full_sha("--base", args.base), full_sha("--head", args.head)
    if args.machine not in load_catalogue():
        raise CatalogueError(f"--machine {args.machine!r} is not a catalogue family")
    env = dict(os.environ, JAXCI_SCALE=config.scale)
    result = run_check(Path.cwd(), base, head, args.machine, config.factor, args.bench, env, rounds=args.rounds)
    return result, f"JAX upgrade check on {args.machine} ({config.scale} scale; {base[:8]} -> {head[:8]})"


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    local = bool(args.old or args.new)
    if local and not (args.old and args.new):
        parser.error("local mode needs both --old and --new")
    if not local and not (args.base and args.head and args.machine):
        parser.error("give --old/--new (local) or --base/--head/--machine (CI)")
    try:
        config = load_config()
        args.bench = [bench_filter("--bench", b) for b in args.bench]
        if args.rounds is not None and not 1 <= args.rounds <= 100:
            raise InputError(f"--rounds {args.rounds}: must be 1-100")
        if args.summary:
            writable_file("--summary", Path(args.summary))
        result, title = (_local if local else _ci)(args, config)
    except (CatalogueError, ValueError, GitError) as exc:  # InputError is a ValueError
        return refuse("jaxci upgrade-check", one_line(exc, 400))
    except OSError as exc:
        return refuse("jaxci upgrade-check", one_line(exc, 200))
    text = report(result, config.factor, title)
    if result.status == 2:
        print(result.continuous_log[-6000:], file=sys.stderr)
    print(text)
    if args.summary:
        try:
            safewrite.write_text(args.summary, text, append=True, option="--summary")
        except safewrite.UnsafeWrite as exc:
            return refuse("jaxci upgrade-check", exc)
    return result.status


if __name__ == "__main__":
    raise SystemExit(main())
