"""`jaxci import CAPTURE [--results DIR]`: merge a GPU capture into results/<machine>/ (jaxci.results.importer)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from jaxci import REPO_ROOT
from jaxci.catalogue import CatalogueError
from jaxci.results.importer import ImportRefused, import_capture

def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="jaxci import", description="Merge a capture (scripts/gpu_capture.py) into results/<machine>/.")
    parser.add_argument("capture", type=Path, help="the folder scripts/gpu_capture.py wrote, or a tar.gz of it")
    parser.add_argument("--results", type=Path, default=REPO_ROOT / "results",
                        help="asv results directory to merge into (default: results/ of this checkout)")
    args = parser.parse_args(argv)
    try:
        cap, written = import_capture(args.capture, args.results)
    except (ImportRefused, CatalogueError) as exc:
        print(f"jaxci import: refused: {exc}", file=sys.stderr)
        return 2
    for warning in cap.warnings:
        print(f"jaxci import: warning: {warning}", file=sys.stderr)
    steps = cap.manifest.get("steps", [])
    ran = [s["step"] for s in steps if s.get("status") != "not reached"]
    missed = [s["step"] for s in steps if s.get("status") == "not reached"]
    print(f"jaxci import: {cap.machine}: {len(cap.result_files)} results file(s) merged into {args.results / cap.machine}"
          f" (steps run: {', '.join(ran) or 'none'}; not reached: {', '.join(missed) or 'none'})")
    for path in written:
        print(f"  wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
