"""Seconds a persistent compilation cache saves per lecture: cold cache vs warm, with the thresholds the jax-env
action sets and with JAX's defaults.

usage: .venv/bin/python measure/cache_saving.py [LECTURE ...] [--repeat 3] [--platform cpu] [--timeout 600]

Each lecture (default: tests/fixtures/lectures/cache/*.md, small realistic lectures written for this) is
executed through nbclient (jaxci.audit.runner.run_notebook, a fresh kernel each time) twice per setting, with
JAX_COMPILATION_CACHE_DIR set to a fresh temporary folder: the first run fills it (cold), the second reads it
(warm); the pair is repeated --repeat times, each with a new folder. Settings:

  thresholds  JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS=0, JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES=-1
              (what `jaxci env` and the jax-env action export, and what the compile suite measured)
  defaults    JAX's own thresholds (only compiles over 1 s are written: most lecture compiles are not)

Printed: one markdown row per lecture and setting with the sum of cell seconds cold / warm / saved (median over
the repeats, with the range of the saving), the whole run (kernel start to shutdown) cold / warm, and the cache
entries the cold run wrote. The first cell's JAX import is in every run; a saving inside the range's spread is
noise on a shared machine.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

LECTURES = REPO / "tests" / "fixtures" / "lectures" / "cache"
SETTINGS = {
    "thresholds": {"JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "0",
                   "JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES": "-1"},
    "defaults": {},
}
THRESHOLD_VARS = ("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", "JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES",
                  "JAX_COMPILATION_CACHE_DIR")


def run_twice(lecture: Path, extra: dict, platform: str, timeout: float) -> dict:
    """Cold then warm run of one lecture with a fresh cache folder; the folder is removed afterwards."""
    from jaxci.audit.runner import run_notebook

    cache = Path(tempfile.mkdtemp(prefix="jaxci-cache-saving-"))
    try:
        env = {**extra, "JAX_COMPILATION_CACHE_DIR": str(cache)}
        out = {}
        for label in ("cold", "warm"):
            run = run_notebook(lecture, timeout=timeout, platform=platform, env=env, instrument=False)
            if not run.ok:
                raise SystemExit(f"{lecture.name} ({label}): {run.status}: {run.error}")
            out[label] = (run.cells_s, run.wall_s)
            if label == "cold":
                out["entries"] = sum(1 for p in cache.rglob("*") if p.is_file())
        return out
    finally:
        shutil.rmtree(cache, ignore_errors=True)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("lectures", nargs="*", type=Path, help="MyST or .ipynb lectures (default: the cache fixtures)")
    p.add_argument("--platform", default="cpu", help="JAX_PLATFORMS for the kernels (default cpu)")
    p.add_argument("--repeat", type=int, default=3, help="cold/warm pairs per lecture and setting (default 3)")
    p.add_argument("--timeout", type=float, default=600, help="per-cell timeout, seconds (default 600)")
    args = p.parse_args(argv)
    for name in THRESHOLD_VARS:  # the settings say what is set; nothing inherited from this shell
        os.environ.pop(name, None)
    lectures = args.lectures or sorted(LECTURES.glob("*.md"))
    lectures = [p for p in lectures if p.name != "README.md"]
    with open("/proc/loadavg") as f:
        load = f.read().split()[:3]
    print(f"load average before: {' '.join(load)}; platform {args.platform}; medians of {args.repeat} cold/warm "
          "pairs\n")
    print("| lecture | setting | cells cold | cells warm | saved (range) | whole run cold | whole run warm | "
          "cache entries |")
    print("|---|---|---|---|---|---|---|---|")
    for lecture in lectures:
        for setting, extra in SETTINGS.items():
            pairs = [run_twice(lecture, extra, args.platform, args.timeout) for _ in range(args.repeat)]
            med = lambda key, i, pairs=pairs: statistics.median(p[key][i] for p in pairs)
            saved = [p["cold"][0] - p["warm"][0] for p in pairs]
            print(f"| {lecture.stem} | {setting} | {med('cold', 0):.2f} s | {med('warm', 0):.2f} s | "
                  f"{statistics.median(saved):.2f} s ({min(saved):.2f} .. {max(saved):.2f}) | {med('cold', 1):.2f} s | "
                  f"{med('warm', 1):.2f} s | {max(p['entries'] for p in pairs)} |", flush=True)
    with open("/proc/loadavg") as f:
        print(f"\nload average after: {' '.join(f.read().split()[:3])}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
