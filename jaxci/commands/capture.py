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
from jaxci.capture.plan import for_device, plan, select
from jaxci.capture.prepare import LAB_MACHINE, REHEARSAL_MACHINE, prepare
from jaxci.capture.run import Capture, run_plan
from jaxci.capture.scheduler import PACK_RESERVE_S, Costs
from jaxci.commands.argtypes import OneLineParser, ascii_float, ascii_int, refuse
from jaxci.util.validate import InputError, bounded_regex, inside


def parser() -> argparse.ArgumentParser:
    p = OneLineParser(description=__doc__.splitlines()[0])
    p.add_argument("--budget", type=ascii_float, help="seconds for the whole capture, packing included")
    p.add_argument("--out", type=Path, default=os.environ.get("OUT"), help="where the packed files go (default: $OUT)")
    p.add_argument("--machine", help=f"asv machine name (default {LAB_MACHINE}; rehearsal {REHEARSAL_MACHINE})")
    p.add_argument("--wheels", type=Path, default=REPO_ROOT / ".device" / "wheels",
                   help="carried wheels to unpack when asv is missing (default .device/wheels)")
    p.add_argument("--work", type=Path, help="working directory (default: a new temporary one)")
    p.add_argument("--rehearse", action="store_true", help="CPU-only dress rehearsal of the whole flow")
    p.add_argument("--only", help="run only the steps whose names match this regex (steps an earlier capture "
                                  "measured run only when named here)")
    p.add_argument("--call", type=ascii_int, choices=(1, 2),
                   help="the second capture's device call: 1 the runner model's primitives, 2 the rest")
    p.add_argument("--plan", action="store_true", help="print the steps (question, primitive, estimate) and exit")
    return p


def check_args(args) -> str | None:
    """What is wrong with the options, checked before any step runs; None when all is well."""
    import math

    if args.only is not None:  # bounded like every user regex: the plan searches each step name with it
        try:
            bounded_regex("--only", args.only)
        except InputError as exc:
            return str(exc)
    if args.plan:
        return None
    if args.budget is None or not math.isfinite(args.budget) or args.budget <= PACK_RESERVE_S:
        return (f"--budget {args.budget}: SECONDS is required, a finite number above the {PACK_RESERVE_S:.0f} s "
                "pack reserve")
    if not args.out:
        return "--out DIR is required where $OUT is not set"
    if Path(args.out).exists() and not Path(args.out).is_dir():
        return f"--out {args.out}: is a file; give a folder for the packed capture"
    if not Path(args.out).exists() and not Path(args.out).resolve().parent.is_dir():
        return f"--out {args.out}: folder {Path(args.out).resolve().parent} does not exist"
    tree = results_tree_of(Path(args.out))
    if tree is not None:
        return (f"--out {args.out}: inside the results tree {tree}; the capture's files are not results and "
                "`jaxci import` merges them into it: give a folder outside it")
    if args.work is not None:
        if args.work.exists() and not args.work.is_dir():
            return f"--work {args.work}: is a file; give a new or empty folder"
        if inside(args.work, REPO_ROOT, or_above=True):
            return (f"--work {args.work}: inside (or above) the checkout {REPO_ROOT}; the capture writes its own "
                    "asv.conf.json and results/ there: give a folder outside it")
    return None


def results_tree_of(out: Path) -> Path | None:
    """The asv results tree `out` would lie in (this checkout's results/, or any folder at or above `out`
    holding asv's benchmarks.json or a machine's machine.json), or None."""
    if inside(out, REPO_ROOT / "results"):
        return REPO_ROOT / "results"
    real = out.resolve()
    for folder in (real, *real.parents):
        if (folder / "benchmarks.json").is_file() or (folder / "machine.json").is_file():
            return folder
    return None


def print_plan(steps, every) -> None:
    """Each selected step with its call, question, primitive and estimate (the first capture's measured process
    starts on the H200: cpu 3.0 s, gpu 3.8 s; before the scheduler's correction factor), then what is skipped."""
    costs = Costs(start_s={"cpu": 3.0, "gpu": 3.8})
    totals: dict = {}
    for s in steps:
        estimate = costs.raw(s, True)
        totals[s.call] = totals.get(s.call, 0.0) + estimate
        size = f"{len(s.combos)} combinations" if s.combos else "a command"
        print(f"call {s.call}  {s.name:20s} ~{estimate:4.0f} s  {size:16s} {s.question}")
        if s.primitive:
            print(f"{'':29s}primitive: {s.primitive}")
    for call, total in sorted(totals.items()):
        print(f"call {call}: ~{total:.0f} s estimated on the H200 (a call's budget: 540 s)")
    skipped = [s.name for s in every if s.measured and s not in steps]
    if skipped:
        print(f"skipped (measured in {every[-1].measured}; name them with --only to rerun): {', '.join(skipped)}")


def main(argv: list[str] | None = None) -> int:
    p = parser()
    args = p.parse_args(argv)
    problem = check_args(args)
    if problem:
        return refuse("gpu_capture", f"error: {problem}")
    from jaxci.accel import accelerator_device

    steps = for_device(select(plan(), args.only, args.call), accelerator_device() or "gpu")  # a TPU's combinations
    if args.plan:
        print_plan(steps, plan())
        return 0
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
        return refuse("gpu_capture", exc)
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
