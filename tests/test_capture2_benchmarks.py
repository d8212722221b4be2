"""The second GPU capture's benchmarks: matmul per precision, streaming bandwidth, seconds per NUTS leapfrog
step, compile stages with GPU autotuning on and off. Kernels are checked against NumPy, the GB/s track's
arithmetic with a fake clock, the NUTS and autotune classes in fresh interpreters (as asv's forkserver children
run them: JAX imported, no backend started), gpu combinations skip on a CPU machine, and one stock asv run at CI
scale measures the new classes. No timing is asserted."""

import itertools
import json
import math
import os
from types import SimpleNamespace

import numpy as np
import pytest

jax = pytest.importorskip("jax")

from benchmarks import compile as compile_suite  # noqa: E402
from benchmarks import dense as dense_suite  # noqa: E402
from benchmarks import elementwise as elementwise_suite  # noqa: E402
from benchmarks import nuts as nuts_suite  # noqa: E402
from benchmarks.kernels import dense, elementwise  # noqa: E402
from jaxci.nvml import gpu_present  # noqa: E402
from tests.asvutil import REPO, result_values  # noqa: E402
from tests.jaxmode import x64_for  # noqa: E402
from tests.suiteutil import jitted_as, python  # noqa: E402

TOL = {"float32": 2e-4, "float64": 1e-10}
DTYPES = ["float32", "float64"]


def _fresh(code: str, **env) -> dict:
    """Run `code` in a fresh interpreter at the repository root; it prints one line `JAXCI-RESULT <json>`."""
    full_env = {k: v for k, v in os.environ.items() if k not in ("JAX_PLATFORMS", "XLA_FLAGS")}
    proc = python("-c", code, timeout=600, env={**full_env, "PYTHONPATH": str(REPO), **env})
    lines = [line for line in proc.stdout.splitlines() if line.startswith("JAXCI-RESULT ")]
    assert proc.returncode == 0 and lines, proc.stderr[-4000:]
    return json.loads(lines[-1].split(" ", 1)[1])


# ---- dense.DensePrecision ----

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("precision", dense.PRECISIONS)
def test_precision_matmul_matches_numpy(precision, dtype):
    a, b = dense.matmul_inputs(48, dtype)
    got = jitted_as(dense.PRECISION_KERNELS[precision], dtype, a, b)
    np.testing.assert_allclose(got, a @ b, rtol=TOL[dtype] * 10, atol=TOL[dtype] * 10)


def test_precision_is_explicit_in_the_program_and_one_path_on_cpu():
    """The docstring's claims: each kernel names its precision in the lowered dot, and on a CPU both
    precisions compute the same float32 numbers."""
    a, b = dense.matmul_inputs(64, "float32")
    with x64_for("float32"):
        for precision, name in (("default", "DEFAULT"), ("highest", "HIGHEST")):
            text = jax.jit(dense.PRECISION_KERNELS[precision]).lower(a, b).as_text()
            assert f"precision = [{name}, {name}]" in text
        if jax.default_backend() == "cpu":
            np.testing.assert_array_equal(np.asarray(jax.jit(dense.matmul_default)(a, b)),
                                          np.asarray(jax.jit(dense.matmul_highest)(a, b)))


def test_precision_params_and_skips(monkeypatch):
    assert dense_suite.DensePrecision.param_names == ["precision", "n", "dtype", "device"]
    assert dense_suite.DensePrecision.params[0] == ["default", "highest"]
    case = dense_suite.DensePrecision()
    monkeypatch.setenv("JAXCI_SCALE", "ci")
    assert not case.is_large("highest", 1024) and case.is_large("highest", 2048)
    with pytest.raises(NotImplementedError, match="large case"):
        case.setup("highest", 4096, "float32", "cpu")
    monkeypatch.setenv("JAXCI_SCALE", "full")
    with pytest.raises(NotImplementedError, match="GPU size"):   # before JAX is touched
        case.setup("default", 8192, "float32", "cpu")


