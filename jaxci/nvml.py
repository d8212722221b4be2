"""NVIDIA GPU facts through NVML (nvidia-ml-py, imported as `pynvml`), without importing JAX.

Benchmarks call `gpu_present()` before importing JAX so a gpu combination on a CPU machine is skipped
cheaply; machine registration records the facts asv does not. No driver, no library, no GPU: all read
as "no GPU", never as an error.
"""

from __future__ import annotations

import functools
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import threading

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


class MemorySampler:
    """GPU memory in use, sampled every `interval_s` seconds in a background thread of the parent.

    The kind of timeline that diagnosed incident 3 (0 -> 11,305 -> 14,727 -> 3,427 MiB). Each sample is
    {"t": seconds since start, "used_mib": [per GPU], "processes": {pid: MiB}}; per-process figures are
    whatever NVML reports (absent in some containers). Without NVML or a GPU it records nothing and
    `available` is False.
    """

    def __init__(self, interval_s: float = 0.5):
        if interval_s <= 0:
            raise ValueError(f"MemorySampler interval_s must be > 0, got {interval_s!r}")
        self.interval_s = interval_s
        self.samples: list[dict] = []
        self.available = False
        self._stop: threading.Event | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> MemorySampler:
        import threading

        nvml = _nvml()
        if nvml is None:
            return self
        try:
            handles = [nvml.nvmlDeviceGetHandleByIndex(i) for i in range(nvml.nvmlDeviceGetCount())]
        except Exception:
            handles = []
        if not handles:
            _shutdown(nvml)
            return self
        self.available = True
        self._stop = stop = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(nvml, handles, stop), name="nvml-sampler",
                                        daemon=True)
        self._thread.start()
        return self

    def _sample(self, nvml, handles, t: float) -> dict:
        used: list = []
        processes: dict = {}
        for handle in handles:
            used.append(round(nvml.nvmlDeviceGetMemoryInfo(handle).used / 2**20, 1))
            try:
                for proc in nvml.nvmlDeviceGetComputeRunningProcesses(handle):
                    if proc.usedGpuMemory is not None:
                        processes[proc.pid] = processes.get(proc.pid, 0) + round(proc.usedGpuMemory / 2**20, 1)
            except Exception:
                pass
        return {"t": round(t, 3), "used_mib": used, "processes": processes}

    def _run(self, nvml, handles, stop: threading.Event) -> None:
        import time

        t0 = time.perf_counter()
        try:
            while True:
                last = stop.is_set()
                try:
                    self.samples.append(self._sample(nvml, handles, time.perf_counter() - t0))
                except Exception:  # a failed read leaves a gap in the timeline, not a dead thread
                    pass
                if last:
                    return
                stop.wait(self.interval_s)
        finally:
            _shutdown(nvml)

    def stop(self) -> list[dict]:
        """Stop sampling (one last sample is taken) and return the timeline."""
        if self._thread is not None and self._stop is not None:
            self._stop.set()
            self._thread.join()
            self._thread = None
        return self.samples

    def process_peaks_mib(self) -> dict[int, float]:
        """The largest memory NVML reported for each process over the timeline."""
        peaks: dict[int, float] = {}
        for sample in self.samples:
            for pid, mib in sample["processes"].items():
                peaks[pid] = max(peaks.get(pid, 0.0), mib)
        return peaks

    def __enter__(self) -> MemorySampler:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def _shutdown(nvml) -> None:
    try:
        nvml.nvmlShutdown()
    except Exception:
        pass
