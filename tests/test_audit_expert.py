"""The audit decides like an expert: sizes followed through names (with their evidence), loops told apart by
what a step carries, verdicts per runner family from measured results (synthetic here, known numbers),
predictions, or built-in thresholds, each labelled; tolerated tags; the --emit-config patch."""

import copy
import json
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from jaxci.analysis.crossover import find_crossover
from jaxci.audit import repo
from jaxci.audit.judging import classify, family, judge
from jaxci.audit.reading.sizes import BULK, LATENCY, NEAR, UNKNOWN, Loop, classify_loop
from jaxci.audit.runner import CellTiming, NotebookRun, envcheck
from jaxci.audit.writing import emit
from jaxci.commands.audit import main
from tests.auditutil import by_path, myst

EXPERT = Path(__file__).parent / "fixtures" / "lectures" / "expert"
C, M, K = classify, family.MEASURED, family.NOT_KNOWN

# Built-in thresholds (no --machine): lecture -> (regime, recommendation); every basis is "not known".
BUILTIN = {
    "firms_bulk.md": (C.BULK_LOOPS, C.KEEP_GPU),
    "python_loop_bulk.md": (C.BULK_LOOPS, C.KEEP_GPU),
    "dataclass_grid.md": (C.LARGE, C.KEEP_GPU),
    "shapes_tuple.md": (C.LARGE, C.KEEP_GPU),
    "scalar_scan.md": (C.SMALL_F32_SEQ, C.PIN_CPU),
    "small_matrix_while.md": (C.SMALL_F32_SEQ, C.PIN_CPU),
    "python_loop_keys.md": (C.SMALL_F32_SEQ, C.PIN_CPU),
    "defaults_vfi.md": (C.SMALL_F64_SEQ, C.PIN_CPU),
    "vmap_households.md": (C.MODERATE, C.MEASURE),  # 5e5 is within 10x of the built-in 1e6
    "mixed_loops.md": (C.MIXED, C.MEASURE),  # no per-step costs: cannot add the two up
    "unknown_size.md": (C.UNSEEN, C.MEASURE),
    "errors_lecture.md": (C.TRIVIAL, C.PIN_CPU),
    "archive/old_draft.md": (C.TRIVIAL, C.PIN_CPU),
}

# Evidence each verdict must show: the chain from the size back to the names it came through.
EVIDENCE = {
    "firms_bulk.md": ["steps: cell 2 line 2: T = 500",
                      "k0 = jnp.ones(num_firms) <- cell 2 line 1: num_firms = 1000000"],
    "defaults_vfi.md": ["v0 = jnp.zeros(model.grid.shape)", "model.grid is the `grid` its factory built",
                        "default of create_model(grid_size=500)"],
    "dataclass_grid.md": ["meshgrid[1000, 1000] = 1,000,000 elements", "field Params.grid_size = 1000"],
    "shapes_tuple.md": ["random.normal[1000, 3000]", "shape = (M, T) <- cell 1 line 4: M, T = (1000, 3000)"],
    "python_loop_bulk.md": ["around jitted `update`", "wealth = jax.random.uniform(key, shape=(M,))"],
    "scalar_scan.md": ["num_steps = 10 ** 5", "1 element x 1e5 steps"],
    "vmap_households.md": ["vmap over [500000]", "num_households = 500000"],
    "small_matrix_while.md": ["`A` read inside the step <- cell 1 line 5: A = jnp.eye(n)"],
}


# ----------------------------------------------------------- synthetic results for one family (known numbers)
SIZES = [1_000, 10_000, 100_000, 1_000_000, 10_000_000, 50_000_000]


def elementwise_truth(n, dtype, device):
    """SYNTHETIC: cpu 2 µs + 1 ns/element (x2 in float64); gpu 30 µs + 0.01 ns/element (x32 in float64)."""
    if device == "cpu":
        return 2e-6 + n * 1e-9 * (2 if dtype == "float64" else 1)
    return 3e-5 + n * 1e-11 * (32 if dtype == "float64" else 1)


