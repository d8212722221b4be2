"""The jax-env composite action: its metadata, the linters (zizmor on the action; actionlint on a workflow
that uses it, which checks the inputs against action.yml), and its shell steps run here as a runner would
run them (bash -eo pipefail, GITHUB_ENV carried to later steps), with jaxci from this checkout and a fake
pynvml (tests/test_envadvice.py) on PYTHONPATH, so NVML answers the same on a GPU machine as on a CPU one."""

import os
import re
import sys
from importlib.metadata import version
from pathlib import Path

import pytest
import yaml

from tests.test_envadvice import fake_pynvml
from tests.workflowutil import BIN, REPO, actionlint, key_values, run_bash, zizmor

ACTION_DIR = REPO / ".github" / "actions" / "jax-env"
ACTION = ACTION_DIR / "action.yml"
CACHE_PIN = "actions/cache@27d5ce7f107fe9357f9df03efb73ab90386fccae"  # v5.0.5, docs/reference/action-pins.md


def action() -> dict:
    return yaml.safe_load(ACTION.read_text())


def test_metadata():
    a = action()
    assert {"concurrency", "memory-budget", "pin-cpu"} <= a["inputs"].keys()
    assert all("description" in i and "default" in i for i in a["inputs"].values())
    assert a["runs"]["using"] == "composite"
    assert {"policy", "safe-kernels", "cell-timeout", "cache-dir"} <= a["outputs"].keys()


def test_every_run_step_has_a_shell():
    """(No expression inside run: is test_workflows.py's test_no_expression_in_any_shell_line.)"""
    for step in action()["runs"]["steps"]:
        if "run" in step:
            assert step.get("shell") == "bash", step["name"]


def test_cache_is_the_pinned_actions_cache():
    uses = [s["uses"] for s in action()["runs"]["steps"] if "uses" in s]
    assert uses == [CACHE_PIN]
    assert re.search(re.escape(CACHE_PIN) + r" # v5\.0\.5$", ACTION.read_text(), re.M)


def test_zizmor_passes_on_the_action():
    proc = zizmor(ACTION, min_severity=None)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "No findings" in proc.stdout + proc.stderr


ONE_LINE_USE = """\
name: lectures
on: [pull_request]
permissions: {{}}
jobs:
  build:
    runs-on: ubuntu-latest
    timeout-minutes: 30
    steps:
      - uses: ./.github/actions/jax-env
        with: {{{inputs}}}
"""


@pytest.mark.parametrize("inputs, ok", [("concurrency: 3, memory-budget: 0.9, pin-cpu: false, peak-mib: 3072", True),
                                        ("concurency: 3", False)])
def test_actionlint_checks_the_inputs_of_a_use(tmp_path, inputs, ok):
    """actionlint cannot lint an action.yml alone; it checks a local action's inputs where a workflow uses it."""
    (tmp_path / ".git").mkdir()
    (tmp_path / ".github" / "actions" / "jax-env").mkdir(parents=True)
    (tmp_path / ".github" / "actions" / "jax-env" / "action.yml").write_text(ACTION.read_text())
    (tmp_path / ".github" / "workflows").mkdir()
    wf = tmp_path / ".github" / "workflows" / "lectures.yml"
    wf.write_text(ONE_LINE_USE.format(inputs=inputs))
    proc = actionlint(wf, cwd=tmp_path)
    assert (proc.returncode == 0) is ok and (ok or "concurency" in proc.stdout), proc.stdout + proc.stderr


# ---- the steps, run here ---------------------------------------------------------------------------

