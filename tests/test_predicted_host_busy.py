"""Host code beside eager JAX work (newton_method's SciPy MINPACK around one 9e6-element Jacobian): the hooks
record the main thread's CPU seconds per cell (`busy_s`); what it spent beyond the cell's JAX parts is host code,
which runs on the host whatever the device, never eager work moved at the elementwise speed-up. Arithmetic on
made-up runs: never a timing. The hooks' record is checked in a real kernel
(test_the_hooks_record_the_main_threads_cpu_seconds)."""

import pytest

from jaxci.audit.judging import predicted
from jaxci.audit.reading.cell_records import EagerSize, EagerWork
from jaxci.audit.runner import CellTiming, NotebookRun
from tests.modelutil import t4_family

model = t4_family


def _run(busy_s):
    """One cell of 20 s: 1 s of compiles, eager ops on a 9e6-element operand, the main thread busy for `busy_s`."""
    cell = CellTiming(1, "", 20.0, 20.0, compilations=2, compile_s=1.0, busy_s=busy_s,
                      eager=EagerWork(18, 0.25, [EagerSize(9_000_000, 8, "float32")]))
    return NotebookRun("x.ipynb", platform="cpu", cells=[cell])


def test_the_main_threads_seconds_beyond_the_jax_parts_stay_host_time_on_the_gpu(model):
    p = predicted.gpu_family(_run(busy_s=18.0), model.runner)
    gpu, cpu = p.gpu.parts, p.cpu.parts
    assert gpu["host"] == pytest.approx(18.0 - 1.0)   # busy beyond the 1 s of compiles: SciPy's host code
    assert gpu["eager"] < 19.0 - 17.0                   # only the 2 s the main thread waited moves as eager work
    assert cpu["eager"] == pytest.approx(19.0)          # the CPU side as measured: nothing moves there


def test_a_waiting_main_thread_leaves_the_bulk_eager_work_to_move(model):
    """XLA computes eager work on its own threads (a 4e6-element jnp loop: 0.04 s of the main thread in 1.7 s), so
    an idle main thread moves the cell as before."""
    idle, unknown = predicted.gpu_family(_run(0.5), model.runner), predicted.gpu_family(_run(None), model.runner)
    assert idle.gpu.parts["host"] == 0.0 == unknown.gpu.parts["host"]
    assert idle.gpu.parts["eager"] == pytest.approx(unknown.gpu.parts["eager"])
    assert predicted.gpu_family(_run(18.0), model.runner).gpu.seconds > idle.gpu.seconds


def test_the_host_share_never_exceeds_what_is_beside_the_jax_parts(model):
    p = predicted.gpu_family(_run(busy_s=40.0), model.runner)  # a busier main thread than the cell's wall: capped
    assert p.gpu.parts["host"] == pytest.approx(19.0) and p.gpu.parts["eager"] == 0.0
