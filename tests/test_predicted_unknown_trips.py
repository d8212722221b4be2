"""A loop whose trip count no trace knows (a while_loop to convergence inside a jitted call): its call's measured
CPU seconds say how many passes of the executable's work it ran, and the GPU side pays that many. No timing is
asserted: the cells are made up and the model's own figures are read back."""

from __future__ import annotations

import pytest

from jaxci.audit.judging import predicted
from jaxci.audit.runner import CellTiming, NotebookRun
from tests.modelutil import t4_family

g4dn = t4_family


def _lecture(trips, warm_s=2.0, carry=1000, counted=False, nbytes=8e6):
    call = {"name": "vfi", "calls": 1, "wall_s": warm_s + 0.3, "first_s": warm_s + 0.3, "compile_s": 0.3,
            "warm_s": None, "largest": 1000, "dtype": "float64", "flops": 4e6, "bytes": nbytes, "fusions": 1,
            "loops": [["lax.while_loop", trips, carry] + (["counted"] if counted else [])]}
    cell = CellTiming(1, "v = vfi(model)", warm_s + 0.4, warm_s + 0.4, compile_s=0.3, compilations=1, calls=[call])
    return NotebookRun("vfi.md", platform="cpu", cells=[CellTiming(0, "import jax", 0.5, 0.5), cell])


def test_unknown_trips_take_the_passes_the_measured_cpu_call_allows(g4dn):
    p = predicted.gpu_family(_lecture(None), g4dn.runner, float64=True)
    once = g4dn.runner.call("elementwise", int(8e6 / 16), "float64", "cpu")
    passes = 2.0 / once.seconds
    gpu_once = g4dn.runner.call("elementwise", int(8e6 / 16), "float64", "gpu")
    assert passes > 10                                  # the made-up call ran its work many times
    assert p.gpu.parts["calls"] >= passes * gpu_once.seconds * 0.99
    assert not any("trip count not known" in m for m in p.missing)
    assert any("trip count no trace knows" in i for i in [*(p.inputs or []), p.basis])
    # the CPU side is this run's measured call, whatever the inference says
    assert p.cpu.parts["calls"] == pytest.approx(2.0)


def test_known_trips_and_unmeasured_calls_are_predicted_as_before(g4dn):
    known = predicted.gpu_family(_lecture(50), g4dn.runner, float64=True)
    assert not any("trip count" in i for i in known.inputs or [])
    unknown = predicted.gpu_family(_lecture(None), g4dn.runner, float64=True)
    assert unknown.gpu.parts["calls"] > known.gpu.parts["calls"]   # 50 trips vs the inferred passes
    doubled = predicted.gpu_family(_lecture(None, warm_s=4.0), g4dn.runner, float64=True)
    assert doubled.gpu.parts["calls"] > 1.5 * unknown.gpu.parts["calls"]  # it reads the measured call


def test_counted_trips_are_priced_as_while_turns_each_doing_the_bodys_work(g4dn):
    """The hooks counted the loop's turns (endogenous_lake: about 570 per call of a value-function iteration): the
    GPU side pays them at the family's while-loop turn (a predicate read per turn), no inference from CPU time,
    and each turn does the executable's work (XLA's cost analysis counts a while body once), not the carry's."""
    p = predicted.gpu_family(_lecture(570.0, counted=True), g4dn.runner, float64=True)
    turns = g4dn.runner.call("while", 570, "float64", "gpu")
    assert turns and p.gpu.parts["calls"] >= turns.seconds
    assert not any("trip count" in i for i in p.inputs or [])
    scan = g4dn.runner.call("scan", 570, "float64", "gpu")
    assert turns.seconds > scan.seconds  # a scan step reads no predicate back: the while turn is dearer
    assert predicted.gpu_family(_lecture(569.6, counted=True), g4dn.runner, float64=True).gpu.parts["calls"] \
        == pytest.approx(p.gpu.parts["calls"])  # a mean of turns rounds to whole turns
    small = predicted.gpu_family(_lecture(570.0, counted=True, nbytes=8e3), g4dn.runner, float64=True)
    assert p.gpu.parts["calls"] > small.gpu.parts["calls"]  # a bigger body, dearer turns
    carry_only = predicted.gpu_family(_lecture(570, carry=10), g4dn.runner, float64=True)  # a static count: carry
    assert p.gpu.parts["calls"] > carry_only.gpu.parts["calls"]
