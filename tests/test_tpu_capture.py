"""The capture on a TPU (issue 71), prepared without one: the plan's combinations become the TPU's, the probes
describe the accelerator NVML cannot see, registration names it (never as a GPU), and a lab name of a TPU is
refused where no TPU started. The recorded TPU v5e (tests/fixtures/tpu/device.json) stands in for the machine.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from jaxci import REPO_ROOT
from jaxci.capture import plan as capture_plan
from jaxci.capture.scheduler import Costs

DEVICE = json.loads((REPO_ROOT / "tests" / "fixtures" / "tpu" / "device.json").read_text())
FACTS = {"platform": DEVICE["platform"], "device_kind": DEVICE["device_kind"],
         "memory_mib": DEVICE["memory_stats"]["bytes_limit"] // 2**20}


def test_the_plan_on_a_tpu_asks_the_tpu():
    gpu_plan = capture_plan.plan()
    tpu_plan = capture_plan.for_device(gpu_plan, "tpu")
    assert capture_plan.for_device(gpu_plan, "gpu") == gpu_plan
    assert "autotune" not in {s.name for s in tpu_plan}     # XLA's GPU autotuner: a GPU-only question
    for step in tpu_plan:
        assert not any(c.endswith("'gpu')") for c in step.combos), step.name
        assert set(step.devices()) <= {"cpu", "tpu"}, step.name
    sanity = next(s for s in tpu_plan if s.name == "sanity")
    assert set(sanity.combos) == {"dispatch.TinyOp.time_warm('float32', 'cpu')",
                                  "dispatch.TinyOp.time_warm('float32', 'tpu')"}
    profile = next(s for s in tpu_plan if s.name == "profile")
    assert [d for d, _, _ in profile.batches] == ["cpu", "tpu"]


def test_device_of_reads_the_last_param():
    assert capture_plan.device_of("dense.Dense.time_warm('matmul', 4096, 'float64', 'tpu')") == "tpu"
    assert capture_plan.device_of("dispatch.TinyOp.time_warm('float32', 'cpu')") == "cpu"


def test_costs_of_a_tpu_step():
    step = capture_plan.CaptureStep("s", "q", ("b.C.m('float32', 'cpu')", "b.C.m('float32', 'tpu')"), 1.0)
    costs = Costs(start_s={"cpu": 2.0, "tpu": 9.0}, skip_s=0.5, discovery_s=0.0)
    assert costs.raw(step, True) == (2.0 + 1.0) + (9.0 + 1.0)
    assert costs.raw(step, False) == (2.0 + 1.0) + 0.5   # no accelerator: the tpu combination is a skip


def test_registration_names_the_tpu_and_never_a_gpu(monkeypatch):
    from jaxci.machines.register import machine_info

    monkeypatch.setenv("JAXCI_ACCELERATOR", "tpu")
    monkeypatch.delenv("JAXCI_BACKEND", raising=False)
    monkeypatch.setattr("jaxci.machines.register.signature_mismatch", lambda *a: [])
    info, _ = machine_info("lab-tpu-v5e", local=False, gpus=(), accelerator=FACTS)
    assert info["gpu"] == "no GPU" and info["jaxci_kind"] == "lab" and info["jaxci_backend"] == "tpu"
    assert info["accelerator"] == "1 x TPU v5 lite" and info["accelerator_platform"] == "tpu"
    assert info["accelerator_memory_mib"] == "16126"


def test_probes_describe_the_accelerator_and_a_tpu_lab_name_needs_one(monkeypatch, tmp_path):
    from jaxci.capture import prepare
    from jaxci.capture.carried import CaptureError

    def probe(device, env):
        facts = FACTS if device == "tpu" else {"platform": "cpu", "device_kind": "cpu"}
        return {"cpu": 1.5, "tpu": 7.0}[device], f"0.10.2 {json.dumps(facts)}"

    monkeypatch.setattr(prepare, "probe_start", probe)
    cap = SimpleNamespace(facts={}, notes=[], env=lambda: {}, rehearse=False, machine="lab-tpu-v5e")
    costs = prepare.probe_costs(cap, "tpu")
    assert cap.facts["accelerator"] == FACTS and cap.facts["jax_tpu"] == "0.10.2 TPU v5 lite"
    assert cap.facts["start_s"] == {"cpu": 1.5, "tpu": 7.0} and costs.start_s["tpu"] == 7.5
    prepare.check_accelerator(cap)
    cpu_only = SimpleNamespace(facts={}, notes=[], env=lambda: {}, rehearse=False, machine="lab-tpu-v5e")
    prepare.probe_costs(cpu_only, None)
    with pytest.raises(CaptureError, match="is the TPU v5e lab machine but JAX started no accelerator here"):
        prepare.check_accelerator(cpu_only)


def test_profiles_and_the_profile_command_follow_the_accelerator(monkeypatch, capsys):
    from jaxci.capture import profiles
    from jaxci.commands import profile

    monkeypatch.setenv("JAXCI_ACCELERATOR", "tpu")
    assert profiles._devices() == ["cpu", "tpu"]
    monkeypatch.setenv("JAXCI_ACCELERATOR", "none")
    assert profiles._devices() == ["cpu"]
    assert profile.main(["scan", "--device", "tpu"]) == 2
    assert "--device tpu: no accelerator on this machine" in capsys.readouterr().err


def test_the_report_names_a_tpu_as_a_tpu(tmp_path):
    """The figures issue 71 quotes from the TPU (fixtures, not results): the FP64 penalty is the TPU's, and the
    machine is titled by its accelerator, never as a GPU or as CPU only."""
    import math

    from jaxci.report.answers import machine_title
    from jaxci.report.build import build
    from jaxci.report.findings import findings_md
    from jaxci.results.records import load_results
    from tests import synth

    fig = json.loads((REPO_ROOT / "tests" / "fixtures" / "tpu" / "figures.json").read_text())
    s = synth.SynthResults(tmp_path).machine("lab-tpu-v5e", gpu="no GPU", backend="tpu", kind="lab")
    s.machines["lab-tpu-v5e"]["accelerator"] = "1 x TPU v5 lite"
    tiny, big = fig["dispatch.TinyOp.time_warm"]["float32"], fig["elementwise.Elementwise.time_warm"]["50000000"]
    s.add("lab-tpu-v5e", "dispatch.TinyOp.time_warm", ["dtype", "device"], [["float32"], ["cpu", "gpu", "tpu"]],
          lambda dtype, device: tiny.get(device, math.nan))
    s.add("lab-tpu-v5e", "elementwise.Elementwise.time_warm", ["n", "dtype", "device"],
          [[50_000_000], ["float32", "float64"], ["cpu", "gpu", "tpu"]],
          lambda n, dtype, device: big[dtype].get(device, math.nan))
    s.record_scale("lab-tpu-v5e", "full")
    results = s.save()
    facts = load_results(results).machines["lab-tpu-v5e"]
    assert machine_title("lab-tpu-v5e", facts) == "lab: TPU v5e (machine `lab-tpu-v5e`, 1 x TPU v5 lite, synthetic)"
    text = findings_md(build(results))
    assert "lab-tpu-v5e tpu: median float64/float32 time ratio 20.83" in text   # 67.7 ms / 3.25 ms
    assert "lab-tpu-v5e gpu" not in text


def test_the_device_script_names_steps_the_plan_has():
    """scripts/tpu_capture.sh's calls ask for steps by name: every name is a step of the TPU's plan, each step
    in one of calls 1-3 only (call 4 takes again what call 3 did not finish), and the model's primitives come in
    calls 1 and 2."""
    import re
    import subprocess

    text = (REPO_ROOT / "scripts" / "tpu_capture.sh").read_text()
    calls = dict(re.findall(r"^\s+([1-9])\) ONLY='\^\(([^)]*)\)\$' ;;", text, re.M))
    names = {call: set(group.split("|")) for call, group in calls.items()}
    tpu_steps = {s.name for s in capture_plan.for_device(capture_plan.plan(), "tpu")}
    retake = names.pop("4")
    assert set(names) == {"1", "2", "3"} and set.union(*names.values()) <= tpu_steps and retake <= names["3"]
    assert sum(map(len, names.values())) == len(set.union(*names.values()))
    assert {"sanity", "gemm-precision", "bandwidth", "loops-f32", "compile"} <= names["1"] | names["2"]
    assert subprocess.run(["bash", str(REPO_ROOT / "scripts" / "tpu_capture.sh"), "5"], capture_output=True,
                          text=True).returncode == 2


def _tpu_capture(tmp_path, accelerator: dict | None, tpu_value: float) -> Path:
    """A synthetic TPU capture (the issue's TinyOp figures: fixtures) as the capture packs it."""
    import tarfile

    from tests.synth import SynthResults

    synth = SynthResults(tmp_path / "src").machine("lab-tpu-v5e", gpu="no GPU", kind="lab", backend="tpu")
    synth.machines["lab-tpu-v5e"].update(accelerator or {})
    tiny = json.loads((REPO_ROOT / "tests" / "fixtures" / "tpu" / "figures.json").read_text())
    cpu = tiny["dispatch.TinyOp.time_warm"]["float32"]["cpu"]
    synth.add("lab-tpu-v5e", "dispatch.TinyOp.time_warm", ["dtype", "device"], [["float32"], ["cpu", "gpu", "tpu"]],
              lambda dtype, device: {"cpu": cpu, "tpu": tpu_value}.get(device, float("nan")))
    results = synth.save()
    out = tmp_path / "out"
    out.mkdir()
    with tarfile.open(out / "results.tar.gz", "w:gz") as tar:
        tar.add(results, arcname="results")
    (out / "capture.json").write_text(json.dumps({"format": 1, "machine": "lab-tpu-v5e", "rehearsal": False,
                                                  "started": "2026-12-06T00:00:00Z", "facts": {"commit": "abc"},
                                                  "steps": [{"step": "sanity", "status": "ok"}]}))
    (out / "summary.md").write_text("# TPU capture on lab-tpu-v5e\n")
    return out


def test_a_tpu_capture_imports_under_the_tpu_lab_name_and_only_with_a_tpu(tmp_path, capsys):
    from jaxci.commands.import_capture import main as import_main

    tpu = json.loads((REPO_ROOT / "tests" / "fixtures" / "tpu" / "figures.json").read_text())
    value = tpu["dispatch.TinyOp.time_warm"]["float32"]["tpu"]
    recorded = {"accelerator": "1 x TPU v5 lite", "accelerator_platform": "tpu"}
    good = _tpu_capture(tmp_path / "good", recorded, value)
    assert import_main([str(good), "--results", str(tmp_path / "results")]) == 0, capsys.readouterr().err
    assert (tmp_path / "results" / "lab-tpu-v5e" / "machine.json").is_file()
    unnamed = _tpu_capture(tmp_path / "bad", None, value)
    assert import_main([str(unnamed), "--results", str(tmp_path / "other")]) == 2
    assert "is the TPU v5e lab machine but machine.json records no TPU" in capsys.readouterr().err
