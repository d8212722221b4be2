"""Synthetic asv result sets written through asv's own Results API, whose truth is known by construction."""

from __future__ import annotations

import itertools
import math
import subprocess
from pathlib import Path

from tests.asvutil import REPO


def head() -> str:
    return subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True,
                          check=True).stdout.strip()


class SynthResults:
    """Add benchmarks per machine with a value function; `save()` writes machine.json, results and benchmarks.json."""

    def __init__(self, root: Path, commit: str | None = None, date_ms: int = 1_795_000_000_000):
        self.results = Path(root) / "results"
        self.commit = commit or head()
        self.date_ms = date_ms
        self.meta: dict = {}
        self.machines: dict = {}
        self.runs: dict = {}

    def machine(self, name, gpu="no GPU", backend="cpu", kind="catalogue", cores="4"):
        self.machines[name] = {"machine": name, "arch": "x86_64", "cpu": "synthetic", "num_cpu": cores, "os": "Linux",
                               "ram": "1", "gpu": gpu, "jaxci_backend": backend, "jaxci_kind": kind, "cpu_cores": cores}
        from asv.results import Results

        self.runs[name] = Results(self.machines[name], {}, self.commit, self.date_ms, "3.11", "virtualenv-py3.11", {})
        return self

    def add(self, machine, name, param_names, params, value, unit="seconds", duration=1.0, version="1"):
        """value(**combo) -> float, None (failed) or math.nan (skipped); `version`: asv's benchmark version (a
        committed benchmarks.json's, to sit beside its results)."""
        from asv.runner import BenchmarkResult

        reprs = [[repr(v) for v in axis] for axis in params]
        self.meta[name] = {"name": name, "param_names": param_names, "params": reprs, "unit": unit, "version": version,
                           "type": "time" if unit == "seconds" else "track"}
        combos = list(itertools.product(*params))
        values = [value(**dict(zip(param_names, c))) for c in combos]
        k = len(values)
        result = BenchmarkResult(result=values, samples=[None] * k, number=[None] * k, errcode=0, stderr="",
                                 profile=None)
        self.runs[machine].add_result({"name": name, "version": version, "params": reprs}, result, duration=duration)
        return self

    def record_scale(self, machine, scale, suites=None):
        """Each suite's `track_scale` run fact (benchmarks/common.py: 1 = full, 0 = ci), as a real run writes it."""
        for suite in suites or sorted({n.split(".")[0] for n in self.meta}):
            self.add(machine, f"{suite}.track_scale", [], [], lambda: float(scale == "full"),
                     unit="scale (0 = ci, 1 = full)", duration=0.0)
        return self

    def save(self) -> Path:
        from asv import util

        self.results.mkdir(parents=True, exist_ok=True)
        for name, info in self.machines.items():
            (self.results / name).mkdir(exist_ok=True)
            util.write_json(str(self.results / name / "machine.json"), info, api_version=1)
            self.runs[name].save(str(self.results))
        util.write_json(str(self.results / "benchmarks.json"), self.meta, api_version=2)
        return self.results


# Known truth: cpu = 1e-10 n^3 and gpu = 1e-5 n^1.5 are straight lines on a log-log plot, so the log-scale
# interpolation is exact: they cross at n = 1e5^(2/3).
CROSS_N = 1e5 ** (2 / 3)
SIZES = [64, 256, 1024, 2048, 4096]
GPU_FP64_RATIO = 32.0
CPU_FP64_RATIO = 2.0


def dense_truth(op, n, dtype, device):
    base = 1e-10 * n**3 if device == "cpu" else 1e-5 * n**1.5
    return base * ((CPU_FP64_RATIO if device == "cpu" else GPU_FP64_RATIO) if dtype == "float64" else 1.0)


def gpu_set(root: Path, commit: str | None = None) -> Path:
    """A T4 family with crossing cpu/gpu lines and a known FP64 ratio, a CPU-only family, and side suites."""
    s = SynthResults(root, commit)
    s.machine("g4dn.2xlarge", gpu="1 x Tesla T4", backend="cuda13", cores="4")
    s.machine("c7i.2xlarge", cores="4")
    dense = (["op", "n", "dtype", "device"], [["matmul"], SIZES, ["float32", "float64"], ["cpu", "gpu"]])
    s.add("g4dn.2xlarge", "dense.Dense.time_warm", *dense, dense_truth)
    s.add("g4dn.2xlarge", "dispatch.TinyOp.time_warm", ["dtype", "device"], [["float32", "float64"], ["cpu", "gpu"]],
          lambda dtype, device: 1e-5)
    # the CPU-only runner: twice as slow as the T4 runner's CPU, gpu skipped (n/a)
    s.add("c7i.2xlarge", "dense.Dense.time_warm", *dense,
          lambda op, n, dtype, device: 2 * dense_truth(op, n, dtype, device) if device == "cpu" else math.nan)
    s.add("g4dn.2xlarge", "concurrency.Concurrency.track_workers_died", ["n_workers", "policy", "device"],
          [[1, 2, 4], ["default", "no-prealloc"], ["gpu"]],
          lambda n_workers, policy, device: (0.0 if (policy == "no-prealloc" or n_workers == 1)
                                             else float(n_workers - 1)),
          unit="workers")
    s.add("g4dn.2xlarge", "nuts.Nuts.track_ess_per_s", ["model", "chain_method", "num_chains", "dtype", "device"],
          [["kalman"], ["sequential", "vectorized"], [1, 4], ["float64"], ["cpu", "gpu"]],
          lambda model, chain_method, num_chains, dtype, device:
          (100.0 if chain_method == "vectorized" else 50.0) * num_chains if device == "cpu" else None, unit="ESS/s")
    # a whole notebook 5x slower on the T4 than on its CPU: guidance must say to pin it
    s.add("g4dn.2xlarge", "notebooks.Notebook.time_notebook", ["notebook", "device"],
          [["scan_lecture"], ["cpu", "gpu"]],
          lambda notebook, device: 12.0 if device == "cpu" else 60.0)
    return s.save()
