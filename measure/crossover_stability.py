"""How far the predicted CPU/GPU crossovers move when the CPU machines in the results change (issue 26 goal).

    .venv/bin/python measure/crossover_stability.py [RESULTS_DIR] [--families g4dn.2xlarge,g5.2xlarge,g6.2xlarge]

Builds results sets from RESULTS_DIR (default results/): every machine as committed, then each GPU machine with
one CPU-only machine at a time (e.g. lab-h200 + ref-epyc-2c-ci, lab-h200 + lab-epyc-2c), copied into a temp
directory, and prints each family's predicted crossover n per kernel and dtype on each set, with the largest
over smallest. The GPU machine's own host CPU is in every set: it calibrates CPU terms too.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
FAMILIES = ("g4dn.2xlarge", "g5.2xlarge", "g6.2xlarge")


def subsets(results: Path) -> dict[str, list[str]]:
    """Name -> machine directories: all, and each GPU machine with one CPU-only machine."""
    from jaxci.results.records import load_results

    rs = load_results(results)
    gpu = sorted(m for m, f in rs.machines.items() if f.has_gpu)
    cpu = sorted(m for m, f in rs.machines.items() if not f.has_gpu)
    out = {"all: " + " + ".join(sorted(rs.machines)): sorted(rs.machines)}
    for c in cpu:
        out[" + ".join(gpu + [c])] = gpu + [c]
    return out


def crossovers(results: Path, machines: list[str], families) -> dict:
    from jaxci.analysis.predict import predictions
    from jaxci.catalogue import load_catalogue
    from jaxci.results.records import load_results

    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp) / "results"
        d.mkdir()
        shutil.copy(results / "benchmarks.json", d / "benchmarks.json")
        for m in machines:
            shutil.copytree(results / m, d / m)
        rs = load_results(d)
        _, cross = predictions(rs.latest(), rs.machines, load_catalogue(include_lab=True))
    return {(c.family, c.kernel, c.dtype): c for c in cross if c.family in families}


def _n(c) -> str:
    if c is None or c.n is None:
        return "none" if c is not None else "—"
    lo = f"{c.low:.0f}" if c.low is not None else "none"
    hi = f"{c.high:.0f}" if c.high is not None else "none"
    return f"{c.n:.0f} ({lo}-{hi})"


def _ends(cs) -> str:
    """CPU over GPU time at the largest common size, per set: near 1 the two lines run parallel there (both
    compute-bound), so a small change of either rate moves the crossing far or removes it (ill-conditioned)."""
    out = []
    for c in cs:
        pts = [p for p in (c.points if c is not None else []) if p[1] and p[2]]
        out.append(f"{pts[-1][1] / pts[-1][2]:.2f} (n={pts[-1][0]:,})" if pts else "—")
    return ", ".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results_dir", nargs="?", default=str(ROOT / "results"))
    ap.add_argument("--families", default=",".join(FAMILIES))
    args = ap.parse_args(argv)
    results, families = Path(args.results_dir), args.families.split(",")
    sets = subsets(results)
    got = {name: crossovers(results, ms, families) for name, ms in sets.items()}
    keys = sorted({k for g in got.values() for k in g})
    names = list(sets)
    print("| family | kernel | dtype | " + " | ".join(names) + " | max / min | cpu / gpu at the largest n |")
    print("|---|---|---|" + "---|" * len(names) + "---|---|")
    worst = []
    for k in keys:
        cs = [got[name].get(k) for name in names]
        ns = [c.n for c in cs if c is not None and c.n]
        spread = max(ns) / min(ns) if len(ns) > 1 else None
        if spread:
            worst.append((spread, k))
        tail = (f" | {spread:.2f} |" if spread else " | — |") + f" {_ends(cs)} |"
        print(f"| {k[0]} | {k[1]} | {k[2]} | " + " | ".join(_n(c) for c in cs) + tail)
    if worst:
        s, k = max(worst)
        print(f"\nlargest move: {s:.2f}x ({k[0]} {k[1]} {k[2]}); {sum(w <= 1.5 for w, _ in worst)} of {len(worst)} "
              "crossovers within 1.5x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
