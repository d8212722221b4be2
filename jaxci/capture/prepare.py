"""Preparing a capture, before any step: the carried wheels (until asv imports), the commit, the capture's
asv.conf.json (results in the work folder, the snapshot repository plugin), the device probes whose process start
times the scheduler's estimates start from (and which say what the accelerator is: NVML knows only NVIDIA GPUs),
the machine's registration (a lab name must be its GPU or its accelerator) and the package versions.
The accelerator is whatever JAX has (jaxci.accel): a GPU or a TPU; each probe is a fresh interpreter that exits,
so no process holds a TPU when asv starts."""

from __future__ import annotations

import json
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
    """Wheels, commit, asv config, device probes, machine registration. Returns (accelerator usable, costs).
    `cap` is the capture's state (jaxci.capture.run.Capture): facts and notes are added to it."""
    from jaxci.accel import accelerator_device

    load_asv(cap, wheels)
    write_conf(cap)
    gpus = nvml.gpus()
    check_machine(cap, gpus)
    device = accelerator_device()
    costs = probe_costs(cap, device)
    check_accelerator(cap)
    info = register(cap.machine, local=cap.machine.startswith("local-"),
                    machine_file=str(cap.work / ".asv-machine.json"), gpus=gpus,
                    accelerator=cap.facts.get("accelerator"))
    cap.facts.update(gpu=info.get("gpu"), gpu_driver=info.get("gpu_driver"), cpu=info.get("cpu"),
                     num_cpu=info.get("num_cpu"), host=socket.gethostname(), python=info.get("python"))
    read_versions(cap)
    return device is not None, costs


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


def check_accelerator(cap) -> None:
    """A lab name of a TPU (catalogue backend "tpu") is refused where the probes did not start a TPU: one name must
    mean one kind of hardware (a GPU lab name is checked against NVML, here and at registration)."""
    if cap.rehearse:
        return
    from jaxci.catalogue import load_catalogue

    entry = load_catalogue(include_lab=True).get(cap.machine)
    seen = (cap.facts.get("accelerator") or {}).get("platform")
    if entry is not None and entry.is_lab and entry.backend == "tpu" and seen != "tpu":
        raise CaptureError(f"gpu_capture: {cap.machine} is the {entry.label} lab machine but JAX started "
                           f"{seen or 'no accelerator'} here: register another name (one name must mean one kind "
                           "of hardware)")


def read_versions(cap) -> None:
    try:
        from importlib.metadata import version

        cap.facts.update(jax=version("jax"), jaxlib=version("jaxlib"), numpyro=version("numpyro"),
                         asv=version("asv"))
    except Exception as exc:
        cap.notes.append(f"package versions not read: {exc}")


def probe_costs(cap, device: str | None) -> Costs:
    """Process start times measured on cpu and this machine's accelerator device (into the facts), as the
    scheduler's costs; the accelerator's own description (platform, kind, memory) into facts["accelerator"]."""
    from jaxci.accel import platform_for

    costs = Costs()
    env = cap.env()
    start_s = {}
    for dev in ["cpu", device] if device else ["cpu"]:
        seconds, text = probe_start(dev, env)
        if seconds is None:
            cap.notes.append(text)
        else:
            start_s[dev] = round(seconds, 2)
            costs.start_s[dev] = seconds + 0.5  # asv's own process overhead on top
            version, _, facts = text.partition(" ")
            described = json.loads(facts)
            cap.facts[f"jax_{dev}"] = f"{version} {described['device_kind']}"
            if dev != "cpu":
                cap.facts["accelerator"] = described
    cap.facts["start_s"] = start_s
    if device and device not in start_s:
        cap.notes.append(f"this machine shows a {device} but JAX's {platform_for(device)} backend did not start: "
                         f"{device} combinations will fail (JAX_PLATFORMS={platform_for(device)}), cpu combinations "
                         "still run")
    costs.discovery_s = max(costs.discovery_s, 2 * costs.start_s["cpu"])
    return costs


def probe_start(device: str, env: dict) -> tuple[float | None, str]:
    """Seconds for a fresh interpreter to import JAX and run one op on `device`; (None, error) if it fails. Prints
    JAX's version and the device's own description (jaxci.accel.device_facts) as JSON."""
    from jaxci.accel import platform_for

    platform = platform_for(device)
    code = ("import json, jax, jax.numpy as jnp; from jaxci.accel import device_facts; "
            f"d = jax.devices({platform!r})[0]; jax.block_until_ready(jnp.ones(8, device=d) + 1); "
            "print(jax.__version__, json.dumps(device_facts(d)))")
    t0 = time.monotonic()
    try:
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=180,
                              env={**env, "JAX_PLATFORMS": platform})
    except subprocess.TimeoutExpired:
        return None, f"{device}: starting JAX took over 180 s"
    if proc.returncode:
        return None, f"{device}: JAX did not start (JAX_PLATFORMS={platform}):\n{proc.stderr[-2000:]}"
    return time.monotonic() - t0, proc.stdout.strip()
