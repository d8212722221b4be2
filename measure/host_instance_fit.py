"""Instance fit of a whole lecture build, from an asv results directory: the host suite's single-thread vs
all-CPUs view, then the build-time and cost estimate for a repository on every catalogue family.

    python measure/host_instance_fit.py RESULTS_DIR [BASELINE_MACHINE] [REPOSITORY.json|.toml]

Results are read through asv's own API (jaxci.results.records.load_results, which uses asv.results.Results).
Without a repository file the repository is synthetic, and says so: 100 lectures taking 60 s each on the
baseline machine, with an assumed split of time (about a quarter of lectures import JAX in the largest
series surveyed, incidents.md; the split itself is an assumption, not a measurement). The baseline is the
named machine, else the only machine in the results.
"""

from __future__ import annotations

import sys
from pathlib import Path

SYNTHETIC = {
    "name": "a synthetic 100-lecture repository",
    "lectures": 100,
    "build_seconds": 100 * 60,
    "shares": {"python": 0.25, "numpy": 0.30, "numba": 0.15, "jax_cpu": 0.10, "jax_gpu": 0.15},
    "source": "stated assumption (synthetic): 60 s per lecture on the baseline; python 25%, numpy 30%, "
              "numba 15%, JAX on CPU 10%, JAX placed on a GPU 15%, other 5%",
}


def main(argv: list[str]) -> int:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from jaxci.analysis import buildtime as bt
    from jaxci.catalogue import catalogue_defaults, load_catalogue
    from jaxci.results.records import ResultsError, load_results

    if not 1 <= len(argv) <= 3:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        results = load_results(argv[0])
    except ResultsError as exc:
        print(f"host_instance_fit: {exc}", file=sys.stderr)
        return 2
    for error in results.errors:
        print(f"warning: {error}", file=sys.stderr)
    records = results.latest()
    machines = sorted(results.machines)
    baseline = argv[1] if len(argv) > 1 else (machines[0] if len(machines) == 1 else None)
    if baseline is None:
        print(f"host_instance_fit: name the baseline machine; the results hold {', '.join(machines) or 'none'}",
              file=sys.stderr)
        return 2
    try:
        repo = bt.load_repository(argv[2]) if len(argv) > 2 else \
            bt.repository_from_dict(dict(SYNTHETIC, baseline=baseline), "synthetic")
    except bt.BuildInputError as exc:
        print(f"host_instance_fit: {exc}", file=sys.stderr)
        return 2

    print("## Single thread vs all CPUs (host suite, warm times)\n")
    print("| machine | kernel | params | threads | 1 thread | all | speedup |")
    print("|---|---|---|---|---|---|---|")
    for row in bt.thread_speedups(records):
        params = " ".join(f"{k}={v}" for k, v in row["params"].items())
        print(f"| {row['machine']} | {row['benchmark']} | {params} | {row['threads'] or '?'} | "
              f"{row['one_s'] * 1e3:.2f} ms | {row['all_s'] * 1e3:.2f} ms | {row['speedup']:.2f} |")
    gpus = {name: facts.has_gpu for name, facts in results.machines.items()}
    estimates = bt.estimate_build(repo, records, load_catalogue(), catalogue_defaults(), gpu_machines=gpus)
    print("\n## Whole-build estimate\n")
    print(bt.render_markdown(estimates, repo))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
