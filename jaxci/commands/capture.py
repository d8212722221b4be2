"""GPU capture: the benchmarks that answer the seven questions, on both devices, in priority order, within
a time budget, packed into a few files that `jaxci import` merges into results/<machine>/ (jaxci.capture).

usage: python3 scripts/gpu_capture.py --budget SECONDS [--out DIR] [--machine NAME] [--wheels DIR]
       python3 scripts/gpu_capture.py --rehearse --budget SECONDS [--out DIR]   (a CPU-only dress rehearsal)
       python3 scripts/gpu_capture.py --plan                                    (print the steps and exit)

Exit status: 0 the capture ran (every step run or listed as not reached) and is packed; 1 it cannot start
here (no asv, no commit, a lab name on another GPU); 2 bad usage, or preparation failed (said in OUT too);
3 stopped from outside (SIGTERM/SIGINT): earlier steps are packed.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

from jaxci import REPO_ROOT
from jaxci.capture.carried import CaptureError
from jaxci.capture.plan import plan, select
from jaxci.capture.prepare import LAB_MACHINE, REHEARSAL_MACHINE, prepare
from jaxci.capture.run import Capture, run_plan
from jaxci.capture.scheduler import PACK_RESERVE_S


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--budget", type=float, help="seconds for the whole capture, packing included")
    p.add_argument("--out", type=Path, default=os.environ.get("OUT"), help="where the packed files go (default: $OUT)")
    p.add_argument("--machine", help=f"asv machine name (default {LAB_MACHINE}; rehearsal {REHEARSAL_MACHINE})")
    p.add_argument("--wheels", type=Path, default=REPO_ROOT / ".device" / "wheels",
                   help="carried wheels to unpack when asv is missing (default .device/wheels)")
    p.add_argument("--work", type=Path, help="working directory (default: a new temporary one)")
    p.add_argument("--rehearse", action="store_true", help="CPU-only dress rehearsal of the whole flow")
    p.add_argument("--only", help="run only the steps whose names match this regex")
    p.add_argument("--plan", action="store_true", help="print the steps and exit")
    return p


def main(argv: list[str] | None = None) -> int:
    p = parser()
    args = p.parse_args(argv)
    steps = select(plan(), args.only)
    if args.plan:
        for s in steps:
            print(f"{s.name:14s} {len(s.combos):3d} combinations  {s.question}")
        return 0
    if not args.budget or args.budget <= PACK_RESERVE_S:
        p.error(f"--budget SECONDS is required and must exceed the {PACK_RESERVE_S:.0f} s pack reserve")
    if not args.out:
        p.error("--out DIR is required where $OUT is not set")
    machine = args.machine or (REHEARSAL_MACHINE if args.rehearse else LAB_MACHINE)
    work = args.work or Path(tempfile.mkdtemp(prefix="gpu-capture-"))
    work.mkdir(parents=True, exist_ok=True)
    cap = Capture(out=args.out, work=work, budget_s=args.budget, machine=machine, rehearse=args.rehearse)
    try:
        gpu, costs = prepare(cap, args.wheels)
    except CaptureError as exc:  # cannot start here: said on stderr, nothing packed (as a SystemExit did)
        print(exc, file=sys.stderr)
        return 1
    except Exception as exc:  # registration refused, ...: say so in OUT too, then stop
        cap.notes.append(f"stopped before any step: {exc}")
        cap.pack()
        print(f"gpu_capture: {exc}", file=sys.stderr)
        return 2
    remaining = args.budget - cap.elapsed()
    cap.notes.append(f"preparation took {cap.elapsed():.0f} s")
    code = run_plan(cap, steps, remaining, costs, gpu)
    if code:
        return code
    reached = sum(1 for r in cap.records if r["status"] != "not reached")
    packed = ", ".join(f"{f.name} {f.stat().st_size // 1024} KiB" for f in sorted(cap.out.iterdir()))
    print(f"gpu_capture: {reached}/{len(cap.records)} steps in {cap.elapsed():.0f} s of {args.budget:.0f}; "
          f"packed into {cap.out}: {packed}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