CPU_STEP, GPU_STEP = 1e-7, 2e-5  # SYNTHETIC seconds per scan step: the GPU 200x slower per step


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    """A synthetic GPU family (g4dn.2xlarge) written through asv's own Results API (tests.synth)."""
    from tests.synth import SynthResults

    s = SynthResults(tmp_path_factory.mktemp("synthetic"))
    s.machine("g4dn.2xlarge", gpu="1 x Tesla T4 (synthetic)", backend="cuda13", cores="4")
    s.add("g4dn.2xlarge", "elementwise.Elementwise.time_warm", ["n", "dtype", "device"],
          [SIZES, ["float32", "float64"], ["cpu", "gpu"]], elementwise_truth)
    s.add("g4dn.2xlarge", "loops.Scan.time_warm", ["n", "unroll", "dtype", "device"],
          [[1_000, 10_000, 100_000], [1, 8], ["float32", "float64"], ["cpu", "gpu"]],
          lambda n, unroll, dtype, device: n * (CPU_STEP if device == "cpu" else GPU_STEP))
    s.add("g4dn.2xlarge", "dispatch.TinyOp.time_warm", ["dtype", "device"], [["float32", "float64"], ["cpu", "gpu"]],
          lambda dtype, device: 5e-6 if device == "cpu" else 2e-5)
    return s.save()


@pytest.fixture(scope="module")
def measured(results):
    return family.from_results(results, "g4dn.2xlarge")


@pytest.fixture(scope="module")
def builtin_verdicts():
    return by_path(repo.audit_static(EXPERT))


# ----------------------------------------------------------- built-in thresholds
@pytest.mark.parametrize("lecture", sorted(BUILTIN))
def test_builtin_verdicts(builtin_verdicts, lecture):
    v = builtin_verdicts[lecture]
    assert v.status == "ok", v.errors
    assert (v.regime, v.recommendation) == BUILTIN[lecture], v.why
    assert v.basis == K and v.why == v.reasons[0]
    if BUILTIN[lecture][0] != C.UNSEEN and lecture != "archive/old_draft.md":
        assert "built-in threshold" in v.why  # says it is not a measurement


@pytest.mark.parametrize("lecture", sorted(EVIDENCE))
def test_evidence_chain(builtin_verdicts, lecture):
    text = " | ".join(builtin_verdicts[lecture].reasons)
    for piece in EVIDENCE[lecture]:
        assert piece in text, (piece, text)


def test_every_regime_covered_by_the_fixtures(builtin_verdicts):
    from tests.test_audit import EXPECTED

    seen = {v.regime for v in builtin_verdicts.values()} | {r for r, _ in EXPECTED.values()}
    assert seen == set(C.REGIMES)


def test_loops_classified_by_carry(builtin_verdicts):
    loops = {v.path: [(lp.kind, lp.trips, lp.carry, lp.cls) for lp in v.scan.loops] for v in builtin_verdicts.values()}
    assert loops["firms_bulk.md"] == [("lax.fori_loop", 500, 1_000_000, BULK)]
    assert loops["scalar_scan.md"] == [("lax.scan", 100_000, 1, LATENCY)]
    # the step's work: the 25x25 matrix it closes over, larger than its carry (v0[25], err)
    assert loops["small_matrix_while.md"] == [("lax.while_loop", None, 625, LATENCY)]
    assert loops["python_loop_keys.md"] == [("Python for loop", 1_000, 2, LATENCY)]  # a PRNG key per step
    assert loops["python_loop_bulk.md"] == [("Python for loop", 200, 2_000_000, BULK)]
    assert loops["mixed_loops.md"] == [("lax.fori_loop", 100, 4_000_000, BULK), ("lax.fori_loop", 200_000, 2, LATENCY)]
    assert loops["unknown_size.md"] == [("lax.scan", None, None, UNKNOWN)]  # read from a file: never guessed


