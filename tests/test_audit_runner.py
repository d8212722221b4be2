"""The instrumented runner: real kernels, per-cell compile/run numbers, failures reported, no zombies."""

from contextlib import suppress
from types import SimpleNamespace

import psutil
import pytest

from jaxci.audit import runner
from jaxci.audit.reading.cell_records import COUNTED, TracedLoop
from tests.auditutil import notebook

pytestmark = pytest.mark.slow


def kernels_left(result):
    """Live or zombie processes of the run's kernel, and ipykernel children of this test process."""
    left = []
    if result.kernel_pid is not None and psutil.pid_exists(result.kernel_pid):
        with suppress(psutil.NoSuchProcess):
            left.append(psutil.Process(result.kernel_pid).status())
    for child in psutil.Process().children(recursive=True):
        with suppress(psutil.NoSuchProcess):
            if "ipykernel" in " ".join(child.cmdline()) or child.status() == psutil.STATUS_ZOMBIE:
                left.append((child.pid, child.status()))
    return left


JIT_CELLS = (
    "import jax\nimport jax.numpy as jnp",
    "f = jax.jit(lambda x: jnp.sin(x) * 2.0)\ny = f(jnp.arange(4.0)).block_until_ready()",
    "y = f(jnp.arange(4.0)).block_until_ready()",
    "z = 1 + 1",
)

#: One notebook for every check that reads a completed run's records (a kernel each would cost a start-up
#: each): the kernel's platform and clean namespace before JAX, JAX first imported in a later cell that
#: compiles, the first and the warm call of a jitted function, a plain cell, and an 8 MiB array kept alive.
COMPLETED_CELLS = (
    "x = 1\nimport os\nassert os.environ['JAX_PLATFORMS'] == 'cpu' and os.environ['CI']",
    "assert not [k for k in dir() if 'jaxci' in k], dir()",
    "import jax, jax.numpy as jnp\nassert jax.devices()[0].platform == 'cpu'\n"
    "jax.jit(lambda v: v + 1)(jnp.ones(3)).block_until_ready()",
    *JIT_CELLS[1:],
    "x = jnp.ones((1024, 1024, 2), dtype=jnp.float32)\nx.block_until_ready()",
)
FIRST_CALL, WARM_CALL, PLAIN, HELD = 3, 4, 5, 6


@pytest.fixture(scope="module")
def completed():
    """The run of COMPLETED_CELLS, and what was left of its kernel right after it."""
    result = runner.run_notebook(notebook(*COMPLETED_CELLS), platform="cpu", timeout=120)
    return result, kernels_left(result)


def test_jit_cell_reports_compile_and_run(completed):
    result, left = completed
    assert result.ok, result.error
    assert [c.index for c in result.cells] == list(range(len(COMPLETED_CELLS)))
    first_call, warm_call, plain = result.cells[FIRST_CALL], result.cells[WARM_CALL], result.cells[PLAIN]
    assert first_call.compile_s > 0 and first_call.compilations >= 1
    assert first_call.trace_s > 0 and first_call.backend_s > 0
    assert first_call.compile_s <= first_call.wall_s + 1e-3
    assert warm_call.compilations == 0 and warm_call.compile_s == 0
    assert plain.compilations == 0
    assert all(c.run_s is not None and c.run_s >= 0 for c in result.cells)
    assert result.compile_s == pytest.approx(sum(c.compile_s for c in result.cells))
    assert left == []


def test_kernel_gets_platform_and_user_namespace_stays_clean(completed):
    result, _ = completed
    assert result.ok, result.error  # the cells' own asserts: JAX_PLATFORMS, no jaxci name, the CPU device
    assert [c.status for c in result.cells[:3]] == ["ok", "ok", "ok"]