# ---- elementwise.Bandwidth ----

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", elementwise.BANDWIDTH_OPS)
def test_bandwidth_kernels_exact(op, dtype):
    args = elementwise.bandwidth_inputs(op, 10_001, dtype)
    assert len(args) == elementwise.BANDWIDTH_ARRAYS[op][0]
    got = jitted_as(elementwise.BANDWIDTH_KERNELS[op], dtype, *args)
    np.testing.assert_array_equal(got, elementwise.bandwidth_numpy(op, *args))
    want = 2.5 * args[0] + (args[1] if op == "axpy" else 0)
    np.testing.assert_array_equal(got, want.astype(dtype))


def test_bandwidth_bytes():
    assert elementwise.bandwidth_bytes("scale", 1000, "float32") == 2 * 1000 * 4
    assert elementwise.bandwidth_bytes("axpy", 1000, "float32") == 3 * 1000 * 4
    assert elementwise.bandwidth_bytes("axpy", 100_000_000, "float64") == 2_400_000_000
    # the largest size holds at least 400 MB per array
    assert max(elementwise_suite.BANDWIDTH_SIZES) * 4 >= 400e6


def _fake_clock(durations):
    """A clock read twice per timed call: each call lasts the next of `durations`."""
    t = {"now": 0.0, "reads": 0}

    def read():
        t["reads"] += 1
        if t["reads"] % 2 == 0:
            t["now"] += next(durations)
        return t["now"]

    return read, t


@pytest.mark.parametrize("step_s, calls", [(0.5, elementwise_suite.GBPS_MIN_CALLS),
                                            (1e-4, elementwise_suite.GBPS_MAX_CALLS)])
def test_gbps_track_divides_bytes_by_the_median_call(monkeypatch, step_s, calls):
    clock, state = _fake_clock(itertools.repeat(step_s))
    monkeypatch.setattr(elementwise_suite, "clock", clock)
    made = []
    case = elementwise_suite.Bandwidth()
    case.jax, case.args = SimpleNamespace(block_until_ready=lambda x: x), ()
    case.fn = lambda: made.append(1)
    gbps = case.track_gbps("axpy", 10_000_000, "float32", "cpu")
    assert len(made) == calls and state["reads"] == 2 * calls
    assert gbps == pytest.approx(3 * 10_000_000 * 4 / step_s / 1e9)
    assert elementwise_suite.Bandwidth.track_gbps.unit == "GB/s"


def test_median_is_robust_to_one_slow_call(monkeypatch):
    monkeypatch.setattr(elementwise_suite, "clock", _fake_clock(iter([0.5, 0.5, 9.0, 0.5, 0.5]))[0])
    assert elementwise_suite.median_call_s(lambda: None) == 0.5


def test_bandwidth_large_sizes_skipped_at_ci(monkeypatch):
    monkeypatch.setenv("JAXCI_SCALE", "ci")
    with pytest.raises(NotImplementedError, match="large case"):
        elementwise_suite.Bandwidth().setup("axpy", 10_000_000, "float64", "cpu")


# ---- gpu combinations on a machine without a GPU ----

@pytest.mark.skipif(gpu_present(), reason="this machine has a GPU")
def test_gpu_combinations_are_skipped(monkeypatch, tmp_path):
    monkeypatch.setenv("JAXCI_SCALE", "full")
    for case, params in [(dense_suite.DensePrecision(), ("highest", 1024, "float32")),
                         (elementwise_suite.Bandwidth(), ("axpy", 1_000_000, "float32")),
                         (nuts_suite.NutsLeapfrogStep(), (str(tmp_path), "float64")),
                         (compile_suite.AutotuneCompile(), ("off", "matmul", "float32"))]:
        with pytest.raises(NotImplementedError, match="gpu combination skipped"):
            case.setup(*params, "gpu")
    assert not list(tmp_path.iterdir())   # skipped before any scratch file or sampler run


# ---- nuts.NutsLeapfrogStep ----

