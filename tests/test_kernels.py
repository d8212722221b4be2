"""Each timed kernel computes the right numbers: checked against NumPy at small size, both dtypes, each run
with x64 set as the benchmarks set it (on for float64 only) and its output dtype asserted."""

import numpy as np
import pytest

jax = pytest.importorskip("jax")

from benchmarks.kernels import dense, dispatch, elementwise, loops  # noqa: E402
from tests.jaxmode import x64_for  # noqa: E402
from tests.suiteutil import jitted_as  # noqa: E402

TOL = {"float32": 2e-4, "float64": 1e-10}
DTYPES = ["float32", "float64"]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", dense.OPS)
def test_dense_matches_numpy(op, dtype):
    a, b = dense.inputs(48, dtype)
    got = jitted_as(dense.KERNELS[op], dtype, a, b)
    want = {"matmul": lambda: a @ b, "solve": lambda: np.linalg.solve(a, b),
            "cholesky": lambda: np.linalg.cholesky(a)}[op]()
    np.testing.assert_allclose(got, want, rtol=TOL[dtype] * 10, atol=TOL[dtype] * 10)


def test_dense_inputs_are_positive_definite():
    a, _ = dense.inputs(64, "float64")
    assert np.all(np.linalg.eigvalsh(a) > 0)


@pytest.mark.parametrize("dtype", DTYPES)
def test_elementwise_matches_numpy(dtype):
    (x,) = elementwise.inputs(10_001, dtype)
    got = jitted_as(elementwise.op_mix, dtype, x)
    np.testing.assert_allclose(got, elementwise.op_mix_numpy(x), rtol=TOL[dtype] * 10, atol=TOL[dtype] * 10)
    assert elementwise.bytes_moved(10, dtype) == 20 * np.dtype(dtype).itemsize


@pytest.mark.parametrize("unroll", [1, 8])
@pytest.mark.parametrize("dtype", DTYPES)
def test_quadratic_map_scan_matches_python_loop(dtype, unroll):
    n = 200  # the map is chaotic: compare a short path, where rounding has not yet grown
    got = jitted_as(loops.scan_fn(n, unroll), dtype, np.asarray(0.3, dtype=dtype))
    want = loops.quadratic_map_numpy(0.3, n, dtype)
    assert got.shape == (n,)
    np.testing.assert_allclose(got[:20], want[:20], rtol=TOL[dtype] * 10)
    assert np.all((got > 0) & (got < 1))


@pytest.mark.parametrize("dtype", DTYPES)
def test_fori_accumulate_matches_python_loop(dtype):
    got = jitted_as(lambda x: loops.fori_accumulate(x, 500), dtype, np.asarray(0.0, dtype=dtype))
    np.testing.assert_allclose(got, loops.fori_accumulate_numpy(0.0, 500, dtype), rtol=TOL[dtype])


@pytest.mark.parametrize("dtype", DTYPES)
def test_power_iteration_finds_dominant_eigenvector(dtype):
    a, v0 = loops.power_iteration_inputs(dtype)
    with x64_for(dtype):
        v, iterations = jax.jit(loops.power_iteration)(a, v0)
    assert np.asarray(v).dtype == np.dtype(dtype)
    w, vecs = np.linalg.eigh(a.astype(np.float64))
    top = vecs[:, np.argmax(w)]
    assert abs(abs(np.dot(np.asarray(v, dtype=np.float64), top)) - 1) < 1e-4
    assert 1 < int(iterations) < 10_000


def test_tiny_op_and_payload():
    with x64_for("float32"):
        out = jax.jit(dispatch.tiny)(np.float32(1))
    assert float(out) == 2.0 and out.dtype == np.float32
    assert dispatch.payload(1).nbytes == dispatch.MB
