"""Dollars per runner family: each workload (suite) and the whole benchmark job, from asv's recorded durations
and catalogue prices, billed by jaxci.policy.jobcost's rule (advice, beside the lecture builds' prices in
jaxci.policy.builds).

A job costs (job overhead + suite wall time), billed with the catalogue's minimum, times the hourly price.
Suite wall time is what asv recorded per benchmark (process starts and setup included), not only the
timed calls. A family without results gets a *predicted* cost from one stated model: its suite takes the
wall time measured on a reference machine of the same kind (GPU or CPU-only). The overhead is the
catalogue's planning figure, named as an input.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from jaxci.analysis import SCALE_RANK, scale_label
from jaxci.policy.jobcost import billed_seconds


@dataclass
class FamilyCost:
    family: str
    has_gpu: bool
    price_per_hour: float | None
    label: str                      # measured | predicted | not predicted
    suites: dict = field(default_factory=dict)     # suite -> seconds
    scale: str = ""
    source_machine: str = ""        # where the seconds were measured
    overhead_s: float | None = None
    runner: str = "runs-on"
    defaults: dict = field(default_factory=dict, repr=False)  # catalogue [defaults]: billing rules
    inputs: str = ""
    predicted_job_dollars: float | None = None  # beside a measured cost, when a reference allowed it
    provenance: str = ""

    @property
    def suite_seconds(self) -> float | None:
        return sum(self.suites.values()) if self.suites else None

    def suite_dollars(self) -> dict:
        if self.price_per_hour is None:
            return {}
        return {s: sec * self.price_per_hour / 3600 for s, sec in self.suites.items()}

    @property
    def job_seconds(self) -> float | None:
        """Billed seconds of one job (jobcost's rules: EC2 60 s minimum, GitHub whole minutes)."""
        if self.suite_seconds is None or self.overhead_s is None:
            return None
        return billed_seconds(self.runner, self.overhead_s + self.suite_seconds, self.defaults)[0]

    @property
    def job_dollars(self) -> float | None:
        if self.job_seconds is None or self.price_per_hour is None:
            return None
        return self.job_seconds * self.price_per_hour / 3600

    @property
    def error(self) -> float | None:
        if self.predicted_job_dollars is None or not self.job_dollars:
            return None
        return self.predicted_job_dollars / self.job_dollars - 1


def _run_scale(run, bench: str) -> str:
    return run.get("scales", {}).get(bench.split(".")[0], "unknown")


def suite_seconds(runs, machine: str) -> dict:
    """suite -> seconds asv spent on it on `machine`: per benchmark the newest result file of the best
    recorded scale (full, unknown, ci), as `ResultSet.latest` picks records: CI seconds never price a full run."""
    best: dict = {}
    for run in (r for r in runs if r["machine"] == machine):
        for bench, sec in run["durations"].items():
            rank = (SCALE_RANK.get(_run_scale(run, bench), 0), run["date"], run["file"])
            if bench not in best or rank >= best[bench][0]:
                best[bench] = (rank, sec)
    out: dict = {}
    for bench, (_, sec) in best.items():
        suite = _suite_of(bench)
        out[suite] = out.get(suite, 0.0) + sec
    return out


def _suite_of(bench: str) -> str:
    """The suite a recorded duration belongs to: asv names a class's setup_cache `<setup_cache SUITE:LINE>`
    (the concurrency suite's worker runs, NUTS's and compile's scratch dirs); `<build>` is asv's own."""
    if bench.startswith("<setup_cache ") and ":" in bench:
        return bench.removeprefix("<setup_cache ").split(":")[0].split(".")[0]
    return "(asv build/setup)" if bench.startswith("<") else bench.split(".")[0]


def recorded_scale(records, machine: str) -> str:
    """The scale each suite recorded for its run (results.py reads `track_scale`), never inferred from
    skips: a full-scale run skips some cpu cases too. "full", "ci", "mixed: ..." or "unrecorded"."""
    return scale_label({r.scale for r in records if r.machine == machine})


def _value(fig_map, key):
    fig = fig_map.get(key)
    return float(fig.value) if fig is not None and fig.value is not None else None


def family_costs(records, runs, machines: dict, catalogue: dict, defaults: dict) -> list[FamilyCost]:
    """One row per catalogue family. machines: name -> MachineFacts of measured machines."""
    overhead_min = _value(defaults, "job_overhead_minutes")
    overhead = overhead_min * 60 if overhead_min is not None else None
    measured = {m: s for m in machines if (s := suite_seconds(runs, m))}

    def reference(gpu: bool, exclude: str):
        # a lab capture runs chosen combinations within a loan's budget, not the suite a family's job runs:
        # its seconds would price a job far too cheaply
        cands = [m for m in measured if m != exclude and machines[m].has_gpu == gpu
                 and machines[m].get("jaxci_kind") != "lab"]
        return min(cands, key=lambda m: (machines[m].get("jaxci_kind") != "catalogue", -len(measured[m]), m),
                   default=None)

    out = []
    for name, entry in sorted(catalogue.items()):
        price = entry.value("price_per_hour")
        row = FamilyCost(name, entry.has_gpu, float(price) if price is not None else None, "not predicted",
                         overhead_s=overhead, runner=entry.runner, defaults=defaults)
        ref = reference(entry.has_gpu, exclude=name)
        if name in measured:
            row.label, row.suites, row.source_machine = "measured", measured[name], name
            row.scale = recorded_scale(records, name)
            row.inputs = (f"asv durations on {name}; overhead {overhead_min} min (catalogue planning figure); "
                          f"price ${price}/h")
            if ref is not None and row.price_per_hour is not None and overhead is not None:
                billed, _ = billed_seconds(entry.runner, overhead + sum(measured[ref].values()), defaults)
                row.predicted_job_dollars = billed * row.price_per_hour / 3600
        elif ref is not None:
            row.label, row.suites, row.source_machine = "predicted", measured[ref], ref
            row.scale = recorded_scale(records, ref)
            row.inputs = (f"model: same suite wall time as measured on {ref} ({row.scale} scale); overhead "
                          f"{overhead_min} min (catalogue planning figure); price ${price}/h")
        else:
            kind = "GPU" if entry.has_gpu else "CPU-only"
            row.inputs = (f"no {kind} machine measured to take the suite wall time from (a lab capture runs "
                          "chosen combinations, not the suite)")
        out.append(row)
    return out
