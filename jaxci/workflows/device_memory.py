"""A GPU's device memory for the env advice (jaxci.workflows.envadvice): the catalogue's figure, else what
`jaxci machine` registered from NVML, else NVML on this machine; each with the sentence that says where it came
from, and AdviceError (one line) when none can be had.
"""

from __future__ import annotations

import math
from pathlib import Path

from jaxci import REPO_ROOT
from jaxci.catalogue import load_catalogue
from jaxci.util.validate import InputError, machine_name

GIVE_DEVICE = "give --device-memory-mib or --machine (a catalogue GPU family), or --pin-cpu"


class AdviceError(InputError):
    """Inputs outside sense: the message names the input and the value."""


def mib(x: float) -> str:
    return f"{x:,.0f} MiB" if x >= 10 else f"{x:.3g} MiB"


def known_machine(machine: str, results: str | None):
    """The catalogue entry of a family or lab machine; None for a local asv machine name, allowed only when
    its results are read (--results) and only if it stays one folder under results/. Anything else is
    refused, --pin-cpu or not: a typo must not pass silently."""
    entry = load_catalogue(include_lab=True).get(machine)  # lab machines too: the report prints their commands
    if entry is not None:
        return entry
    if not results:
        raise AdviceError(f"--machine {machine!r}: unknown machine, not a family of env_matrix/machines.toml "
                          "(jaxci machine --list shows them)")
    try:
        machine_name("--machine", machine)
    except InputError as exc:
        raise AdviceError(str(exc)) from None
    return None


def catalogue_device_mib(family, results: str | None = None) -> tuple[float, str | None]:
    """The device memory of a catalogue machine: the catalogue's gpu_memory_mib, else (a lab machine whose
    catalogue entry has none) what its registration recorded from NVML in results/<machine>/machine.json
    (the --results directory, else this checkout's results/). Returns (MiB, a note naming the file or None);
    refused where it lists no GPU or neither has a figure. `family` is the entry known_machine returned."""
    machine = family.name
    figure = family.figure("gpu_memory_mib")
    if not family.has_gpu:
        raise AdviceError(f"--machine {machine}: the catalogue lists no GPU on it; use --pin-cpu")
    if figure.value is not None:
        return float(figure.value), None
    path = Path(results or REPO_ROOT / "results") / machine / "machine.json"
    recorded = _registered_device_mib(path)
    if recorded is None:
        raise AdviceError(f"--machine {machine}: gpu_memory_mib not in the catalogue ({figure.reason}) nor in "
                          f"{path}; give --device-memory-mib")
    return recorded, f"device memory {mib(recorded)} as registered from NVML in {path}"


def _registered_device_mib(path: Path) -> float | None:
    if not path.is_file():
        return None
    from jaxci.results.asvfiles import FormatError, load_machine_json

    try:
        value = float(load_machine_json(path).get("gpu_memory_mib", "nan"))
    except (FormatError, ValueError):
        return None
    return value if math.isfinite(value) and value > 0 else None


def _nvml_failure() -> str | None:
    """Why NVML reads no GPU, when the NVIDIA library is there and fails (no driver, no permission);
    None when there is no pynvml or no library (a machine without NVIDIA's driver) or NVML works.
    jaxci.nvml reads any failure as "no GPU", right for benchmarks, wrong for advice."""
    try:
        import pynvml
    except ImportError:
        return None
    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError_LibraryNotFound:
        return None
    except Exception as exc:  # NVMLError_DriverNotLoaded, NoPermission, ...
        return str(exc) or type(exc).__name__
    try:  # the calls jaxci.nvml.gpus() makes, for the first GPU
        pynvml.nvmlSystemGetDriverVersion()
        if pynvml.nvmlDeviceGetCount():
            handle = pynvml.nvmlDeviceGetHandleByIndex(0)
            pynvml.nvmlDeviceGetName(handle)
            pynvml.nvmlDeviceGetMemoryInfo(handle)
    except Exception as exc:
        return str(exc) or type(exc).__name__
    finally:
        try:
            pynvml.nvmlShutdown()
        except Exception:
            pass
    return None


def nvml_device_mib() -> tuple[float, str] | None:
    """GPU 0's memory as NVML reports it (what nvidia-smi reads) and a note saying so; None where this
    machine has no NVIDIA GPU. NVML that is there but fails is refused, never read as "no GPU": a GPU
    runner advised as if its memory were unknown would stop later with a vaguer error."""
    from jaxci import nvml

    found = nvml.gpus()
    if not found:
        failure = _nvml_failure()
        if failure is not None:
            raise AdviceError(f"NVML is installed but failed ({failure[:200]}); {GIVE_DEVICE}")
        if nvml.gpu_present():
            try:
                import pynvml  # noqa: F401
                hint = ""
            except ImportError:
                hint = " (pip install nvidia-ml-py)"
            raise AdviceError(f"an NVIDIA GPU is listed in /proc/driver/nvidia/gpus but NVML cannot read it{hint}; "
                              f"{GIVE_DEVICE}")
        return None
    gpu = found[0]
    if gpu.memory_mib <= 0:
        raise AdviceError(f"NVML reported {gpu.memory_mib} MiB as the memory of GPU 0 ({gpu.name}), not a device "
                          "size; give --device-memory-mib")
    others = f" of {len(found)}" if len(found) > 1 else ""
    return float(gpu.memory_mib), f"device memory from NVML: GPU 0{others}, {gpu.name}, {mib(gpu.memory_mib)}"
