"""The budget: each step's estimated cost (`Costs`) and the schedule that starts a step only when it can
finish before the budget's end, and gives it a deadline. Pure arithmetic on a clock: the tests drive it with
a fake clock and a fake step runner."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from jaxci.capture.plan import CaptureStep

PACK_RESERVE_S = 12.0           # kept free at the end for the final summary and pack
OVERRUN_FACTOR = 2.0            # a step may run this many times its estimate before it is killed
START_MARGIN = 1.25             # a step starts only when estimate x this fits the time left (a kill loses it)


@dataclass
class Costs:
    """Seconds to start a benchmark process that imports JAX on each device (measured here), the cost of a
    skipped combination, asv's discovery, and the running correction from steps already done."""
    start_s: dict = field(default_factory=lambda: {"cpu": 3.0, "gpu": 6.0, "tpu": 8.0})
    skip_s: float = 0.4
    discovery_s: float = 8.0
    estimated: float = 0.0
    actual: float = 0.0

    @property
    def factor(self) -> float:
        """actual / estimated over finished steps, kept within [0.5, 4] (one odd step cannot swing it far);
        never below 1 until a minute of estimates stands behind it (a quick sanity step says little)."""
        if self.estimated <= 0:
            return 1.0
        floor = 0.5 if self.estimated >= 60 else 1.0
        return min(4.0, max(floor, self.actual / self.estimated))

    def raw(self, step: CaptureStep, gpu: bool) -> float:
        total = self.discovery_s
        for device in step.devices():
            if device != "cpu" and not gpu:   # gpu: this machine's accelerator is usable
                total += self.skip_s
            else:
                heavy = 1 / step.per_work
                total += heavy * (self.start(device) + step.work_s) + (1 - heavy) * self.skip_s
        for device, batches, work_s in step.batches:
            if device == "cpu" or gpu:
                total += batches * (self.start(device) + work_s)
        return total

    def start(self, device: str) -> float:
        """A process start on `device`; one not measured yet (a TPU in a plan printed elsewhere) is taken to cost as
        much as the slowest measured."""
        return self.start_s.get(device) or max(self.start_s.values())

    def estimate(self, step: CaptureStep, gpu: bool) -> float:
        return self.raw(step, gpu) * self.factor


def schedule(steps, budget_s: float, costs: Costs, gpu: bool, run_step, clock=time.monotonic, records=None):
    """Run the steps in order while each one's estimate fits the time left (less the pack reserve).

    run_step(step, deadline_s) -> (status, seconds); the caller kills a step at the deadline it is given.
    Returns one record per step: ran (status, seconds, estimate) or not reached (why). Pure scheduling:
    tests drive it with a fake clock and a fake run_step. `records` (appended to) may be shared with the
    caller, so a pack made during a step already lists the steps before it.
    """
    start = clock()
    records = [] if records is None else records
    for step in steps:
        left = budget_s - (clock() - start) - PACK_RESERVE_S
        estimate = costs.estimate(step, gpu)
        if estimate * START_MARGIN > left:
            records.append({"step": step.name, "status": "not reached", "estimate_s": round(estimate, 1),
                            "why": f"needs about {estimate:.0f} s (x{START_MARGIN} margin: "
                                   f"{estimate * START_MARGIN:.0f} s), {max(left, 0):.0f} s were left"})
            continue
        deadline = min(left, estimate * OVERRUN_FACTOR)
        status, seconds = run_step(step, deadline)
        costs.estimated += costs.raw(step, gpu)
        costs.actual += seconds
        records.append({"step": step.name, "status": status, "estimate_s": round(estimate, 1),
                        "seconds": round(seconds, 1), "deadline_s": round(deadline, 1)})
    return records
