"""Register this machine with asv under a catalogue name (or a local name), with the facts asv lacks.

asv records arch, CPU string, CPU count, OS and RAM. A benchmark history across runner families also
needs the GPU model, its memory and driver (NVML), the physical core count and the backend whose pins
were installed; they go into the same asv machine entry, so asv copies them into results/<name>/machine.json.
"""

from __future__ import annotations

import os
import platform
import socket
import sys
from pathlib import Path

from jaxci import nvml
from jaxci.catalogue import load_catalogue
from jaxci.util.validate import InputError, backend, machine_name


class RegistrationError(InputError):
    """The machine cannot be registered under that name; the message says why."""


def physical_cores() -> int | None:
    """Distinct (physical id, core id) pairs in /proc/cpuinfo; None where that is not readable."""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return None
    cores, phys = set(), "0"
    for line in text.splitlines():
        key, _, value = line.partition(":")
        key, value = key.strip(), value.strip()
        if key == "physical id":
            phys = value
        elif key == "core id":
            cores.add((phys, value))
    return len(cores) or None


def cpu_identity(text: str | None = None) -> dict:
    """The first processor's vendor, family, model and flags in /proc/cpuinfo ({} where it is not readable)."""
    if text is None:
        try:
            text = Path("/proc/cpuinfo").read_text()
        except OSError:
            return {}
    fields: dict = {}
    for line in text.split("\n\n")[0].splitlines():
        key, _, value = line.partition(":")
        fields[key.strip()] = value.strip()
    return {"vendor": fields.get("vendor_id", ""), "family": fields.get("cpu family", ""),
            "model": fields.get("model", ""), "flags": set(fields.get("flags", "").split())}


def signature_mismatch(signature: str, cpu: dict) -> list[str]:
    """What this host's CPU lacks of a catalogue `cpu_signature` ("VENDOR [family F] [model M] FLAG ..."): one
    text per missing part, [] when it matches. Two VMs that both call themselves "AMD EPYC" can be different
    generations (family 25 model 17 with AVX-512, model 1 without: pure Python 2x apart), so the model name
    alone cannot keep one machine name to one kind of hardware."""
    words, out = signature.split(), []
    if words and words[0] != cpu.get("vendor"):
        out.append(f"vendor {words[0]} (here {cpu.get('vendor') or 'unknown'})")
    i = 1
    while i < len(words):
        if words[i] in ("family", "model") and i + 1 < len(words):
            if cpu.get(words[i]) != words[i + 1]:
                out.append(f"{words[i]} {words[i + 1]} (here {cpu.get(words[i]) or 'unknown'})")
            i += 2
            continue
        if words[i] not in cpu.get("flags", set()):
            out.append(f"flag {words[i]} (absent here)")
        i += 1
    return out


def blas_description() -> str:
    """The BLAS library and kernel NumPy uses (threadpoolctl), so host results compare across machines."""
    try:
        import numpy  # noqa: F401  (threadpoolctl sees only libraries already loaded)
        from threadpoolctl import threadpool_info
    except ImportError:
        return "unknown (numpy or threadpoolctl not installed)"
    libs = [f"{lib['internal_api']} {lib.get('version')} {lib.get('architecture')}"
            for lib in threadpool_info() if lib.get("user_api") == "blas"]
    return "; ".join(libs) or "none loaded"


def backend_for(gpus) -> str:
    """The pin set to install: JAXCI_BACKEND if set (checked: one of env_matrix/), else cuda13 when a GPU is
    visible, tpu on a TPU (jaxci.accel), else cpu. env_matrix/install.py makes the same choice with the same check."""
    from jaxci.accel import accelerator_platform

    chosen = backend(os.environ.get("JAXCI_BACKEND"))
    return chosen or ("cuda13" if gpus else "tpu" if accelerator_platform() == "tpu" else "cpu")


def default_local_name() -> str:
    """local-<hostname>, made a valid machine name (a hostname may hold any character, or be long)."""
    import re

    return ("local-" + re.sub(r"[^A-Za-z0-9._-]", "-", socket.gethostname()))[:64]


