"""Compile share of a cold first call: (trace + lower + backend compile seconds) / first-call seconds.

The two come from different fresh processes of the same suite and params: the *ColdStart class's
timeraw_first_call (import excluded; trace, compile and run timed) and the *Compile class's track_*_s
(jax.monitoring durations). A share above 1 means the two processes disagreed (noise); it is shown as is.
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
    def share(self) -> float:
        return self.compile / self.first_call


def compile_shares(records) -> list[ColdShare]:
    ok = [r for r in records if r.ok]
    stages = {}
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