def run_steps(tmp_path, inputs: dict, nvml: str = "no library", memory_mib: int = 15360):
    """Run the action's shell steps after the install step (jaxci comes from this interpreter's venv), with
    pynvml faked: nvml is a mode of tests/test_envadvice.fake_pynvml ("no library": no NVIDIA GPU here).
    Returns (last exit status, GITHUB_ENV, step outputs, summary, combined output)."""
    a = action()
    values = {k: str(v.get("default", "")) for k, v in a["inputs"].items()} | inputs
    temp = tmp_path / "runner-temp"
    (temp / "jaxci-venv" / "bin").mkdir(parents=True)
    for tool in ("jaxci", "python"):
        os.symlink(BIN / tool, temp / "jaxci-venv" / "bin" / tool)
    files = {k: tmp_path / k for k in ("GITHUB_ENV", "GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY")}
    for f in files.values():
        f.touch()
    base = {k: v for k, v in os.environ.items() if not k.startswith(("XLA_", "JAX_"))}
    base.update(RUNNER_TEMP=str(temp), GITHUB_ACTION_PATH=str(ACTION_DIR), RUNNER_OS="Linux", RUNNER_ARCH="X64",
                GITHUB_RUN_ID="99", GITHUB_RUN_ATTEMPT="1", **{k: str(v) for k, v in files.items()})
    base["PATH"] = f"{BIN}{os.pathsep}{base['PATH']}"
    fake = tmp_path / "fake-nvml"
    fake.mkdir()
    (fake / "pynvml.py").write_text(fake_pynvml(nvml, memory_mib))
    base["PYTHONPATH"] = os.pathsep.join([str(fake), *filter(None, [base.get("PYTHONPATH")])])
    log, rc, outputs = "", 0, {}
    steps = [s for s in a["runs"]["steps"] if "run" in s][1:]  # the install step is replaced by the symlinks
    for step in steps:
        env = dict(base, **key_values(files["GITHUB_ENV"].read_text()))
        for k, v in step.get("env", {}).items():
            env[k] = re.sub(r"\$\{\{ inputs\.([\w-]+) \}\}", lambda m: values[m.group(1)], v)
        files["GITHUB_OUTPUT"].write_text("")
        proc = run_bash(step["run"], env=env, cwd=tmp_path)
        log += proc.stdout + proc.stderr
        outputs[step.get("id")] = key_values(files["GITHUB_OUTPUT"].read_text())
        rc = proc.returncode
        if rc:
            break
    return rc, key_values(files["GITHUB_ENV"].read_text()), outputs, files["GITHUB_STEP_SUMMARY"].read_text(), log


@pytest.mark.slow
def test_steps_on_a_t4_family(tmp_path):
    # NVML fails here, and is not asked: the machine input gives the device memory
    rc, env, out, summary, log = run_steps(tmp_path, {"concurrency": "3", "peak-mib": "3072",
                                                      "machine": "g4dn.2xlarge", "python": sys.executable},
                                           nvml="no driver")
    assert rc == 0, log
    # the policy a GPU measured keeping every worker alive (results/lab-h200), never the unmeasured fraction
    assert env["XLA_PYTHON_CLIENT_PREALLOCATE"] == "false" and "XLA_PYTHON_CLIENT_MEM_FRACTION" not in env
    assert env["JAX_TRACEBACK_FILTERING"] == "off" and "JAX_PLATFORMS" not in env
    cache_dir = str(tmp_path / "runner-temp" / "jax-compilation-cache")
    assert env["JAX_COMPILATION_CACHE_DIR"] == cache_dir and Path(cache_dir).is_dir()
    # no cell time given: the output is empty, the repository keeps its own per-cell timeout
    assert out["advise"] == {"policy": "no-prealloc", "safe-kernels": "3", "cell-timeout": "", "cache-dir": cache_dir,
                             "beyond-measured": ""}  # 4 fit by memory; a GPU measured 3 surviving
    assert out["key"]["prefix"] == f"jax-compilation-cache-g4dn.2xlarge-jax{version('jax')}-"
    assert out["key"]["key"] == out["key"]["prefix"] + "99-1"
    assert "policy: no-prealloc" in summary and f"jax {version('jax')}" in summary
    assert "default backend: cpu" in summary  # this machine has no GPU; the check still ran JAX


@pytest.mark.slow
def test_steps_pinned_to_cpu(tmp_path):
    rc, env, out, summary, log = run_steps(tmp_path, {"concurrency": "4", "pin-cpu": "true", "python": sys.executable})
    assert rc == 0, log
    assert env["JAX_PLATFORMS"] == "cpu" and not any(k.startswith("XLA_") for k in env)
    assert out["advise"]["policy"] == "cpu" and out["advise"]["safe-kernels"] == ""
    assert "cpu" in summary


# ---- refusals, as the action runs them -------------------------

def _annotation(log: str) -> str:
    lines = [line for line in log.splitlines() if line.startswith("::error title=jax-env::")]
    assert len(lines) == 1, log
    return lines[0]