def test_classify_loop_thresholds():
    loop = Loop("lax.scan", 0, 1, trips=10, carry=None)
    assert classify_loop(loop, 1e5) == UNKNOWN
    for carry, cls in ((9_999, LATENCY), (10_000, NEAR), (99_999, NEAR), (100_000, BULK)):
        loop.carry = carry
        assert classify_loop(loop, 1e5) == cls


# ----------------------------------------------------------- size inference, pattern by pattern
def scan_of(tmp_path, code: str):
    (tmp_path / "x.md").write_text(myst("import jax\nimport jax.numpy as jnp\n" + code))
    (v,) = repo.audit_static(tmp_path)
    return v.scan


@pytest.mark.parametrize("code,elements", [
    ("n = int(1e6)\nx = jnp.zeros(n)", 1_000_000),
    ("k = 10\nx = jnp.ones(2**k)", 1024),
    ("n, m = 300, 400\nx = jnp.empty((n * m,))", 120_000),
    ("def f(n=5_000):\n    return jnp.zeros(n)", 5_000),
    ("from typing import NamedTuple\nclass P(NamedTuple):\n    size: int = 700\np = P()\nx = jnp.full(p.size, 1.0)",
     700),
    ("def make(size=10):\n    return size\nm = make(size=64)\nx = jnp.ones((m.size, m.size))", 4096),
    ("x = jnp.linspace(0, 1, 2_000)\ny = jnp.linspace(0, 1, 3_000)\nX, Y = jnp.meshgrid(x, y)", 6_000_000),
    ("key = jax.random.PRNGKey(0)\nz = jax.random.normal(key, shape=(100, 50))", 5_000),
    ("g = jnp.arange(0, 1000, 2)\nv = jax.vmap(jax.vmap(lambda a, b: a * b, (None, 0)), (0, None))(g, g)", 250_000),
    ("x = jnp.linspace(0, 1)", 50),  # NumPy's default num
    ("def f(n=10):\n    return jnp.zeros(n)\nx = jnp.zeros(n)", 10),  # a default is not a global: n unknown outside
    ("n = 7\ndef f(n):\n    return jnp.zeros(n)", None),  # a parameter without default shadows the global
    ("key = jax.random.PRNGKey(0)\nz = jax.random.bernoulli(key, 0.5, (300,))", 300),
    ("key = jax.random.PRNGKey(0)\nz = jax.random.choice(key, 10, (40, 5))", 200),
    # unknown stays unknown
    ("import numpy as np\nn = len(np.loadtxt('data.csv'))\nx = jnp.zeros(n)", None),
    ("n = int(input())\nx = jnp.zeros(n)", None),
    ("x = jnp.zeros(some_function())", None),
])
def test_size_inference(tmp_path, code, elements):
    scan = scan_of(tmp_path, code)
    assert scan.max_elements == elements, scan.sizes


def test_later_assignment_wins_where_it_is_in_force(tmp_path):
    scan = scan_of(tmp_path, "n = 10\na = jnp.zeros(n)\nn = 2_000_000\nb = jnp.zeros(n)")
    assert [f.elements for f in scan.size_findings] == [10, 2_000_000]


# ----------------------------------------------------------- verdicts per family from measured results
MEASURED_EXPECTED = {  # with the synthetic g4dn.2xlarge numbers above
    "firms_bulk.md": (C.BULK_LOOPS, C.KEEP_GPU),
    "python_loop_bulk.md": (C.BULK_LOOPS, C.KEEP_GPU),
    "vmap_households.md": (C.LARGE, C.KEEP_GPU),  # 5e5 is past the measured crossover (~2.7e4)
    "mixed_loops.md": (C.MIXED, C.PIN_CPU),  # 2e5 steps x 20 µs on the GPU outweigh the bulk loop's gain
    "scalar_scan.md": (C.SMALL_F32_SEQ, C.PIN_CPU),
    "defaults_vfi.md": (C.SMALL_F64_SEQ, C.PIN_CPU),
    "unknown_size.md": (C.UNSEEN, C.MEASURE),
}


