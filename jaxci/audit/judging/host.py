"""The host factor h of a family: how much faster (h < 1) or slower its host runs single-threaded Python than the
host that executed the lectures, so that what was measured here (host code, compile, the CPU side) can be moved to
the family's host.

    h(family) = the family's published pure-Python probe / the same probe here

The probe is the project's own host.PurePython `int_sum` (benchmarks/kernels/host.py; incidents.md publishes its
10M-element time on the CPU and T4 runners). Here it runs at PROBE_N, once per audit, the median of PROBE_REPEAT
in this process after the lectures ran, scaled to the published n (a pure-Python loop's time is linear in its trip
count: lab-epyc-2c's own results read 0.0854 s at 1M and 0.864 s at 10M). This is the one measurement judging
takes: h needs this host's figure, and no run records it. A family without a published probe has no h: its
measured-here parts are carried unscaled, and the record says "not measured".
"""

from __future__ import annotations

import importlib.util
import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path

#: the probe's trip count here, and how many times it runs (median; the spread is the band)
PROBE_N, PROBE_REPEAT = 1_000_000, 3
#: the probe's source: this project's host suite kernel, read from the checkout
KERNELS = Path(__file__).resolve().parents[3] / "benchmarks" / "kernels" / "host.py"
MEASURED, NOT_MEASURED = "measured ratio", "not measured"


@dataclass(frozen=True)
class Probe:
    """This host's pure-Python probe, at `n` (seconds: median, fastest, slowest), or why there is none."""

    seconds: float | None
    low: float | None
    high: float | None
    n: int
    text: str


@dataclass(frozen=True)
class HostFactor:
    """h with its band and source; value 1.0 and label "not measured" where the family publishes no probe."""

    value: float
    low: float
    high: float
    label: str
    source: str

    def as_dict(self) -> dict:
        return asdict(self)


def probe(n: int = PROBE_N, repeat: int = PROBE_REPEAT, kernels: Path = KERNELS) -> Probe:
    """This host's int_sum(n) seconds, the median of `repeat` runs in this process (with the load average)."""
    try:
        spec = importlib.util.spec_from_file_location("_jaxci_host_kernels", kernels)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        int_sum = module.int_sum
    except (OSError, ImportError, AttributeError) as exc:
        return Probe(None, None, None, n, f"not measured: the probe's kernel {kernels} cannot be read "
                                          f"({type(exc).__name__})")
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        int_sum(n)
        times.append(time.perf_counter() - t0)
    times.sort()
    mid = times[len(times) // 2]
    return Probe(mid, times[0], times[-1], n,
                 f"host.PurePython int_sum n={n:,} here: {mid:.3g} s (median of {repeat}, {times[0]:.3g}.."
                 f"{times[-1]:.3g}; load {_load()})")


def _load() -> str:
    """The 1-minute load average: a probe taken beside other work is slower, and says so."""
    try:
        return f"{os.getloadavg()[0]:.2f}"
    except OSError:
        return "not read"


def published_probe(published, family: str):
    """The family's published pure-Python probe (jaxci.analysis.evidence.Evidence), or None."""
    from jaxci.analysis import evidence as E

    found = [e for e in E.select(published or (), (family,), "cpu", E.HOST_PYTHON) if e.n]
    return found[0] if found else None


def factor(family: str, published, here: Probe) -> HostFactor:
    """h for `family` from its published probe over this host's (scaled to the published n), band from both ends;
    1.0 "not measured" (said why) where either side is missing."""
    pub = published_probe(published, family)
    if pub is None:
        return HostFactor(1.0, 1.0, 1.0, NOT_MEASURED,
                          f"no published single-thread probe for {family}: this host's measured parts carried "
                          "unscaled (this host taken as the family's host)")
    if not here.seconds:
        return HostFactor(1.0, 1.0, 1.0, NOT_MEASURED, f"{here.text}: this host's measured parts carried unscaled")
    per = pub.n / here.n  # this host's seconds at the published n
    mid, low, high = here.seconds * per, here.low * per, here.high * per
    v = pub.value
    return HostFactor(v.mid / mid, v.low / high, v.high / low, MEASURED,
                      f"h = {pub.label()} {v.mid:.3g} s at n={pub.n:,} / {mid:.3g} s here ({here.text}, x {per:g} "
                      "to the published n)")
