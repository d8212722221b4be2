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

from benchmarks.common import (
    DEVICES,
    DTYPES,
    scale,
    skip_unless_runnable,
    start_jax,
    track_scale,  # noqa: F401  (a run fact: the scale this suite ran at)
)

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
    from jaxci.accel import unimplemented_reason

    reason = nuts_models.runnable(chain_method, num_chains)
    if reason:
        return {"skipped": reason}
    try:
        with jax.default_device(dev):
            out = nuts_models.run(model, chain_method, num_chains, num_warmup=draws, num_samples=draws, dtype=dtype)
    except Exception as exc:   # an op the backend lacks (f64 LU on a TPU): n/a with its line, for the siblings too
        reason = unimplemented_reason(exc, dev.platform, dtype)
        if reason is None:
            raise
        return {"skipped": reason}
    return {key: out[key] for key in ("wall_s", "compile_s", "ess_min", "ess_per_s", "leapfrog_steps", "warmup_steps",
                                      "sample_steps", "steps_per_s", "finite")}


# ---- seconds per leapfrog step at the incident's shape (the second GPU capture) ----

STEP_MODEL = "statespace"   # k = 11, 96 quarters, dense mass, max tree depth 8 (kernels.nuts_models)
#: warmup = samples = 10 at every scale (the figure is per step, not per run): ~1000 leapfrog steps in float64
#: with seed 0, ~7 s on a 2-core CPU, ~40 s on an H200 (38 ms per Kalman gradient in the first capture);
#: 20 + 20 takes ~6000 steps (trees at depth 8 from the first draws), 4 minutes of a GPU capture
STEP_DRAWS = 10


def run_steps(dtype: str, device: str, draws: int | None = None) -> dict:
    """One seeded sequential 1-chain NUTS run on the state-space model, with seconds per leapfrog step: the
    seconds the sampler executed (wall minus compile seconds, as `Nuts.track_leapfrog_steps_per_s` counts
    them) over the leapfrog steps of warmup and sampling. `draws` defaults to STEP_DRAWS."""
    draws = STEP_DRAWS if draws is None else draws
    out = _run(STEP_MODEL, "sequential", 1, draws, dtype, device)
    if "skipped" in out:
        return out
    executing = out["wall_s"] - out["compile_s"]
    out["s_per_step"] = executing / out["leapfrog_steps"] if executing > 0 and out["leapfrog_steps"] else None
    out["draws"] = draws
    return out


class NutsLeapfrogStep:
    """Seconds per leapfrog step of numpyro NUTS on the incident's state-space model (k = 11, 96 quarters,
    dense mass matrix, max tree depth 8), one chain, 10 warm-up + 10 draws, float64 and float32.

    A NUTS cell's time is about compile + (leapfrog steps) x (seconds per step); the step count belongs to
    the sampler and the seed (devices differ only by rounding), so the per-step cost is what moves between
    devices.
    Tracks from ONE run per combination (the `Nuts` scratch-file pattern: the first process runs NUTS, the
    others read its numbers): `track_s_per_leapfrog_step` = (wall - compile seconds from jax.monitoring) /
    leapfrog steps of warmup and sampling (the extra field num_steps), `track_leapfrog_steps` and
    `track_compile_s`. numpyro re-jits its loop on every run, so compile is subtracted, not warmed away;
    what is left also holds the run's fixed host work (~0.4 s on a 2-core CPU: initial point, glue), a few
    tenths of a millisecond per step over ~1000 CPU steps, negligible against a GPU's tens of milliseconds.
    Both dtypes run at CI scale: the same 10 + 10 draws as at full scale, so the series are shared.
    """

    params = [DTYPES, DEVICES]
    param_names = ["dtype", "device"]
    timeout = 900   # per process: each of the 20 iterations may take 255 steps (tree depth 8)

    def setup_cache(self):
        return os.getcwd()  # asv runs setup_cache and every benchmark of this class in one temp dir

    def setup(self, rundir, dtype, device):
        skip_unless_runnable(device)
        path = Path(rundir) / f"nuts-step-{dtype}-{device}.json"
        if path.exists():
            self.result = json.loads(path.read_text())
        else:
            path.write_text(json.dumps({"started": True}))
            self.result = run_steps(dtype, device)
            path.write_text(json.dumps(self.result))
        if "started" in self.result:
            raise RuntimeError(f"{path.name}: an earlier process of this run started NUTS and did not finish")
        if "skipped" in self.result:
            raise NotImplementedError(self.result["skipped"])
        if not self.result["finite"]:
            raise RuntimeError(f"{path.name}: the sampler produced non-finite draws: the cell failed, not skipped")
        if self.result["s_per_step"] is None:
            raise RuntimeError(f"{path.name}: compile seconds {self.result['compile_s']} >= wall "
                               f"{self.result['wall_s']}: no execution time left to divide by")

    def track_s_per_leapfrog_step(self, rundir, dtype, device):
        return self.result["s_per_step"]

    def track_leapfrog_steps(self, rundir, dtype, device):
        return self.result["leapfrog_steps"]

    def track_compile_s(self, rundir, dtype, device):
        return self.result["compile_s"]

    track_s_per_leapfrog_step.unit = "seconds/leapfrog step"
    track_leapfrog_steps.unit = "leapfrog steps"
    track_compile_s.unit = "seconds"
    # setup gained the n/a of an op the backend lacks (issue 71); what is measured is unchanged: the history stays
    track_s_per_leapfrog_step.version = "7b949cc114a034c42dc1f538396a3e6570c8b3f629a555c26f5ace9c2a3692f5"
    track_leapfrog_steps.version = "a31f674689fbd133c169f93bf612c9679cf62274aeceb0e9158fbd7ee549cd37"
    track_compile_s.version = "03262eb847de56365e75dcbcdddb28df3a95eca40f772187ac74790d52e27873"