NUTS_CHILD = """
import json, sys
from benchmarks import nuts
nuts.STEP_DRAWS = {draws}
case = nuts.NutsLeapfrogStep()
case.setup({rundir!r}, "float64", "cpu")
again = nuts.NutsLeapfrogStep()
again.setup({rundir!r}, "float64", "cpu")   # a second method's process: reads the first one's numbers
p = ({rundir!r}, "float64", "cpu")
print("JAXCI-RESULT " + json.dumps({{"result": case.result, "s": case.track_s_per_leapfrog_step(*p),
                                     "steps": again.track_leapfrog_steps(*p), "compile": again.track_compile_s(*p)}}))
"""


def test_nuts_seconds_per_step_on_a_tiny_seeded_run(tmp_path):
    draws = 5
    out = _fresh(NUTS_CHILD.format(draws=draws, rundir=str(tmp_path)), JAXCI_SCALE="ci")
    r = out["result"]
    assert r["draws"] == draws and r["finite"]
    assert math.isfinite(out["s"]) and out["s"] > 0
    # every iteration takes 1 .. 2^8 - 1 leapfrog steps (max tree depth 8), warmup and sampling both counted
    assert 2 * draws <= out["steps"] == r["warmup_steps"] + r["sample_steps"] <= 2 * draws * 255
    assert 0 < out["compile"] < r["wall_s"]
    assert out["s"] * out["steps"] == pytest.approx(r["wall_s"] - r["compile_s"])
    assert out["s"] == pytest.approx(1 / r["steps_per_s"])   # the same execution seconds as Nuts' rate
    assert (tmp_path / "nuts-step-float64-cpu.json").is_file()


@pytest.mark.parametrize("record, error", [
    ({"started": True}, "did not finish"),
    ({"finite": True, "s_per_step": None, "compile_s": 5.0, "wall_s": 4.0}, "no execution time"),
    ({"finite": False, "s_per_step": 1e-3}, "non-finite"),
])
def test_nuts_step_failures_are_failures(tmp_path, record, error):
    (tmp_path / "nuts-step-float32-cpu.json").write_text(json.dumps(record))
    with pytest.raises(RuntimeError, match=error):
        nuts_suite.NutsLeapfrogStep().setup(str(tmp_path), "float32", "cpu")


# ---- compile.AutotuneCompile ----

def test_autotune_flags_keep_other_flags_and_replace_the_level():
    f = compile_suite.autotune_flags
    assert f("off") == "--xla_gpu_autotune_level=0"
    assert f("default") == ""
    assert f("off", "--xla_dump_to=/x --xla_gpu_autotune_level=4") == "--xla_dump_to=/x --xla_gpu_autotune_level=0"
    assert f("default", "--xla_gpu_autotune_level=2 --xla_dump_to=/x") == "--xla_dump_to=/x"
    with pytest.raises(ValueError, match="'auto'"):
        f("auto")


AUTOTUNE_CHILD = """
import json, os
import benchmarks.common as common
from benchmarks import compile as suite
seen = {{}}
real = common.start_jax

def spy(*args, **kwargs):
    seen["started_before"] = common.backend_started()
    seen["xla_flags"] = os.environ.get("XLA_FLAGS")
    return real(*args, **kwargs)

common.start_jax = spy
# set after JAX was imported, as an inherited variable would be seen by a forkserver child
os.environ["XLA_FLAGS"] = "--xla_gpu_autotune_level=3 --xla_dump_to={dump}"
case = suite.AutotuneCompile()
case.setup({autotune!r}, "matmul", "float32", "cpu")
seen["split"] = {{s: case.split[s] for s in ("trace", "lower", "backend")}}
seen["started_after"] = common.backend_started()
print("JAXCI-RESULT " + json.dumps(seen))
"""


