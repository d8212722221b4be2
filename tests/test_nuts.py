"""NUTS runs are seeded, finite and recover known parameters of simulated data (sanity bounds, no timings);
steps are counted in warmup and sampling, a stuck sampler reads ESS 0, float32 runs with x64 off."""

import numpy as np
import pytest

jax = pytest.importorskip("jax")
pytest.importorskip("numpyro")

from benchmarks.kernels import nuts_models  # noqa: E402
from tests.jaxmode import x64_for  # noqa: E402

WARMUP, SAMPLES = 150, 150


@pytest.fixture(scope="module")
def regression_runs():
    kw = dict(num_warmup=WARMUP, num_samples=SAMPLES)
    with x64_for("float64"):  # as the float64 benchmark runs it, restored afterwards
        return (nuts_models.run("regression", "vectorized", 2, **kw),
                nuts_models.run("regression", "vectorized", 2, **kw))


def test_regression_recovers_known_parameters(regression_runs):
    out, _ = regression_runs
    assert out["finite"]
    truth = nuts_models.REGRESSION_TRUE
    # 100 points with noise sd 0.5: posterior sd of alpha and beta is about 0.05; allow wide margins.
    for name, margin in (("alpha", 0.25), ("beta", 0.25), ("sigma", 0.2)):
        assert abs(float(out["means"][name]) - truth[name]) < margin, name


def test_leapfrog_steps_count_warmup_and_sampling(regression_runs):
    """Warmup steps are counted (at least one per iteration and chain: 2 x 150 of each), and the rate is over
    the seconds the sampler executed, so it exceeds steps / wall (compile is in the wall)."""
    out, _ = regression_runs
    assert out["warmup_steps"] >= 2 * WARMUP and out["sample_steps"] >= 2 * SAMPLES
    assert out["leapfrog_steps"] == out["warmup_steps"] + out["sample_steps"]
    assert 0 < out["compile_s"] < out["wall_s"]
    assert out["steps_per_s"] > out["leapfrog_steps"] / out["wall_s"]


def test_step_counts_match_numpyro_run_phase_by_phase():
    """Known answers from numpyro's public API with the same seed: the sampling steps of a plain
    mcmc.run and the warmup steps of mcmc.warmup(collect_warmup=True)."""
    from numpyro.infer import MCMC, NUTS

    with x64_for("float64"):
        out = nuts_models.run("regression", "sequential", 1, num_warmup=20, num_samples=20)
        args = nuts_models.data("regression", "float64")

        def fresh():
            return MCMC(NUTS(nuts_models.regression_model, dense_mass=True, max_tree_depth=8), num_warmup=20,
                        num_samples=20, progress_bar=False)

        plain = fresh()
        plain.run(jax.random.PRNGKey(0), *args, extra_fields=("num_steps",))
        warm = fresh()
        warm.warmup(jax.random.PRNGKey(0), *args, extra_fields=("num_steps",), collect_warmup=True)
    assert out["sample_steps"] == int(np.sum(plain.get_extra_fields()["num_steps"]))
    assert out["warmup_steps"] == int(np.sum(warm.get_extra_fields()["num_steps"]))
    np.testing.assert_allclose(out["means"]["alpha"], np.asarray(plain.get_samples()["alpha"]).mean())


def test_ess_of_a_well_mixed_regression(regression_runs):
    out, _ = regression_runs
    assert 50 < out["ess_min"] <= 2 * SAMPLES * 3  # 300 draws of a well-mixed 3-parameter posterior


def test_seeded(regression_runs):
    a, b = regression_runs
    assert a["leapfrog_steps"] == b["leapfrog_steps"]
    for name in a["means"]:
        np.testing.assert_array_equal(np.asarray(a["means"][name]), np.asarray(b["means"][name]))


def test_statespace_model_runs_finite():
    with x64_for("float64"):
        out = nuts_models.run("statespace", "sequential", 1, num_warmup=3, num_samples=3)
    assert out["finite"] and out["means"]["theta"].shape == (18,)


def test_float32_runs_with_x64_off_and_stays_float32():
    """As the float32 benchmark runs it: x64 off, so nothing is promoted to float64."""
    with x64_for("float32"):
        out = nuts_models.run("regression", "sequential", 1, num_warmup=10, num_samples=10, dtype="float32")
    assert out["means"]["alpha"].dtype == np.float32 and out["finite"]


def test_min_ess_known_answers_and_stuck_parameters():
    """iid draws have ESS about their count; a stuck (constant) or non-finite parameter gives 0 whatever the
    parameter order (Python's min with NaN depends on the order)."""
    rng = np.random.default_rng(0)
    iid = rng.standard_normal((4, 500))
    assert 1500 < nuts_models.min_ess({"a": iid}) < 2500
    stuck = np.ones((4, 500))
    broken = iid.copy()
    broken[1, 7] = np.nan
    for samples in ({"a": iid, "s": stuck}, {"s": stuck, "a": iid}, {"a": iid, "b": broken}, {"b": broken, "a": iid}):
        assert nuts_models.min_ess(samples) == 0.0
    vec = np.stack([iid, stuck], axis=-1)  # one element of a vector parameter stuck
    assert nuts_models.min_ess({"theta": vec}) == 0.0


def test_non_finite_run_fails_the_cell_and_draws_is_a_param(tmp_path, monkeypatch):
    """A non-finite run is a failed cell (asv: failed), never n/a; the draws are a param, the large one
    skipped at CI scale, the small one only for the CI picks."""
    import json

    from benchmarks import nuts

    monkeypatch.setenv("JAXCI_SCALE", "full")
    params = ("regression", "sequential", 1, 20, "float64", "cpu")
    (tmp_path / "nuts-regression-sequential-1-20-float64-cpu.json").write_text(json.dumps(
        {"wall_s": 1.0, "ess_min": 0.0, "ess_per_s": 0.0, "steps_per_s": 1.0, "finite": False}))
    with pytest.raises(RuntimeError, match="non-finite"):
        nuts.Nuts().setup(str(tmp_path), *params)
    assert nuts.Nuts.param_names[3] == "draws" and nuts.DRAWS == [20, 200]
    assert nuts.skip_reason("statespace", "vectorized", 4, 200, "float64") is None
    assert "CI picks" in nuts.skip_reason("statespace", "vectorized", 4, 20, "float64")
    monkeypatch.setenv("JAXCI_SCALE", "ci")
    assert "skipped at JAXCI_SCALE=ci" in nuts.skip_reason("regression", "vectorized", 4, 200, "float64")
    assert nuts.skip_reason("regression", "vectorized", 4, 20, "float64") is None


def test_parallel_needs_a_device_per_chain():
    if jax.local_device_count() >= 4:
        pytest.skip("this process has 4 devices")
    assert "needs 4 devices" in nuts_models.runnable("parallel", 4)
    with pytest.raises(NotImplementedError, match="needs 4 devices"):
        nuts_models.run("regression", "parallel", 4, num_warmup=2, num_samples=2)  # raises before any x64 use


def test_bad_names_are_named():
    with pytest.raises(ValueError, match="'chained'"):
        nuts_models.runnable("chained", 1)
    with pytest.raises(ValueError, match="'logistic'"):
        nuts_models.data("logistic", "float64")
