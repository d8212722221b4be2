"""The accelerator is whatever JAX has (issue 71), tested with no accelerator and with a recorded TPU as fixtures.

A TPU-shaped sysfs tree and device (tests/fixtures/tpu/device.json: platform "tpu", device kind "TPU v5 lite", its
memory_stats) stand in for the machine; nothing here starts an accelerator or asserts a timing.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from types import SimpleNamespace

import pytest

from jaxci import REPO_ROOT, accel
from tests.committed import committed

TPU = REPO_ROOT / "tests" / "fixtures" / "tpu"


def tpu_device() -> SimpleNamespace:
    """A jax.Device shaped like the recorded TPU v5e."""
    rec = json.loads((TPU / "device.json").read_text())
    return SimpleNamespace(platform=rec["platform"], device_kind=rec["device_kind"],
                           memory_stats=lambda: dict(rec["memory_stats"]))


@pytest.fixture
def bare(monkeypatch):
    """A machine with no accelerator at all, whatever this one has."""
    monkeypatch.delenv("JAXCI_ACCELERATOR", raising=False)
    monkeypatch.setattr("jaxci.nvml.gpu_present", lambda: False)
    monkeypatch.setattr(accel, "tpu_chips", lambda: 0)
    monkeypatch.setattr(accel, "SYS_PCI", REPO_ROOT / "no-such-folder")
    monkeypatch.setattr(accel.Path, "exists", lambda self: False)


def test_no_accelerator_says_so(bare):
    assert accel.accelerator_platform() is None
    assert accel.missing_reason("gpu") == "no accelerator on this machine: gpu combination skipped"
    assert accel.missing_reason("tpu") == "no accelerator on this machine: tpu combination skipped"
    assert accel.missing_reason("cpu") is None
    assert accel.platform_for("gpu") == "cuda"   # what a gpu param would ask for (it is skipped first)


def test_tpu_on_the_pci_bus_is_found(tmp_path, monkeypatch):
    rec = json.loads((TPU / "device.json").read_text())["pci"]
    for address, vendor, device in ((rec["address"], rec["vendor"], rec["device"]),
                                    ("0000:00:05.0", "0x8086", "0x1234"),      # not Google
                                    ("0000:00:04.1", rec["vendor"], rec["device"])):  # not function 0
        (tmp_path / address).mkdir()
        (tmp_path / address / "vendor").write_text(vendor + "\n")
        (tmp_path / address / "device").write_text(device + "\n")
    assert accel.tpu_chips(tmp_path) == 1
    monkeypatch.delenv("JAXCI_ACCELERATOR", raising=False)
    monkeypatch.setattr("jaxci.nvml.gpu_present", lambda: False)
    monkeypatch.setattr(accel, "SYS_PCI", tmp_path)
    assert accel.accelerator_platform() == "tpu"
    assert accel.accelerator_device() == "tpu"
    assert accel.missing_reason("tpu") is None
    assert accel.missing_reason("gpu") == "this machine's accelerator is tpu: gpu combination skipped"
    assert accel.platform_for("tpu") == "tpu"


def test_explicit_choice_wins_and_is_checked(monkeypatch):
    monkeypatch.setenv("JAXCI_ACCELERATOR", "rocm")
    assert accel.accelerator_platform() == "rocm"
    assert accel.platform_for("gpu") == "rocm" and accel.accelerator_device() == "gpu"
    monkeypatch.setenv("JAXCI_ACCELERATOR", "none")
    assert accel.accelerator_platform() is None
    monkeypatch.setenv("JAXCI_ACCELERATOR", "gpu")
    with pytest.raises(ValueError, match="JAXCI_ACCELERATOR='gpu'"):
        accel.accelerator_platform()


def test_device_param_is_jax_platform_name():
    """The device param says what JAX's Device.platform says: gpu for CUDA and ROCm, tpu for a TPU."""
    from benchmarks.common import DEVICES

    assert DEVICES[:2] == ["cpu", "gpu"], "cpu and gpu keep their places and meaning (the H200 history)"
    assert set(DEVICES) == {"cpu", *accel.ACCELERATOR_DEVICES}
    assert {accel.DEVICE_OF[p] for p in accel.ACCELERATORS} == set(accel.ACCELERATOR_DEVICES)


def test_check_started_accepts_the_tpu_only_for_the_tpu_param():
    import jax

    from benchmarks.common import check_started

    dev = tpu_device()
    fake = SimpleNamespace(default_backend=lambda: "tpu", dtypes=jax.dtypes)
    check_started(fake, dev, "tpu", "float32")
    with pytest.raises(RuntimeError, match="started JAX on tpu"):
        check_started(fake, dev, "gpu", "float32")


