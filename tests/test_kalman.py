"""The Kalman kernels against NumPy/SciPy: the filter, a joint multivariate normal, and each other."""

import functools

import numpy as np
import pytest

jax = pytest.importorskip("jax")

from benchmarks.kernels import kalman  # noqa: E402
from tests.jaxmode import x64_for  # noqa: E402

pytestmark = pytest.mark.usefixtures("x64")

#: the periods of every test here: one shape per state dimension, so the jitted functions and their compiles are
#: shared between the tests. The parallel filter's compile is most of this file's time and grows with the periods;
#: 24 (the benchmark runs 96) still halves to an odd length, as 96 does, so every branch of the scan runs.
T = 24


@functools.cache
def jitted(variant: str, k: int, grad: bool = False):
    """The jitted log-likelihood (or its gradient) of one variant and state dimension, built once per process."""
    return jax.jit((kalman.grad_fn if grad else kalman.loglik_fn)(variant, k))


def test_reference_filter_matches_joint_gaussian():
    """The NumPy filter itself is checked against the likelihood written without any filter."""
    theta, y = kalman.inputs(3, 25, "float64", seed=4)
    assert kalman.loglik_reference(theta, y, 3) == pytest.approx(kalman.loglik_joint(theta, y, 3), rel=1e-9)


@pytest.mark.parametrize("variant", kalman.VARIANTS)
@pytest.mark.parametrize("k", [2, 11])
def test_loglik_matches_reference_float64(variant, k):
    theta, y = kalman.inputs(k, T, "float64")
    got = float(jitted(variant, k)(theta, y))
    assert got == pytest.approx(kalman.loglik_reference(theta, y, k), rel=1e-10, abs=1e-8)


def test_loglik_away_from_the_true_parameters():
    """A point the data were not simulated at, so a bug that only vanishes at THETA_TRUE still shows."""
    theta, y = kalman.inputs(11, T, "float64", seed=5)
    other = theta + np.linspace(-0.3, 0.3, kalman.N_PARAMS)
    ref = kalman.loglik_reference(other, y, 11)
    for variant in kalman.VARIANTS:
        assert float(jitted(variant, 11)(other, y)) == pytest.approx(ref, rel=1e-10)
    assert ref < kalman.loglik_reference(theta, y, 11)  # the truth fits better than a perturbed point


@pytest.mark.parametrize("k", [2, 11, 50])
def test_sequential_equals_parallel(k):
    """Values at every k; gradients up to k = 11 (the same code at any k: at 50 its compile alone took 11 s)."""
    theta, y = kalman.inputs(k, T, "float64", seed=1)
    seq = float(jitted("sequential", k)(theta, y))
    par = float(jitted("parallel", k)(theta, y))
    assert par == pytest.approx(seq, rel=1e-9)
    if k > 11:
        return
    gs = np.asarray(jitted("sequential", k, grad=True)(theta, y))
    gp = np.asarray(jitted("parallel", k, grad=True)(theta, y))
    np.testing.assert_allclose(gp, gs, rtol=1e-7, atol=1e-8)


def test_float32_close_to_float64():
    """Run as the float32 benchmarks run it (x64 off): the log-likelihood stays float32 and is close to the
    float64 reference."""
    theta, y = kalman.inputs(11, T, "float32")
    ref = kalman.loglik_reference(theta.astype(float), y.astype(float), 11)
    for variant in kalman.VARIANTS:
        with x64_for("float32"):
            out = jitted(variant, 11)(theta, y)
        assert out.dtype == np.float32
        assert float(out) == pytest.approx(ref, rel=1e-3)
    with x64_for("float32"):  # the gradient NUTS evaluates (the parallel one only costs compile time here)
        grad = jitted("sequential", 11, grad=True)(theta, y)
    assert grad.dtype == np.float32 and np.all(np.isfinite(np.asarray(grad)))


@pytest.mark.parametrize("variant", kalman.VARIANTS)
def test_gradient_finite_and_matches_finite_differences(variant):
    k = 2
    theta, y = kalman.inputs(k, T, "float64")
    grad = np.asarray(jitted(variant, k, grad=True)(theta, y))  # jitted: op by op it took 15 s
    assert grad.shape == (kalman.N_PARAMS,) and np.all(np.isfinite(grad))
    h = 1e-5
    fd = np.array([(kalman.loglik_reference(theta + h * e, y, k) - kalman.loglik_reference(theta - h * e, y, k))
                   / (2 * h) for e in np.eye(kalman.N_PARAMS)])
    np.testing.assert_allclose(grad, fd, rtol=1e-4, atol=1e-4)


def test_unknown_variant_is_named():
    with pytest.raises(ValueError, match="'blocked'"):
        kalman.loglik_fn("blocked", 3)


def test_simulator_is_seeded_and_shaped():
    a = kalman.simulate(kalman.THETA_TRUE, 3, 10, seed=2)
    assert a.shape == (10, kalman.N_OBS)
    np.testing.assert_array_equal(a, kalman.simulate(kalman.THETA_TRUE, 3, 10, seed=2))
    assert not np.array_equal(a, kalman.simulate(kalman.THETA_TRUE, 3, 10, seed=3))
