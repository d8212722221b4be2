"""The compile suite's harness: the jit series, and the persistent cache filled by a cold run and hit by a warm one."""

import pytest

jax = pytest.importorskip("jax")

from benchmarks import compile as suite  # noqa: E402


def test_series_compiles_every_size():
    out = suite.run_series(jax, "float32", [8, 16, 24])
    assert set(out["per_size_s"]) == {"8", "16", "24"}
    assert out["total_s"] == pytest.approx(sum(out["per_size_s"].values()))
    assert out["compilations"] >= 3  # a fresh jit per size
    assert all(out["compile_per_size_s"][n] > 0 for n in out["per_size_s"])


def test_warm_cache_run_hits_what_the_cold_run_stored():
    runs = suite.cache_cold_warm("float32", "cpu", sizes=[32, 64])
    cold, warm = runs["cold"], runs["warm"]
    assert cold["cache_hits"] == 0 and cold["cache_misses"] >= 2
    assert warm["cache_hits"] >= 2  # both matmuls come from the cache the cold process wrote
    assert warm["cache_misses"] == cold["cache_misses"] - warm["cache_hits"]
    assert runs["entries"] >= 2


def test_cold_start_kernels_build(monkeypatch):
    case = suite.CompileColdStart()
    for kernel in ("matmul", "scan", "kalman_grad"):
        fn, args = case.build(kernel, "float32")
        assert callable(fn) and len(args) >= 1
    with pytest.raises(ValueError, match="'conv'"):
        case.build("conv", "float32")


def test_failed_child_is_reported(monkeypatch):
    monkeypatch.setattr(suite, "CACHE_CHILD", "raise SystemExit('boom {root}{device}{dtype}{sizes}')")
    with pytest.raises(RuntimeError, match="cold cache run exited 1"):
        suite.cache_cold_warm("float32", "cpu", sizes=[8])