def test_device_facts_from_memory_stats():
    facts = accel.device_facts(tpu_device())
    assert facts == {"platform": "tpu", "device_kind": "TPU v5 lite", "memory_mib": 16126}
    cpu = SimpleNamespace(platform="cpu", device_kind="cpu", memory_stats=lambda: None)
    assert accel.device_facts(cpu) == {"platform": "cpu", "device_kind": "cpu"}


def test_accelerator_run_is_whichever_ran():
    assert accel.accelerator_run({"cpu": 1, "tpu": 2}) == ("tpu", 2)
    assert accel.accelerator_run({"cpu": 1, "cuda": 3}) == ("cuda", 3)
    assert accel.accelerator_run({"cpu": 1}) == (None, None)


def test_unimplemented_error_becomes_one_line():
    text = (TPU / "lu_f64_error.txt").read_text()
    reason = accel.unimplemented_reason(RuntimeError(text), "tpu", "float64")
    assert reason == ("tpu backend lacks this kernel in float64: UNIMPLEMENTED: Only F32 and C64 types are "
                      "implemented in LuDecomposition")
    assert accel.unimplemented_reason(RuntimeError("RESOURCE_EXHAUSTED: out of memory"), "tpu", "float64") is None


def test_unimplemented_as_na_in_setup():
    from benchmarks.common import unimplemented_as_na

    text = (TPU / "lu_f64_error.txt").read_text()

    def compile_fails():
        raise RuntimeError(text)

    with pytest.raises(NotImplementedError, match="^tpu backend lacks this kernel in float64: UNIMPLEMENTED") as e:
        unimplemented_as_na(("solve", 256, "float64", "tpu"), compile_fails)
    assert "\n" not in str(e.value) and e.value.__cause__ is None
    with pytest.raises(ValueError):
        unimplemented_as_na(("solve", 256, "float64", "tpu"), lambda: (_ for _ in ()).throw(ValueError("other")))


LACKING = """
import json
from benchmarks import common
from benchmarks.dense import DenseColdStart
import jax
case = DenseColdStart()
out = {}
for op in ("solve", "matmul", "cholesky"):
    try:
        case._skip_lacking((op, "float64", "tpu"))
        out[op] = None
    except NotImplementedError as exc:
        out[op] = str(exc)
out["backend_started"] = common.backend_started()
print(json.dumps(out))
"""


def test_backend_lacks_is_na_before_a_cold_start_without_starting_a_backend():
    """The cold start's setup traces the kernel (no backend) and finds f64 LU, which the TPU lacks."""
    proc = subprocess.run([sys.executable, "-c", LACKING], capture_output=True, text=True, check=True,
                          env={**os.environ, "PYTHONPATH": str(REPO_ROOT), "JAX_PLATFORMS": "cpu"})
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["solve"] == ("tpu backend lacks lu in float64: UNIMPLEMENTED: Only F32 and C64 types are "
                            "implemented in LuDecomposition")
    assert out["matmul"] is None and out["cholesky"] is None
    assert out["backend_started"] is False


def test_within_deadline_refuses_what_an_earlier_process_left_unfinished(tmp_path, monkeypatch):
    from benchmarks import common

    monkeypatch.setattr(common, "sibling_folder", lambda prefix: tmp_path / prefix)
    params = ("matmul", 4096, "float64", "tpu")
    common.within_deadline("Dense", params)          # this process starts it
    common.within_deadline("Dense", params)          # asv's setup before the next repeat: still ours
    common.finished("Dense", params)
    common.within_deadline("Dense", params)
    marker = next((tmp_path / common.DEADLINE_PREFIX).iterdir())
    marker.write_text("1")                           # as if another process started it and was killed
    with pytest.raises(NotImplementedError, match=r"did not finish it \(killed at its timeout, or died\)"):
        common.within_deadline("Dense", params)


def test_once_per_run_shares_an_na_with_the_siblings(tmp_path):
    from benchmarks.common import once_per_run

    def lacks():
        raise NotImplementedError("tpu backend lacks lu in float64")

    path = tmp_path / "rec.json"
    for _ in range(2):   # the first makes it, the second reads it: both n/a with the same reason
        with pytest.raises(NotImplementedError, match="tpu backend lacks lu"):
            once_per_run(path, lacks)


