"""The audit decides with the runner model's numbers; the five static defects, each on its own fixture
lecture; the kernel-side hooks as a module. No timing is asserted: only which verdict, which sizes, which labels."""

import copy
import json
import sys
from dataclasses import asdict
from pathlib import Path
from types import SimpleNamespace

import pytest

from jaxci.audit import repo
from jaxci.audit.judging import classify as C
from jaxci.audit.judging import colab, family, judge, predicted
from jaxci.audit.reading.cell_records import COUNTED, EagerSize, EagerWork, JitCall, TracedLoop
from jaxci.audit.runner import CellTiming, NotebookRun, hook_state, hooks, jit_calls
from jaxci.commands.audit import main
from jaxci.policy import placement
from tests.auditutil import by_path
from tests.frozen import RESULTS as FROZEN_RESULTS

HERE = Path(__file__).parent / "fixtures" / "lectures" / "model_verdicts"


@pytest.fixture(scope="module")
def model():
    return family.from_results(FROZEN_RESULTS, "g4dn.2xlarge")


@pytest.fixture(scope="module")
def verdicts(model):
    return by_path(repo.audit_static(HERE, model))


def test_family_model_comes_from_the_runner_model(model):
    assert model.runner is not None and not model.missing
    assert model.crossover["float32"].label == family.PREDICTED
    assert ("elementwise", "float64") in model.crossovers and ("matmul", "float32") in model.crossovers
    assert model.step[("float32", "gpu")].label == family.PREDICTED