def test_measured_family_model_numbers(measured):
    cpu = [(n, elementwise_truth(n, "float32", "cpu"), elementwise_truth(n, "float32", "gpu")) for n in SIZES]
    _, n_star, _ = find_crossover(cpu)
    assert 1e4 < n_star < 1e5
    assert measured.crossover["float32"].value == pytest.approx(n_star) and measured.crossover["float32"].label == M
    ratio, how = measured.step_ratio("float32")
    assert ratio == pytest.approx(GPU_STEP / CPU_STEP) and "measured loops.Scan" in how
    expect = elementwise_truth(1_000_000, "float32", "cpu") / elementwise_truth(1_000_000, "float32", "gpu")
    assert measured.speedup(1_000_000, "float32") == pytest.approx(expect)


@pytest.mark.parametrize("lecture", sorted(MEASURED_EXPECTED))
def test_measured_verdicts(measured, lecture):
    v = by_path(repo.audit_static(EXPERT, measured))[lecture]
    assert (v.regime, v.recommendation) == MEASURED_EXPECTED[lecture], v.why
    assert v.family == "g4dn.2xlarge"
    if lecture != "unknown_size.md":
        assert v.basis == M, v.why


def test_measured_reasons_quote_the_numbers(measured):
    vs = by_path(repo.audit_static(EXPERT, measured))
    assert vs["firms_bulk.md"].why.startswith("bulk lax.fori_loop over 1e6 elements x 500 steps: GPU ~25x faster on "
                                             "g4dn.2xlarge (measured crossover 27,272 elements)")
    assert "GPU ~200x slower per step on g4dn.2xlarge" in vs["scalar_scan.md"].why
    mixed = vs["mixed_loops.md"].why
    cpu_total = 200_000 * CPU_STEP + 100 * 4.0e-3  # 4e6 elements interpolated between 1e6 and 1e7
    assert f"CPU {cpu_total:.2f} s" in mixed and "estimated GPU 4.01 s" in mixed


def test_predicted_family(results):
    model = family.from_results(results, "g4dn.xlarge")  # in the catalogue, no results of its own
    assert model.crossover["float32"].label == family.PREDICTED
    vs = by_path(repo.audit_static(EXPERT, model))
    assert vs["firms_bulk.md"].basis == family.PREDICTED and vs["firms_bulk.md"].recommendation == C.KEEP_GPU
    assert "predicted crossover" in vs["firms_bulk.md"].why
    # per-step costs come from the runner model, labelled predicted
    assert "predicted loops.Scan" in vs["scalar_scan.md"].why and vs["scalar_scan.md"].basis == family.PREDICTED


