"""How many leapfrog steps NUTS's warm-up iterations take against its sampling iterations (the warm-up band of
jaxci.audit.judging.leapfrog: the hooks count only the collected, sampling iterations).

    .venv/bin/python measure/nuts_warmup_steps.py [--warmup 500,5000] [--samples 2000]

Three small models of our own (an AR(1) regression, a two-component normal mixture, an 8-coefficient linear
regression), float64, one chain, seed 0: prints each model's mean steps per warm-up and per sampling iteration and
their ratio. The counts belong to the sampler and the seed, not the machine.
"""

from __future__ import annotations

import argparse


def models():
    import jax.numpy as jnp
    import numpy as np
    import numpyro
    import numpyro.distributions as dist

    def ar1(y):
        rho = numpyro.sample("rho", dist.Uniform(-1, 1))
        sigma = numpyro.sample("sigma", dist.HalfNormal(1))
        numpyro.sample("obs", dist.Normal(rho * y[:-1], sigma), obs=y[1:])

    def mixture(y):
        w = numpyro.sample("w", dist.Beta(1, 1))
        mu = numpyro.sample("mu", dist.Normal(0, 10).expand([2]))
        mix = dist.MixtureSameFamily(dist.Categorical(jnp.stack([w, 1 - w])), dist.Normal(mu, 1))
        numpyro.sample("obs", mix, obs=y)

    def regression(x, y):
        beta = numpyro.sample("beta", dist.Normal(0, 1).expand([x.shape[1]]))
        sigma = numpyro.sample("sigma", dist.HalfNormal(1))
        numpyro.sample("obs", dist.Normal(x @ beta, sigma), obs=y)

    rng = np.random.default_rng(0)
    y = np.zeros(100)
    for t in range(1, 100):
        y[t] = 0.5 * y[t - 1] + rng.normal()
    x = rng.normal(size=(200, 8))
    yr = x @ (0.1 * np.arange(8)) + rng.normal(size=200)
    ym = np.concatenate([rng.normal(-2, 1, 150), rng.normal(3, 1, 100)])
    return (("AR(1)", ar1, (jnp.array(y),)), ("normal mixture", mixture, (jnp.array(ym),)),
            ("linear regression", regression, (jnp.array(x), jnp.array(yr))))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--warmup", default="500,5000", help="comma-separated warm-up lengths")
    ap.add_argument("--samples", type=int, default=2000)
    args = ap.parse_args(argv)
    import jax
    import numpy as np
    from numpyro.infer import MCMC, NUTS

    jax.config.update("jax_enable_x64", True)
    key = jax.random.PRNGKey(0)
    print("| model | warm-up | warm-up mean steps | sampling mean steps | ratio |\n|---|---|---|---|---|")
    for name, model, data in models():
        for warmup in (int(w) for w in args.warmup.split(",")):
            mcmc = MCMC(NUTS(model), num_warmup=warmup, num_samples=args.samples, progress_bar=False)
            mcmc.warmup(key, *data, collect_warmup=True, extra_fields=("num_steps",))
            warm = np.asarray(mcmc.get_extra_fields()["num_steps"]).mean()
            mcmc.run(key, *data, extra_fields=("num_steps",))
            sampled = np.asarray(mcmc.get_extra_fields()["num_steps"]).mean()
            print(f"| {name} | {warmup:,} | {warm:.2f} | {sampled:.2f} | {warm / sampled:.2f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
