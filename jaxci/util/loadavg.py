"""The machine's load while something is measured: the 1-minute load average sampled on a thread through a run.

Timings taken beside other work are not the kernel's: on the 2-core build VM a neighbour's test suite moved the
multi-threaded dense kernels by x100 between two releases. A run that records its load can be judged (and re-run)
by it; `Load` is that record. Pure Python, Linux's /proc/loadavg (os.getloadavg elsewhere).
"""

from __future__ import annotations

import os
import platform
import threading
from dataclasses import dataclass


@dataclass(frozen=True)
class Load:
    """The 1-minute load average over one run: samples taken every `every` seconds, the first at the start."""

    samples: tuple[float, ...]

    @property
    def median(self) -> float | None:
        s = sorted(self.samples)
        if not s:
            return None
        mid = len(s) // 2
        return s[mid] if len(s) % 2 else (s[mid - 1] + s[mid]) / 2

    @property
    def peak(self) -> float | None:
        return max(self.samples) if self.samples else None

    def quiet(self, max_load: float) -> bool:
        """True when the run's median load stayed at or under `max_load` (a run with no sample is not quiet)."""
        return self.median is not None and self.median <= max_load

    def text(self) -> str:
        if not self.samples:
            return "load not recorded"
        return f"load median {self.median:.2f}, max {self.peak:.2f} ({len(self.samples)} samples)"


def one_minute() -> float | None:
    """The 1-minute load average now, or None where the platform has none."""
    try:
        return os.getloadavg()[0]
    except OSError:
        return None


def cpu_model() -> str:
    """The CPU's model name (/proc/cpuinfo), else platform.processor(), else 'unknown'."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def cpus_in_use() -> tuple[int, ...]:
    """The CPUs this process may run on (its affinity, which its children inherit); () where the OS cannot say."""
    try:
        return tuple(sorted(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return ()


def pin_to(cpus: tuple[int, ...]) -> tuple[int, ...]:
    """Run this process, and every process it starts from now on, on `cpus` only: XLA's and Eigen's CPU thread
    pools size themselves to the affinity, so a multi-threaded kernel runs on those CPUs alone. Returns the
    CPUs it ran on before. Raises ValueError for a CPU this process may not use."""
    before = cpus_in_use()
    unknown = sorted(set(cpus) - set(before))
    if not cpus or unknown:
        raise ValueError(f"CPU {', '.join(map(str, unknown or cpus))} is not one this process may run on "
                         f"(it may run on {', '.join(map(str, before)) or 'none known'})")
    os.sched_setaffinity(0, set(cpus))
    return before


class Sampler:
    """`with Sampler(every=10) as s: run()` then `s.load`: samples at the start, every `every` s, and at the end."""

    def __init__(self, every: float = 10.0, read=one_minute):
        self.every, self._read = every, read
        self._samples: list[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="jaxci-load-sampler", daemon=True)

    def _take(self) -> None:
        value = self._read()
        if value is not None:
            self._samples.append(round(float(value), 2))

    def _loop(self) -> None:
        while not self._stop.wait(self.every):
            self._take()

    def __enter__(self) -> Sampler:
        self._take()
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self._take()

    @property
    def load(self) -> Load:
        return Load(tuple(self._samples))