def machine_info(name: str, *, local: bool, gpus=None, accelerator: dict | None = None) -> tuple[dict, list[str]]:
    """The asv machine entry for `name` and the warnings to print. Raises RegistrationError."""
    from asv.machine import Machine  # asv's own defaults for the standard fields

    gpus = nvml.gpus() if gpus is None else gpus
    catalogue = load_catalogue(include_lab=True)  # a lab machine (kind "lab") registers like a family
    warnings = []
    if local:
        try:  # asv writes results/<name>/: it must stay one folder there, where git ignores it
            machine_name("machine name", name)
        except InputError as exc:
            raise RegistrationError(str(exc)) from None
        if name in catalogue:
            raise RegistrationError(
                f"{name!r} is a catalogue runner family; a local machine needs its own name "
                f"(default: local-{socket.gethostname()})")
    elif name not in catalogue:
        raise RegistrationError(
            f"unknown machine {name!r}; the catalogue (env_matrix/machines.toml) knows: "
            f"{', '.join(sorted(catalogue))}. Use --local for a machine that is not a runner family.")
    else:
        entry = catalogue[name]
        if entry.has_gpu and not gpus:
            raise RegistrationError(
                f"{name} has a {entry.value('gpu_model')} in the catalogue but NVML sees no GPU here: "
                "registering it would mix different hardware under one name")
        if not entry.has_gpu and gpus:
            warnings.append(f"{name} is a CPU-only family but NVML sees {gpus[0].name}: gpu params will run")
        signature = entry.value("cpu_signature")
        lacking = signature_mismatch(str(signature), cpu_identity()) if signature else []
        if lacking:
            raise RegistrationError(
                f"{name} names a CPU with {signature!r} in the catalogue; this host's differs: "
                f"{'; '.join(lacking)}. Registering it would mix different hardware under one name: use --local")

    info = dict(Machine.get_defaults())
    info["machine"] = name
    info["jaxci_kind"] = "local" if local else ("lab" if catalogue[name].is_lab else "catalogue")
    info["jaxci_backend"] = backend_for(gpus)
    cores = physical_cores()
    info["cpu_cores"] = str(cores) if cores else "unknown"
    info["python"] = platform.python_version()
    info["blas"] = blas_description()
    if gpus:
        first = gpus[0]
        info["gpu"] = f"{len(gpus)} x {first.name}"
        info["gpu_memory_mib"] = str(first.memory_mib)
        info["gpu_driver"] = first.driver
        info["gpu_compute_capability"] = first.compute_capability or "unknown"
        warning = nvml.driver_warning(gpus)
        if warning:
            warnings.append(warning)
    else:
        info["gpu"] = "no GPU"
    if accelerator and accelerator.get("platform") not in (None, "cpu", "gpu"):   # a TPU: never shown as a GPU
        info["accelerator"] = f"1 x {accelerator.get('device_kind', '?')}"
        info["accelerator_platform"] = str(accelerator["platform"])
        if accelerator.get("memory_mib"):
            info["accelerator_memory_mib"] = str(accelerator["memory_mib"])
    return info, warnings


def check_machine_file(path: str) -> None:
    """The asv machine file registration adds to: absent, or a regular JSON file holding an object (asv would
    otherwise fail with a traceback on a folder, or overwrite nothing useful of a corrupt one)."""
    from jaxci.util import safeio

    where = Path(path)
    if where.is_dir():
        raise InputError(f"--machine-file {path}: is a folder; give the asv machine file (a .json file)")
    if not (where.exists() or where.is_symlink()):
        if not where.resolve().parent.is_dir():
            raise InputError(f"--machine-file {path}: folder {where.resolve().parent} does not exist")
        return
    try:
        data = safeio.load_json(where, 16 * 1024 * 1024, max_depth=8)
    except safeio.UnsafeFile as exc:
        raise InputError(f"machine file {path}: {exc.reason}; fix or remove it (asv re-creates it)") from None
    if not isinstance(data, dict) or not all(isinstance(v, dict) for k, v in data.items() if k != "version"):
        raise InputError(f"machine file {path}: not asv's machine file (an object of machines); fix or remove it")


def register(name: str, *, local: bool = False, machine_file: str | None = None, gpus=None,
             accelerator: dict | None = None) -> dict:
    """Register `name` with asv; `accelerator`: a started device's own description (jaxci.accel.device_facts), for
    what NVML cannot see (a TPU)."""
    from asv.machine import MachineCollection

    check_machine_file(machine_file or MachineCollection.get_machine_file_path())
    info, warnings = machine_info(name, local=local, gpus=gpus, accelerator=accelerator)
    for warning in warnings:
        print(f"warning: {warning}", file=sys.stderr)
    MachineCollection.save(name, info, _path=machine_file)
    return info
