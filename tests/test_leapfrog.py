"""A NUTS run on a GPU priced from the leapfrog steps the hooks counted on the CPU run (serial steps x
predicate reads per step x the family's while-loop turn). The read counts are checked against numpyro's own tree
builder as traced; the arithmetic runs on made-up records (never a timing)."""

import pytest

from jaxci.audit.judging import leapfrog
from jaxci.audit.reading.cell_records import SamplerRun


def _tree_jaxpr(vectorized: bool):
    import jax
    import jax.numpy as jnp
    from numpyro.infer.hmc_util import build_tree, euclidean_kinetic_energy, velocity_verlet

    init, update = velocity_verlet(lambda z: 0.5 * jnp.sum(z ** 2), euclidean_kinetic_energy)

    def tree(z, key):
        return build_tree(update, euclidean_kinetic_energy, init(z, z), jnp.ones(3), 0.1, key)

    if vectorized:
        return jax.make_jaxpr(jax.vmap(tree))(jnp.ones((4, 3)), jax.random.split(jax.random.PRNGKey(0), 4)).jaxpr
    return jax.make_jaxpr(tree)(jnp.ones(3), jax.random.PRNGKey(0)).jaxpr


def _only(eqns, name):
    return [e for e in eqns if e.primitive.name == name]


def _branch_conds(eqn) -> int:
    return sum(len(_only(b.jaxpr.eqns, "cond")) for b in eqn.params["branches"])


def _reads(jaxpr) -> tuple[int, int]:
    """(every step, most a step carries): predicate reads per leapfrog step of the tree builder as traced."""
    (doubling,) = _only(jaxpr.eqns, "while")
    outer = doubling.params["body_jaxpr"].jaxpr.eqns
    (subtree,) = _only(outer, "while")
    body = subtree.params["body_jaxpr"].jaxpr.eqns
    conds, turning = _only(body, "cond"), _only(body, "while")
    assert len(turning) == 1  # the turning check's loop
    every = 1 + len(conds) + 1  # the subtree loop's predicate, its conditionals, the turning loop's first predicate
    nested = sum(_branch_conds(c) for c in conds)
    per_doubling = 1 + len(_only(outer, "cond")) + 1  # outer predicate, combining conditionals, subtree's last
    return every, every + nested + 1 + per_doubling  # + one turning-check turn


def test_the_read_counts_are_numpyros_tree_builder_as_traced():
    assert _reads(_tree_jaxpr(vectorized=False)) == leapfrog.READS


def test_vectorized_chains_read_only_their_loops_predicates():
    """Under vmap a conditional on batched values is a select: nothing read back."""
    assert _reads(_tree_jaxpr(vectorized=True)) == leapfrog.READS_VECTORIZED


def _run(**kw):
    return SamplerRun(**{"what": "numpyro.MCMC.run", "s": 2.0, "chains": 1, "warmup": 100, "samples": 400,
                         "chain_method": "parallel", "leapfrog": 1600, "leapfrog_iterations": 400, "leapfrog_max": 15,
                         "leapfrog_lockstep": 1600, **kw})


def test_serial_steps_are_the_samples_mean_over_every_iteration_of_every_chain():
    mid, low, high = leapfrog.serial_steps(_run())
    assert mid == pytest.approx(4 * 500)  # 4 steps per iteration over 100 + 400
    fewest, most = leapfrog.WARMUP
    assert (low, high) == pytest.approx((4 * 400 + 4 * 100 * fewest, 4 * 400 + 4 * 100 * most))
    # chains one after another (sequential, or parallel on one GPU) add
    two = leapfrog.serial_steps(_run(chains=2, leapfrog=3200, leapfrog_iterations=800, leapfrog_lockstep=2000))
    assert two[0] == pytest.approx(2 * 4 * 500)


def test_vectorized_chains_run_as_many_turns_as_their_longest_chain():
    run = _run(chains=4, chain_method="vectorized", leapfrog=6400, leapfrog_iterations=1600, leapfrog_lockstep=2400)
    assert leapfrog.serial_steps(run)[0] == pytest.approx(2400 / 400 * 500)


def test_a_run_without_a_count_has_no_serial_steps():
    assert leapfrog.serial_steps(SamplerRun("numpyro.MCMC.run", 1.0)) is None
    # vectorized chains without the lockstep count: how many turns they ran is not known
    assert leapfrog.serial_steps(_run(chains=4, chain_method="vectorized", leapfrog_lockstep=None)) is None


class _View:
    """A runner view whose while loop costs 30 µs a turn (band 20-40 µs)."""

    def step_band(self, kind, dtype, device):
        assert kind == "while"
        return 30e-6, 20e-6, 40e-6, "made-up while loop"


def test_the_price_is_steps_times_reads_times_a_turn():
    mid, low, high, text = leapfrog.price(_View(), [_run()], "float64", "gpu")
    fewest, most = leapfrog.READS
    steps = leapfrog.serial_steps(_run())
    assert mid == pytest.approx(steps[0] * (fewest * most) ** 0.5 * 30e-6)
    assert low == pytest.approx(steps[1] * fewest * 20e-6)
    assert high == pytest.approx(steps[2] * most * 40e-6)
    assert "2,000 serial leapfrog steps" in text