def test_the_kernel_runs_as_in_ci_unless_told_otherwise(monkeypatch):
    """Lecture builds run with CI=true (GitHub Actions sets it in every step), and numpyro reads it (no progress
    bar: a chain is one jitted loop, not a dispatch per iteration): the audit's kernels get it too."""
    monkeypatch.delenv("CI", raising=False)
    assert runner.kernel_env("cpu")["CI"] == "true"
    monkeypatch.setenv("CI", "1")
    assert runner.kernel_env("cpu")["CI"] == "1"
    assert runner.kernel_env("cpu", {"CI": "false"})["CI"] == "false"


def test_jax_imported_in_a_later_cell_is_still_counted(completed):
    """JAX imported inside a later cell still has that cell's compilations counted."""
    result, _ = completed
    assert result.ok, result.error
    assert result.cells[0].compilations == 0 and result.cells[1].compilations == 0
    assert result.cells[2].compilations >= 1


def test_uninstrumented_run_has_times_but_no_compile():
    result = runner.run_notebook(notebook(*JIT_CELLS), platform="cpu", timeout=120, instrument=False)
    assert result.ok
    assert all(c.compile_s is None and c.wall_s > 0 for c in result.cells)


@pytest.fixture(scope="module")
def timed_out(tmp_path_factory):
    """One run that times out in its second cell, after its first started a child in a session of its own (the
    child's pid in a file), and a third cell that must never run: its result, what was left of its kernel
    right after it, and the child's pid. Both timeout tests read it: each would otherwise wait out a timeout."""
    pidfile = tmp_path_factory.mktemp("timed-out") / "child.pid"
    result = runner.run_notebook(notebook(
        "import subprocess, sys\n"
        "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)'], start_new_session=True)\n"
        f"open({str(pidfile)!r}, 'w').write(str(p.pid))",
        "import time\ntime.sleep(60)", "y = 2"), timeout=3)
    return result, kernels_left(result), int(pidfile.read_text())


def test_timeout_tears_down_the_kernel(timed_out):
    result, left, _ = timed_out
    assert result.status == runner.TIMEOUT
    assert "cell 1" in result.error and "3 s" in result.error
    assert [c.status for c in result.cells] == ["ok", "timeout"]  # the cell after it never ran
    assert left == []


def test_kernel_death_is_reported_without_zombies():
    result = runner.run_notebook(notebook("x = 1", "import os\nos._exit(7)", "y = 2"), timeout=60)
    assert result.status == runner.DEAD
    assert "cell 1" in result.error
    assert result.cells[0].status == "ok" and result.cells[0].compilations == 0  # read before the death
    assert kernels_left(result) == []


def test_child_processes_of_a_timed_out_kernel_are_killed(timed_out):
    """A child in its own session escapes jupyter_client's process-group kill: the runner's reap gets it."""
    result, left, child = timed_out
    assert result.status == runner.TIMEOUT
    assert left == []
    assert child in result.leftover_pids
    assert not psutil.pid_exists(child) or psutil.Process(child).status() == psutil.STATUS_ZOMBIE


def test_cell_error_and_syntax_error():
    result = runner.run_notebook(notebook("x = 1", "def f(:\n  pass", "y = 2"))
    assert result.status == runner.ERROR
    assert "SyntaxError" in result.error and "cell 1" in result.error
    assert len(result.cells) == 2
    result = runner.run_notebook(notebook("raise KeyError('k')", "y = 2"), allow_errors=True)
    assert result.status == runner.ERROR and len(result.cells) == 2 and result.cells[1].status == "ok"
    # the failed cell's record came by the separate request (no user_expressions after an error)
    assert result.cells[0].compile_s is not None and result.cells[1].compile_s is not None


def test_missing_kernel_and_unreadable_file(tmp_path):
    result = runner.run_notebook(notebook("x = 1"), kernel_name="jaxci-no-such-kernel")
    assert result.status == runner.NO_KERNEL and "jaxci-no-such-kernel" in result.error
    bad = tmp_path / "bad.ipynb"
    bad.write_text("{not json")
    result = runner.run_notebook(bad)
    assert result.status == runner.UNREADABLE and "bad.ipynb" in result.error


