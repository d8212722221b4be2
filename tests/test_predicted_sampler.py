"""A library sampler's runs (numpyro's MCMC.run) are timed per cell by the hooks, with their leapfrog
steps. A counted run takes the GPU side's `leapfrog` part (jaxci.audit.judging.leapfrog); an uncounted one's CPU
seconds move to the GPU by the latency-bound GPU / CPU ratio, instead of standing as host time carried unchanged.
The arithmetic runs on made-up cells (never a timing); one real kernel checks the record."""

import nbformat.v4 as v4
import pytest

from jaxci.audit import runner
from jaxci.audit.judging import leapfrog, moved_work, predicted, rescaled
from jaxci.audit.reading.cell_records import SamplerRun
from jaxci.audit.runner import CellTiming
from tests.modelutil import notebook, t4_family

model = t4_family


def _run(samplers, wall=12.0, compile_s=2.0):
    return notebook(CellTiming(1, "", wall, wall, compilations=3, compile_s=compile_s, samplers=samplers))


def test_a_sampler_run_moves_by_the_latency_bound_gpu_cpu_ratio(model):
    run = _run([{"what": "numpyro.MCMC.run", "s": 10.0, "chains": 1, "warmup": 100, "samples": 100}])
    p = predicted.gpu_family(run, model.runner)
    mid, low, high, _ = moved_work._latency_ratio(model.runner, "float32", "gpu")
    assert low <= mid <= high
    # a 12 s cell: 10 s of run, of which the cell's 2 s of compile; 8 s of sampling, measured on the CPU side
    assert p.cpu.parts["sampler"] == pytest.approx(8.0)
    assert p.cpu.parts["host"] == pytest.approx(2.0)  # the cell's 2 s outside the run
    assert p.gpu.parts["sampler"] == pytest.approx(8.0 * mid)
    assert p.gpu.parts["host"] == pytest.approx(2.0)  # only that carried to the GPU as host time
    assert any("library sampler" in text for text in p.inputs)
    # measured here, so it moves with the host (the GPU's modelled calls and loops do not)
    scaled = rescaled.host_scaled(p, 0.5, "probe")
    assert scaled.gpu.parts["sampler"] == pytest.approx(4.0 * mid)


def test_without_a_sampler_record_the_cell_stays_host_time(model):
    p = predicted.gpu_family(_run(None), model.runner)
    assert p.gpu.parts["sampler"] == pytest.approx(0.0)
    assert p.gpu.parts["host"] == pytest.approx(10.0)


def test_a_sampler_never_takes_more_than_the_cells_own_time(model):
    run = _run([{"what": "numpyro.MCMC.run", "s": 50.0}], wall=5.0, compile_s=1.0)
    p = predicted.gpu_family(run, model.runner)
    assert p.cpu.parts["sampler"] == pytest.approx(4.0)


def _counted(**kw):
    """A NUTS run record with the hooks' leapfrog count (4 steps per iteration, one chain)."""
    return SamplerRun(**{"what": "numpyro.MCMC.run", "s": 2.0, "chains": 1, "warmup": 100, "samples": 400,
                         "chain_method": "parallel", "leapfrog": 1600, "leapfrog_iterations": 400, "leapfrog_max": 15,
                         "leapfrog_lockstep": 1600, **kw})


def test_a_counted_run_takes_the_leapfrog_part_in_place_of_its_cpu_seconds(model):
    p = predicted.gpu_family(_run([_counted(s=10.0)]), model.runner)
    expected = leapfrog.price(model.runner, [_counted(s=10.0)], "float32", "gpu")
    assert expected is not None
    assert p.gpu.parts["leapfrog"] == pytest.approx(expected[0])
    assert p.gpu.parts["sampler"] == pytest.approx(0.0)
    assert p.cpu.parts["sampler"] == pytest.approx(8.0)  # the CPU side keeps what it measured
    assert any("serial leapfrog steps" in text for text in p.inputs)
    # modelled, not this host's seconds: the host factor leaves it
    scaled = rescaled.host_scaled(p, 0.5, "probe")
    assert scaled.gpu.parts["leapfrog"] == pytest.approx(expected[0])


def test_an_uncounted_run_beside_a_counted_one_keeps_the_ratio_for_its_share(model):
    uncounted = {"what": "numpyro.MCMC.run", "s": 2.5}
    p = predicted.gpu_family(_run([_counted(s=7.5), uncounted]), model.runner)
    mid = moved_work._latency_ratio(model.runner, "float32", "gpu")[0]
    assert p.gpu.parts["sampler"] == pytest.approx(8.0 * 0.25 * mid)
    assert p.gpu.parts["leapfrog"] > 0


@pytest.mark.slow
def test_the_hooks_time_each_mcmc_run_in_its_cell():
    nb = v4.new_notebook(cells=[v4.new_code_cell(s) for s in (
        "import jax.numpy as jnp\nfrom jax import random\nimport numpyro, numpyro.distributions as dist\n"
        "from numpyro.infer import MCMC, NUTS",
        "def model(y=None):\n    m = numpyro.sample('m', dist.Normal(0, 1))\n"
        "    numpyro.sample('y', dist.Normal(m, 1), obs=y)\n"
        "mcmc = MCMC(NUTS(model), num_warmup=20, num_samples=30, progress_bar=False)\n"
        "mcmc.run(random.PRNGKey(0), y=jnp.ones(5))\n"
        "assert 'num_steps' not in mcmc.get_extra_fields()  # what the hook asked for is taken out again",
        "x = 1",
        "mcmc.run(random.PRNGKey(1), y=jnp.ones(5), extra_fields=('num_steps',))\n"
        "assert mcmc.get_extra_fields()['num_steps'].shape == (30,)  # what the notebook asked for stays",
        "two = MCMC(NUTS(model), num_warmup=20, num_samples=30, num_chains=2, chain_method='vectorized',\n"
        "           progress_bar=False)\n"
        "two.run(random.PRNGKey(2), y=jnp.ones(5))",
    )])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    result = runner.run_notebook(nb, platform="cpu", timeout=300)
    assert result.ok, result.error
    first, sampled, plain, asked, vectorized = result.cells
    assert first.samplers is None and plain.samplers is None
    (record,) = sampled.samplers
    assert record.what == "numpyro.MCMC.run"
    assert (record.chains, record.warmup, record.samples) == (1, 20, 30)
    assert 0 < record.s <= sampled.wall_s
    # every collected iteration took at least one leapfrog step, none more than tree depth 10 allows
    assert record.leapfrog_iterations == 30
    assert 30 <= record.leapfrog <= 30 * record.leapfrog_max and record.leapfrog_max <= 1023
    assert record.leapfrog_lockstep == record.leapfrog  # one chain: its own steps
    (again,) = asked.samplers
    assert again.leapfrog_iterations == 30
    # two chains in lockstep: per iteration the longer one's steps, so between half the sum and the sum
    (both,) = vectorized.samplers
    assert both.leapfrog_iterations == 60 and both.vectorized
    assert both.leapfrog / 2 <= both.leapfrog_lockstep <= both.leapfrog
