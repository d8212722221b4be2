"""The capture's profile step: `jaxci profile` of the pathological kernels on each device of this machine, each
in a fresh interpreter (JAX starts on one platform per process), its summary written as JSON (and the trace
kept where it is small) into the capture's artifacts, which travel back in logs.tar.gz and into summary.md.

usage: python -m jaxci.capture.profiles KERNEL:DTYPE ...     (e.g. scan:float32 kalman-grad:float64)
It answers the lecture maintainers' question of their Nsight trace (is a scan step's ~8 us launch overhead,
synchronisation or device work?) with device-busy time, device ops per step and the gap fraction.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

TRACE_KEEP_BYTES = 4 * 2**20    # a trace at most this big is kept (a capture returns at most 8 files < 16 MiB)
TIMEOUT_S = 240


def out_dir() -> Path:
    return Path(os.environ.get("JAXCI_ARTIFACTS", "artifacts")) / "profiles"


def _devices() -> list[str]:
    """cpu, and this machine's accelerator device param (gpu, tpu: jaxci.accel) where it has one."""
    from jaxci.accel import accelerator_device

    device = accelerator_device()
    return ["cpu", device] if device else ["cpu"]


def profile_one(kernel: str, dtype: str, device: str, folder: Path) -> dict:
    """`python -m jaxci profile KERNEL --device D --dtype T --json --trace-out F` in a fresh interpreter."""
    trace = folder / f"{kernel}-{dtype}-{device}.xplane.pb"
    cmd = [sys.executable, "-m", "jaxci", "profile", kernel, "--device", device, "--dtype", dtype, "--json",
           "--trace-out", str(trace), "--trace-max-bytes", str(TRACE_KEEP_BYTES)]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return {"kernel": kernel, "dtype": dtype, "device": device, "status": f"timed out after {TIMEOUT_S} s"}
    if proc.returncode:
        tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        return {"kernel": kernel, "dtype": dtype, "device": device, "status": f"exit {proc.returncode}: {tail}"}
    summary = json.loads(proc.stdout)
    summary["status"] = "ok"
    return summary


def main(argv: list[str] | None = None) -> int:
    cases = sys.argv[1:] if argv is None else argv
    folder = out_dir()
    folder.mkdir(parents=True, exist_ok=True)
    devices = _devices()
    failed = 0
    for case in cases:
        kernel, _, dtype = case.partition(":")
        for device in devices:
            summary = profile_one(kernel, dtype or "float32", device, folder)
            failed += summary["status"] != "ok"
            (folder / f"{kernel}-{dtype}-{device}.json").write_text(json.dumps(summary, indent=1, default=float))
            busy = summary.get("device_busy_s")
            print(f"profile {kernel} {dtype} {device}: {summary['status']}"
                  + (f"; device busy {busy:.6f} s of {summary['wall_s']:.6f} s wall, "
                     f"{summary.get('device_ops_per_iteration')} device ops per step" if busy is not None else ""),
                  flush=True)
    if len(devices) == 1:
        print("profile: no accelerator here: gpu profiles not run, nor tpu (n/a)", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