def test_cli_machine_and_bad_machine(results, tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    out = tmp_path / "a.json"
    assert main([str(EXPERT), "--machine", "g4dn.2xlarge", "--results", str(results), "--format", "json",
                 "--output", str(out)]) == 0
    data = {lecture["path"]: lecture for lecture in json.loads(out.read_text())["lectures"]}
    assert data["vmap_households.md"]["recommendation"] == C.KEEP_GPU and data["vmap_households.md"]["basis"] == M
    assert main([str(EXPERT), "--machine", "no-such-family", "--results", str(results)]) == 2
    assert "no-such-family" in capsys.readouterr().err
    assert main([str(EXPERT), "--machine", "g4dn.2xlarge", "--results", str(tmp_path / "none")]) == 2
    assert "not a directory" in capsys.readouterr().err


def test_verdict_distribution_is_discriminating(builtin_verdicts, measured):
    """Large-array lectures are kept on the GPU, not all pinned."""
    counts = Counter(v.recommendation for v in repo.audit_static(EXPERT, measured) if v.scan.uses_jax)
    assert counts[C.KEEP_GPU] >= 5 and counts[C.PIN_CPU] >= 4


# ----------------------------------------------------------- tolerated: tags, excluded lectures, magics
def test_tags_and_excluded_are_not_failures(builtin_verdicts, capsys, monkeypatch):
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    errors = builtin_verdicts["errors_lecture.md"]
    assert errors.status == "ok" and any("raises-exception: expected" in n for n in errors.notes)
    assert any("skip-execution" in n for n in errors.notes)
    draft = builtin_verdicts["archive/old_draft.md"]
    assert draft.status == "ok" and draft.excluded and any("not a failure" in n for n in draft.notes)
    assert main([str(EXPERT), "--format", "csv"]) == 0


# ----------------------------------------------------------- --execute: traced sizes fill the unknowns
def test_traced_loops_fill_unknowns_and_redecide(builtin_verdicts, measured):
    v = copy.deepcopy(builtin_verdicts["unknown_size.md"])
    cell = CellTiming(1, "", 1.0, 1.0, compile_s=0.1, loops=[{"kind": "lax.scan", "trips": 5_000, "carry": 3_000_000}])
    v.runs = {"cpu": NotebookRun("unknown_size.md", platform="cpu", cells=[cell])}
    judge.merge_traced(v)
    judge.decide(v, measured)
    (loop,) = v.scan.loops
    assert (loop.trips, loop.carry, loop.source) == (5_000, 3_000_000, "static+executed")
    assert "traced at execution" in loop.trips_why
    assert v.recommendation == C.KEEP_GPU and v.regime == C.BULK_LOOPS


def test_traced_python_loop_carry(builtin_verdicts):
    v = copy.deepcopy(builtin_verdicts["python_loop_bulk.md"])
    v.scan.loops[0].carry = None
    cell = CellTiming(1, "", 1.0, 1.0, jitted={"update": 4_000_000})  # w and z, 2e6 elements each, when traced
    v.runs = {"cpu": NotebookRun("python_loop_bulk.md", platform="cpu", cells=[cell])}
    judge.merge_traced(v)
    loop = v.scan.loops[0]
    assert (loop.trips, loop.carry) == (200, 4_000_000) and "largest argument of `update`" in loop.carry_why


# ----------------------------------------------------------- --emit-config
def test_emit_config_patch_applies(tmp_path, monkeypatch):
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    work = tmp_path / "lectures"
    shutil.copytree(EXPERT, work)
    patch = tmp_path / "ci.patch"
    assert main([str(work), "--format", "csv", "--output", str(tmp_path / "t.csv"), "--emit-config", str(patch)]) == 0
    text = patch.read_text()
    for setting in ("kernelspec.name", "mystnb: execution_timeout", "execute_notebooks"):
        assert setting in text
    subprocess.run(["git", "init", "-q"], cwd=work, check=True)
    subprocess.run(["git", "apply", str(patch)], cwd=work, check=True)
    spec = json.loads((work / emit.KERNEL_DIR / "kernel.json").read_text())
    assert spec["env"] == {"JAX_PLATFORMS": "cpu"}
    pinned = (work / "scalar_scan.md").read_text()
    assert f"name: {emit.KERNEL}" in pinned
    kept = (work / "firms_bulk.md").read_text()
    assert emit.KERNEL not in kept
    (after,) = [v for v in repo.audit_static(work) if v.path == "scalar_scan.md"]
    assert after.status == "ok"  # the edited front matter still reads


def test_emit_config_timeouts(builtin_verdicts, tmp_path):
    v = copy.deepcopy(builtin_verdicts["firms_bulk.md"])
    v.proposed_timeout = 900.0  # measured slowest cell x 3 above the book's 300 s
    config = emit.build([v])
    (change,) = config.changes
    assert "mystnb:\n  execution_timeout: 900\n" in change.new and "python3-jax-cpu" not in change.new
    nb = {"cells": [], "metadata": {"kernelspec": {"name": "python3"}}, "nbformat": 4, "nbformat_minor": 5}
    edited = json.loads(emit._ipynb_edit(json.dumps(nb, indent=1), emit.KERNEL, 120))
    assert edited["metadata"]["kernelspec"]["name"] == emit.KERNEL
    assert edited["metadata"]["mystnb"] == {"execution_timeout": 120}


# ----------------------------------------------------------- imports against the kernel's environment
def test_missing_modules_found_once(tmp_path):
    for name in ("a.md", "b.md"):
        (tmp_path / name).write_text(myst("import jax\nimport surely_not_installed_mod_x\nimport localhelper"))
    (tmp_path / "localhelper.py").write_text("X = 1\n")
    (tmp_path / "environment.yml").write_text("name: lectures\n")
    verdicts = repo.audit_static(tmp_path)
    pre = envcheck.check(verdicts)
    assert pre.missing == {"python3": {"surely_not_installed_mod_x": ["a.md", "b.md"]}}
    assert pre.missing_for("a.md") == ["surely_not_installed_mod_x"]
    msg = pre.message()
    assert msg.count("surely_not_installed_mod_x") == 1 and "environment.yml" in msg and "--kernel" in msg


@pytest.mark.slow
def test_execute_skips_lectures_missing_modules_without_failing(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    (tmp_path / "needs.md").write_text(myst("import surely_not_installed_mod_x"))
    out = tmp_path / "a.json"
    assert main([str(tmp_path), "--execute", "--platforms", "cpu", "--no-progress", "--format", "json",
                 "--output", str(out)]) == 0
    (lec,) = json.loads(out.read_text())["lectures"]
    assert lec["status"] == "ok" and "missing in kernel" in lec["not_executed"] and not lec["runs"]
    assert capsys.readouterr().err.count("surely_not_installed_mod_x") == 1


def test_near_break_even_is_measured(tmp_path, measured):
    # 30,000 elements is just past the synthetic crossover (~27,300): the GPU gains under 25% -> measure
    r = measured.speedup(30_000, "float32")
    assert 1 < r < 1.25
    (tmp_path / "x.md").write_text(myst("import jax.numpy as jnp\nx = jnp.ones(30_000)"))
    (v,) = repo.audit_static(tmp_path, measured)
    assert (v.regime, v.recommendation) == (C.LARGE, C.MEASURE) and "GPU ~1.1x faster" in v.why


@pytest.mark.slow
def test_execute_fills_what_the_scan_could_not_see(tmp_path, monkeypatch):
    """unknown_size.md reads its data from prices.csv (2,000 rows): statically unknown, traced when run."""
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    out = tmp_path / "a.json"
    assert main([str(EXPERT / "unknown_size.md"), "--execute", "--platforms", "cpu", "--no-progress",
                 "--format", "json", "--output", str(out)]) == 0
    (lec,) = json.loads(out.read_text())["lectures"]
    assert lec["status"] == "ok"
    (loop,) = lec["scan"]["loops"]
    assert (loop["kind"], loop["trips"], loop["carry"], loop["source"]) == ("lax.scan", 2000, 1, "static+executed")
    assert lec["regime"] == C.SMALL_F32_SEQ and lec["recommendation"] == C.PIN_CPU
    assert "1 element x 2,000 steps" in lec["why"]


def test_a_loop_vmapped_twice_multiplies_its_carry_once(tmp_path):
    """Two calls of one vmapped function (not nested) carry the axis once, whatever the loop's reason says."""
    code = ("def step(c, x):\n    return c + x, c\n\ndef run(x):\n"
            "    return jax.lax.scan(step, 0.0, jnp.arange(100))\n\n"
            "h = jnp.zeros(500)\na = jax.vmap(run)(h)\nb = jax.vmap(run)(h)")
    (loop,) = [lp for lp in scan_of(tmp_path, code).loops if lp.kind == "lax.scan"]
    assert loop.carry == 500 and loop.carry_why.count("vmap over") == 1
