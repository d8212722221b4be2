"""Compile share of a cold first call: (trace + lower + backend compile seconds) / first-call seconds.

The parts come from FOUR different fresh processes of the same suite and params: asv runs each of the
*Compile class's track_trace_s / track_lower_s / track_backend_s (jax.monitoring durations) in its own
process, each compiling anew, and the *ColdStart class's timeraw_first_call (import excluded; trace,
compile and run timed) in a fourth. Their sum is an estimate of one compile, not a part of that first
call, so it can exceed it. A share is given only where it cannot exceed the whole: where the summed
stages are larger than the first call, `share` is None and `note` says why (never a share above 100%).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

STAGES = ("trace", "lower", "backend")


@dataclass
class ColdShare:
    machine: str
    suite: str
    params: dict
    first_call: float
    trace: float
    lower: float
    backend: float
    compile_class: str
    provenance: str

    @property
    def compile(self) -> float:
        return self.trace + self.lower + self.backend

    @property
    def share(self) -> float | None:
        """compile / first call, or None where the stages (three other processes) exceed the first call."""
        if self.first_call <= 0 or self.compile > self.first_call:
            return None
        return self.compile / self.first_call

    @property
    def note(self) -> str:
        if self.share is not None:
            return "stages and first call from different processes of the same params"
        return (f"not comparable: the stages sum to {self.compile:.3g} s in three processes, more than the "
                f"{self.first_call:.3g} s first call measured in a fourth")


def compile_shares(records) -> list[ColdShare]:
    ok = [r for r in records if r.ok]
    stages: dict = {}
    for r in ok:
        for stage in STAGES:
            if r.method == f"track_{stage}_s":
                stages.setdefault((r.machine, r.suite, r.cls, _frozen(r.params)), {})[stage] = r.value
    out = []
    for r in ok:
        if r.method != "timeraw_first_call" or r.value <= 0:
            continue
        matches = [(cls, st) for (m, s, cls, p), st in stages.items()
                   if m == r.machine and s == r.suite and p == _frozen(r.params) and len(st) == len(STAGES)]
        if not matches:
            continue
        cls, st = max(matches, key=lambda cs: len(os.path.commonprefix([cs[0], r.cls])))
        out.append(ColdShare(r.machine, r.suite, dict(r.params), r.value, st["trace"], st["lower"], st["backend"],
                             cls, r.provenance()))
    return sorted(out, key=lambda c: (c.machine, c.suite, str(c.params)))


def _frozen(params: dict) -> tuple:
    return tuple(sorted(params.items()))
