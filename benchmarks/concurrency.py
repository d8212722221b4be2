"""concurrency: N lecture-like kernels at once on one device, under each XLA memory policy of env_matrix/.

Incident 3 (three JAX kernels on one T4, the first preallocating 75%, a later one aborting with no Python
traceback) is the question: how many kernels can share a device, under which policy. Each run starts N
workers together (jaxci.harness: spawned interpreters, the policy's variables set before JAX starts),
each growing device memory in steps to a peak while computing. Tracked per (n, policy, device):
  track_workers_died     workers that did not end "ok" (abort, kill, timeout, exception)
  track_slowdown         wall time of the slowest surviving worker / wall time of a lone worker measured
                         in the same process just before (so n=1 shows the run-to-run noise)
  track_peak_memory_mib  the largest per-worker peak_bytes_in_use (memory_stats) where the backend reports
                         it; on the CPU backend, which reports none, the largest worker peak resident set
Every run is measured once, in asv's setup_cache (one process per class, shared by all three tracks),
and written in full (per-worker records, NVML memory timeline) to $JAXCI_ARTIFACTS/concurrency.json,
default .jaxci/concurrency/ in this checkout. Memory policies do nothing on the CPU backend, so on cpu only
"default" runs (the others are n/a); gpu and tpu combinations are n/a on a machine without that accelerator
(jaxci.accel). On a TPU one process holds the chip: N > 1 counts N-1 deaths under every policy, rightly.
"""

import json
import math
import os
import platform
import time
from pathlib import Path

from benchmarks.common import DEVICES, REPO_ROOT, platform_for, scale
from benchmarks.common import track_scale  # noqa: F401  (a run fact: the scale this suite ran at)

N_WORKERS = [1, 2, 3, 4]
POLICIES = ["default", "no-prealloc", "fraction", "platform"]
WORKER_TIMEOUT_S = {"ci": 120, "full": 900}
NVML_INTERVAL_S = 0.5
WORKLOAD = "jaxci.workloads:lecture_like"


def skip_reason(policy, device):
    """Why a (policy, device) combination cannot run here, or None. Decided without importing JAX."""
    if device == "cpu" and policy != "default":
        return "memory policies do nothing on the CPU backend: only 'default' runs on cpu"
    chosen = os.environ.get("JAXCI_POLICIES")  # a short capture picks policies (scripts/gpu_capture.py)
    if chosen and policy not in chosen.split(","):
        return f"JAXCI_POLICIES={chosen}: policy {policy!r} not selected"
    from jaxci.accel import missing_reason

    return missing_reason(device)


def artifacts_dir():
    return Path(os.environ.get("JAXCI_ARTIFACTS") or REPO_ROOT / ".jaxci") / "concurrency"


def _measure(policy, device, policies, budget):
    from jaxci.harness import WorkerSpec, run_workers
    from jaxci.workloads import SCALES

    peak_mib, steps, matmul_n, reps = SCALES[scale()]
    kwargs = dict(peak_mib=peak_mib, steps=steps, matmul_n=matmul_n, reps=reps, platform=platform_for(device))
    policy_vars = tuple(sorted({k for p in policies.values() for k in p.env} | {"JAX_PLATFORMS"}))

    def run(n):
        env = {"JAX_PLATFORMS": platform_for(device), **policies[policy].environment(n, budget)}
        specs = [WorkerSpec(WORKLOAD, kwargs, env, policy_vars, WORKER_TIMEOUT_S[scale()], f"{policy}-{device}-{i}")
                 for i in range(n)]
        return run_workers(specs, nvml_interval_s=NVML_INTERVAL_S).as_dict()

    runs = {"baseline": run(1)}
    for n in N_WORKERS:
        if n <= int(os.environ.get("JAXCI_MAX_WORKERS") or max(N_WORKERS)):  # a short capture stops early
            runs[n] = run(n)
    return {"workload": kwargs, "runs": runs}


def _write_artifacts(measured, budget, started):
    from importlib.metadata import PackageNotFoundError, version

    from jaxci.nvml import gpus

    try:
        jax_version = version("jax")
    except PackageNotFoundError:
        jax_version = None
    doc = {"scale": scale(), "budget": budget, "jax": jax_version, "host": platform.node(),
           "gpus": [g.as_dict() for g in gpus()], "started": started, "finished": time.time(),
           "combinations": [{"policy": p, "device": d, **m} for (p, d), m in measured.items()]}
    out = artifacts_dir()
    out.mkdir(parents=True, exist_ok=True)
    tmp = out / "concurrency.json.tmp"
    tmp.write_text(json.dumps(doc, indent=1, default=str))
    tmp.replace(out / "concurrency.json")


class Concurrency:
    params = [N_WORKERS, POLICIES, DEVICES]
    param_names = ["n_workers", "policy", "device"]
    timeout = 3600  # setup_cache runs every combination this machine can run, with per-worker timeouts

    def setup_cache(self):
        try:
            from jaxci.catalogue import load_policies
            import jaxci.harness  # noqa: F401  (absent from commits before the harness existed)
        except ImportError as exc:
            return {"unavailable": f"this commit's jaxci cannot run the harness: {exc}"}
        started = time.time()
        policies, budget = load_policies(REPO_ROOT / "env_matrix")
        measured = {}
        for device in DEVICES:
            for policy in POLICIES:
                if skip_reason(policy, device) is None:
                    measured[(policy, device)] = _measure(policy, device, policies, budget)
        _write_artifacts(measured, budget, started)
        return measured

    def setup(self, measured, n_workers, policy, device):
        reason = measured.get("unavailable") or skip_reason(policy, device)
        if reason:
            raise NotImplementedError(reason)
        combo = measured[(policy, device)]["runs"]
        if n_workers not in combo:
            raise NotImplementedError(f"JAXCI_MAX_WORKERS={os.environ.get('JAXCI_MAX_WORKERS')}: n={n_workers} not run")
        self.run, self.baseline = combo[n_workers], combo["baseline"]

    def track_workers_died(self, measured, n_workers, policy, device):
        return self.run["died"]

    def track_slowdown(self, measured, n_workers, policy, device):
        (lone,) = self.baseline["workers"]
        walls = [w["wall_s"] for w in self.run["workers"] if w["cause"] == "ok"]
        if lone["cause"] != "ok" or not walls:
            return math.nan  # nothing survived to compare: asv shows n/a, the deaths track says why
        return max(walls) / lone["wall_s"]

    def track_peak_memory_mib(self, measured, n_workers, policy, device):
        workers = self.run["workers"]
        device_peaks = [w["peak_device_mib"] for w in workers if w["peak_device_mib"] is not None]
        if device_peaks:
            return max(device_peaks)
        host_peaks = [w["peak_rss_mib"] for w in workers if w["peak_rss_mib"] is not None]
        return max(host_peaks) if device == "cpu" and host_peaks else math.nan

    track_workers_died.unit = "workers"
    track_slowdown.unit = "ratio"
    track_peak_memory_mib.unit = "MiB"
