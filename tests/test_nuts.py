"""NUTS runs are seeded, finite and recover known parameters of simulated data (sanity bounds, no timings)."""

import math

import numpy as np
import pytest

jax = pytest.importorskip("jax")
pytest.importorskip("numpyro")

from benchmarks.kernels import nuts_models  # noqa: E402


pytestmark = pytest.mark.usefixtures("x64")


@pytest.fixture(scope="module")
def regression_runs():
    jax.config.update("jax_enable_x64", True)
    kw = dict(num_warmup=150, num_samples=150)
    return (nuts_models.run("regression", "vectorized", 2, **kw),
            nuts_models.run("regression", "vectorized", 2, **kw))


def test_regression_recovers_known_parameters(regression_runs):
    out, _ = regression_runs
    assert out["finite"]
    truth = nuts_models.REGRESSION_TRUE
    # 100 points with noise sd 0.5: posterior sd of alpha and beta is about 0.05; allow wide margins.
    assert abs(float(out["means"]["alpha"]) - truth["alpha"]) < 0.25
    assert abs(float(out["means"]["beta"]) - truth["beta"]) < 0.25
    assert abs(float(out["means"]["sigma"]) - truth["sigma"]) < 0.2


def test_run_numbers_are_consistent(regression_runs):
    out, _ = regression_runs
    assert out["wall_s"] > 0 and out["leapfrog_steps"] >= 2 * 150  # at least one step per sample and chain
    assert out["ess_min"] > 10
    assert math.isclose(out["ess_per_s"], out["ess_min"] / out["wall_s"])
    assert math.isclose(out["steps_per_s"], out["leapfrog_steps"] / out["wall_s"])


def test_seeded(regression_runs):
    a, b = regression_runs
    assert a["leapfrog_steps"] == b["leapfrog_steps"]
    for name in a["means"]:
        np.testing.assert_array_equal(np.asarray(a["means"][name]), np.asarray(b["means"][name]))


def test_statespace_model_runs_finite():
    out = nuts_models.run("statespace", "sequential", 1, num_warmup=3, num_samples=3)
    assert out["finite"] and out["means"]["theta"].shape == (18,)


def test_parallel_needs_a_device_per_chain():
    if jax.local_device_count() >= 4:
        pytest.skip("this process has 4 devices")
    assert "needs 4 devices" in nuts_models.runnable("parallel", 4)
    with pytest.raises(NotImplementedError, match="needs 4 devices"):
        nuts_models.run("regression", "parallel", 4, num_warmup=2, num_samples=2)


def test_bad_names_are_named():
    with pytest.raises(ValueError, match="'chained'"):
        nuts_models.runnable("chained", 1)
    with pytest.raises(ValueError, match="'logistic'"):
        nuts_models.data("logistic", "float64")
