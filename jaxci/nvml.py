"""NVIDIA GPU facts through NVML (nvidia-ml-py, imported as `pynvml`), without importing JAX.

Benchmarks call `gpu_present()` before importing JAX so a gpu combination on a CPU machine is skipped
cheaply; machine registration records the facts asv does not. No driver, no library, no GPU: all read
as "no GPU", never as an error.
"""

from __future__ import annotations

import functools
from dataclasses import asdict, dataclass
from pathlib import Path

#: jax[cuda13] needs at least this driver major version (JAX installation docs).
MIN_DRIVER_CUDA13 = 580


@dataclass(frozen=True)
class GpuFacts:
    index: int
    name: str
    memory_mib: int
    driver: str
    compute_capability: str | None

    def as_dict(self) -> dict:
        return asdict(self)


def _nvml():
    try:
        import pynvml
    except ImportError:
        return None
    try:
        pynvml.nvmlInit()
    except Exception:  # NVMLError_LibraryNotFound, DriverNotLoaded, ...
        return None
    return pynvml


def _text(value) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


@functools.lru_cache(maxsize=1)
def gpus() -> tuple[GpuFacts, ...]:
    """Every NVIDIA GPU NVML sees; () where there is no NVML or no GPU."""
    nvml = _nvml()
    if nvml is None:
        return ()
    try:
        driver = _text(nvml.nvmlSystemGetDriverVersion())
        found = []
        for i in range(nvml.nvmlDeviceGetCount()):
            handle = nvml.nvmlDeviceGetHandleByIndex(i)
            try:
                major, minor = nvml.nvmlDeviceGetCudaComputeCapability(handle)
                cc = f"{major}.{minor}"
            except Exception:
                cc = None
            memory = nvml.nvmlDeviceGetMemoryInfo(handle).total // 2**20
            found.append(GpuFacts(i, _text(nvml.nvmlDeviceGetName(handle)), int(memory), driver, cc))
        return tuple(found)
    except Exception:
        return ()
    finally:
        try:
            nvml.nvmlShutdown()
        except Exception:
            pass


def gpu_present() -> bool:
    """True when an NVIDIA GPU is visible (NVML, else the kernel driver's /proc entry)."""
    if gpus():
        return True
    proc = Path("/proc/driver/nvidia/gpus")
    return proc.is_dir() and any(proc.iterdir())


def driver_warning(facts: tuple[GpuFacts, ...]) -> str | None:
    """A plain sentence when the driver is too old for jax[cuda13], else None."""
    if not facts:
        return None
    driver = facts[0].driver
    try:
        major = int(driver.split(".")[0])
    except ValueError:
        return f"could not read the NVIDIA driver version {driver!r}: jax[cuda13] needs >= {MIN_DRIVER_CUDA13}"
    if major < MIN_DRIVER_CUDA13:
        return (f"NVIDIA driver {driver} is older than {MIN_DRIVER_CUDA13}, which jax[cuda13] needs: "
                f"the GPU backend will not start; use an image with a newer driver")
    return None
