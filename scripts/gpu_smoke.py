"""GPU smoke run: every suite's gpu combinations at CI scale, in one call, on a machine with an NVIDIA GPU.

usage: python3 scripts/gpu_smoke.py OUT_DIR [--machine NAME] [--bench REGEX]

Uses the JAX already installed (such machines may have no network) and asv (install it, or carry its
wheels). Fails loudly when the CUDA backend does not start. Writes OUT_DIR/results (asv results),
OUT_DIR/asv-run.log and OUT_DIR/summary.txt (what ran, what failed, the gpu medians).
"""

from __future__ import annotations

import argparse
import math
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from jaxci.machines.asvconf import write_redirected_conf  # noqa: E402
from jaxci.util.validate import InputError, bounded_regex  # noqa: E402


def check_cuda() -> str:
    """Start JAX with JAX_PLATFORMS=cuda in a child: a broken GPU backend raises there, loudly."""
    code = "import jax; d = jax.devices('cuda'); print(jax.__version__, d[0].device_kind, len(d))"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=dict(os.environ, JAX_PLATFORMS="cuda"))
    if proc.returncode:
        raise SystemExit(f"gpu_smoke: the CUDA backend did not start (JAX_PLATFORMS=cuda):\n{proc.stderr[-3000:]}")
    return proc.stdout.strip()


def summarise(results_dir: Path, machine: str) -> list[str]:
    from jaxci.results.asvfiles import combinations, machine_files

    lines, counts = [], {"ok": 0, "skipped": 0, "failed": 0}
    for results in machine_files(results_dir, machine):
        for key, combo, value in sorted(combinations(results), key=lambda kcv: kcv[0]):
            if "'gpu'" not in combo:  # cpu combinations and param-less run facts (track_scale)
                continue
            if value is None:
                counts["failed"] += 1
                lines.append(f"FAILED  {key}{combo}")
            elif isinstance(value, float) and math.isnan(value):
                counts["skipped"] += 1
            else:
                counts["ok"] += 1
                lines.append(f"ok      {key}{combo} = {value:.6g}")
    return [f"gpu combinations: {counts['ok']} ok, {counts['failed']} failed, {counts['skipped']} n/a"] + lines


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--machine", default="gpu-smoke")
    parser.add_argument("--bench", default=r"^(?!host\.)",
                        help="asv --bench regex (default: every suite with a device param, i.e. all but host)")
    args = parser.parse_args(argv)
    try:  # bounded like every user regex, before CUDA is probed or asv started
        bounded_regex("--bench", args.bench, "benchmark")
    except InputError as exc:
        print(f"gpu_smoke: {exc}", file=sys.stderr)
        return 2
    start = time.time()
    backend = check_cuda()
    conf = write_redirected_conf(args.out)
    os.environ["HOME"] = str(args.out)  # asv's machine file goes there, not into the user's home
    from jaxci.machines.register import register

    local = args.machine == "gpu-smoke"
    info = register(args.machine, local=local, machine_file=str(args.out / ".asv-machine.json"))
    env = dict(os.environ, JAXCI_SCALE="ci", JAXCI_ONLY_DEVICE="gpu")
    # asv drops PYTHONPATH from benchmark processes unless ASV_PYTHONPATH names it: where jaxci is not
    # installed (a machine that only has JAX), the benchmarks find it in this checkout
    env["ASV_PYTHONPATH"] = env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    from jaxci.util.git import head

    commit = head(REPO) or ""
    cmd = [sys.executable, "-m", "asv", "--config", str(conf), "run", "-E", f"existing:{sys.executable}",
           "--set-commit-hash", commit, "--quick", "--machine", args.machine, "--show-stderr"]
    cmd += ["--bench", args.bench]
    with open(args.out / "asv-run.log", "w") as log:
        status = subprocess.run(cmd, cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT).returncode
    lines = [f"jax / device: {backend}", f"machine: {info['gpu']}, driver {info.get('gpu_driver')}",
             f"asv exit status: {status}", f"wall: {time.time() - start:.0f} s"]
    lines += summarise(args.out / "results", args.machine)
    (args.out / "summary.txt").write_text("\n".join(lines) + "\n")
    print("\n".join(lines[:6]))
    return status


if __name__ == "__main__":
    raise SystemExit(main())
