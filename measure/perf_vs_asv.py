"""Does the asv suite measure the hardware? Time kernels with a plain loop and compare with asv's medians.

usage: .venv/bin/python measure/perf_vs_asv.py [--out DIR]

For each case: a fresh interpreter runs the suite's own setup (same inputs, same placement, compiled
outside the timing) and times `fn(*args)` + block_until_ready with time.perf_counter, median of 15 after
3 warm-ups. Then stock asv runs the same benchmarks (-E existing, full scale, default sampling) into a
temporary results directory, and both medians print side by side. For dense matmul at n=2048 it also
prints achieved GFLOP/s against this CPU's peak (cores x clock x FLOP/cycle, given on the command line).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

CASES = [  # (benchmark key, params)
    ("dense.Dense.time_warm", ("matmul", 2048, "float32", "cpu")),
    ("dense.Dense.time_warm", ("matmul", 2048, "float64", "cpu")),
    ("dense.Dense.time_warm", ("solve", 1024, "float64", "cpu")),
    ("elementwise.Elementwise.time_warm", (1_000_000, "float64", "cpu")),
    ("elementwise.Elementwise.time_warm", (10_000_000, "float32", "cpu")),
    ("loops.Scan.time_warm", (100_000, 1, "float64", "cpu")),
    ("loops.WhileConverge.time_warm", ("float64", "cpu")),
    ("dispatch.TinyOp.time_warm", ("float32", "cpu")),
]

PLAIN = """
import json, statistics, sys, time, importlib
sys.path.insert(0, {repo!r})
module, cls = {module!r}, {cls!r}
bench = getattr(importlib.import_module("benchmarks." + module), cls)()
bench.setup(*{params!r})
for _ in range(3):
    bench.jax.block_until_ready(bench.fn(*bench.args))
times = []
for _ in range(15):
    t0 = time.perf_counter()
    bench.jax.block_until_ready(bench.fn(*bench.args))
    times.append(time.perf_counter() - t0)
print(json.dumps(statistics.median(times)))
"""


def plain_median(key: str, params: tuple) -> float:
    module, cls, _ = key.split(".")
    code = PLAIN.format(repo=str(REPO), module=module, cls=cls, params=params)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env=dict(os.environ, JAXCI_SCALE="full"))
    return json.loads(out.stdout.strip().splitlines()[-1])


def asv_medians(out: Path) -> dict:
    from asv.results import iter_results_for_machine

    from jaxci.machines.asvconf import write_redirected_conf
    from jaxci.machines.register import register
    from jaxci.util.git import head

    conf = write_redirected_conf(out)
    register("perf-check", local=True, machine_file=str(out / ".asv-machine.json"))
    # asv matches --bench against "name(param, ...)": select exactly these combinations
    selection = [arg for k, p in CASES for arg in ("--bench", "^" + re.escape(f"{k}({', '.join(map(repr, p))})") + "$")]
    commit = head(REPO) or ""
    env = dict(os.environ, HOME=str(out), JAXCI_SCALE="full")
    wanted = {k for k, _ in CASES}
    subprocess.run([sys.executable, "-m", "asv", "--config", str(conf), "run", "-E", f"existing:{sys.executable}",
                    "--set-commit-hash", commit, "--machine", "perf-check", *selection],
                   cwd=REPO, env=env, check=False, capture_output=True)
    medians = {}
    for results in iter_results_for_machine(str(out / "results"), "perf-check"):
        for key in wanted & set(results.get_all_result_keys()):
            params = results.get_result_params(key)
            for combo, value in zip(itertools.product(*params), results.get_result_value(key, params)):
                medians[(key, combo)] = value
    return medians


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--ghz", type=float, default=2.3)
    parser.add_argument("--fp32-per-cycle", type=int, default=64, help="per core (AVX-512, 2 FMA units)")
    args = parser.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="perf-vs-asv-"))
    plain = {(k, p): plain_median(k, p) for k, p in CASES}
    asv = asv_medians(out)
    print(f"{'benchmark':40s} {'params':38s} {'plain s':>11s} {'asv s':>11s} {'asv/plain':>9s}")
    for key, params in CASES:
        a = asv.get((key, tuple(repr(p) for p in params)))
        p = plain[(key, params)]
        ratio = f"{a / p:9.3f}" if a else "      n/a"
        print(f"{key:40s} {str(params):38s} {p:11.4g} {a if a else float('nan'):11.4g} {ratio}")
    peak32 = args.cores * args.ghz * args.fp32_per_cycle
    for dtype, peak in (("float32", peak32), ("float64", peak32 / 2)):
        a = asv.get(("dense.Dense.time_warm", ("'matmul'", "2048", f"'{dtype}'", "'cpu'")))
        if a:
            gflops = 2 * 2048**3 / a / 1e9
            print(f"matmul n=2048 {dtype}: {gflops:.0f} GFLOP/s (asv median) = {gflops / peak:.0%} of peak "
                  f"{peak:.0f} GFLOP/s ({args.cores} cores x {args.ghz} GHz x "
                  f"{args.fp32_per_cycle if dtype == 'float32' else args.fp32_per_cycle // 2} FLOP/cycle)")
    print(f"asv results: {out / 'results'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
