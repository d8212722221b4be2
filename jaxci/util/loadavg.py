"""The machine's load while something is measured: the 1-minute load average sampled on a thread through a run.

Timings taken beside other work are not the kernel's: on the 2-core build VM a neighbour's test suite moved the
multi-threaded dense kernels by x100 between two releases. A run that records its load can be judged (and re-run)
by it; `Load` is that record (os.getloadavg, psutil's CPU times).

The load average counts the run itself: asv, pip and the benchmark process hold it at 1.0-1.3 on a quiet 2-vCPU
VM, so a rule on the load average alone can never call that VM quiet. What decides is what *other* processes did:
the machine's busy CPU time over the run (psutil.cpu_times) less the run's own (this process and every child it waited
for, getrusage), per second of the run. `Load.others` is that figure, in CPUs.
"""

from __future__ import annotations

import os
import platform
import resource
import statistics
import threading
import time
from dataclasses import dataclass


@dataclass(frozen=True)
class Load:
    """The 1-minute load average over one run: samples taken every `every` seconds, the first at the start."""

    samples: tuple[float, ...]
    own: float | None = None      # CPUs the run itself used, on average (its CPU seconds over its wall seconds)
    others: float | None = None   # CPUs every other process used meanwhile, on average; None: not measured

    @property
    def median(self) -> float | None:
        return statistics.median(self.samples) if self.samples else None

    @property
    def peak(self) -> float | None:
        return max(self.samples) if self.samples else None

    def quiet(self, max_others: float) -> bool:
        """True when other processes used at most `max_others` CPUs through the run. A run recorded before that
        was measured is judged by its median load average, which counts the run itself too (the stricter
        reading); a run with neither is not quiet."""
        if self.others is not None:
            return self.others <= max_others
        return self.median is not None and self.median <= max_others

    def text(self) -> str:
        if not self.samples and self.others is None:
            return "load not recorded"
        parts = []
        if self.samples:
            parts.append(f"load median {self.median:.2f}, max {self.peak:.2f} ({len(self.samples)} samples)")
        if self.others is not None:
            parts.append(f"the run used {self.own:.2f} CPU, other processes {self.others:.2f}")
        return "; ".join(parts)


def one_minute() -> float | None:
    """The 1-minute load average now, or None where the platform has none."""
    try:
        return os.getloadavg()[0]
    except OSError:
        return None


def machine_busy_seconds() -> float | None:
    """CPU seconds every CPU of the machine has spent busy since boot (psutil: user, nice, system, irq, softirq;
    idle, iowait and the hypervisor's steal are not work done here); None where psutil cannot read them."""
    try:
        import psutil

        t = psutil.cpu_times()
    except Exception:  # no psutil, or no /proc/stat to read
        return None
    return sum(getattr(t, field, 0.0) for field in ("user", "nice", "system", "irq", "softirq"))


def run_cpu_seconds() -> float:
    """CPU seconds this process and every child it has waited for have used (the run's own, asv's tree included:
    asv waits for its builds and benchmark processes, and we wait for asv)."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def share(busy: float | None, own: float, wall: float) -> tuple[float | None, float | None]:
    """(the run's CPUs, other processes' CPUs) over `wall` seconds, from the machine's busy CPU seconds and the
    run's own; (None, None) when the machine's were not read or no time passed. Others never go below 0 (the two
    clocks tick at different granularity)."""
    if busy is None or wall <= 0:
        return None, None
    return round(own / wall, 3), round(max(0.0, busy - own) / wall, 3)


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

    def __init__(self, every: float = 10.0, read=one_minute, busy=machine_busy_seconds, own=run_cpu_seconds,
                 clock=time.monotonic):
        self.every, self._read = every, read
        self._busy, self._own, self._clock = busy, own, clock
        self._start: tuple = (None, None, 0.0)  # (busy, own, clock) when the run began (__enter__)
        self._share: tuple[float | None, float | None] = (None, None)
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
        self._start = (self._busy(), self._own(), self._clock())
        self._take()
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self._take()
        busy0, own0, t0 = self._start
        busy1 = self._busy()
        busy = None if busy0 is None or busy1 is None else busy1 - busy0
        self._share = share(busy, self._own() - own0, self._clock() - t0)

    @property
    def load(self) -> Load:
        own, others = self._share
        return Load(tuple(self._samples), own, others)
