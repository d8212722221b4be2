"""`jaxci env`: known answers of the model, clear errors for inputs outside sense, every output format,
reading the measured peak through asv's results API, the device memory through NVML (a fake pynvml here),
the appends for the jax-env action, and no JAX (or NumPy) behind it."""

import json
import math
import os
import shlex
import subprocess
import sys
import types

import pytest
import yaml

from jaxci import REPO_ROOT
from jaxci import nvml as jaxci_nvml
from jaxci.catalogue import load_policies
from jaxci.commands.env import main
from jaxci.workflows import envadvice
from jaxci.workflows.envadvice import MAX_KERNELS, MEASURED, AdviceError, recommend, render, safe_kernels
from tests.frozen import RESULTS as FROZEN_RESULTS
from tests.synth import SynthResults
from tests.workflowutil import key_values

POLICIES, BUDGET = load_policies()
T4 = 15360
XLA_VARS = {"XLA_PYTHON_CLIENT_MEM_FRACTION", "XLA_CLIENT_MEM_FRACTION", "XLA_PYTHON_CLIENT_PREALLOCATE",
            "XLA_PYTHON_CLIENT_ALLOCATOR"}


def advise(kernels, **kw):
    """The fraction model's known answers (`--policy fraction`); the measured default has its own tests below."""
    kw.setdefault("budget", BUDGET)
    kw.setdefault("policy", "fraction")
    return recommend(kernels, policies=POLICIES, cache_dir="/cache/jax", **kw)


def test_several_kernels_get_the_policy_a_gpu_measured_surviving_by_default():
    a = advise(3, peak_mib=3072, device_mib=T4, policy=MEASURED)
    assert a.policy == "no-prealloc" and a.env["XLA_PYTHON_CLIENT_PREALLOCATE"] == "false"
    assert not {"XLA_PYTHON_CLIENT_MEM_FRACTION", "XLA_CLIENT_MEM_FRACTION"} & a.env.keys()
    assert a.safe_kernels == 4 and any("not measured on a GPU: the `fraction` policy" in n for n in a.notes)
    with pytest.raises(AdviceError, match=r"--kernels 5: .*at most 4 fit"):  # their peaks exceed the budget
        advise(5, peak_mib=3072, device_mib=T4, policy=MEASURED)
    with pytest.raises(AdviceError, match="--policy 'other'"):
        advise(3, peak_mib=3072, device_mib=T4, policy="other")


def test_budget_in_catalogue_is_the_one_assumed_here():
    assert BUDGET == 0.90  # the known answers below are worked out for this budget


def test_t4_three_kernels_of_3_gib():
    a = advise(3, peak_mib=3072, device_mib=T4)
    assert a.policy == "fraction" and a.fraction == 0.30
    assert a.safe_kernels == 4  # floor(0.90 x 15360 / 3072) = 4, and 0.23 x 15360 = 3533 MiB holds 3072
    assert a.env["XLA_PYTHON_CLIENT_MEM_FRACTION"] == a.env["XLA_CLIENT_MEM_FRACTION"] == "0.30"
    assert a.env["JAX_TRACEBACK_FILTERING"] == "off" and a.env["JAX_COMPILATION_CACHE_DIR"] == "/cache/jax"
    assert "JAX_PLATFORMS" not in a.env
    assert "4,608 MiB" in a.reason and "11,520 MiB" in a.reason  # its slice; what the default would take
    # no cell time given: no built-in number, the repository keeps its own (policy.timeouts); an output only
    assert a.cell_timeout_s is None and "JAXCI_CELL_TIMEOUT_S" not in a.env
    assert "keep the repository's own" in a.cell_timeout_reason
    assert a.env["JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS"] == "0"  # what the compile suite measured


def test_one_kernel_that_fits_the_default():
    a = advise(1, peak_mib=3072, device_mib=T4)
    assert a.policy == "default" and not XLA_VARS & a.env.keys() and a.fraction is None


def test_one_kernel_above_the_default_75_percent():
    a = advise(1, peak_mib=12000, device_mib=T4)  # > 11,520 = 75%, < 13,824 = 90%
    assert (a.policy, a.fraction, a.safe_kernels) == ("fraction", 0.90, 1)


