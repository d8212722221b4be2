"""Executed: every way a lecture places its JAX work on the CPU keeps that work's seconds on the CPU on the GPU
side of the prediction (tests/fixtures/lectures/cpu_placement: one lecture per form, the same jitted scan called
300 times). No timing is asserted: the prediction's GPU side is compared with its own CPU side."""

import pytest

from jaxci import REPO_ROOT
from jaxci.audit import repo
from jaxci.audit.judging import family, predicted
from tests.frozen import RESULTS as FROZEN_RESULTS

pytestmark = pytest.mark.slow

FOLDER = REPO_ROOT / "tests" / "fixtures" / "lectures" / "cpu_placement"
#: placed at run time: the hooks mark the jitted call `placed: "cpu"`
AT_RUN_TIME = ("jit_device", "jit_backend", "default_device_context", "default_device_config", "device_put")
#: placed for the whole kernel: a CPU-only platform setting the static scan reads (in a cell, or the kernelspec's)
WHOLE_KERNEL = ("platforms_config", "platforms_env", "kernelspec")


@pytest.fixture(scope="module")
def audited():
    model = family.from_results(FROZEN_RESULTS, "g4dn.2xlarge")
    verdicts = repo.audit_static(FOLDER, model)
    repo.execute(verdicts, repo.Runs(("cpu",), 120, "python3", progress=False), model=model)
    out = {}
    for v in verdicts:
        run = v.runs.get("cpu")
        assert run is not None and run.ok, (v.path, run and run.error)
        out[v.path.removesuffix(".md")] = (v, run, predicted.gpu_family(run, model.runner, pins=v.scan.pins))
    return out


def _calls(prediction, device):
    return prediction.side(device).parts.get("calls", 0.0)


def test_the_unplaced_control_is_priced_on_the_gpu(audited):
    _, run, p = audited["control"]
    assert not any(e.placed for c in run.cells for e in (c.calls or []))
    assert _calls(p, "gpu") != pytest.approx(_calls(p, "cpu"))


@pytest.mark.parametrize("name", AT_RUN_TIME)
def test_a_call_the_lecture_places_on_the_cpu_keeps_its_cpu_seconds(audited, name):
    _, run, p = audited[name]
    placed = [e for c in run.cells for e in (c.calls or []) if e.name == "step"]
    assert placed and all(e.placed == "cpu" for e in placed), placed
    assert _calls(p, "gpu") == pytest.approx(_calls(p, "cpu"))


@pytest.mark.parametrize("name", WHOLE_KERNEL)
def test_a_kernel_the_lecture_pins_to_the_cpu_keeps_every_cell_there(audited, name):
    v, run, p = audited[name]
    assert any(pin.pinned_cpu and pin.cell <= 1 for pin in v.scan.pins), v.scan.pins
    assert _calls(p, "gpu") == pytest.approx(_calls(p, "cpu"))
    assert not predicted.starts_cuda(run, v.scan.pins)  # JAX never creates the CUDA client there
