"""A jitted function's fast-path calls are counted, not timed: they take the same function's waited seconds
measured elsewhere in the run (never more than the cell's own time), not the cell's host time carried to the GPU
unchanged. Arithmetic on made-up runs: never a timing."""

import pytest

from jaxci.audit.judging import predicted
from jaxci.audit.reading.cell_records import EagerSize, EagerWork
from jaxci.audit.runner import CellTiming
from tests.modelutil import notebook, t4_family

model = t4_family


def _call(calls, **timed):
    return {"name": "solve", "calls": calls, "largest": 10_000, "dtype": "float32", "flops": 2e4, "bytes": 8e4,
            "loops": [], **timed}


def _run(fast_cell_wall):
    timed = CellTiming(1, "", 1.0, 1.0, compilations=1, compile_s=0.4,
                       calls=[_call(1, first_s=0.9, compile_s=0.4, warm_s=None)])
    fast = CellTiming(2, "", fast_cell_wall, fast_cell_wall, compilations=0, compile_s=0.0, calls=[_call(10)])
    return notebook(timed, fast)


def test_fast_path_calls_take_the_functions_measured_seconds(model):
    p = predicted.gpu_family(_run(6.0), model.runner)
    # cell 1: one call of 0.5 s (first less compile); cell 2: ten fast-path calls, its only JAX work, so they fill
    # its 6 s (a function's seconds vary with its arguments: the 0.5 s measured elsewhere would leave 1 s as host)
    assert p.cpu.parts["calls"] == pytest.approx(0.5 + 6.0)
    assert p.cpu.parts["host"] == pytest.approx(0.1)  # cell 1: 1 s less 0.4 compile, 0.5 call
    assert p.gpu.parts["host"] == pytest.approx(0.1)  # not the fast calls' seconds carried unchanged
    assert p.gpu.parts["calls"] < p.cpu.parts["calls"]
    plain = predicted.gpu_family(_run(5.0), model.runner)   # the same run with nothing left to fill
    assert p.gpu.high - plain.gpu.high == pytest.approx(1.0)  # the filled second may be host after all


def test_a_cell_with_eager_work_keeps_its_rest_beside_the_fast_path_calls(model):
    run = _run(6.0)
    run.cells[1].eager = EagerWork(3, 0.01, [EagerSize(100_000, 3, "float32")])
    p = predicted.gpu_family(run, model.runner)
    assert p.cpu.parts["calls"] == pytest.approx(0.5 + 10 * 0.5)  # the rest is the eager work's, measured


def test_eager_ops_on_tiny_operands_do_not_hold_the_rest(model):
    """imp_sample: a cell splits a PRNG key eagerly (11 ops on 1-5 keys, 0.12 s) beside the fast-path calls that
    took its 560 s: ops that small take their dispatch, which the hooks count, and nothing more."""
    run = _run(6.0)
    run.cells[1].eager = EagerWork(11, 0.2, [EagerSize(5, 4, "key<fry>"), EagerSize(1, 7, "int64")])
    p = predicted.gpu_family(run, model.runner)
    assert p.cpu.parts["calls"] == pytest.approx(0.5 + 6.0 - 0.2)  # the ops' own counted seconds stay theirs
    # an op the hooks did not size (past their per-cell limit) might be a large one: the rest stays put
    run.cells[1].eager = EagerWork(3000, 0.2, [EagerSize(5, 2000, "float32")])
    assert predicted.gpu_family(run, model.runner).cpu.parts["calls"] == pytest.approx(0.5 + 10 * 0.5)


def _varying(first_s, warm_s):
    """imp_sample's simulate over T = 1, 5, 10, 20 in one cell: the compiling call and the warm call timed, the two
    after on the fast path, in a cell of 20.4 s with 0.4 s of compile."""
    timed = _call(4, first_s=first_s, compile_s=0.4, warm_s=warm_s)
    return notebook(CellTiming(1, "", 20.4, 20.4, compilations=1, compile_s=0.4, calls=[timed]))


def test_a_timed_entrys_own_fast_path_calls_fill_the_cell_when_its_calls_vary(model):
    p = predicted.gpu_family(_varying(1.4, 2.5), model.runner)  # 1.0 s and 2.5 s timed: it varies with T
    assert p.cpu.parts["calls"] == pytest.approx(20.0)  # all of the cell past its compile
    assert p.cpu.parts["host"] == pytest.approx(0.0)
    same = predicted.gpu_family(_varying(1.4, 1.1), model.runner)  # 1.0 s and 1.1 s: no sign the others differ
    assert same.cpu.parts["calls"] == pytest.approx(4 * 1.1)
    assert same.cpu.parts["host"] == pytest.approx(20.0 - 4 * 1.1)


def test_borrowed_seconds_never_exceed_the_cells_own_time(model):
    p = predicted.gpu_family(_run(2.0), model.runner)  # ten calls at 0.5 s cannot fit in 2 s: scaled to the cell
    assert p.cpu.parts["calls"] == pytest.approx(0.5 + 2.0)
    assert p.gpu.parts["host"] == pytest.approx(0.1)
    none_left = predicted.gpu_family(_run(0.0), model.runner)  # a cell with no time at all: its calls take none
    assert none_left.cpu.parts["calls"] == pytest.approx(0.5)
