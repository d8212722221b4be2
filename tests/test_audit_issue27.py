"""Issue 27: the audit decides with the runner model's numbers; the five static defects, each on its own fixture
lecture; the kernel-side hooks as a module. No timing is asserted: only which verdict, which sizes, which labels."""

from pathlib import Path

import pytest

from jaxci import REPO_ROOT
from jaxci.audit import classify as C
from jaxci.audit import family, hooks, predicted, repo
from jaxci.audit.runner import CellTiming, NotebookRun

HERE = Path(__file__).parent / "fixtures" / "lectures" / "issue27"


@pytest.fixture(scope="module")
def model():
    return family.from_results(REPO_ROOT / "results", "g4dn.2xlarge")


@pytest.fixture(scope="module")
def verdicts(model):
    return {v.path: v for v in repo.audit_static(HERE, model)}


def test_family_model_comes_from_the_runner_model(model):
    assert model.runner is not None and not model.missing
    assert model.crossover["float32"].label == family.PREDICTED
    assert ("elementwise", "float64") in model.crossovers and ("matmul", "float32") in model.crossovers
    assert model.step[("float32", "gpu")].label == family.PREDICTED


def test_no_model_is_said_first_and_in_every_row(tmp_path, capsys, monkeypatch):
    from jaxci.commands.audit import main

    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    assert main([str(HERE), "--machine", "c7i.2xlarge"]) == 0
    out = capsys.readouterr()
    assert out.out.splitlines()[0].startswith("**no runner model for c7i.2xlarge")
    assert "no runner model for c7i.2xlarge" in out.err
    rows = [line for line in out.out.splitlines() if line.startswith("| ") and ".md |" in line]
    jax_rows = [r for r in rows if "| jax |" in r]
    assert jax_rows and all("no runner model for c7i.2xlarge" in r for r in jax_rows)


def test_vmapped_scan_is_bulk(verdicts):
    v = verdicts["vmapped_scan.md"]
    (loop,) = v.scan.loops
    assert loop.carry == 1_000_000 and "vmap over 1,000,000" in loop.carry_why
    assert v.recommendation == C.KEEP_GPU and v.regime == C.BULK_LOOPS


def test_loop_closing_over_a_large_matrix_is_bulk(verdicts):
    v = verdicts["closed_matrix.md"]
    (loop,) = v.scan.loops
    assert loop.carry == 25_000_000 and "`A` read inside the step" in loop.carry_why
    assert v.recommendation == C.KEEP_GPU


def test_late_x64_switch_keeps_earlier_work_float32(verdicts):
    v = verdicts["late_x64.md"]
    assert v.scan.float64 and v.scan.x64_cell == 4
    assert v.scan.loops[0].dtype == "float32" and v.regime == C.SMALL_F32_SEQ and v.recommendation == C.PIN_CPU


def test_unknown_loop_beside_bulk_work_keeps_gpu(verdicts):
    v = verdicts["unknown_beside_bulk.md"]
    assert any(lp.cls == "unknown" for lp in v.scan.loops)
    assert v.regime == C.LARGE and v.recommendation == C.KEEP_GPU


def test_jitted_names_in_order_of_definition(verdicts):
    v = verdicts["late_jit_name.md"]
    assert not v.scan.loops  # the loop calls the NumPy f defined before it, not the jitted one defined later
    assert v.recommendation == C.PIN_CPU


def _run(*cells):
    return NotebookRun("x.md", platform="cpu", cells=[CellTiming(i, "", wall, wall, compilations=comp, loops=loops,
                                                                 calls=calls)
                                                      for i, (wall, comp, loops, calls) in enumerate(cells)])


def test_largest_later_trace_wins(verdicts):
    import copy

    v = copy.deepcopy(verdicts["unknown_beside_bulk.md"])
    v.runs = {"cpu": _run((0.1, 1, [["lax.scan", 50, 23, 1]], None),
                          (0.2, 1, [["lax.scan", 50, 2_000_003, 1]], None))}
    repo.merge_traced(v)
    loop = next(lp for lp in v.scan.loops if lp.kind == "lax.scan" and lp.source != "executed")
    assert loop.carry == 2_000_003


def test_predicted_lecture_time_and_verdict(verdicts, model):
    import copy

    call = {"name": "paths", "calls": 1, "wall_s": 1.0, "elements": 10**6, "largest": 10**6, "dtype": "float32",
            "flops": 2e6, "bytes": 8e6}
    v = copy.deepcopy(verdicts["vmapped_scan.md"])
    v.runs = {"cpu": _run((1.0, 0, None, None), (0.5, 2, [["lax.scan", 200, 10**6, 1]], [call]))}
    repo.merge(v)
    repo.decide_predicted(v, model)
    p = v.predicted["g4dn.2xlarge"]
    assert p["label"] == "predicted" and p["gpu_low_s"] <= p["gpu_s"] <= p["gpu_high_s"]
    assert set(p) >= {"cpu_s", "gpu_s", "gpu_low_s", "gpu_high_s", "basis"}
    assert v.basis == "predicted" and "GPU/CPU" in v.why and "margin" in v.why
    assert v.recommendation == (C.KEEP_GPU if p["gpu_s"] / p["cpu_s"] < C.GPU_FASTER else
                                C.PIN_CPU if p["gpu_s"] / p["cpu_s"] > C.GPU_SLOWER else C.EITHER)
    assert v.as_dict()["predicted"]["g4dn.2xlarge"] is p


def test_measured_slow_cell_outranks_trivial(verdicts):
    import copy

    v = copy.deepcopy(verdicts["late_jit_name.md"])
    v.runs = {"cpu": _run((0.1, 0, None, None), (predicted.SLOW_CELL_S + 48, 0, None, None))}
    repo.merge(v)
    repo.decide_predicted(v, None)
    assert v.recommendation == C.MEASURE and "cell 1 measured" in v.why


# ------------------------------------------------------------------ the kernel-side hooks, in this process
def test_hooks_read_shapes_through_vmap():
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    seen = []

    def inner(x):
        seen.append(hooks.elements(x))
        return x * 2

    jax.vmap(inner)(jnp.ones((1000, 3)))
    assert seen == [3000]
    assert hooks.elements((jnp.ones(4), 1.0)) == 5


def test_called_records_waited_calls_and_xla_cost():
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    hooks.STATE["calls"] = {}
    f = hooks.Called(jax, "f", jax.jit(lambda x: jnp.sin(x) + 1.0))
    x = jnp.ones(1000)
    f(x)
    f(x)
    jax.jit(lambda y: f(y))(x)  # inside a trace: part of the outer program, not a call of its own
    (entry,) = hooks.STATE["calls"].values()
    assert entry["calls"] == 2 and entry["largest"] == 1000 and entry["dtype"] == "float32"
    assert entry["bytes"] > 0 and entry["wall_s"] > 0
    assert f.lower(x) is not None  # the jitted function's own API passes through
    hooks.STATE["calls"] = {}
