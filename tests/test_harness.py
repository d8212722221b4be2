"""The worker harness: each way a worker can die is recorded with its cause, the others' results are kept,
and nothing is left running afterwards. CPU only; the NVML sampler is checked against a fake NVML."""

import json
import sys
import types

import psutil
import pytest

from jaxci.harness import WorkerSpec, classify, run_workers
from tests.asvutil import REPO
from tests.suiteutil import alive

WORKERS = "tests.harness_workers"


def spec(fn, timeout_s=60.0, **kwargs):
    return WorkerSpec(f"{WORKERS}:{fn}", kwargs=kwargs, timeout_s=timeout_s, name=fn)


@pytest.fixture(scope="module")
def deaths(tmp_path_factory):
    pid_file = tmp_path_factory.mktemp("h") / "grandchild.pid"
    specs = [spec("ok", value=7), spec("abort"), spec("sigkill"), spec("hang", timeout_s=3.0, pid_file=str(pid_file)),
             spec("raise_error"), spec("exit_quietly"), spec("ok", value=8)]
    run = run_workers(specs, pythonpath=[str(REPO)])
    return run, {w.name + ("" if w.name != "ok" else str(w.value["value"])): w for w in run.workers}, pid_file


def test_every_worker_has_a_record_and_the_records_are_json(deaths):
    run, _, _ = deaths
    assert len(run.workers) == 7 and run.died == 5
    data = json.loads(json.dumps(run.as_dict()))
    assert data["died"] == 5 and len(data["workers"]) == 7


@pytest.mark.parametrize("name, cause, exit_code, sig, traceback", [
    ("ok7", "ok", 0, None, False),
    ("ok8", "ok", 0, None, False),
    ("abort", "abort-signal", None, "SIGABRT", False),
    ("sigkill", "killed", None, "SIGKILL", False),
    ("hang", "timeout", None, "SIGKILL", False),
    ("raise_error", "python-exception", 1, None, True),
    ("exit_quietly", "error-exit", 3, None, False),
])
def test_cause_recorded(deaths, name, cause, exit_code, sig, traceback):
    _, by_name, _ = deaths
    w = by_name[name]
    assert (w.cause, w.exit_code, w.signal, w.traceback) == (cause, exit_code, sig, traceback), w
    assert w.timed_out == (cause == "timeout")


def test_survivors_keep_their_results(deaths):
    _, by_name, _ = deaths
    assert by_name["ok7"].value == {"value": 7} and by_name["ok8"].value == {"value": 8}
    assert by_name["ok7"].work_s is not None and by_name["ok7"].wall_s > 0
    assert by_name["abort"].value is None and by_name["abort"].work_s is None


def test_stderr_tail_kept(deaths):
    _, by_name, _ = deaths
    assert "about to abort" in by_name["abort"].stderr_tail
    assert "RESOURCE_EXHAUSTED" in by_name["raise_error"].stderr_tail


def test_hang_waited_for_its_timeout_only(deaths):
    _, by_name, _ = deaths
    assert by_name["hang"].wall_s >= 3.0


def test_no_orphans(deaths):
    run, _, pid_file = deaths
    grandchild = int(pid_file.read_text())
    for pid in [w.pid for w in run.workers] + [grandchild]:
        assert not alive(pid), f"process {pid} outlived the harness"
    leftover = [p for p in psutil.Process().children(recursive=True) if p.status() != psutil.STATUS_ZOMBIE]
    assert leftover == []


def test_environment_applied_before_start(monkeypatch):
    monkeypatch.setenv("JAXCI_TEST_INHERITED", "parent")
    monkeypatch.setenv("XLA_PYTHON_CLIENT_MEM_FRACTION", "0.75")
    names = ["XLA_PYTHON_CLIENT_PREALLOCATE", "XLA_PYTHON_CLIENT_MEM_FRACTION", "JAXCI_TEST_INHERITED"]
    worker = WorkerSpec(f"{WORKERS}:report_env", kwargs={"names": names},
                        env={"XLA_PYTHON_CLIENT_PREALLOCATE": "false"}, unset=("XLA_PYTHON_CLIENT_MEM_FRACTION",))
    (w,) = run_workers([worker], pythonpath=[str(REPO)]).workers
    assert w.cause == "ok", w.stderr_tail
    assert w.value == {"env": {"XLA_PYTHON_CLIENT_PREALLOCATE": "false", "XLA_PYTHON_CLIENT_MEM_FRACTION": None,
                               "JAXCI_TEST_INHERITED": "parent"}, "jax_imported": False}
    assert w.env == {"XLA_PYTHON_CLIENT_PREALLOCATE": "false"}


