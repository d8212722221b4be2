"""numpyro NUTS on the incident's state-space model and on a tiny regression, with the run's throughput.

`run(model, chain_method, num_chains, ...)` runs one seeded `mcmc.run` (warmup, then sampling, in one
compiled loop) and returns plain numbers: its wall seconds (tracing and compiling included, as a notebook
cell pays them), the minimum effective sample size over every parameter element of the posterior draws
(`min_ess`: a stuck element counts as 0, never dropped), ESS per wall second, and leapfrog steps per second.
The steps are those of warmup AND sampling (extra field num_steps, collected from iteration 0) over the
seconds the sampler executed: the wall time minus the compile seconds (jax.monitoring), so the rate is the
sampler's, not the compiler's.
numpyro compiles its loops on every run, so on a CPU compile is a large part of a short run.
"""

from __future__ import annotations

import math
import time

import jax
import jax.numpy as jnp
import numpy as np

# numpyro is imported inside the functions: asv imports every module under benchmarks/ in its discovery and
# in its forkserver, and numpyro's import warms JAX's lowering machinery, so every forked child of every
# suite would compile faster than a fresh process does (docs/suite-cost.md: the fidelity check found it).
from benchmarks.kernels import kalman
from jaxci.jaxmon import CompileClock

MODELS = ["statespace", "regression"]
CHAIN_METHODS = ["sequential", "vectorized", "parallel"]

STATE_DIM, PERIODS = 11, 96           # the incident: 11-dimensional state, 96 quarters
REGRESSION_TRUE = {"alpha": 1.0, "beta": 2.0, "sigma": 0.5}
REGRESSION_N = 100


def statespace_model(y):
    """18 unconstrained parameters with a N(THETA_TRUE, 1) prior, likelihood from the sequential filter."""
    import numpyro
    import numpyro.distributions as dist

    center = jnp.asarray(kalman.THETA_TRUE, y.dtype)
    theta = numpyro.sample("theta", dist.Normal(center, 1.0).to_event(1))
    numpyro.factor("loglik", kalman.loglik_sequential(theta, y, STATE_DIM))


def regression_model(x, y):
    import numpyro
    import numpyro.distributions as dist

    alpha = numpyro.sample("alpha", dist.Normal(0.0, 10.0))
    beta = numpyro.sample("beta", dist.Normal(0.0, 10.0))
    sigma = numpyro.sample("sigma", dist.HalfNormal(5.0))
    numpyro.sample("y", dist.Normal(alpha + beta * x, sigma), obs=y)


def data(model: str, dtype: str, seed: int = 0) -> tuple:
    """Host arrays for a model, simulated at known parameters (THETA_TRUE, REGRESSION_TRUE)."""
    if model == "statespace":
        return (kalman.simulate(kalman.THETA_TRUE, STATE_DIM, PERIODS, seed).astype(dtype),)
    if model == "regression":
        rng = np.random.default_rng(seed)
        x = rng.standard_normal(REGRESSION_N)
        t = REGRESSION_TRUE
        y = t["alpha"] + t["beta"] * x + t["sigma"] * rng.standard_normal(REGRESSION_N)
        return x.astype(dtype), y.astype(dtype)
    raise ValueError(f"NUTS model {model!r}: expected one of {MODELS}")


MODEL_FNS = {"statespace": statespace_model, "regression": regression_model}


def runnable(chain_method: str, num_chains: int) -> str | None:
    """Why this combination cannot run in this process (None if it can): parallel needs a device per chain."""
    if chain_method not in CHAIN_METHODS:
        raise ValueError(f"chain_method {chain_method!r}: expected one of {CHAIN_METHODS}")
    if chain_method == "parallel" and jax.local_device_count() < num_chains:
        return (f"chain_method='parallel' needs {num_chains} devices, this process has "
                f"{jax.local_device_count()}")
    return None


def min_ess(samples: dict) -> float:
    """Smallest effective sample size over every element of every parameter ({name: (chains, draws, ...)}).

    A stuck element (no variance) or a non-finite draw gives NaN in numpyro: it counts as 0 here, so
    a stuck sampler reads as ESS 0 whatever the parameter order (Python's min with NaN depends on it)."""
    from numpyro.diagnostics import effective_sample_size

    out = math.inf
    for value in samples.values():
        arr = np.asarray(value, dtype=np.float64)
        with np.errstate(invalid="ignore", divide="ignore"):
            finite = np.all(np.isfinite(arr))
            ess = np.asarray(effective_sample_size(arr), dtype=np.float64) if finite else np.array(np.nan)
        ess = np.where(np.isfinite(ess), ess, 0.0)
        out = min(out, float(np.min(ess)) if ess.size else math.inf)
    return 0.0 if out == math.inf else out


def run(model: str, chain_method: str, num_chains: int, *, num_warmup: int, num_samples: int,
        dtype: str = "float64", seed: int = 0, device=None) -> dict:
    """One seeded NUTS run (dense mass matrix, max tree depth 8); returns its numbers and posterior means."""
    from numpyro.infer import MCMC, NUTS

    reason = runnable(chain_method, num_chains)
    if reason:
        raise NotImplementedError(reason)
    args = data(model, dtype, seed)
    if device is not None:
        args = jax.device_put(args, device)
    kernel = NUTS(MODEL_FNS[model], dense_mass=True, max_tree_depth=8)
    mcmc = MCMC(kernel, num_warmup=num_warmup, num_samples=num_samples, num_chains=num_chains,
                chain_method=chain_method, progress_bar=False)
    # one mcmc.run (one compiled loop, what a notebook cell pays) whose collection window starts at
    # iteration 0, so num_steps covers warmup too; numpyro has no public switch for this in `run`
    # (warmup(collect_warmup=True) + run compiles a second loop and doubles the compile seconds)
    mcmc._set_collection_params(0, num_warmup + num_samples, num_warmup + num_samples)
    clock = CompileClock().install()
    start = time.perf_counter()
    mcmc.run(jax.random.PRNGKey(seed), *args, extra_fields=("num_steps",))
    draws = jax.block_until_ready(mcmc.get_samples(group_by_chain=True))
    wall = time.perf_counter() - start
    compile_s = clock.total
    per_iter = np.asarray(mcmc.get_extra_fields(group_by_chain=True)["num_steps"]).reshape(num_chains, -1)
    if per_iter.shape[1] != num_warmup + num_samples:
        raise RuntimeError(f"numpyro collected {per_iter.shape[1]} iterations, expected warmup + samples = "
                           f"{num_warmup + num_samples}: its collection API changed")
    warmup_steps, sample_steps = int(per_iter[:, :num_warmup].sum()), int(per_iter[:, num_warmup:].sum())
    steps = warmup_steps + sample_steps
    samples = {name: v[:, num_warmup:] for name, v in draws.items()}  # the posterior draws only
    ess = min_ess(samples)
    means = {name: np.asarray(v).reshape((-1,) + v.shape[2:]).mean(axis=0) for name, v in samples.items()}
    finite = all(bool(np.all(np.isfinite(np.asarray(v)))) for v in samples.values())
    executing = wall - compile_s
    return {"wall_s": wall, "compile_s": compile_s, "ess_min": ess, "ess_per_s": ess / wall, "leapfrog_steps": steps,
            "warmup_steps": warmup_steps, "sample_steps": sample_steps,
            "steps_per_s": steps / executing if executing > 0 else math.nan, "finite": finite, "means": means}
