"""`jaxci import CAPTURE [--results DIR]`: merge a GPU capture into results/<machine>/ (jaxci.results.importer).

`jaxci import --upgrade-summaries [--results DIR]`: write the record (jaxci.results.captures) of every committed
capture summary that has none, once (jaxci.results.legacy_captures: summaries committed before issue 72)."""

from __future__ import annotations

import signal
import sys
from pathlib import Path

from jaxci import REPO_ROOT
from jaxci.catalogue import CatalogueError
from jaxci.commands.argtypes import OneLineParser, refuse
from jaxci.results import importer
from jaxci.results.asvfiles import FormatError
from jaxci.results.importer import ImportRefused, import_capture
from jaxci.util.safeio import UnsafeFile


class _Stopped(Exception):
    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


def _stop(signum, frame):
    raise _Stopped(signum)


def main(argv: list[str] | None = None) -> int:
    parser = OneLineParser(prog="jaxci import",
                           description="Merge a capture (scripts/gpu_capture.py) into results/<machine>/.")
    parser.add_argument("capture", type=Path, nargs="?",
                        help="the folder scripts/gpu_capture.py wrote, or a tar.gz of it")
    parser.add_argument("--upgrade-summaries", action="store_true",
                        help="instead of importing: write the record of every capture summary that has none")
    parser.add_argument("--results", type=Path, default=REPO_ROOT / "results",
                        help="asv results directory to merge into (default: results/ of this checkout)")
    args = parser.parse_args(argv)
    if args.upgrade_summaries:
        return _upgrade(args.results) if args.capture is None else refuse(
            "jaxci import", "--upgrade-summaries takes no CAPTURE: it upgrades what --results holds")
    if args.capture is None:
        return refuse("jaxci import", "give a CAPTURE folder or tarball (or --upgrade-summaries)")
    previous = {s: signal.signal(s, _stop) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        cap, written = import_capture(args.capture, args.results)
    except (ImportRefused, CatalogueError, FormatError, UnsafeFile) as exc:
        return refuse("jaxci import", f"refused: {' '.join(str(exc).split())}")
    except (_Stopped, KeyboardInterrupt) as exc:
        signum = getattr(exc, "signum", signal.SIGINT)
        done = ("after the import was written (it is complete)" if importer.STATE["committed"]
                else f"before anything was written: {args.results} is unchanged")
        print(f"jaxci import: interrupted ({signal.Signals(signum).name}) {done}", file=sys.stderr)
        return 128 + signum
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
    for warning in cap.warnings:
        print(f"jaxci import: warning: {warning}", file=sys.stderr)
    steps = cap.manifest.get("steps", [])
    ran = [s["step"] for s in steps if s.get("status") != "not reached"]
    missed = [s["step"] for s in steps if s.get("status") == "not reached"]
    print(f"jaxci import: {cap.machine}: {len(cap.result_files)} results file(s) merged into "
          f"{args.results / cap.machine} (steps run: {', '.join(ran) or 'none'}; "
          f"not reached: {', '.join(missed) or 'none'})")
    for path in written:
        print(f"  wrote {path}")
    return 0


def _upgrade(results: Path) -> int:
    from jaxci.results import legacy_captures

    try:
        written = legacy_captures.upgrade(results)
    except (legacy_captures.LegacyError, OSError, UnsafeFile) as exc:
        return refuse("jaxci import", f"refused: {' '.join(str(exc).split())}")
    print(f"jaxci import: {len(written)} capture record(s) written under {results}")
    for path in written:
        print(f"  wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
