"""Outcome of N kernels sharing one device under each memory policy (the concurrency suite's tracks)."""

from __future__ import annotations

from dataclasses import dataclass, field

from jaxci.analysis import group

METRICS = {"track_workers_died": "died", "track_slowdown": "slowdown", "track_peak_memory_mib": "peak_mib"}


@dataclass
class Cell:
    machine: str
    device: str
    policy: str
    n_workers: int
    values: dict = field(default_factory=dict)   # died / slowdown / peak_mib -> number (absent: not measured)
    status: str = "not measured"                 # ok | "k died" | failed | skipped | not measured
    provenance: str = ""

    @property
    def workers_died(self) -> bool:
        """Some of its workers died: the measured count, never the status's words."""
        return bool(self.values.get("died"))


#: the most kernels at once a result is read for (the suite runs up to a few dozen)
MOST_WORKERS = 4096


def workers(value) -> int | None:
    """A result's n_workers as a count of kernels: a whole number in [1, MOST_WORKERS]; None for anything else
    (-1, 0, a string, a 5,000-digit number), which is no measurement of N kernels and is left out of the grid."""
    ok = isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= MOST_WORKERS
    return value if ok else None


def grid(records) -> list[Cell]:
    """The concurrency suite's cells; a result whose n_workers is not a count of kernels (`workers`) is left out."""
    cells: dict = {}
    for r in records:
        if r.suite != "concurrency" or r.method not in METRICS or not {"n_workers", "policy"} <= r.params.keys():
            continue
        if workers(r.params["n_workers"]) is None or not isinstance(r.params["policy"], str):
            continue
        key = (r.machine, r.params.get("device", "gpu"), r.params["policy"], r.params["n_workers"])
        cell = cells.setdefault(key, Cell(*key))
        if r.ok:
            cell.values[METRICS[r.method]] = r.value
            cell.provenance = r.provenance()
        elif r.method == "track_workers_died":
            cell.status = r.status
    for cell in cells.values():
        died = cell.values.get("died")
        if died is not None:
            cell.status = "ok" if died == 0 else f"{died:g} died"
    return sorted(cells.values(), key=lambda c: (c.machine, c.device, c.policy, c.n_workers))


def safe_n(cells) -> dict:
    """(machine, device, policy) -> the largest N where no worker died there or at any smaller measured N
    (None: not even the smallest measured N was safe). A policy with no measured N (every combination
    skipped, e.g. narrowed by JAXCI_POLICIES) has no entry: n/a is never read as a death."""
    out = {}
    for key, cs in group(cells, lambda c: (c.machine, c.device, c.policy)).items():
        if all(c.status in ("skipped", "not measured") for c in cs):
            continue
        best = None
        for cell in sorted(cs, key=lambda c: c.n_workers):
            if cell.status == "ok":
                best = cell.n_workers
            elif cell.status not in ("skipped", "not measured"):
                break
        out[key] = best
    return out


@dataclass(frozen=True)
class Survived:
    """A memory policy a GPU measured keeping every worker alive, up to `n` kernels at once."""

    machine: str
    policy: str
    n: int
    ran_up_to: int  # the largest N the suite ran this policy at on that GPU


def rank(s: Survived) -> tuple:
    """Most kernels first; on a tie allocation on demand, then by machine name."""
    return -s.n, s.policy != "no-prealloc", s.machine


def survived_on_gpu(cells) -> list[Survived]:
    """The GPU policies the suite measured keeping every worker alive (safe_n), most kernels first."""
    out = []
    for (machine, device, policy), n in safe_n(cells).items():
        if device != "gpu" or not n:
            continue
        ran = [c.n_workers for c in cells if (c.machine, c.device, c.policy) == (machine, device, policy)
               and c.status not in ("skipped", "not measured")]
        out.append(Survived(machine, policy, n, max(ran, default=n)))
    return sorted(out, key=rank)


def never_on_gpu(cells) -> list[str]:
    """Policies of the suite that no GPU ran (every GPU combination skipped)."""
    seen = {c.policy for c in cells if c.device == "gpu"}
    ran = {c.policy for c in cells if c.device == "gpu" and c.status not in ("skipped", "not measured")}
    return sorted(seen - ran)