def test_too_many_kernels_are_refused_never_sized_for_fewer():
    # an environment set for 4 while 6 kernels start would add up to 6 x 0.22 > 0.90
    with pytest.raises(AdviceError, match=r"--kernels 6: .*at most 4 fit"):
        advise(6, peak_mib=3072, device_mib=T4)
    assert advise(4, peak_mib=3072, device_mib=T4).env["XLA_PYTHON_CLIENT_MEM_FRACTION"] == "0.22"


@pytest.mark.parametrize("budget, kernels, expected", [
    (0.58, 2, 0.29),  # 0.58 / 2 is 0.29: binary floats made it 0.28 and the safe N 1
    (0.90, 3, 0.30), (0.70, 7, 0.10),
])
def test_fraction_is_the_budget_shared_in_hundredths(budget, kernels, expected):
    a = advise(kernels, peak_mib=expected * 10000, device_mib=10000, budget=budget)
    assert a.fraction == expected and a.safe_kernels == kernels


def test_a_budget_below_the_default_preallocation_is_kept_for_one_kernel():
    for peak in (None, 1000):
        a = advise(1, peak_mib=peak, device_mib=10000, budget=0.5)
        assert a.policy == "fraction" and a.fraction == 0.5


def test_a_tiny_peak_is_bounded_by_the_hundredths():
    # the search starts at the hundredths' bound, not at budget x device / peak (1.4e13 for 1e-9 MiB)
    assert safe_kernels(1e-9, 16000, 0.90, POLICIES["fraction"]) == 90
    assert advise(2, peak_mib=1e-9, device_mib=16000).fraction == 0.45


def test_a_subnormal_peak_is_many_kernels_not_an_overflow():
    """budget x device / 5e-324 is inf in floats: the on-demand count is capped, never floor(inf)."""
    for peak in (5e-324, 1e-310):  # the measured default policy (allocation on demand) counts them
        advice = advise(2, peak_mib=peak, device_mib=16000, policy=MEASURED)
        assert (advice.policy, advice.safe_kernels) == ("no-prealloc", MAX_KERNELS)


@pytest.mark.parametrize("peak, device, expected", [
    (3072, 15360, 4), (1000, 10000, 9), (1100, 10000, 8),
    (1120, 10000, 7),  # floor(9000/1120) = 8, but 8 kernels get 0.11 x 10000 = 1100 < 1120
    (13824, 15360, 1),
    (2000, 80000, 30),  # 36 fit by memory, but 0.90/36 rounds down to 0.02 x 80000 = 1600 < 2000; 30 get 0.03
])
def test_safe_kernels_known_answers(peak, device, expected):
    assert safe_kernels(peak, device, 0.90, POLICIES["fraction"]) == expected


def test_no_measured_peak():
    a = advise(3, device_mib=T4)
    assert a.policy == "no-prealloc" and a.env["XLA_PYTHON_CLIENT_PREALLOCATE"] == "false" and a.safe_kernels is None
    assert advise(1, device_mib=T4).policy == "default"


def test_pinned_to_cpu():
    a = advise(4, pin_cpu=True)
    assert a.policy == "cpu" and a.env["JAX_PLATFORMS"] == "cpu" and not XLA_VARS & a.env.keys()


@pytest.mark.parametrize("slowest, slowdown, expected",
                         [(100, None, 300), (100, 2.5, 780), (100, 0.8, 300), (1, None, 60)])
def test_cell_timeout(slowest, slowdown, expected):
    a = advise(2, peak_mib=1000, device_mib=T4, slowest_cell_s=slowest, slowdown=slowdown)
    assert a.cell_timeout_s == expected