def test_no_model_is_said_first_and_in_every_row(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    assert main([str(HERE), "--machine", "c7i.2xlarge"]) == 0
    out = capsys.readouterr()
    assert out.out.splitlines()[0].startswith("**no runner model for c7i.2xlarge")
    assert "no runner model for c7i.2xlarge" in out.err
    rows = [line for line in out.out.splitlines() if line.startswith("| ") and ".md |" in line]
    jax_rows = [r for r in rows if "| jax |" in r]
    assert jax_rows and all("no runner model for c7i.2xlarge" in r for r in jax_rows)


@pytest.mark.parametrize("lecture, carry, why", [("vmapped_scan.md", 1_000_000, "vmap over 1,000,000"),
                                                  ("closed_matrix.md", 25_000_000, "`A` read inside the step")])
def test_a_vmapped_loop_or_one_closing_over_a_large_matrix_is_bulk(verdicts, lecture, carry, why):
    v = verdicts[lecture]
    (loop,) = v.scan.loops
    assert loop.carry == carry and why in loop.carry_why
    assert v.recommendation == C.KEEP_GPU and v.regime == C.BULK_LOOPS


def test_late_x64_switch_keeps_earlier_work_float32(verdicts):
    v = verdicts["late_x64.md"]
    assert v.scan.float64 and v.scan.x64_cell == 4
    assert v.scan.loops[0].dtype == "float32" and v.regime == C.SMALL_F32_SEQ and v.recommendation == C.PIN_CPU


def test_unknown_loop_beside_bulk_work_keeps_gpu(verdicts):
    v = verdicts["unknown_beside_bulk.md"]
    assert any(lp.cls == "unknown" for lp in v.scan.loops)
    assert v.regime == C.LARGE and v.recommendation == C.KEEP_GPU


def test_scaled_fixtures_are_bulk_statically(model):
    scaled = by_path(repo.audit_static(HERE.parent / "model_verdicts_scaled", model))
    assert scaled["vmapped_scan_long.md"].regime == C.BULK_LOOPS
    assert scaled["bulk_eager_beside_unknown.md"].regime == C.BULK_LOOPS  # 750 eager steps over 4e6 agents
    assert all(v.recommendation == C.KEEP_GPU for v in scaled.values())


def test_jitted_names_in_order_of_definition(verdicts):
    v = verdicts["late_jit_name.md"]
    assert not v.scan.loops  # the loop calls the NumPy f defined before it, not the jitted one defined later
    assert v.recommendation == C.PIN_CPU


def _run(*cells):
    return NotebookRun("x.md", platform="cpu", cells=[CellTiming(i, "", wall, wall, compilations=comp, loops=loops,
                                                                 calls=calls)
                                                      for i, (wall, comp, loops, calls) in enumerate(cells)])


def test_largest_later_trace_wins(verdicts):
    v = copy.deepcopy(verdicts["unknown_beside_bulk.md"])
    v.runs = {"cpu": _run((0.1, 1, [["lax.scan", 50, 23, 1]], None),
                          (0.2, 1, [["lax.scan", 50, 2_000_003, 1]], None))}
    judge.merge_traced(v)
    loop = next(lp for lp in v.scan.loops if lp.kind == "lax.scan" and lp.source != "executed")
    assert loop.carry == 2_000_003


def test_predicted_lecture_time_and_verdict(verdicts, model):
    call = {"name": "paths", "calls": 1, "wall_s": 1.0, "elements": 10**6, "largest": 10**6, "dtype": "float32",
            "flops": 2e6, "bytes": 8e6}
    v = copy.deepcopy(verdicts["vmapped_scan.md"])
    v.runs = {"cpu": _run((1.0, 0, None, None), (0.5, 2, [["lax.scan", 200, 10**6, 1]], [call]))}
    judge.merge(v)
    judge.decide_predicted(v, model)
    p = v.predicted["g4dn.2xlarge"]
    assert p.label == "predicted" and p.gpu.low <= p.gpu.seconds <= p.gpu.high
    assert set(p.as_dict()) >= {"cpu_s", "gpu_s", "gpu_low_s", "gpu_high_s", "basis"}  # audit.json's keys
    assert v.basis == "predicted" and "GPU/CPU" in v.why and "margin" in v.why
    found = placement.place(v.path, p, None, "", "g4dn.2xlarge")  # the one pin rule on the bands
    assert v.recommendation == {placement.CPU: C.PIN_CPU, placement.GPU: C.KEEP_GPU}.get(found.device, C.EITHER)
    assert v.why == found.why
    assert v.as_dict()["predicted"]["g4dn.2xlarge"] == p.as_dict()


def test_measured_slow_cell_outranks_trivial(verdicts):
    v = copy.deepcopy(verdicts["late_jit_name.md"])
    v.runs = {"cpu": _run((0.1, 0, None, None), (predicted.SLOW_CELL_S + 48, 0, None, None))}
    judge.merge(v)
    judge.decide_predicted(v, None)
    assert v.recommendation == C.MEASURE and "cell 1 measured" in v.why


# ------------------------------------------------------------------ the kernel-side hooks, in this process
def test_hooks_read_shapes_through_vmap():
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    seen = []

    def inner(x):
        seen.append(hook_state.elements(x))
        return x * 2

    jax.vmap(inner)(jnp.ones((1000, 3)))
    assert seen == [3000]
    assert hook_state.elements((jnp.ones(4), 1.0)) == 5


def test_a_trace_read_back_for_the_analysis_notes_no_loops():
    """Reading jit's trace of a new signature back (for XLA's cost analysis and the loop count) may trace the
    function again where jit's cache lost it: that is not a run, so the loops it meets must not join the next
    signature's."""
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    seen = []

    jitted = jax.jit(lambda x: x + 1.0)

    class Jitted:  # the jitted function, whose trace read back for the analysis meets a loop
        def __call__(self, *args):
            return jitted(*args)

        def _cache_size(self):
            return jitted._cache_size()

        def trace(self, *args):
            hooks.STATE["tracing"].append((f.key, "f"))  # what a second trace of f would note
            jit_calls.note_loop("lax.fori_loop", None, 7)
            hooks.STATE["tracing"].pop()
            seen.append(hooks.STATE["lowering"])
            return jitted.trace(*args)

    hooks.STATE["calls"], hooks.STATE["cell"], hooks.STATE["fn_loops"], hooks.STATE["loops"] = {}, 1, {}, {}
    f = jit_calls.Called(jax, "f", Jitted())
    f(jnp.ones(3))
    assert seen == [True] and not hooks.STATE["lowering"]
    assert hooks.STATE["fn_loops"] == {} and hooks.STATE["loops"] == {}
    assert all(e.loops == [] for e in hooks.STATE["calls"].values())
    hooks.STATE["calls"], hooks.STATE["active"], hooks.STATE["own_loops"] = {}, [], {}


def test_called_records_waited_calls_and_xla_cost():
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    hooks.STATE["calls"], hooks.STATE["cell"] = {}, 1
    f = jit_calls.Called(jax, "f", jax.jit(lambda x: jnp.sin(x) + 1.0))
    x = jnp.ones(1000)
    for _ in range(5):
        f(x)
    jax.jit(lambda y: f(y))(x)  # inside a trace: part of the outer program, not a call of its own
    assert f.fast and f.pending == 3  # calls 3..5 took the fast path: counted, no walk, no wait
    hooks.settle()  # the cell's end: fast-path calls join their entry, the last result is waited for
    (entry,) = hooks.STATE["calls"].values()
    assert entry.calls == 5 and entry.largest == 1000 and entry.dtype == "float32"
    assert entry.bytes > 0 and entry.flops > 0 and entry.fusions >= 1
    assert entry.first_s > 0 and entry.warm_s > 0 and entry.wall_s >= entry.first_s
    assert f.last is None and not f.fast
    f(jnp.ones(10))  # a second signature: its own entry, with its own cost analysis
    assert len(hooks.STATE["calls"]) == 2 and not f.single
    assert f.lower(x) is not None  # the jitted function's own API passes through
    hooks.STATE["calls"], hooks.STATE["active"] = {}, []


@pytest.fixture
def kernel_hooks(monkeypatch):
    """The kernel-side hooks installed in this process (jax.jit, lax loops, eager dispatch), then taken out."""
    jax = pytest.importorskip("jax")
    from jax._src import core, pjit

    from jaxci.jaxmon import CompileClock

    for owner, name in ((jax, "jit"), (jax.lax, "scan"), (jax.lax, "fori_loop"), (jax.lax, "while_loop"),
                        (core.EvalTrace, "process_primitive"), (pjit, "_run_python_pjit"), (jax, "devices"),
                        (jax, "local_devices")):
        monkeypatch.setattr(owner, name, getattr(owner, name))  # what the hooks replace, put back after the test
    monkeypatch.setattr(sys, "meta_path", list(sys.meta_path))  # the import watchers install() adds go too
    mcmc = sys.modules.get(hooks.SAMPLER_MODULE)
    if mcmc is not None:  # numpyro already imported: its MCMC.run is wrapped at once
        monkeypatch.setattr(mcmc.MCMC, "run", mcmc.MCMC.run)
    shell = SimpleNamespace(user_ns={}, events=SimpleNamespace(register=lambda *args: None))
    hooks.STATE.update(installed=False, records=[], clock=None)
    hooks.install(shell, CompileClock(), True)
    yield jax, shell.user_ns
    hooks.STATE.update(installed=False, records=[], active=[], calls={})


def test_cell_record_loops_in_calls_eager_and_settle(kernel_hooks):
    jax, ns = kernel_hooks
    jnp = jax.numpy
    hooks.pre()

    def simulate(k):
        return jax.lax.scan(lambda c, _: (0.9 * c + 0.1, None), k, None, length=50)[0]

    paths = jax.jit(jax.vmap(simulate))
    ns["out"] = paths(jnp.ones(20_000))
    ns["big"] = jnp.ones(300_000) * 2.0 + 1.0  # eager bulk work
    hooks.post()
    (rec,) = json_records()
    (call,) = map(JitCall.read, rec["calls"])
    assert call.name == "simulate" and call.loops == [TracedLoop("lax.scan", 50, 20_000)]
    # noted inside the jitted function
    assert TracedLoop("lax.scan", 50, 20_000, within="simulate") in map(TracedLoop.read, rec["loops"])
    assert rec["eager"]["ops"] >= 1 and max(s["largest"] for s in rec["eager"]["sizes"]) == 300_000
    assert rec["settle_s"] >= 0 and rec["wall"] >= rec["settle_s"]


def test_the_hooks_record_the_main_threads_cpu_seconds(kernel_hooks):
    """`busy_s`: the main thread's CPU seconds in the cell, which a thread cannot spend faster than the clock (the
    trip counts' runs are out of both)."""
    jax, ns = kernel_hooks
    hooks.pre()
    ns["total"] = sum(range(200_000))  # host code: the main thread's own work
    ns["big"] = jax.numpy.ones(300_000) * 2.0
    hooks.post()
    (rec,) = json_records()
    assert 0 < rec["busy_s"] <= rec["wall"] + 0.01  # thread_time's granularity
    if hooks.run_delay() is not None:   # Linux with schedstat: the cell's wait for a core, within its wall time
        assert 0 <= rec["wait_s"] <= rec["wall"]


def test_a_jitted_functions_wrapped_is_the_notebooks_function(kernel_hooks):
    """`jax.jit(h).__wrapped__` is `h` under the hooks as without them (a notebook that calls it un-jitted, with a
    Python branch on its input, must not get the jitted function)."""
    jax, _ = kernel_hooks

    def h(x):
        return x + 1 if x > 0 else x - 1

    assert jax.jit(h).__wrapped__ is h
    assert jax.jit(h).__wrapped__(2) == 3


def test_a_while_loops_turns_are_counted_after_the_cell_not_in_it(kernel_hooks):
    """The cell only queues the count (its clocks and nbclient's cell timeout never hold it); count_queued, which
    the runner calls in a request of its own, counts the turns from jit's trace and reports the entry's loops."""
    jax, ns = kernel_hooks
    traced = []

    def halve(x):
        traced.append(1)
        return jax.lax.while_loop(lambda s: s[1] > 1.0, lambda s: (s[0] + 1, s[1] / 2), (0, x))[0]

    hooks.pre()
    ns["r"] = jax.jit(halve)(40.0)
    hooks.post()
    (rec,) = json_records()
    assert rec["queued"] == 1 and JitCall.read(rec["calls"][0]).loops == [TracedLoop("lax.while_loop", None, 2)]
    counted = json.loads(jit_calls.count_queued(60.0))
    ((k, loops),) = counted["calls"]
    assert k == 0 and loops == [asdict(TracedLoop("lax.while_loop", 6.0, 2, count=COUNTED))] and counted["s"] > 0
    assert traced == [1]  # the count ran jit's own trace: the function was traced once


def test_a_loop_not_counted_says_why(kernel_hooks, monkeypatch):
    """A call longer than PROBE_MAX_S is never repeated to count its loop: the loop says so, and its trips stay
    unknown for the judging to infer from the call's time."""
    jax, ns = kernel_hooks
    monkeypatch.setattr(jit_calls, "PROBE_MAX_S", 0.0)

    def halve(x):
        return jax.lax.while_loop(lambda s: s[1] > 1.0, lambda s: (s[0] + 1, s[1] / 2), (0, x))[0]

    hooks.pre()
    ns["r"] = jax.jit(halve)(40.0)
    hooks.post()
    (rec,) = json_records()
    (loop,) = JitCall.read(rec["calls"][0]).loops
    assert loop.trips is None and loop.count.startswith("not counted: its call took over") and "queued" not in rec


def json_records():
    return json.loads(hooks.take())


def test_start_up_is_charged_once_and_compile_per_compilation(model):
    one = _run((1.0, 1, None, None))
    many = _run((1.0, 1, None, None), *[(0.1, 1, None, None)] * 9)
    for run in (one, many):
        for c in run.cells:
            c.compile_s = 0.05
    p1, p9 = predicted.gpu_family(one, model.runner), predicted.gpu_family(many, model.runner)
    first = model.runner.call("elementwise", 1, "float32", "gpu", compile_only=True).seconds
    backend = model.runner.call("backend_start", None, "float32", "gpu").seconds  # the CUDA client, once
    assert p1.gpu.parts["start-up"] == pytest.approx(first) == pytest.approx(p9.gpu.parts["start-up"])
    assert p1.gpu.parts["backend"] == pytest.approx(backend) == pytest.approx(p9.gpu.parts["backend"])
    assert p1.gpu.parts["compile"] == 0 and p9.gpu.parts["compile"] > 0
    assert p9.cpu.parts["compile"] == pytest.approx(9 * 0.05)  # this run's own seconds per compilation


#: ten calls of one jitted function over 1e6 float32 elements, each warm call 0.02 s
CALL = {"name": "f", "calls": 10, "wall_s": 1.0, "first_s": 0.5, "compile_s": 0.4, "warm_s": 0.02, "largest": 10**6,
        "dtype": "float32", "flops": 2e6, "bytes": 8e6, "loops": []}


def test_cpu_side_uses_the_waited_call_time_and_colab_is_labelled(model):
    run = _run((0.6, 1, None, [CALL]))  # the cell: the compile and ten calls at the warm call's time
    run.cells[0].compile_s = 0.4
    p = predicted.gpu_family(run, model.runner)
    assert p.cpu.parts["calls"] == pytest.approx(10 * 0.02)
    assert 0 < p.gpu.parts["calls"] < p.cpu.parts["calls"]
    (name, free), = colab.colab(run, model).items()
    assert name == colab.COLAB and "Tesla T4" in free.basis and "not in the catalogue" in free.basis
    assert free.cpu is not None and free.gpu is not None and free.basis
    # judged on a g4dn: the family's own record is reused, with Colab's basis, and equals the computed one
    (_, reused), = colab.colab(run, model, judged=p).items()
    assert (reused.cpu.seconds, *reused.gpu.band()) == \
        pytest.approx((free.cpu.seconds, *free.gpu.band()))
    assert reused.basis == free.basis and reused.unexplained is None


def test_eager_bulk_cell_is_not_trivial_on_the_gpu_side(model):
    run = _run((3.0, 1, None, None))
    run.cells[0].compile_s = 0.5
    run.cells[0].eager = EagerWork(4, 2.0, [EagerSize(4_000_000, 4, "float32")])
    p = predicted.gpu_family(run, model.runner)
    assert p.cpu.parts["eager"] == pytest.approx(2.5)
    assert p.gpu.low < p.cpu.seconds and p.gpu.parts["eager"] < p.cpu.parts["eager"]


def test_unexplained_slow_cell_outranks_the_prediction(model):
    run = _run((predicted.SLOW_CELL_S + 20, 0, None, None))
    rec, why = C.verdict_from(predicted.gpu_family(run, model.runner), "g4dn.2xlarge")
    assert rec == C.MEASURE and "cell 0 measured" in why


def test_predicted_seconds_are_the_whole_lecture_host_code_included(model):
    """cpu_s / gpu_s are whole-lecture seconds (build times add them up): a host-only cell (a plot, pandas) counts
    the same on both sides, and `import jax` too; the JAX parts stay apart so a slow host cell is still flagged."""
    with_host = _run((1.0, 1, None, [CALL]), (2.5, 0, None, None))
    with_host.cells[0].import_s = 0.3
    alone = _run((1.0, 1, None, [CALL]))
    alone.cells[0].import_s = 0.3
    p, q = predicted.gpu_family(with_host, model.runner), predicted.gpu_family(alone, model.runner)
    for side in ("cpu", "gpu"):
        assert p.side(side).parts["host"] - q.side(side).parts["host"] == pytest.approx(2.5)
        assert q.side(side).parts["host"] >= 0.3   # import jax, and what no other part of the call cell accounts for
        assert p.side(side).seconds - q.side(side).seconds == pytest.approx(2.5)
        assert p.side(side).low <= p.side(side).seconds <= p.side(side).high
    slow = _run((predicted.SLOW_CELL_S + 20, 0, None, None))
    rec = predicted.gpu_family(slow, model.runner)
    assert rec.cpu.parts["host"] == pytest.approx(predicted.SLOW_CELL_S + 20) and rec.unexplained
