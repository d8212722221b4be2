"""The slowest whole-cell or whole-notebook wall time in the results (the suite's fixture notebooks).

A compile-only or run-only split (NotebookSplit.track_compile_s / track_run_s) is part of a cell, so it is
never a cell's time: only `time_notebook` (kernel start to shutdown) and KernelPath's per-cell wall times
count. This is evidence, not advice: fixture notebooks never size a timeout (the one timeout rule is
jaxci.policy.timeouts, applied to real lectures). The basis is the slowest such time on any machine
(the slowest family measured). Notebooks whose whole time was skipped or failed everywhere are named: a
timeout from the others says nothing about them, and with no whole time at all the answer is "not measured".
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

WHOLE = {"time_notebook": "whole notebook", "track_first_s": "whole cell (first call)",
         "track_warm_s": "whole cell (warm)"}
SUITE = "notebooks"


@dataclass
class TimeoutBasis:
    seconds: float | None        # the slowest whole-cell / whole-notebook wall time, None: not measured
    what: str = ""               # "whole notebook" | "whole cell ..."
    machine: str = ""
    benchmark: str = ""
    params: dict = field(default_factory=dict)
    provenance: str = ""
    not_measured: list = field(default_factory=list)  # "benchmark k=v ..." whose whole time no machine measured

    def answer(self) -> str:
        if self.seconds is None:
            return ("not measured: no whole-cell or whole-notebook wall time in these results (compile-only "
                    "or run-only splits are parts of a cell and never set a timeout)")
        where = " ".join(f"{k}={v}" for k, v in self.params.items())
        text = (f"the slowest measured {self.what} time: {self.seconds:.3g} s ({self.benchmark} {where}, "
                f"{self.provenance})")
        if self.not_measured:
            text += ("; not measured for " + ", ".join(self.not_measured)
                     + ": their whole time was skipped or failed, so this figure says nothing about them")
        return text


def _label(rec) -> str:
    return f"{rec.benchmark} " + " ".join(f"{k}={v}" for k, v in rec.params.items() if k != "device")


def timeout_basis(records) -> TimeoutBasis:
    whole = [r for r in records if r.suite == SUITE and r.method in WHOLE]
    ok = [r for r in whole if r.ok and r.value is not None and math.isfinite(r.value) and r.value > 0]
    measured = {_label(r) for r in ok}
    missing = sorted({_label(r) for r in whole if not r.ok and not _na_slot(r)} - measured)
    if not ok:
        return TimeoutBasis(None, not_measured=missing)
    top = max(ok, key=lambda r: r.value)
    return TimeoutBasis(top.value, WHOLE[top.method], top.machine, top.benchmark, dict(top.params), top.provenance(),
                        missing)


def _na_slot(rec) -> bool:
    """Skips that are not a missing measurement: an empty External slot, a gpu cell on a machine
    without one (the same notebook is then measured, or not, on the cpu)."""
    return rec.cls.endswith("External") or rec.params.get("device") == "gpu"