def test_audit_judges_and_heads_a_tpu_run_as_a_tpu(monkeypatch):
    """An executed audit on cpu and tpu: the measured ratio is the TPU's, named TPU, and its columns tpu_s."""
    from jaxci.audit.judging import classify, judge
    from jaxci.audit.reading.static import LectureScan
    from jaxci.audit.runner.outcome import CellTiming, NotebookRun
    from jaxci.audit.writing import render

    def run_of(platform, *walls):
        run = NotebookRun("x.md", platform=platform)
        run.cells = [CellTiming(i, "", w, w, compile_s=0.1) for i, w in enumerate(walls)]
        return run

    runs = {"cpu": run_of("cpu", 1.0, 2.0), "tpu": run_of("tpu", 9.0, 3.0)}
    v = judge.Verdict("x.md", LectureScan("x.md"), runs=runs)
    v.recommendation = classify.MEASURE
    judge.merge(v)
    assert v.recommendation == classify.PIN_CPU and "measured TPU/CPU time 4.00" in v.reasons[-1]
    table = render.to_markdown([v], executed=True)
    assert "| tpu_s | tpu_compile_s |" in table
    fields = render.to_csv([v]).splitlines()[0].split(",")
    assert {"tpu_s", "tpu_compile_s"} <= set(fields) and not {"gpu_s", "gpu_compile_s"} & set(fields)
    monkeypatch.setenv("JAXCI_ACCELERATOR", "tpu")
    from jaxci.audit.runner.lectures import platforms_here
    from jaxci.util.validate import platforms

    assert platforms_here() == ["cpu", "tpu"]
    assert platforms("--platforms", "cpu,tpu") == ["cpu", "tpu"] and platforms("--platforms", "rocm") == ["rocm"]


def test_the_h200_history_keeps_its_meaning_and_publish_knows_tpu():
    """asv keys results by param values: the committed H200 results still read as gpu (their own ["cpu", "gpu"]
    lists), and results/benchmarks.json, whose params `asv publish` reads results against, lists tpu too."""
    from benchmarks.common import DEVICES
    from jaxci.results.records import load_results

    rs = load_results(committed())
    h200 = [r for r in rs.records if r.machine == "lab-h200" and r.status == "ok"]
    assert {r.params.get("device") for r in h200} <= {"cpu", "gpu", None}
    assert any(r.params.get("device") == "gpu" for r in h200)
    meta = json.loads((committed() / "benchmarks.json").read_text())
    devices = [b["params"][-1] for k, b in meta.items() if k != "version" and b["param_names"][-1:] == ["device"]]
    assert devices and all(d == [repr(x) for x in DEVICES] for d in devices)


def test_a_skipped_combination_leaves_no_deadline_marker(tmp_path, monkeypatch, bare):
    from benchmarks import common
    from benchmarks.dispatch import TinyOp

    monkeypatch.setattr(common, "sibling_folder", lambda prefix: tmp_path / prefix)
    for _ in range(2):   # two rounds: the same reason both times
        with pytest.raises(NotImplementedError, match="no accelerator on this machine: tpu combination skipped"):
            TinyOp().setup("float32", "tpu")
    assert not (tmp_path / common.DEADLINE_PREFIX).exists()


NUTS_LACKS = """
import json, sys
from benchmarks import nuts
from benchmarks.kernels import nuts_models
text = open(sys.argv[2]).read()
def lacks(*args, **kwargs):
    raise RuntimeError(text)
nuts_models.run = lacks
out = []
for _ in range(2):   # the first process runs the sampler, the second reads its record
    try:
        nuts.NutsLeapfrogStep().setup(sys.argv[1], "float64", "cpu")
        out.append(None)
    except NotImplementedError as exc:
        out.append(str(exc))
print(json.dumps(out))
"""


def test_a_sampler_the_backend_cannot_compile_is_na_for_every_track(tmp_path):
    """The NUTS step's setup (its asv versions pinned) makes an UNIMPLEMENTED backend error n/a with one line."""
    proc = subprocess.run([sys.executable, "-c", NUTS_LACKS, str(tmp_path), str(TPU / "lu_f64_error.txt")],
                          capture_output=True, text=True, check=True,
                          env={**os.environ, "PYTHONPATH": str(REPO_ROOT), "JAX_PLATFORMS": "cpu"})
    first, second = json.loads(proc.stdout.strip().splitlines()[-1])
    assert first == second == ("cpu backend lacks this kernel in float64: UNIMPLEMENTED: Only F32 and C64 types "
                               "are implemented in LuDecomposition")


def test_a_tpu_familys_static_verdicts_name_the_tpu_never_a_gpu():
    """A TPU family's verdict texts name its accelerator: a TPU's launch-bound loop or small NUTS model is not "on a
    GPU" (the static rules are the same; only what they call the device differs)."""
    from jaxci.audit.judging import classify, family
    from jaxci.audit.reading.scanrecord import LectureScan

    nuts = LectureScan("x.md", uses_jax=True, uses_numpyro=True, nuts=[{"cell": 1}], max_elements=100)
    tpu, gpu = family.FamilyModel("a-tpu-family", accelerator="TPU"), family.FamilyModel("a-gpu-family")
    on_tpu, on_gpu = classify.decide(nuts, tpu), classify.decide(nuts, gpu)
    assert on_tpu.recommendation == on_gpu.recommendation == classify.PIN_CPU
    assert "on a TPU" in on_tpu.why and "GPU" not in on_tpu.why and "on a GPU" in on_gpu.why
    assert family.from_results(committed(), "lab-tpu-v5e").accelerator == "TPU"