def test_myst_markdown_is_read_with_jupytext(tmp_path):
    path = tmp_path / "lecture.md"
    path.write_text("---\nkernelspec:\n  name: python3\n  display_name: Python 3\n---\n\n# Title\n\n"
                    "```{code-cell} ipython3\nx = 40 + 2\n```\n\n```{code-cell} ipython3\nassert x == 42\n```\n")
    nb = runner.read_notebook(path)
    assert [c.cell_type for c in nb.cells] == ["markdown", "code", "code"]
    result = runner.run_notebook(path)
    assert result.ok and [c.index for c in result.cells] == [1, 2]


def test_tracing_hooks_and_tolerated_tags():
    nb = notebook(
        "import jax\nimport jax.numpy as jnp",
        "x = jnp.zeros(1000)\n@jax.jit\ndef upd(x):\n    return x * 0.5 + 1\nfor t in range(120):\n    x = upd(x)\n"
        "g = lambda a: a + 1\nfor i in range(3):\n    jax.jit(g)(x)",
        "_, p = jax.lax.scan(lambda c, _: (c * 0.9, c), 0.3, None, length=5000)\n"
        "r = jax.lax.fori_loop(0, 77, lambda i, v: v + 1, jnp.ones((10, 10)))",
        "a = jnp.zeros(3)\na[0] = 1.0",
        "raise SystemExit('never run')",
        "b = a.at[0].set(1.0)",
    )
    nb.cells[3].metadata["tags"] = ["raises-exception"]
    nb.cells[4].metadata["tags"] = ["skip-execution"]
    result = runner.run_notebook(nb, platform="cpu", timeout=120)
    assert result.ok, result.error
    cells = {c.index: c for c in result.cells}
    assert sorted(cells) == [0, 1, 2, 3, 5]  # the skip-execution cell was not run
    assert cells[1].jitted == {"upd": 1000, "<lambda>": 1000}  # sizes seen when traced
    plain = runner.run_notebook(notebook(*[c.source for c in nb.cells[:2]]), platform="cpu", timeout=120,
                                trace=False)
    assert plain.ok and plain.cells[1].jitted is None
    assert cells[1].compilations == plain.cells[1].compilations  # one wrapper per function: jit's cache hits
    assert sorted(cells[2].loops, key=lambda loop: loop.kind) == [TracedLoop("lax.fori_loop", 77, 100),
                                                                  TracedLoop("lax.scan", 5000, 1)]
    upd = next(e for e in cells[1].calls if e.name == "upd")
    assert upd.calls == 120 and upd.largest == 1000 and upd.first_s >= upd.compile_s > 0  # fast path
    assert upd.warm_s is not None and upd.bytes > 0
    assert cells[3].status == "ok" and "immutable" in cells[3].expected_error  # went on after it
    assert cells[5].status == "ok"
    assert kernels_left(result) == []


def test_a_later_signature_keeps_the_loops_of_a_jitted_function_it_calls():
    """imp_sample: `simulate` calls the jitted `estimate`, whose loop has a trip count no trace knows. A later
    signature of `simulate` reuses `estimate`'s cached trace, so no loop hook runs; its loops are replayed."""
    nb = notebook(
        "import jax\nfrom functools import partial",
        "@jax.jit\ndef path(key, T):\n    return jax.lax.fori_loop(0, T, lambda i, c: c * 0.5, 1.0)\n"
        "@partial(jax.jit, static_argnames=['N'])\ndef sim(key, N, T=1):\n"
        "    return jax.vmap(lambda k: path(k, T))(jax.random.split(key, N))",
        "a = sim(jax.random.key(0), 10)",
        "b = [sim(jax.random.key(T), 10, T) for T in (1, 5, 10)]",
    )
    result = runner.run_notebook(nb, platform="cpu", timeout=120)
    assert result.ok, result.error
    first, later = (next(e for e in c.calls if e.name == "sim") for c in result.cells[2:4])
    assert first.elements != later.elements  # two signatures of sim
    # replayed from path's first trace; its carry is one copy's (a float), x the 10 copies sim's vmap runs; its
    # traced bound T counted on each slow-path call of each signature: T = 1, then T = 1, 5, 10 (their mean)
    assert first.loops == [TracedLoop("lax.fori_loop", 1.0, 10, count=COUNTED)]
    assert later.loops == [TracedLoop("lax.fori_loop", pytest.approx(16 / 3), 10, count=COUNTED)]


