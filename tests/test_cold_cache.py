"""Cold starts run with the persistent compilation cache off, even when the environment sets one (
point 7): lecture CI's jax-env action exports JAX_COMPILATION_CACHE_DIR, and a cold first call that hits it
is not cold. Each check runs in a fresh interpreter, as asv's timeraw_ and track_ processes do."""

import os
import subprocess
import sys

import pytest

from tests.asvutil import REPO

pytest.importorskip("jax")

COLD = """
from benchmarks.common import cold_prepare
jax, fn, args = cold_prepare("benchmarks.dense", "DenseColdStart", ("matmul", "float32", "cpu"))
jax.block_until_ready(jax.jit(fn)(*args))
print("cache enabled:", jax.config.jax_enable_compilation_cache)
"""
CACHED = """
from benchmarks.common import start_jax
jax, _ = start_jax("cpu", "float32", cache=True)
jax.block_until_ready(jax.jit(lambda x: x @ x)(jax.numpy.ones((64, 64))))
"""


def _run(code, cache_dir):
    env = {**os.environ, "JAX_COMPILATION_CACHE_DIR": str(cache_dir), "JAX_PLATFORMS": "cpu",
           "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "0", "JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES": "-1"}
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


def test_cold_start_ignores_an_inherited_cache_dir(tmp_path):
    out = _run(COLD, tmp_path)
    assert "cache enabled: False" in out
    assert list(tmp_path.iterdir()) == []  # nothing written, so nothing could have been read


def test_the_cache_benchmark_still_uses_its_cache(tmp_path):
    """The control: the same variables do fill the directory when a benchmark asks for the cache."""
    _run(CACHED, tmp_path)
    assert list(tmp_path.iterdir()) != []


def test_notebook_kernels_get_no_cache(monkeypatch):
    from benchmarks import notebooks

    monkeypatch.setenv("JAX_COMPILATION_CACHE_DIR", "/tmp/somewhere")
    monkeypatch.setenv("JAX_ENABLE_COMPILATION_CACHE", "true")  # both restored after the test
    env = notebooks._kernel_env()
    assert "JAX_COMPILATION_CACHE_DIR" not in os.environ and env["JAX_ENABLE_COMPILATION_CACHE"] == "false"
