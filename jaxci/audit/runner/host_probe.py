"""This host's single-thread Python speed, probed once per executed audit after the lectures ran: the figure the
host factor h of every family divides by (jaxci.audit.judging.host).

The probe is the project's own host.PurePython `int_sum` (benchmarks/kernels/host.py; incidents.md publishes its
10M-element time on the CPU and T4 runners). Here it runs at PROBE_N, PROBE_REPEAT times in this process, scaled
to the published n by the judging side (a pure-Python loop's time is linear in its trip count: lab-epyc-2c's own
results read 0.0854 s at 1M and 0.864 s at 10M). It is a measurement, so it lives with the runs.

Why a busy machine does not move it (issue 81): each repeat is timed in this thread's CPU time (time.thread_time),
which does not count the time the thread waited for a core, and the probe is the fastest repeat (the interpreter's
speed when nothing else shares the core; the band runs to the median). Where even the CPU times spread past
TRUSTED_SPREAD (a sibling hyperthread or a throttled core slows every cycle), the probe is not trusted: it records
no seconds, and the host factor says why and carries the measured parts unscaled.
"""

from __future__ import annotations

import importlib.util
import os
import statistics
import time
from dataclasses import dataclass
from pathlib import Path

#: the probe's trip count here, and how many times it runs (the fastest is the probe; the band runs to the median)
PROBE_N, PROBE_REPEAT = 1_000_000, 9
#: the median CPU time over the fastest beyond which the probe is not trusted (a steady core reads within a few %)
TRUSTED_SPREAD = 1.25
#: the probe's source: this project's host suite kernel, read from the checkout
KERNELS = Path(__file__).resolve().parents[3] / "benchmarks" / "kernels" / "host.py"

@dataclass(frozen=True)
class Probe:
    """This host's pure-Python probe, at `n` (seconds: median, fastest, slowest), or why there is none."""

    seconds: float | None
    low: float | None
    high: float | None
    n: int
    text: str
    reused: bool = False   # read back from a record (a re-judge): its text already says so


def int_sum_of(kernels: Path = KERNELS):
    """The host suite's int_sum, loaded from its file (the probe's kernel; measure/host_probe_busy.py's too)."""
    spec = importlib.util.spec_from_file_location("_jaxci_host_kernels", kernels)
    if spec is None or spec.loader is None:
        raise ImportError(f"{kernels}: not a Python module")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.int_sum


def probe(n: int = PROBE_N, repeat: int = PROBE_REPEAT, kernels: Path = KERNELS) -> Probe:
    """This host's int_sum(n) seconds: the fastest of `repeat` runs in this thread's CPU time (`judged`)."""
    try:
        int_sum = int_sum_of(kernels)
    except (OSError, ImportError, AttributeError) as exc:
        return Probe(None, None, None, n, f"not measured: the probe's kernel {kernels} cannot be read "
                                          f"({type(exc).__name__})")
    cpu, wall = _timed(int_sum, n, repeat)
    return judged(cpu, wall, n)


def _timed(kernel, n: int, repeat: int) -> tuple[list[float], list[float]]:
    """(CPU seconds of this thread, wall seconds) of each of `repeat` calls kernel(n)."""
    cpu, wall = [], []
    for _ in range(repeat):
        c0, t0 = time.thread_time(), time.perf_counter()
        kernel(n)
        cpu.append(time.thread_time() - c0)
        wall.append(time.perf_counter() - t0)
    return cpu, wall


def judged(cpu: list[float], wall: list[float], n: int) -> Probe:
    """The probe from its repeats: the fastest CPU time, banded to the median; no seconds (with why) when the CPU
    times spread past TRUSTED_SPREAD, or when the clock gave none."""
    fastest, middle = min(cpu), statistics.median_high(cpu)
    said = (f"CPU time over {len(cpu)} repeats {fastest:.3g}..{middle:.3g} s (fastest..median), wall "
            f"{min(wall):.3g}..{max(wall):.3g} s; load {_load()}")
    if fastest <= 0:
        return Probe(None, None, None, n, f"not measured: this thread's CPU clock read 0 s for int_sum "
                                          f"n={n:,} ({said})")
    if middle / fastest > TRUSTED_SPREAD:
        return Probe(None, None, None, n, f"not trusted: host.PurePython int_sum n={n:,} spread "
                                          f"x{middle / fastest:.2f} in CPU time ({said}), past "
                                          f"x{TRUSTED_SPREAD:g}: rerun the audit at a quieter moment, or give "
                                          "--host-probe S")
    return Probe(fastest, fastest, middle, n, f"host.PurePython int_sum n={n:,} here: {fastest:.3g} s, the fastest "
                                              f"of {len(cpu)} in this thread's CPU time ({said})")


def _load() -> str:
    """The 1-minute load average: a probe taken beside other work is slower, and says so."""
    try:
        return f"{os.getloadavg()[0]:.2f}"
    except OSError:
        return "not read"


def as_dict(probe: Probe) -> dict:
    """The probe as the audit JSON records it (`host_probe`), so a re-judge of reused runs can use it again."""
    return {"seconds": probe.seconds, "low": probe.low, "high": probe.high, "n": probe.n, "text": probe.text,
            "reused": probe.reused}


def from_dict(record) -> Probe | None:
    """A recorded probe (an audit's `host_probe`), or None when it is absent or not a probe's numbers."""
    if not isinstance(record, dict):
        return None
    values = [record.get(k) for k in ("seconds", "low", "high")]
    n = record.get("n")
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) and 0 < v < 1e4 for v in values) \
            or not isinstance(n, int) or isinstance(n, bool) or n <= 0:
        return None
    found = record.get("text")
    text: str = found if isinstance(found, str) else ""
    seconds, low, high = (float(v) for v in values if v is not None)  # every one a number, checked above
    said = record.get("reused") is True   # read back once already: its text says so (never said twice)
    return Probe(seconds, low, high, n, (text if said else f"recorded with the reused runs: {text}")[:300], True)


def given(seconds: float, n: int = PROBE_N) -> Probe:
    """A probe given on the command line (`jaxci audit --host-probe S`: the int_sum(n) seconds measured on the
    host that ran the reused runs, when their audit recorded none)."""
    return Probe(seconds, seconds, seconds, n, f"host.PurePython int_sum n={n:,}: {seconds:.3g} s, given with "
                                               "--host-probe (measured when the reused runs ran)")