@pytest.mark.parametrize("kernels, kw, match", [
    (0, dict(peak_mib=1000, device_mib=T4), "--kernels 0"),
    (-2, dict(pin_cpu=True), "--kernels -2"),
    (3, dict(peak_mib=20000, device_mib=T4), "larger than the device"),
    (3, dict(peak_mib=14000, device_mib=T4), "exceeds the memory budget"),
    (3, dict(peak_mib=1000, device_mib=T4, budget=1.5), "--memory-budget 1.5"),
    (3, dict(peak_mib=1000, device_mib=T4, budget=0.0), "--memory-budget 0.0"),
    (3, dict(peak_mib=-5, device_mib=T4), "--peak-mib -5: must be a finite number"),
    (3, dict(peak_mib=float("nan"), device_mib=T4), "--peak-mib nan"),
    (1, dict(device_mib=float("inf")), "--device-memory-mib inf"),
    (1, dict(device_mib=T4, slowest_cell_s=1e308), "--slowest-cell-s 1e[+]308"),
    (1, dict(device_mib=T4, budget=0.005), "--memory-budget 0.005"),
    (2000, dict(pin_cpu=True), "--kernels 2000"),
    (2, dict(peak_mib=2900, device_mib=10000, budget=0.29), "--kernels 2: .* at most 1 fit"),
    (1, dict(peak_mib=2890, device_mib=10000, budget=0.2899), "--peak-mib 2890: one kernel's slice"),
    (3, dict(peak_mib=1000), "device memory unknown"),
    (3, dict(peak_mib=1000, device_mib=T4, slowest_cell_s=0), "--slowest-cell-s"),
])
def test_inputs_outside_sense(kernels, kw, match):
    with pytest.raises(AdviceError, match=match):
        advise(kernels, **kw)


@pytest.mark.parametrize("argv, match", [
    (["--kernels", "0", "--pin-cpu"], "--kernels 0"),
    (["--kernels", "3", "--peak-mib", "20000", "--machine", "g4dn.2xlarge"], "larger than the device"),
    (["--kernels", "3", "--memory-budget", "1.2", "--device-memory-mib", "15360"], "--memory-budget 1.2"),
    (["--kernels", "2", "--machine", "no-such-family"], "unknown machine"),
    (["--kernels", "2", "--results", "/nonexistent"], "--results needs --machine"),
    (["--pin-cpu", "--machine", "nosuch"], "unknown machine"),  # an unknown machine must not exit 0
    (["--device-memory-mib", "16000", "--machine", "nosuch"], "unknown machine"),
])
def test_cli_errors_exit_2(capsys, argv, match):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("jaxci env: error:") and match in err


