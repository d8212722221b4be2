"""The while loop's iteration count (computed from the benchmark's fixed matrix and tolerance, never recorded)
and the per-iteration cost the model takes from loops.WhileConverge."""

import pytest

from jaxci.analysis.work import while_iterations
from tests.modelutil import runner_model
from tests.synth import SynthResults

FLOOR, PER_IT = 6e-5, 4e-5


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_restated_iteration_count_matches_the_jax_kernel(dtype):
    pytest.importorskip("jax")
    import jax

    from benchmarks.kernels import loops
    from tests.jaxmode import x64_for

    with x64_for(dtype):
        a, v0 = loops.power_iteration_inputs(dtype)
        _, iterations = jax.jit(loops.power_iteration)(a, v0)
    assert while_iterations(dtype) == int(iterations)


def test_while_prediction_is_floor_plus_iterations_x_per_iteration(tmp_path):
    its = while_iterations("float32")
    s = SynthResults(tmp_path).machine("lab-h200", gpu="1 x NVIDIA H200", backend="cuda13", kind="lab")
    s.add("lab-h200", "dispatch.TinyOp.time_warm", ["dtype", "device"], [["float32"], ["gpu"]], lambda **_: FLOOR)
    s.add("lab-h200", "loops.WhileConverge.time_warm", ["dtype", "device"], [["float32"], ["gpu"]],
          lambda **_: FLOOR + its * PER_IT)
    model = runner_model(s.save())
    p = model.predict("g4dn.2xlarge", "while", 182, "float32", "gpu")
    assert p.seconds == pytest.approx(FLOOR + 182 * PER_IT, rel=1e-9)
    assert f"{its} iterations" in p.inputs and p.low <= p.seconds <= p.high
    own = model.predict("g4dn.2xlarge", "while", None, "float32", "gpu")   # the suite's own loop
    assert own.seconds == pytest.approx(FLOOR + its * PER_IT, rel=1e-9)