@pytest.mark.parametrize("autotune", compile_suite.AUTOTUNE)
def test_autotune_class_sets_xla_flags_before_jax_starts(tmp_path, autotune):
    """In a fresh interpreter (as an asv forkserver child: JAX imported, no backend): the param's flag is in
    XLA_FLAGS when start_jax runs, an earlier level is replaced, other flags are kept, and XLA read the
    variable as it stood when the backend started, after JAX's import (its --xla_dump_to wrote the module)."""
    dump = tmp_path / "dump"
    out = _fresh(AUTOTUNE_CHILD.format(autotune=autotune, dump=str(dump)), JAXCI_SCALE="ci")
    assert out["started_before"] is False and out["started_after"] is True
    want = f"--xla_dump_to={dump}" + (" --xla_gpu_autotune_level=0" if autotune == "off" else "")
    assert out["xla_flags"] == want
    assert all(out["split"][s] >= 0 for s in ("trace", "lower", "backend")) and out["split"]["backend"] > 0
    assert any(dump.iterdir())   # XLA parsed XLA_FLAGS at backend start, not at import: setup's flags count


def test_autotune_refuses_after_a_backend_started(monkeypatch):
    monkeypatch.setattr(compile_suite, "backend_started", lambda: True)
    monkeypatch.delenv("XLA_FLAGS", raising=False)
    assert compile_suite.set_autotune("default") == ""   # nothing to change: allowed
    with pytest.raises(RuntimeError, match="before JAX starts"):
        compile_suite.set_autotune("off")
    assert "XLA_FLAGS" not in os.environ


def test_autotune_ci_skips_and_kernels_build(monkeypatch):
    monkeypatch.setenv("JAXCI_SCALE", "ci")
    with pytest.raises(NotImplementedError, match="JAXCI_SCALE=ci"):
        compile_suite.AutotuneCompile().setup("off", "kalman_grad", "float32", "cpu")
    case = compile_suite.AutotuneCompile()
    for kernel in compile_suite.AUTOTUNE_KERNELS:
        fn, args = case.build("off", kernel, "float64")
        assert callable(fn) and len(args) >= 1
    with pytest.raises(ValueError, match="'conv'"):
        case.build("off", "conv", "float32")


# ---- one stock asv run of the new classes at CI scale ----

@pytest.mark.slow
def test_asv_runs_the_new_classes_at_ci_scale(ci_results):
    """The session-wide CI-scale run (conftest.ci_run) measured the new classes; that nothing in it failed, no
    fork followed a backend and gpu combinations are n/a is checked for the whole suite (test_suite_run,
    test_forkserver)."""
    results = ci_results[0]
    prec = result_values(results, "dense.DensePrecision.time_warm")
    assert all(prec[(f"'{p}'", "1024", f"'{dt}'", "'cpu'")] > 0 for p in ("default", "highest") for dt in DTYPES)
    assert math.isnan(prec[("'highest'", "4096", "'float32'", "'cpu'")])
    gbps = result_values(results, "elementwise.Bandwidth.track_gbps")
    assert gbps[("'axpy'", "1000000", "'float64'", "'cpu'")] > 0
    assert math.isnan(gbps[("'axpy'", "100000000", "'float64'", "'cpu'")])
    step = result_values(results, "nuts.NutsLeapfrogStep.track_s_per_leapfrog_step")
    assert step[("'float64'", "'cpu'")] > 0 and step[("'float32'", "'cpu'")] > 0
    # the step count asv recorded is the sampler's: whole, and within 1 .. 255 steps per iteration of
    # 10 warm-up + 10 draws (max tree depth 8); the per-step cost is what is left after compile
    counts = result_values(results, "nuts.NutsLeapfrogStep.track_leapfrog_steps")
    for dt in DTYPES:
        n = counts[(f"'{dt}'", "'cpu'")]
        assert n == int(n) and 2 * nuts_suite.STEP_DRAWS <= n <= 2 * nuts_suite.STEP_DRAWS * 255
    backend = result_values(results, "compile.AutotuneCompile.track_backend_s")
    assert all(backend[(f"'{a}'", "'matmul'", "'float32'", "'cpu'")] > 0 for a in ("default", "off"))
