"""nuts: numpyro NUTS on the incident's 11-dimensional state-space model (96 periods, Kalman likelihood,
dense mass matrix, max tree depth 8) and on a tiny regression, over chain_method x num_chains.

Three tracks come from ONE sampler run per combination: asv starts a process per method, so the first
process of a combination runs NUTS and writes its numbers into the per-run scratch directory that asv
creates for this class's `setup_cache` (and deletes after the run); the other methods read them. A
process that finds a started-but-unfinished run (an earlier method timed out) fails instead of rerunning.

Wall seconds are warmup plus sampling, tracing and compiling included, as a notebook cell pays them.
Leapfrog steps per second count warmup and sampling steps over the seconds the sampler executed (wall
minus compile seconds). A run whose draws are not finite fails the cell (never n/a); a stuck parameter
gives ESS 0.

`draws` (warmup = samples = draws) is a param, so the two workloads are two series in asv's history:
200 is the large case (skipped at CI scale); 20 runs only the two CI picks (the regression in float64,
sequential x 1 chain and vectorized x 4) at either scale, so CI and full runs share those series.
"""

import json
import os
from pathlib import Path

from benchmarks.common import DEVICES, DTYPES, scale, skip_unless_runnable, start_jax
from benchmarks.common import track_scale  # noqa: F401  (a run fact: the scale this suite ran at)

MODELS = ["statespace", "regression"]
CHAIN_METHODS = ["sequential", "vectorized", "parallel"]
CHAINS = [1, 4]
DRAWS = [20, 200]  # num_warmup = num_samples = draws; the incident used 400 + 400
LARGE_DRAWS = 200


CI_RUNS = {("regression", "sequential", 1, "float64"), ("regression", "vectorized", 4, "float64")}  # any device


def skip_reason(model, chain_method, num_chains, draws, dtype) -> str | None:
    """Why this combination does not run at the current scale (None if it does); no JAX needed."""
    if draws not in DRAWS:
        raise ValueError(f"draws param {draws!r}: expected one of {DRAWS}")
    if draws == LARGE_DRAWS and scale() == "ci":
        return "large case (200 + 200 draws): skipped at JAXCI_SCALE=ci"
    if draws != LARGE_DRAWS and (model, chain_method, num_chains, dtype) not in CI_RUNS:
        return "20 + 20 draws run only the CI picks (regression, float64)"
    if num_chains == 1 and chain_method != "sequential":
        return "one chain: numpyro ignores chain_method, see the sequential cell"
    return None


class Nuts:
    params = [MODELS, CHAIN_METHODS, CHAINS, DRAWS, DTYPES, DEVICES]
    param_names = ["model", "chain_method", "num_chains", "draws", "dtype", "device"]
    timeout = 1200  # per process: a pathological device records a timeout, the rest of the run goes on

    def setup_cache(self):
        return os.getcwd()  # asv runs setup_cache and every benchmark of this class in one temp dir

    def setup(self, rundir, model, chain_method, num_chains, draws, dtype, device):
        reason = skip_reason(model, chain_method, num_chains, draws, dtype)
        if reason:
            raise NotImplementedError(reason)
        skip_unless_runnable(device)
        path = Path(rundir) / f"nuts-{model}-{chain_method}-{num_chains}-{draws}-{dtype}-{device}.json"
        if path.exists():
            self.result = json.loads(path.read_text())
        else:
            path.write_text(json.dumps({"started": True}))
            self.result = _run(model, chain_method, num_chains, draws, dtype, device)
            path.write_text(json.dumps(self.result))
        if "skipped" in self.result:
            raise NotImplementedError(self.result["skipped"])
        if "wall_s" not in self.result:
            raise RuntimeError(f"{path.name}: an earlier process of this run started NUTS and did not finish")
        if not self.result.get("finite", True):
            raise RuntimeError(f"{path.name}: the sampler produced non-finite draws: the cell failed, not skipped")

    def track_wall_s(self, rundir, *params):
        return self.result["wall_s"]

    def track_ess_per_s(self, rundir, *params):
        return self.result["ess_per_s"]

    def track_leapfrog_steps_per_s(self, rundir, *params):
        rate = self.result["steps_per_s"]
        if not isinstance(rate, (int, float)) or rate != rate:  # NaN would read as n/a: fail with the cause
            raise RuntimeError(f"compile seconds {self.result.get('compile_s')} >= wall {self.result['wall_s']}: "
                               "no execution time left to divide by")
        return rate

    track_wall_s.unit = "seconds"
    track_ess_per_s.unit = "effective samples/s"
    track_leapfrog_steps_per_s.unit = "leapfrog steps/s"


def _run(model, chain_method, num_chains, draws, dtype, device) -> dict:
    jax, dev = start_jax(device, dtype)
    from benchmarks.kernels import nuts_models

    reason = nuts_models.runnable(chain_method, num_chains)
    if reason:
        return {"skipped": reason}
    with jax.default_device(dev):
        out = nuts_models.run(model, chain_method, num_chains, num_warmup=draws, num_samples=draws, dtype=dtype)
    return {key: out[key] for key in ("wall_s", "compile_s", "ess_min", "ess_per_s", "leapfrog_steps", "warmup_steps",
                                      "sample_steps", "steps_per_s", "finite")}