@pytest.mark.parametrize("inputs, message", [
    # 3 kernels of 6,000 MiB on 16,000 MiB: a 0.45 fraction each would be 135% of the device
    ({"concurrency": "3", "peak-mib": "6000", "device-memory-mib": "16000"},
     "--kernels 3: 3 kernels of peak 6,000 MiB"),
    ({"concurrency": "2", "pin-cpu": "true", "machine": "nosuch"}, "--machine 'nosuch': unknown machine"),
    ({"concurrency": "2", "memory-budget": "0.29", "peak-mib": "2900", "device-memory-mib": "10000"}, "at most 1 fit"),
    ({"device-memory-mib": "inf"}, "--device-memory-mib inf"),
    ({"peak-mib": "nan", "device-memory-mib": "16000"}, "--peak-mib nan"),
    ({"pin-cpu": "yes"}, "pin-cpu must be true or false"),
    ({"concurrency": "0", "pin-cpu": "true"}, "--kernels 0"),
    ({"concurrency": "3; touch pwned", "pin-cpu": "true"}, "invalid int value"),
    ({"concurrency": "2", "device-memory-mib": "15360", "peak-mib": "99999"}, "larger than the device"),
    ({"cache": "maybe", "pin-cpu": "true"}, "cache must be true or false"),
    ({"concurrency": "2", "machine": "50%\nbad", "pin-cpu": "true"}, "'50%25\\nbad'"),  # a % and a newline: one line
])
def test_refusals_end_the_step_with_an_error_annotation_and_export_nothing(tmp_path, inputs, message):
    rc, env, _, _, log = run_steps(tmp_path, inputs)
    assert rc == 2 and message in _annotation(log), log
    assert not (tmp_path / "pwned").exists()
    if "cache" not in inputs:  # the cache step comes after the advice's exports
        assert env == {}


def test_a_tiny_peak_finishes(tmp_path):
    # the search is bounded by the hundredths, not a count-down from 1.4e13 kernels
    rc, env, out, _, log = run_steps(tmp_path, {"concurrency": "2", "peak-mib": "1e-9", "device-memory-mib": "16000",
                                                "cache": "false"})
    assert rc == 0, log
    assert env["XLA_PYTHON_CLIENT_PREALLOCATE"] == "false" and out["advise"]["safe-kernels"] == "3"


@pytest.mark.parametrize("mode, memory_mib, message", [
    ("no driver", 15360, "NVML is installed but failed (Driver Not Loaded); give --device-memory-mib or --machine"),
    ("memory fails", 15360, "NVML is installed but failed (Unknown Error)"),
    ("ok", 0, "NVML reported 0 MiB as the memory of GPU 0"),
])
def test_a_broken_nvml_is_an_error_annotation(tmp_path, mode, memory_mib, message):
    rc, env, out, _, log = run_steps(tmp_path, {"concurrency": "2"}, nvml=mode, memory_mib=memory_mib)
    assert rc == 2 and message in _annotation(log), log
    assert env == {} and out.get("advise") == {}


def test_nvml_gives_the_device_memory(tmp_path):
    rc, env, out, _, log = run_steps(tmp_path, {"concurrency": "2", "peak-mib": "3072", "cache": "false"}, nvml="ok")
    assert rc == 0, log
    assert out["advise"]["safe-kernels"] == "3" and env["XLA_PYTHON_CLIENT_PREALLOCATE"] == "false"
    assert "note: device memory from NVML: GPU 0, Tesla T4, 15,360 MiB" in log  # the text, in the step's log


def test_more_kernels_than_measured_is_a_warning_annotation_and_an_output(tmp_path):
    """Question 3's one rule: 8 kernels on a T4 is above the 3 a GPU measured surviving; the step goes on (the
    engine would start them anyway) but says so where a maintainer looks: a warning and the output."""
    rc, env, out, _, log = run_steps(tmp_path, {"concurrency": "8", "machine": "g4dn.2xlarge", "cache": "false"})
    assert rc == 0, log
    warning = [line for line in log.splitlines() if line.startswith("::warning title=jax-env::")]
    assert len(warning) == 1 and "8 notebooks at once (requested) is above 3" in warning[0], log
    assert out["advise"]["beyond-measured"].startswith("8 notebooks at once")
    assert env["XLA_PYTHON_CLIENT_PREALLOCATE"] == "false"


def test_the_advise_step_is_one_jaxci_call():
    run = next(s for s in action()["runs"]["steps"] if s.get("id") == "advise")["run"]
    assert run.count("jaxci-venv/bin/jaxci") == 1 and "nvidia-smi" not in run and "<<" not in run
    assert '>> "$GITHUB_ENV"' not in run  # jaxci appends, once the whole advice succeeded