def test_peak_memory_is_recorded_per_lecture_and_labelled(completed):
    """The executed audit's per-lecture record carries the lecture's own memory need: on the CPU JAX's live
    buffers (an 8 MiB array held in the namespace) and the kernel's host RSS, no device figure (no GPU here)."""
    result, left = completed
    assert result.ok, result.error
    assert "1024, 1024, 2" in COMPLETED_CELLS[HELD]
    peak = result.as_dict()["peak_memory"]
    assert peak["live_buffers_mib"] >= 8.0
    assert peak["host_rss_peak_mib"] > peak["live_buffers_mib"]
    assert "device_peak_mib" not in peak or peak.get("device_platform") == "cpu"
    assert left == []


def test_peak_memory_takes_the_largest_of_each_kind():
    run = runner.NotebookRun("a.ipynb", cells=[
        runner.CellTiming(0, "a", 1.0, 1.0, memory={"host_rss_peak_bytes": 3 * 2**20, "live_buffers_bytes": 2**20}),
        runner.CellTiming(1, "b", 1.0, 1.0, memory={"device_peak_bytes": 5 * 2**20, "device_platform": "gpu",
                                                   "host_rss_peak_bytes": 2 * 2**20}),
        runner.CellTiming(2, "c", 1.0, 1.0)])
    assert run.peak_memory == {"device_peak_mib": 5.0, "live_buffers_mib": 1.0, "host_rss_peak_mib": 3.0,
                               "device_platform": "gpu"}
    assert runner.NotebookRun("b.ipynb").peak_memory is None


def test_memory_reads_the_devices_peak_where_the_backend_reports_one(monkeypatch):
    """What a GPU run records (no GPU here: a stand-in jax whose device reports memory_stats as CUDA's does);
    the CPU's missing stats give no device figure, and a backend not yet started is never started."""
    from jax._src import xla_bridge

    from jaxci.audit.runner import hooks

    gpu = SimpleNamespace(platform="gpu", memory_stats=lambda: {"peak_bytes_in_use": 3 * 2**30, "bytes_in_use": 1})
    cpu = SimpleNamespace(platform="cpu", memory_stats=lambda: None)
    fake = SimpleNamespace(local_devices=lambda: [cpu, gpu], live_arrays=lambda: [SimpleNamespace(nbytes=2**20)])
    monkeypatch.setitem(hooks._JAX, "jax", fake)
    monkeypatch.setattr(xla_bridge, "backends_are_initialized", lambda: True)
    got = hooks.memory()
    assert got["device_peak_bytes"] == 3 * 2**30 and got["device_platform"] == "gpu"
    assert got["live_buffers_bytes"] == 2**20 and got["host_rss_peak_bytes"] > 0
    monkeypatch.setattr(xla_bridge, "backends_are_initialized", lambda: False)
    assert set(hooks.memory()) == {"host_rss_peak_bytes"}


