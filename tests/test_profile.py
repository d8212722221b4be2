"""`jaxci profile` on a CPU machine: host events reported, device timings declared unavailable, never invented."""

import json
from types import SimpleNamespace as NS

import pytest

from jaxci.cli import main as cli
from jaxci.commands import profile as profile_cmd
from jaxci.nvml import gpu_present
from jaxci.traces import profile
from tests.suiteutil import python


def _event(name, start, duration, **stats):
    return NS(name=name, start_ns=start, duration_ns=duration, stats=list(stats.items()))


def test_summarize_device_plane_with_gaps():
    """Synthetic trace: 3 kernels of 1 us per iteration over 2 iterations, overlapping pairs merged."""
    kernels = [_event("mul", 0, 1000), _event("add", 500, 1000), _event("dus", 4000, 1000),
               _event("mul", 10000, 1000), _event("add", 12000, 1000), _event("dus", 14000, 1000)]
    planes = [NS(name="/device:GPU:0", lines=[NS(name="Stream #1", events=kernels),
                                             NS(name="XLA Modules", events=[_event("jit_f", 0, 15000)])]),
              NS(name="/host:CPU", lines=[NS(name="python", events=[_event("PjitFunction(f)", 0, 20000)])])]
    s = profile.summarize(planes, wall_s=20e-6, iterations=2)
    assert s["device_timings"] is True
    assert s["device_ops"] == 6 and s["device_ops_per_iteration"] == 3
    assert s["device_busy_s"] == pytest.approx(5.5e-6)  # [0, 1.5] + 4 x 1 us
    assert s["gap_fraction"] == pytest.approx(1 - 5.5 / 20)


def test_summarize_host_only_says_not_available():
    planes = [NS(name="/host:CPU", lines=[NS(name="python", events=[
        _event("PjitFunction(f)", 0, 5000), _event("call", 100, 4000, hlo_op="call"),
        _event("end: call", 4100, 10)])])]
    s = profile.summarize(planes, wall_s=5e-6, iterations=10)
    assert s["device_timings"] is False and "not available" in s["note"]
    assert "device_busy_s" not in s and "gap_fraction" not in s
    assert s["host"]["events"] == 2 and s["host"]["xla_cpu_ops"] == 1


@pytest.mark.skipif(gpu_present(), reason="a GPU is present: the CPU-only wording does not apply")
def test_profile_scan_on_cpu(capsys):
    assert cli(["profile", "scan", "--n", "5000"]) == 0
    out = capsys.readouterr().out
    assert "device timings not available" in out
    assert "host events" in out and "XLA CPU ops" in out


@pytest.mark.skipif(gpu_present(), reason="a GPU is present")
def test_profile_kalman_grad_json_reports_host_events(capsys):
    assert profile_cmd.main(["kalman-grad", "--n", "24", "--json"]) == 0
    s = json.loads(capsys.readouterr().out)
    assert s["device_timings"] is False and s["platform"] == "cpu"
    assert s["host"]["xla_cpu_ops"] > 24  # the CPU runtime executes the filter's ops one thunk at a time
    assert s["wall_s"] > 0 and "device_busy_s" not in s


def test_bad_input_is_named(capsys):
    with pytest.raises(SystemExit):
        profile_cmd.main(["matmul"])
    assert "invalid choice: 'matmul'" in capsys.readouterr().err
    with pytest.raises(profile.ProfileError, match="--n 0"):
        profile.profile("scan", "cpu", "float32", 0)


def test_the_capture_profile_step_runs_from_anywhere_and_keeps_a_small_trace(tmp_path):
    """The second capture's profile step: one fresh interpreter per kernel and device, JSON in the artifacts.
    Run from another folder: `jaxci profile` must find benchmarks/ beside the package, not in jaxci/."""
    import os

    from jaxci import REPO_ROOT
    from jaxci.capture.profiles import TRACE_KEEP_BYTES

    env = dict(os.environ, JAXCI_ARTIFACTS=str(tmp_path / "artifacts"),
               PYTHONPATH=os.pathsep.join([str(REPO_ROOT), os.environ.get("PYTHONPATH", "")]))
    proc = python("-m", "jaxci.capture.profiles", "scan:float32", cwd=tmp_path, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    summary = json.loads((tmp_path / "artifacts" / "profiles" / "scan-float32-cpu.json").read_text())
    assert summary["status"] == "ok" and summary["kernel"] == "scan" and summary["device"] == "cpu"
    trace = tmp_path / "artifacts" / "profiles" / "scan-float32-cpu.xplane.pb"
    assert summary["trace"] == str(trace) and 0 < trace.stat().st_size <= TRACE_KEEP_BYTES
    if "gpu profiles not run" in proc.stdout:  # a machine without a GPU: said, never faked
        assert not (tmp_path / "artifacts" / "profiles" / "scan-float32-gpu.json").exists()
    from jaxci.capture.pack import profiles

    table = "\n".join(profiles(tmp_path / "artifacts" / "profiles"))
    assert "| scan-float32-cpu |" in table
