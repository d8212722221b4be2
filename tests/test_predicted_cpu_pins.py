"""Work a lecture itself places on the CPU (a process-wide CPU pin from its cell on, a local
one in its own cell) is predicted on the GPU side at the CPU side's seconds, compile included, never as if it ran on
the GPU. Arithmetic on made-up runs: never a timing."""

import pytest

from jaxci.audit.judging import predicted
from jaxci.audit.reading.pins import Pin
from jaxci.audit.runner import CellTiming
from tests.modelutil import notebook, t4_family

#: a process-wide CPU pin through jax_platform_name (Pin.setting says what chose it)
NAME_PIN = Pin(3, 1, ("cpu",), "config jax_platform_name=cpu", "jax_platform_name")

CALL = {"name": "step", "calls": 1000, "wall_s": 5.0, "first_s": 0.5, "compile_s": 0.4, "warm_s": 0.0002,
        "largest": 100, "dtype": "float64", "flops": 2e3, "bytes": 8e3, "loops": [["scan", 100000, 11, 1, "step"]]}


model = t4_family


def _run():
    return notebook(*(CellTiming(i, "", 1, 1, compilations=1, compile_s=0.2, calls=[dict(CALL)]) for i in (1, 3, 5)))


def test_a_process_wide_pin_takes_the_cpu_side_from_its_cell_on(model):
    free = predicted.gpu_family(_run(), model.runner)
    pinned = predicted.gpu_family(_run(), model.runner, pins=[NAME_PIN])
    per_cell = free.cpu.parts["calls"] / 3
    assert pinned.gpu.parts["calls"] == pytest.approx(free.gpu.parts["calls"] / 3 + 2 * per_cell)
    assert "cells 3, 5 placed on the CPU by the lecture" in pinned.basis
    assert predicted.cpu_cells([NAME_PIN], _run().cells) == {3, 5}


def test_a_local_pin_is_its_cell_only_and_a_gpu_pin_nothing():
    cells = _run().cells
    assert predicted.cpu_cells([Pin(3, 2, ("cpu",), "jax.default_device(...)", "jax.default_device")], cells) == {3}
    assert predicted.cpu_cells([Pin(1, 1, ("cuda", "cpu"), "config jax_platforms", "jax_platforms")], cells) == set()


def test_pinned_compiles_stay_at_this_runs_cpu_seconds(model):
    pins = [Pin(1, 1, ("cpu",), "JAX_PLATFORMS=cpu", "JAX_PLATFORMS")]
    pinned = predicted.gpu_family(_run(), model.runner, pins=pins)
    assert pinned.gpu.parts["compile"] == pytest.approx(3 * 0.2)
    assert pinned.gpu.seconds == pytest.approx(pinned.cpu.seconds - pinned.cpu.parts["start-up"]
                                            + pinned.gpu.parts["start-up"] - pinned.cpu.parts["compile"]
                                            + 3 * 0.2)
