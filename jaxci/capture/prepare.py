"""Preparing a capture, before any step: the carried wheels (until asv imports), the commit, the capture's
asv.conf.json (results in the work folder, the snapshot repository plugin), the machine's registration (a
lab name must be its GPU), the package versions, and the device probes whose process start times the
scheduler's estimates start from."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path

from jaxci import nvml
from jaxci.capture.carried import CaptureError, install_wheels, source_commit
from jaxci.capture.scheduler import Costs
from jaxci.machines.asvconf import write_redirected_conf
from jaxci.machines.register import register

LAB_MACHINE = "lab-h200"
REHEARSAL_MACHINE = "local-rehearsal"


def prepare(cap, wheels: Path | None) -> tuple[bool, Costs]:
    """Wheels, commit, asv config, machine registration, device probes. Returns (gpu usable, costs).
    `cap` is the capture's state (jaxci.capture.run.Capture): facts and notes are added to it."""
    load_asv(cap, wheels)
    write_conf(cap)
    gpus = nvml.gpus()
    check_machine(cap, gpus)
    info = register(cap.machine, local=cap.machine.startswith("local-"),
                    machine_file=str(cap.work / ".asv-machine.json"), gpus=gpus)
    cap.facts.update(gpu=info.get("gpu"), gpu_driver=info.get("gpu_driver"), cpu=info.get("cpu"),
                     num_cpu=info.get("num_cpu"), host=socket.gethostname(), python=info.get("python"))
    read_versions(cap)
    costs = probe_costs(cap, gpus)
    return bool(gpus), costs


def load_asv(cap, wheels: Path | None) -> None:
    """Unpack the carried wheels where their distributions are missing; then asv must import."""
    if wheels and wheels.is_dir():
        unpacked = install_wheels(wheels, cap.work / "site")
        cap.notes.append(f"unpacked {len(unpacked)} carried wheel(s): {', '.join(unpacked) or 'none needed'}")
    try:
        import asv  # noqa: F401
    except ImportError:
        raise CaptureError("gpu_capture: asv is not importable: carry its wheels (scripts/prepare-device.sh) "
                           "and pass --wheels .device/wheels") from None


def write_conf(cap) -> Path:
    """The commit into the facts, and the capture's asv.conf.json: results under the work folder, and the
    snapshot repository in place of git (the copy may hold no .git: see jaxci.capture.asvrepo)."""
    from jaxci.capture.asvrepo import DVCS, PLUGIN  # imports asv: only now is it importable

    src = source_commit()
    cap.facts.update(commit=src["commit"], commit_date=src["date"], commit_source=src["source"])
    return write_redirected_conf(cap.work, dvcs=DVCS, plugins=[PLUGIN])


def check_machine(cap, gpus) -> None:
    """A rehearsal notes a GPU it finds; a lab name is refused on a GPU that is not the lab machine's."""
    if cap.rehearse:
        if gpus:
            cap.notes.append(f"rehearsal on a machine with {gpus[0].name}: gpu combinations will run")
        return
    from jaxci.catalogue import load_catalogue

    entry = load_catalogue(include_lab=True).get(cap.machine)
    if entry is not None and entry.is_lab and gpus and entry.label.lower() not in gpus[0].name.lower():
        raise CaptureError(f"gpu_capture: {cap.machine} is the {entry.label} lab machine but NVML sees "
                           f"{gpus[0].name}: register another name (one name must mean one kind of hardware)")


def read_versions(cap) -> None:
    try:
        from importlib.metadata import version

        cap.facts.update(jax=version("jax"), jaxlib=version("jaxlib"), numpyro=version("numpyro"),
                         asv=version("asv"))
    except Exception as exc:
        cap.notes.append(f"package versions not read: {exc}")


def probe_costs(cap, gpus) -> Costs:
    """Process start times measured on each device (into the facts), as the scheduler's costs."""
    costs = Costs()
    env = cap.env()
    start_s = {}
    for device in (["cpu", "gpu"] if gpus else ["cpu"]):
        seconds, text = probe_start(device, env)
        if seconds is None:
            cap.notes.append(text)
        else:
            start_s[device] = round(seconds, 2)
            costs.start_s[device] = seconds + 0.5  # asv's own process overhead on top
            cap.facts[f"jax_{device}"] = text
    cap.facts["start_s"] = start_s
    if gpus and "gpu" not in start_s:
        cap.notes.append("NVML sees a GPU but JAX's CUDA backend did not start: gpu combinations will fail "
                         "(JAX_PLATFORMS=cuda), cpu combinations still run")
    costs.discovery_s = max(costs.discovery_s, 2 * costs.start_s["cpu"])
    return costs


def probe_start(device: str, env: dict) -> tuple[float | None, str]:
    """Seconds for a fresh interpreter to import JAX and run one op on `device`; (None, error) if it fails."""
    platform = "cuda" if device == "gpu" else "cpu"
    code = (f"import jax, jax.numpy as jnp; d = jax.devices({platform!r})[0]; "
            "jax.block_until_ready(jnp.ones(8, device=d) + 1); print(jax.__version__, d.device_kind)")
    t0 = time.monotonic()
    try:
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=180,
                              env={**env, "JAX_PLATFORMS": platform})
    except subprocess.TimeoutExpired:
        return None, f"{device}: starting JAX took over 180 s"
    if proc.returncode:
        return None, f"{device}: JAX did not start (JAX_PLATFORMS={platform}):\n{proc.stderr[-2000:]}"
    return time.monotonic() - t0, proc.stdout.strip()
