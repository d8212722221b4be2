"""`jaxci profile KERNEL`: device-busy time and launch gaps of a pathological kernel (jaxci.traces.profile)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from jaxci.commands.argtypes import OneLineParser, refuse
from jaxci.traces.profile import KERNELS, ProfileError, profile, render


def _steps(text: str) -> int:
    """A positive step count small enough to build arrays of (a 20-digit --n gave a TypeError deep in JAX)."""
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if not 1 <= n <= 10**9:
        raise argparse.ArgumentTypeError(f"{n} is out of range (1 .. 1,000,000,000)")
    return n


def main(argv: list[str] | None = None) -> int:
    parser = OneLineParser(prog="jaxci profile",
                                     description="Run a pathological kernel under jax.profiler and read the trace "
                                                 "without TensorBoard.")
    parser.add_argument("kernel", choices=KERNELS)
    parser.add_argument("--device", choices=("cpu", "gpu", "tpu"), default="cpu")
    parser.add_argument("--dtype", choices=("float32", "float64"), default=None,
                        help="default: float64 for kalman-grad and nuts (the incident), float32 for scan")
    parser.add_argument("--n", type=_steps, default=None,
                        help="scan steps / Kalman periods / NUTS warm-up and sample count")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    parser.add_argument("--trace-out", type=Path, help="keep the trace (.xplane.pb) here when it is small enough")
    parser.add_argument("--trace-max-bytes", type=_steps, default=4 * 2**20,
                        help="largest trace kept with --trace-out (default 4 MiB)")
    args = parser.parse_args(argv)
    dtype = args.dtype or ("float32" if args.kernel == "scan" else "float64")
    from jaxci.accel import missing_reason

    missing = missing_reason(args.device)
    if missing:
        return refuse("jaxci profile", f"--device {args.device}: {missing.split(':')[0]}")
    from jaxci.util import safewrite

    try:
        if args.trace_out is not None and args.trace_out.parent.is_dir():  # before the kernel is traced
            safewrite.check_target(args.trace_out, option="--trace-out")
        summary = profile(args.kernel, args.device, dtype, args.n, args.trace_out, args.trace_max_bytes)
    except (ProfileError, safewrite.UnsafeFile) as exc:
        return refuse("jaxci profile", exc)
    print(json.dumps(summary, indent=2, default=float) if args.json else render(summary))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