def test_missing_target_is_a_python_exception():
    (w,) = run_workers([WorkerSpec("tests.harness_workers:no_such_function")], pythonpath=[str(REPO)]).workers
    assert w.cause == "python-exception" and "no_such_function" in w.stderr_tail


def test_lecture_like_workload_on_cpu():
    kwargs = dict(peak_mib=8, steps=4, matmul_n=64, reps=2, platform="cpu")
    specs = [WorkerSpec("jaxci.workloads:lecture_like", kwargs=kwargs, env={"JAX_PLATFORMS": "cpu"}) for _ in range(2)]
    run = run_workers(specs)
    for w in run.workers:
        assert w.cause == "ok", w.stderr_tail
        assert w.value["live_bytes"] == 8 * 2**20
        assert w.value["checksum"] == 0 + 1 + 2 + 3 and w.value["trace"] == 64
        assert len(w.value["step_s"]) == 4
        assert w.peak_device_mib is None  # the CPU backend reports no memory_stats()
        assert w.peak_rss_mib > 8
        assert "step 4/4: 8.0 MiB live" in w.stderr_tail
    assert run.nvml is None or run.nvml["samples"]


@pytest.mark.parametrize("args, cause", [
    ((0, None, False, False), "ok"), ((1, None, True, False), "python-exception"),
    ((2, None, False, False), "error-exit"),
    ((None, "SIGABRT", False, False), "abort-signal"), ((None, "SIGSEGV", False, False), "crash-signal"),
    ((None, "SIGTERM", False, False), "killed"), ((None, "SIGKILL", False, True), "timeout"),
])
def test_classify(args, cause):
    assert classify(*args) == cause


def _fake_pynvml(used):
    """A stand-in for pynvml with one GPU whose used memory follows `used` (MiB), read by read."""
    readings = iter(used)
    state = {"last": used[0]}

    def memory_info(handle):
        state["last"] = next(readings, state["last"])
        return types.SimpleNamespace(used=state["last"] * 2**20, total=15360 * 2**20)

    return types.SimpleNamespace(
        nvmlInit=lambda: None, nvmlShutdown=lambda: None, nvmlDeviceGetCount=lambda: 1,
        nvmlDeviceGetHandleByIndex=lambda i: i, nvmlDeviceGetMemoryInfo=memory_info,
        nvmlDeviceGetComputeRunningProcesses=lambda h: [types.SimpleNamespace(pid=42,
                                                                              usedGpuMemory=state["last"] * 2**20)],
    )


def test_memory_sampler_timeline(monkeypatch):
    import time

    from jaxci.nvml import MemorySampler

    monkeypatch.setitem(sys.modules, "pynvml", _fake_pynvml([0, 11305, 14727, 3427, 0]))
    sampler = MemorySampler(0.01).start()
    assert sampler.available
    time.sleep(0.2)
    samples = sampler.stop()
    used = [s["used_mib"][0] for s in samples]
    assert used[:5] == [0, 11305, 14727, 3427, 0]
    assert [s["t"] for s in samples] == sorted(s["t"] for s in samples)
    assert sampler.process_peaks_mib() == {42: 14727}


def test_memory_sampler_without_nvml(monkeypatch):
    from jaxci.nvml import MemorySampler

    monkeypatch.setitem(sys.modules, "pynvml", None)  # import pynvml raises ImportError
    sampler = MemorySampler(0.01).start()
    assert not sampler.available and sampler.stop() == []
    with pytest.raises(ValueError, match="interval_s"):
        MemorySampler(0)
