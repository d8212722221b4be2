"""The executed audit runs a lecture as the build does: a jitted function with a while loop (whose trips the audit
counts) and a side effect sees that effect exactly as often as in a plain nbclient execution, so the notebook's
outputs and the files it writes are the same under the audit. A function whose loops can be counted without a
visible effect still has them counted."""

from __future__ import annotations

import pytest

from jaxci.audit import runner
from jaxci.audit.reading.cell_records import COUNTED, TracedLoop
from tests.auditutil import notebook

SETUP = ("import json, pathlib\nimport numpy as np\nimport jax, jax.numpy as jnp\n"
         "from jax.experimental import io_callback\n"
         "def halve(x):  # a loop whose trips are data: about log2(x) turns\n"
         "    return jax.lax.while_loop(lambda s: s[1] > 1.0, lambda s: (s[0] + 1, s[1] / 2), (0, x))")

#: kind -> (the cell that defines and calls a jitted function with the side effect, the cell that checks it)
KINDS = {
    "io_callback appends to a list": (
        "seen = []\n@jax.jit\ndef f_io(x):\n    i, _ = halve(x)\n"
        "    io_callback(lambda t: seen.append(int(t)), None, i, ordered=True)\n    return i\nr = f_io(40.0)",
        "assert seen == [6], seen\nprint('io_callback calls', len(seen))"),
    "debug.print prints": (
        "@jax.jit\ndef f_print(x):\n    i, _ = halve(x)\n    jax.debug.print('turns {}', i)\n    return i\n"
        "r = f_print(40.0)\njax.effects_barrier()",
        "print('after print')"),
    "debug.callback increments a counter": (
        "count = [0]\ndef bump(t):\n    count[0] += 1\n"
        "@jax.jit\ndef f_count(x):\n    i, _ = halve(x)\n    jax.debug.callback(bump, i)\n    return i\n"
        "r = f_count(40.0)\njax.effects_barrier()",
        "assert count == [1], count\nprint('callbacks', count[0])"),
    "a callback appends a line to a file": (
        "log = pathlib.Path('turns.log')\nlog.write_text('')\n"
        "def write(t):\n    with log.open('a') as fh:\n        fh.write(f'{int(t)}\\n')\n"
        "@jax.jit\ndef f_file(x):\n    i, _ = halve(x)\n    jax.debug.callback(write, i)\n    return i\n"
        "r = f_file(40.0)\njax.effects_barrier()",
        "lines = log.read_text().splitlines()\nassert lines == ['6'], lines\nprint('lines', lines)"),
    "a callback draws from NumPy's global RNG": (
        "np.random.seed(0)\ndraws = []\n"
        "@jax.jit\ndef f_rng(x):\n    i, _ = halve(x)\n"
        "    io_callback(lambda t: draws.append(float(np.random.rand())), None, i, ordered=True)\n    return i\n"
        "r = f_rng(40.0)\njax.effects_barrier()",
        "nxt = np.random.rand()\nnp.random.seed(0)\nassert nxt == np.random.rand(2)[1]\nprint('next draw', nxt)"),
    "a Python side effect at trace time": (
        "traced = []\n@jax.jit\ndef f_trace(x):\n    traced.append(1)\n    return halve(x)[0]\n"
        "r = [f_trace(40.0), f_trace(80.0)]",
        "assert len(traced) == 1, traced\nprint('traced', len(traced))"),
}
PURE = ("@jax.jit\ndef f_pure(x):\n    return halve(x)[0]\nr = [f_pure(40.0) for _ in range(3)]",
        "print('pure', int(r[0]))")


def _notebook():
    return notebook(SETUP, *[cell for kind in KINDS.values() for cell in kind], *PURE)


def _outputs(cell) -> list:
    """What a reader sees of a cell: its streams, results and errors (execution counts left out). Consecutive
    stream outputs of one name read as one text: the kernel flushes stdout on a timer, so a busy machine can split
    one print into two messages, and a page shows them joined."""
    seen = []
    for out in cell.get("outputs", []):
        if out.get("output_type") == "stream" and seen and seen[-1][0] == out["name"]:
            seen[-1] = (out["name"], seen[-1][1] + out["text"])
        elif out.get("output_type") == "stream":
            seen.append((out["name"], out["text"]))
        elif out.get("output_type") in ("execute_result", "display_data"):
            seen.append((out["output_type"], dict(out.get("data", {}))))
        elif out.get("output_type") == "error":
            seen.append(("error", out.get("ename"), out.get("evalue")))
    return seen


@pytest.fixture(scope="module")
def both(tmp_path_factory):
    """The notebook under the audit's runner, and a folder for its plain run: each writes in a folder of its own."""
    audited = _notebook()
    audit_dir, plain_dir = tmp_path_factory.mktemp("audited"), tmp_path_factory.mktemp("plain")
    result = runner.run_notebook(audited, platform="cpu", timeout=120, cwd=audit_dir, allow_errors=True)
    return result, audited, plain_dir, audit_dir


@pytest.fixture(scope="module")
def plain(both):
    """The same notebook executed by plain nbclient in the same kernel, as a build would."""
    from nbclient import NotebookClient

    nb = _notebook()
    NotebookClient(nb, kernel_name="python3", timeout=120, allow_errors=True,
                   resources={"metadata": {"path": str(both[2])}}).execute()
    return nb


@pytest.mark.parametrize("kind", list(KINDS))
def test_a_side_effect_happens_as_often_as_in_a_plain_run(both, plain, kind):
    result, audited, _, _ = both
    first = 1 + 2 * list(KINDS).index(kind)
    for index in (first, first + 1):
        assert result.cells[index].status == "ok", result.cells[index].error
        assert _outputs(audited.cells[index]) == _outputs(plain.cells[index]), index


def test_the_files_a_lecture_writes_are_the_same(both, plain):  # plain: its run wrote plain_dir
    _, _, plain_dir, audit_dir = both
    assert (audit_dir / "turns.log").read_text() == (plain_dir / "turns.log").read_text() == "6\n"


def test_loops_in_functions_with_effects_are_labelled_not_counted(both):
    result, *_ = both
    calls = {e.name: e for c in result.cells for e in (c.calls or [])}
    for name in ("f_io", "f_print", "f_count", "f_file", "f_rng"):
        (loop,) = calls[name].loops
        assert loop.trips is None and loop.count.startswith("not counted: the function has effects"), loop


def test_loops_of_functions_free_of_effects_are_still_counted(both):
    result, *_ = both
    calls = {e.name: e for c in result.cells for e in (c.calls or [])}
    assert calls["f_pure"].loops == [TracedLoop("lax.while_loop", 6.0, 2, count=COUNTED)]
    assert calls["f_trace"].loops[0].counted   # counted from jit's trace: not traced again
    assert all(c.trip_probe_s is None for c in result.cells if c.calls and c.calls[0].name == "f_io")