def test_cli_machine_from_catalogue(capsys):
    assert main(["--machine", "g4dn.2xlarge", "--kernels", "3", "--peak-mib", "3072", "--format", "json",
                 "--cache-dir", "/c", "--policy", "fraction"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["policy"] == "fraction" and data["inputs"]["device_mib"] == 15360
    assert data["env"]["JAX_COMPILATION_CACHE_DIR"] == "/c"


def test_formats_carry_the_same_environment(tmp_path):
    a = advise(3, peak_mib=3072, device_mib=T4)
    assert key_values(render(a, "github")) == a.env
    assert yaml.safe_load(render(a, "yaml")) == {"env": a.env}
    assert json.loads(render(a, "json"))["env"] == a.env
    script = tmp_path / "env.sh"
    script.write_text(render(a, "shell") + "\n" + "".join(f"echo {k}=\"${k}\"\n" for k in a.env))
    out = subprocess.run(["bash", "--noprofile", "--norc", str(script)], capture_output=True, text=True,
                         check=True).stdout
    assert key_values(out) == a.env
    text = render(a, "text")
    assert "policy: fraction" in text and "why:" in text


def test_github_format_keeps_reasons_off_stdout(capsys):
    assert main(["--device-memory-mib", "15360", "--kernels", "3", "--peak-mib", "3072", "--format", "github"]) == 0
    out, err = capsys.readouterr()
    assert all("=" in line and not line.startswith("#") for line in out.splitlines())
    assert "why:" in err


def _results(tmp_path, peak=lambda n_workers, policy, device: 2900.0 + n_workers if device == "gpu" else 300.0):
    s = SynthResults(tmp_path)
    s.machine("g4dn.2xlarge", gpu="1 x Tesla T4", backend="cuda13")
    grid = (["n_workers", "policy", "device"], [[1, 2, 3, 4], ["default", "fraction"], ["cpu", "gpu"]])
    s.add("g4dn.2xlarge", "concurrency.Concurrency.track_peak_memory_mib", *grid, peak, unit="MiB")
    s.add("g4dn.2xlarge", "concurrency.Concurrency.track_slowdown", *grid,
          lambda n_workers, policy, device: 1.0 + 0.5 * (n_workers - 1), unit="ratio")
    s.add("g4dn.2xlarge", "concurrency.Concurrency.track_workers_died", *grid,
          lambda n_workers, policy, device: 0.0 if policy == "fraction" else float(n_workers - 1), unit="workers")
    return s.save()


def test_peak_and_slowdown_read_from_results(tmp_path, capsys):
    results = _results(tmp_path)
    argv = ["--results", str(results), "--machine", "g4dn.2xlarge", "--kernels", "3", "--slowest-cell-s", "100",
            "--format", "json", "--policy", "fraction"]
    assert main(argv) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["inputs"]["peak_mib"] == 2904.0  # the largest gpu peak, not the cpu rows
    assert data["inputs"]["peak_source"].startswith("measured")
    assert data["policy"] == "fraction"
    assert data["cell_timeout_s"] == 600  # 3 x 100 s x slowdown 2.0 at n=3
    assert any("0 of 3 worker(s) died" in n for n in data["notes"])


def test_results_without_gpu_peaks_fall_back(tmp_path, capsys):
    results = _results(tmp_path, peak=lambda n_workers, policy, device: 300.0 if device == "cpu" else math.nan)
    assert main(["--results", str(results), "--machine", "g4dn.2xlarge", "--kernels", "3", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["policy"] == "no-prealloc" and data["inputs"]["peak_mib"] is None


def test_results_for_unknown_machine(tmp_path, capsys):
    results = _results(tmp_path)
    assert main(["--results", str(results), "--machine", "g5.2xlarge", "--kernels", "2"]) == 2
    assert "no results for machine 'g5.2xlarge'" in capsys.readouterr().err


@pytest.mark.parametrize("evidence, light", [(["--evidence="], {"jax", "numpy", "asv"}), ([], {"jax", "numpy"})])
def test_no_jax_or_numpy_imported(evidence, light):
    """Without evidence to read, not even asv; reading the committed GPU measurements imports asv, never JAX."""
    argv = ["env", "--kernels", "3", "--peak-mib", "3072", "--device-memory-mib", "15360", *evidence]
    code = (f"import sys; from jaxci.cli import main; rc = main({argv!r}); bad = {light!r} & set(sys.modules); "
            "print(sorted(bad)); sys.exit(rc or bool(bad))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_shell_values_are_quoted():
    a = recommend(2, pin_cpu=True, budget=BUDGET, policies=POLICIES, cache_dir="/dir with space/$HOME")
    line = next(ln for ln in render(a, "shell").splitlines() if "JAX_COMPILATION_CACHE_DIR" in ln)
    assert shlex.split(line) == ["export", "JAX_COMPILATION_CACHE_DIR=/dir with space/$HOME"]


def test_github_lines_refuse_a_newline(capsys):
    assert main(["--pin-cpu", "--cache-dir", "/tmp/x\nLD_PRELOAD=/evil.so", "--format", "github"]) == 2
    out, err = capsys.readouterr()
    assert "LD_PRELOAD" not in out and "JAX_COMPILATION_CACHE_DIR" in err


# ---- the device memory through NVML ----------------------------------------------------------------------

def fake_pynvml(mode: str = "ok", memory_mib: int = T4) -> str:
    """The source of a stand-in for pynvml (what jaxci.nvml imports), one NVIDIA GPU or one way to fail:
    "ok", "no library" (a machine without NVIDIA's driver), "no driver", "memory fails". A module, so the
    jax-env action's tests can put it on PYTHONPATH of the step they run."""
    return f"""
class NVMLError(Exception):
    pass
class NVMLError_LibraryNotFound(NVMLError):
    pass
class NVMLError_DriverNotLoaded(NVMLError):
    pass
def nvmlInit():
    if {mode!r} == "no library":
        raise NVMLError_LibraryNotFound("NVML Shared Library Not Found")
    if {mode!r} == "no driver":
        raise NVMLError_DriverNotLoaded("Driver Not Loaded")
def nvmlShutdown():
    pass
def nvmlSystemGetDriverVersion():
    return "580.65.06"
def nvmlDeviceGetCount():
    return 1
def nvmlDeviceGetHandleByIndex(i):
    return i
def nvmlDeviceGetName(handle):
    return "Tesla T4"
def nvmlDeviceGetCudaComputeCapability(handle):
    return 7, 5
class _Memory:
    total = {memory_mib} * 2**20
    used = 0
def nvmlDeviceGetMemoryInfo(handle):
    if {mode!r} == "memory fails":
        raise NVMLError("Unknown Error")
    return _Memory()
"""


@pytest.fixture
def nvml(monkeypatch):
    """nvml(mode, memory_mib, proc_gpu=False): install a fake pynvml; proc_gpu fakes the driver's /proc entry."""
    def install(mode="ok", memory_mib=T4, proc_gpu=False):
        module = types.ModuleType("pynvml")
        exec(fake_pynvml(mode, memory_mib), module.__dict__)
        monkeypatch.setitem(sys.modules, "pynvml", module)
        monkeypatch.setattr(jaxci_nvml, "gpu_present", lambda: bool(jaxci_nvml.gpus()) or proc_gpu)
        jaxci_nvml.gpus.cache_clear()

    yield install
    jaxci_nvml.gpus.cache_clear()


def test_nvml_gives_the_device_memory(nvml, capsys):
    nvml("ok")
    assert main(["--kernels", "3", "--peak-mib", "3072", "--format", "json", "--evidence="]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["inputs"]["device_mib"] == T4 and data["safe_kernels"] == 4
    assert "device memory from NVML: GPU 0, Tesla T4, 15,360 MiB" in data["notes"]


@pytest.mark.parametrize("mode, memory, proc_gpu, match", [
    ("no driver", T4, False, "NVML is installed but failed (Driver Not Loaded); give --device-memory-mib"),
    ("memory fails", T4, False, "NVML is installed but failed (Unknown Error)"),
    ("ok", 0, False, "NVML reported 0 MiB as the memory of GPU 0 (Tesla T4)"),
    ("no library", T4, True, "listed in /proc/driver/nvidia/gpus but NVML cannot read it"),
    ("no library", T4, False, "device memory unknown"),  # no NVIDIA GPU here: as without NVML
])
def test_nvml_that_fails_is_refused_never_read_as_no_gpu(nvml, capsys, mode, memory, proc_gpu, match):
    nvml(mode, memory, proc_gpu)
    assert main(["--kernels", "2"]) == 2
    assert match in capsys.readouterr().err.splitlines()[-1]


def test_a_gpu_without_pynvml_says_what_to_install(nvml, monkeypatch, capsys):
    nvml("no library", proc_gpu=True)
    monkeypatch.setitem(sys.modules, "pynvml", None)  # import pynvml raises ImportError: a bare install
    jaxci_nvml.gpus.cache_clear()
    assert main(["--kernels", "2"]) == 2
    assert "NVML cannot read it (pip install nvidia-ml-py)" in capsys.readouterr().err


@pytest.mark.parametrize("argv", [["--device-memory-mib", "16000"], ["--machine", "g4dn.2xlarge"], ["--pin-cpu"]])
def test_nvml_is_not_asked_when_the_device_is_known(nvml, capsys, argv):
    nvml("no driver")
    assert main(["--kernels", "2", *argv]) == 0
    assert "NVML" not in capsys.readouterr().out


# ---- the flags the jax-env action passes ---------------------------------------------------------------

@pytest.mark.parametrize("flag, pinned", [(["--pin-cpu"], True), (["--pin-cpu=true"], True),
                                          (["--pin-cpu=false", "--device-memory-mib", "16000"], False),
                                          (["--pin-cpu", "false", "--device-memory-mib", "16000"], False)])
def test_pin_cpu_takes_true_or_false(capsys, flag, pinned):
    assert main(["--kernels", "2", "--format", "json", *flag]) == 0
    assert (json.loads(capsys.readouterr().out)["policy"] == "cpu") == pinned


@pytest.mark.parametrize("value", ["yes", "", "True"])
def test_pin_cpu_refuses_anything_else(capsys, value):
    assert main(["--kernels", "2", f"--pin-cpu={value}"]) == 2
    assert capsys.readouterr().err.splitlines()[-1] == f"jaxci env: error: pin-cpu must be true or false, not {value!r}"


def test_empty_values_mean_not_given(capsys):
    empty = ["--peak-mib=", "--memory-budget=", "--machine=", "--results=", "--slowest-cell-s="]
    assert main(["--kernels", "3", "--device-memory-mib=16000", "--format", "json", *empty]) == 0
    with_empty = json.loads(capsys.readouterr().out)
    assert main(["--kernels", "3", "--device-memory-mib=16000", "--format", "json"]) == 0
    assert with_empty == json.loads(capsys.readouterr().out) and with_empty["policy"] == "no-prealloc"


def test_github_files_are_appended_in_one_run(tmp_path, capsys):
    env, out = tmp_path / "env", tmp_path / "out"
    env.write_text("EARLIER=1\n")
    assert main(["--kernels", "3", "--peak-mib", "3072", "--device-memory-mib", "15360", "--cache-dir", "/cache/jax",
                 "--github-env", str(env), "--github-output", str(out), "--policy", "fraction"]) == 0
    earlier, *lines = env.read_text().splitlines()
    assert earlier == "EARLIER=1" and key_values("\n".join(lines)) == advise(3, peak_mib=3072, device_mib=T4).env
    assert out.read_text() == "policy=fraction\nsafe-kernels=4\ncell-timeout=\ncache-dir=/cache/jax\nbeyond-measured=\n"
    assert capsys.readouterr().out.startswith("policy: fraction\nwhy:")  # the text, for the log


@pytest.mark.parametrize("argv", [
    ["--kernels", "6", "--peak-mib", "3072", "--device-memory-mib", "15360"],  # refused by the model
    ["--pin-cpu", "--cache-dir", "/tmp/x\nLD_PRELOAD=/evil.so"],  # refused when rendered
])
def test_a_refusal_appends_nothing(tmp_path, capsys, argv):
    env, out = tmp_path / "env", tmp_path / "out"
    assert main([*argv, "--github-env", str(env), "--github-output", str(out)]) == 2
    assert not env.exists() and not out.exists()
    assert capsys.readouterr().err.splitlines()[-1].startswith("jaxci env: error:")


def test_outputs_for_cpu_leave_safe_kernels_empty(tmp_path):
    out = tmp_path / "out"
    assert main(["--pin-cpu", "--kernels", "4", "--cache-dir", "/c", "--github-output", str(out)]) == 0
    assert out.read_text() == "policy=cpu\nsafe-kernels=\ncell-timeout=\ncache-dir=/c\nbeyond-measured=\n"


def test_the_results_path_alone_imports_asv(tmp_path):
    """jaxci.results.records (the one reader) is imported only for --results, and asv with it."""
    code = ("import sys; from jaxci.commands.env import main; main(['--pin-cpu']); "
            "print(sorted(m for m in ('asv', 'jaxci.results.records') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == "[]"


# ---- the environment does what was measured --------------------------------------------------

def test_safe_n_is_printed_with_the_fraction_it_holds_at():
    """Three kernels of 3 GiB on a T4 get 0.30 each; the safe N of 4 holds only at 0.22 (4 x 0.30 > 1)."""
    advice = envadvice.advise(3, cache_dir="/tmp/c", machine="g4dn.2xlarge", peak_mib=3072, policy="fraction")
    assert advice.env["XLA_PYTHON_CLIENT_MEM_FRACTION"] == "0.30" and advice.safe_kernels == 4
    assert advice.safe_fraction == pytest.approx(0.22)
    assert "safe: 4 (each at XLA_PYTHON_CLIENT_MEM_FRACTION=0.22); this environment is sized for 3 at 0.30" \
        in render(advice, "text")


def test_a_policy_no_gpu_has_run_says_so():
    advice = envadvice.advise(3, cache_dir="/tmp/c", machine="g4dn.2xlarge", peak_mib=3072, policy="fraction")
    assert any("'fraction' policy has no GPU run" in n for n in advice.notes)
    default = envadvice.advise(1, cache_dir="/tmp/c", machine="g4dn.2xlarge", peak_mib=3072)
    assert not any("no GPU run" in n for n in default.notes)


def test_the_cache_is_set_up_as_the_compile_suite_measured_it():
    """JAX's default threshold (1 s) keeps lecture compiles out of the cache: the suite measured it at 0."""
    env = envadvice.advise(2, cache_dir="/tmp/c", device_mib=15360, peak_mib=1024).env
    assert env["JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS"] == "0"
    assert env["JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES"] == "-1"
    compile_suite = (REPO_ROOT / "benchmarks" / "compile.py").read_text()
    assert 'jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)' in compile_suite


def test_a_lab_machine_gets_advice_with_its_registered_memory():
    """The report prints `jaxci env --machine lab-h200 ...`: it must run. The catalogue has no memory figure for
    the H200; its registration (results/lab-h200/machine.json) does."""
    advice = envadvice.advise(3, cache_dir="/tmp/c", machine="lab-h200", peak_mib=3136, policy="fraction")
    assert advice.inputs["device_mib"] == 143771 and advice.policy == "fraction"
    assert any("registered from NVML" in n for n in advice.notes)


def test_more_kernels_than_a_gpu_measured_surviving_are_flagged(tmp_path):
    """Question 3's one rule (jaxci.policy.concurrency): the committed results measured `no-prealloc` surviving up to
    N = 3 on a GPU; 8 requested is accepted with a flag in the text, the action's output and the JSON, never
    silently."""
    evidence = str(FROZEN_RESULTS)
    eight = envadvice.advise(8, cache_dir="/c", machine="g4dn.2xlarge", evidence=evidence)
    assert eight.policy == "no-prealloc" and "8 notebooks at once (requested) is above 3" in eight.beyond
    assert "flag: 8 notebooks at once" in render(eight, "text")
    assert "beyond-measured=8 notebooks at once" in envadvice.render_outputs(eight)
    three = envadvice.advise(3, cache_dir="/c", machine="g4dn.2xlarge", evidence=evidence, peak_mib=3072)
    assert three.beyond == "" and three.safe_kernels == 3  # 4 fit by memory; 3 survived on a GPU
    unread = envadvice.advise(8, cache_dir="/c", machine="g4dn.2xlarge", evidence=str(tmp_path / "none"))
    assert unread.beyond.endswith("not measured at any N")


def test_without_asv_the_evidence_is_said_unread(monkeypatch):
    """A bare install (no asv) still advises; the flag says no survival measurement was read."""
    monkeypatch.setitem(sys.modules, "asv", None)
    assert envadvice.gpu_survival(str(FROZEN_RESULTS)) == ([], f"{FROZEN_RESULTS} not read (asv is not installed)")
    advice = envadvice.advise(4, cache_dir="/c", machine="g4dn.2xlarge", evidence=str(FROZEN_RESULTS))
    assert advice.policy == "no-prealloc" and "asv is not installed" in advice.beyond


def test_an_unreadable_machine_json_names_its_cause_under_a_deep_results_folder(tmp_path):
    """`jaxci env` and `jaxci report` quote the loader's reason whole, even under a deep folder: the file within
    the folder they name, then the cause."""
    from tests.test_import_transaction import results_tree

    results = results_tree(tmp_path / ("deep" * 60) / "src", machine="m")
    (results / "m" / "machine.json").unlink()
    os.mkfifo(results / "m" / "machine.json")
    with pytest.raises(envadvice.AdviceError) as err:
        envadvice.read_concurrency(str(results), "m")
    assert "is a FIFO (named pipe)" in str(err.value) and str(err.value).count("machine.json") == 1
    report = subprocess.run([sys.executable, "-m", "jaxci", "report", str(results)], capture_output=True, text=True,
                            timeout=120)
    assert report.returncode == 2 and "the loader says: m/machine.json: is a FIFO (named pipe)" in report.stderr