def test_a_jitted_while_loops_trips_are_counted_outside_the_cells_clocks():
    """endogenous_lake: a value-function iteration runs a while_loop to a tolerance inside a jitted function called
    33,603 times; no trace knows its trips. The hooks count them in extra runs of the function (outside the cell's
    clocks: the cell compiles no more than uninstrumented), and the notebook's values are untouched."""
    cells = (
        "import jax\nimport jax.numpy as jnp",
        "@jax.jit\ndef solve(n):\n"
        "    return jax.lax.while_loop(lambda s: s[0] < n, lambda s: (s[0] + 1, s[1] * 0.5), (0, jnp.ones(50)))\n"
        "@jax.jit\ndef outer(n):\n    i, v = solve(*(n,))\n    return i, v.sum()\n"
        "@jax.jit\ndef boxed(box):\n    return solve(box['n'])[0]\n"
        "@jax.jit\ndef outer2(box):\n    return boxed(box)\n"
        "@jax.jit\ndef both(ns):\n    return jax.vmap(solve)(ns)[0]",
        "r = [outer(30) for _ in range(4)]\nassert [int(i) for i, _ in r] == [30] * 4",
        "b = both(jnp.array([10, 20]))\nassert b.tolist() == [10, 20]",
        "c = [outer2({'n': 12}) for _ in range(2)]",
        "@jax.jit\ndef fo(n):\n    return jax.lax.fori_loop(0, n, lambda i, c: c + 1.0, 0.0)\nf = [fo(17), fo(17)]",
        "@jax.jit\ndef many(ns):\n    return jax.vmap(solve)(ns)[0].sum()\nm = many(jnp.arange(20_000) % 7)",
    )
    result = runner.run_notebook(notebook(*cells), platform="cpu", timeout=120)
    assert result.ok, result.error
    def call(cell, name):
        return next(e for e in result.cells[cell].calls if e.name == name)

    outer = call(2, "outer")
    assert outer.loops == [TracedLoop("lax.while_loop", 30.0, 51, count=COUNTED)] and outer.calls == 4
    assert result.cells[2].trip_probe_s > 0
    # each copy's turns (10, 20): their mean
    assert call(3, "both").loops == [TracedLoop("lax.while_loop", 15.0, 102, count=COUNTED)]
    # an inner call whose first argument is a dict of tracers: traced anew too
    assert call(4, "outer2").loops == [TracedLoop("lax.while_loop", 12.0, 51, count=COUNTED)]
    # traced bounds: upper - lower, when run
    assert call(5, "fo").loops == [TracedLoop("lax.fori_loop", 17.0, 1, count=COUNTED)]
    # 20,000 copies: one rolled callback loop, not 20,000 unrolled ones
    assert call(6, "many").loops[0].trips == pytest.approx(3.0, abs=0.01)
    plain = runner.run_notebook(notebook(*cells), platform="cpu", timeout=120, trace=False)
    assert plain.ok and plain.cells[2].trip_probe_s is None
    assert [c.compilations for c in result.cells] == [c.compilations for c in plain.cells]  # its compiles taken out


def test_a_signature_holds_the_loops_of_its_own_trace_only():
    """A jitted function traced under vmap in one cell and called at top level with a new signature in a later
    one: the later call's loops are its own trace's (one loop, counted), not those of both traces."""
    nb = notebook(
        "import jax\nimport jax.numpy as jnp",
        "@jax.jit\ndef res(x):\n    return jax.lax.while_loop(lambda s: s[1] > 1.0, lambda s: (s[0] + 1, s[1] / 2), "
        "(0, x))[0]",
        "R = jax.vmap(lambda v: res(v))(jnp.array([40.0, 80.0]))",
        "w = [res(v) for v in (40.0, 80.0)]",
    )
    result = runner.run_notebook(nb, platform="cpu", timeout=120)
    assert result.ok, result.error
    (call,) = result.cells[3].calls
    assert [(loop.kind, loop.counted) for loop in call.loops] == [("lax.while_loop", True)]


def test_loops_whose_count_did_not_answer_say_so():
    """The runner's count request failed (a timeout, a dead kernel): each loop still waiting for its count is
    labelled, never left silently unknown; counted loops and known trips are left as they are."""
    from jaxci.audit.runner import kernel

    timing = runner.CellTiming(1, "x", 1.0, 1.0, calls=[{"name": "f", "loops": [
        ["lax.while_loop", None, 3], ["lax.while_loop", 6.0, 3, "counted"], ["lax.scan", 10, 3]]}])
    kernel._merge_counts(timing, {})
    unanswered = "not counted: the count did not answer"
    assert timing.calls[0].loops == [TracedLoop("lax.while_loop", None, 3, count=unanswered),
                                     TracedLoop("lax.while_loop", 6.0, 3, count=COUNTED), TracedLoop("lax.scan", 10, 3)]
