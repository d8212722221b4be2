"""Host kernels against plain NumPy, the thread switch in a fresh process, and the host suite at CI scale."""

import json
import math
import os

import numpy as np
import pytest

from benchmarks.kernels import host
from tests.asvutil import result_values
from tests.suiteutil import last_json, python

DTYPES = ["float32", "float64"]


def test_int_sum_matches_numpy():
    i = np.arange(12_345, dtype=np.int64)
    assert host.int_sum(12_345) == int(np.sum(i * i % 1_000_003))


def test_float_sum_matches_numpy_and_pi():
    n = 10_000
    x = (np.arange(n) + 0.5) / n
    assert host.float_sum(n) == pytest.approx(np.sum(4.0 / (1.0 + x * x)) / n, rel=1e-12)
    assert host.float_sum(n) == pytest.approx(math.pi, abs=1e-8)


def test_dict_count_matches_bincount():
    counts = host.dict_count(50_000)
    expected = np.bincount(np.arange(50_000, dtype=np.int64) * 7919 % 1009, minlength=1009)
    assert [counts.get(k, 0) for k in range(1009)] == expected.tolist()


@pytest.mark.parametrize("dtype", DTYPES)
def test_linalg_kernels(dtype):
    a, b = host.linalg_inputs(64, dtype)
    assert a.dtype == b.dtype == np.dtype(dtype)
    tol = 1e-4 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(host.matmul(a, b), a.astype(np.float64) @ b.astype(np.float64), rtol=tol, atol=tol)
    tol = 1e-3 if dtype == "float32" else 1e-10
    np.testing.assert_allclose(a.astype(np.float64) @ host.solve(a, b), b, rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", DTYPES)
def test_gibbs_sweep_matches_scipy(dtype):
    import scipy.linalg

    covs, means = host.sweep_inputs(5, 40, dtype)
    assert covs.dtype == means.dtype == np.dtype(dtype) and covs.shape == (40, 5, 5)
    expected = 0.0
    for cov, mean in zip(covs.astype(np.float64), means.astype(np.float64)):
        factor = scipy.linalg.cho_factor(cov, lower=True)
        logdet = 2.0 * np.sum(np.log(np.diag(factor[0])))
        expected += -0.5 * (logdet + mean @ scipy.linalg.cho_solve(factor, mean)) + np.log(factor[0][0, 0])
    assert host.gibbs_sweep(covs, means) == pytest.approx(expected, rel=1e-4 if dtype == "float32" else 1e-12)


@pytest.mark.parametrize("dtype", DTYPES)
def test_elementwise_matches_float64_numpy(dtype):
    x = host.elementwise_inputs(10_001, dtype)
    x64 = x.astype(np.float64)
    expected = np.cos(x64) ** 2 * np.sin(3 * x64) + np.sqrt(np.abs(x64)) * np.exp(-0.5 * x64 * x64)
    got = host.op_mix(x)
    assert got.dtype == np.dtype(dtype)
    np.testing.assert_allclose(got, expected, atol=1e-5 if dtype == "float32" else 1e-13)


@pytest.mark.parametrize("dtype", DTYPES)
def test_sort(dtype):
    x = host.sort_inputs(5_000, dtype)
    assert np.array_equal(host.sort(x), np.array(sorted(x.tolist()), dtype=dtype))


@pytest.mark.parametrize("dtype", DTYPES)
def test_numba_loop_matches_numpy_scalar_loop(dtype):
    got = host.numba_kernels()["loop"](*host.numba_inputs("loop", 2_000, dtype))
    assert got.dtype == np.dtype(dtype)  # float32 stays float32 (no promotion inside the loop)
    np.testing.assert_array_equal(got, host.quadratic_path_reference(0.3, 2_000, dtype))


@pytest.mark.parametrize("dtype", DTYPES)
def test_numba_prange_matches_vectorised_numpy(dtype):
    x0, r, steps = host.numba_inputs("parallel", 3_001, dtype)
    got = host.numba_kernels()["parallel"](x0, r, steps)
    assert got.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(got, host.quadratic_many_reference(x0, steps))


def test_unknown_params_are_named():
    with pytest.raises(ValueError, match="threads param 'two'"):
        host.thread_target("two")
    with pytest.raises(ValueError, match="numba kernel 'vector'"):
        host.numba_inputs("vector", 10, "float32")


PROBE = """
import json, numba
from threadpoolctl import threadpool_info
from benchmarks.kernels import host
before = host.blas_threads(), numba.get_num_threads()
limiter = host.set_threads({threads!r}, numba=True)
blas = [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"]
print(json.dumps(dict(before=before, blas=blas, numba=numba.get_num_threads())))
"""


def _probe(threads):
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                                                              "MKL_NUM_THREADS", "NUMBA_NUM_THREADS")}
    return last_json(python("-c", PROBE.format(threads=threads), env=env, timeout=120))


@pytest.mark.skipif(host.available_cpus() < 2, reason="one CPU: 1 thread and all CPUs are the same count")
def test_thread_switch_changes_blas_and_numba_counts():
    """In a fresh process (as asv runs it): threadpoolctl and Numba report the count the switch set."""
    one, every = _probe("1"), _probe("all")
    n = host.available_cpus()
    assert one["blas"] and set(one["blas"]) == {1} and one["numba"] == 1
    assert set(every["blas"]) == {n} and every["numba"] == min(n, every["before"][1])
    assert one["before"][0] > 1  # BLAS started with more than one thread: "1" really changed it


def test_host_info_records_blas_library(tmp_path, monkeypatch):
    monkeypatch.setenv("JAXCI_ARTIFACTS", str(tmp_path))
    path = host.write_host_info("probe")
    info = json.loads(path.read_text())
    assert path.parent == tmp_path / "host"
    blas = [lib for lib in info["threadpools"] if lib["user_api"] == "blas"]
    assert blas and blas[0]["internal_api"] and blas[0]["num_threads"] >= 1
    assert info["available_cpus"] >= 1


@pytest.mark.slow
def test_host_suite_at_ci_scale(ci_results):
    """The host suite in the session-wide CI-scale run (conftest.ci_run): the small cases ran, the large ones are
    n/a, the thread tracks read 1 and all CPUs, and the threadpool JSON is under JAXCI_ARTIFACTS."""
    results, _, box = ci_results
    py = result_values(results, "host.PurePython.time_run")
    assert py[("'int_sum'", "100000")] > 0 and math.isnan(py[("'int_sum'", "10000000")])
    linalg = result_values(results, "host.NumpyLinalg.time_run")
    assert linalg[("'matmul'", "256", "'1'", "'float64'")] > 0
    assert math.isnan(linalg[("'matmul'", "3000", "'all'", "'float64'")])
    sweep = result_values(results, "host.NumpySmallLinalgLoop.time_run")
    assert sweep[("4", "'1'", "'float64'")] > 0 and math.isnan(sweep[("16", "'all'", "'float64'")])
    first = result_values(results, "host.NumbaFirstCall.track_first_call_s")
    assert all(v > 0 for v in first.values())
    for key in ("host.Threads.track_blas_threads", "host.Threads.track_numba_threads"):
        counts = result_values(results, key)
        assert counts[("'1'",)] == 1 and counts[("'all'",)] == host.available_cpus()
    written = sorted(p.name for p in (box.root / "artifacts" / "host").iterdir())
    assert [name.rsplit("-", 1)[-1] for name in written] == ["1.json", "all.json"], written
