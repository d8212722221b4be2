"""The one place the CI audit reads lecture verdicts: an adapter from `jaxci.audit`'s public functions
(`repo.audit_static`, `repo.execute`, the `Verdict` records, `classify`'s recommendation names) to the few
facts the CI findings need. When the lecture audit changes shape, only this module changes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from jaxci.analysis.prediction import LecturePrediction
from jaxci.policy.placement import KEEP_GPU, MEASURE, PIN_CPU


@dataclass
class LectureFacts:
    path: str
    uses_jax: bool = False          # imports jax or numpyro
    uses_numpyro: bool = False
    recommendation: str = ""        # KEEP_GPU | PIN_CPU | MEASURE | "" (unreadable)
    sequential: bool = False        # a sequential construct (scan / fori_loop / while_loop / Python loop)
    failed: bool = False
    cpu_s: float | None = None      # measured cell seconds on the CPU (--execute), else None
    gpu_s: float | None = None
    compile_cpu_s: float | None = None
    compile_gpu_s: float | None = None
    slowest_cell_s: float | None = None   # slowest measured cell on either platform
    proposed_timeout: float | None = None  # the lecture audit's proposed per-cell timeout
    excluded: bool = False          # excluded from execution by the book config
    predicted: dict[str, LecturePrediction] = field(default_factory=dict)  # family -> the audit's prediction
    narrative: str = ""             # why the lecture shows the GPU backend (and has little work), else ""
    executed: bool = False          # --execute ran it

    @property
    def measured(self) -> bool:
        return self.cpu_s is not None or self.gpu_s is not None


def _run_facts(run):
    if run is None or not getattr(run, "ok", False) or not getattr(run, "cells", None):
        return None, None, None
    slowest = getattr(run, "slowest", None)
    return run.cells_s, getattr(run, "compile_s", None), (slowest.wall_s if slowest else None)


def narrative(v) -> str:
    """Why the lecture shows the GPU backend with little work ('' if not): jaxci.audit.writing.emit's rule, so the
    patch and the tier decision leave the same lectures on the GPU."""
    from jaxci.audit.writing import emit

    return emit.narrative(v) if getattr(v, "scan", None) is not None else ""


def from_verdict(v, predictions: dict | None = None) -> LectureFacts:
    scan = v.scan
    rec = getattr(v, "recommendation", "")
    rec = rec if rec in (KEEP_GPU, PIN_CPU, MEASURE) else ""
    runs = getattr(v, "runs", {}) or {}
    cpu_s, cpu_c, cpu_slow = _run_facts(runs.get("cpu"))
    gpu_s, gpu_c, gpu_slow = _run_facts(runs.get("cuda") or runs.get("rocm"))   # a GPU's run: a TPU's is not one
    slow = [s for s in (cpu_slow, gpu_slow) if s is not None]
    return LectureFacts(
        path=v.path, uses_jax=bool(scan.uses_jax or scan.uses_numpyro), uses_numpyro=bool(scan.uses_numpyro),
        recommendation=rec, sequential=bool(getattr(scan, "sequential", None)), failed=bool(getattr(v, "failed", 0)),
        cpu_s=cpu_s, gpu_s=gpu_s, compile_cpu_s=cpu_c, compile_gpu_s=gpu_c,
        slowest_cell_s=max(slow) if slow else None, proposed_timeout=getattr(v, "proposed_timeout", None),
        excluded=bool(getattr(v, "excluded", False)),
        predicted={**(predictions or {}), **(getattr(v, "predicted", {}) or {})}, narrative=narrative(v),
        executed=bool(runs))


def from_verdicts(verdicts, predictions: dict | None = None) -> list[LectureFacts]:
    """Facts per lecture with the audit's predictions per runner family; `predictions` (predict_lab) adds each
    executed lecture's predicted seconds on the lab machines."""
    return [from_verdict(v, (predictions or {}).get(v.path)) for v in verdicts]


def predict_lab(verdicts, results_dir, published=()) -> tuple[dict, str]:
    """path -> lab machine -> predicted record for every executed lecture, as the audit predicts its runner
    families (jaxci.audit.judging.every_family), this host's seconds kept (h labelled not measured: this host is
    not probed again for them): the tier decision shows lab machines, never chosen. Also why nothing was
    predicted ('' when something was). Never raises: a model that cannot be built is a reason."""
    from jaxci.audit.judging import every_family
    from jaxci.audit.judging.family import FamilyError
    from jaxci.catalogue import CatalogueError, load_catalogue

    ran = [v for v in verdicts if v.runs and not getattr(v, "excluded", False)]
    if not ran:
        return {}, "no lecture was executed (run jaxci audit with --execute)"
    try:
        catalogue = load_catalogue(include_lab=True)
        lab = [name for name, entry in catalogue.items() if entry.is_lab]
        families = every_family.build(results_dir, catalogue, published, names=lab)
    except (CatalogueError, FamilyError, OSError) as exc:
        return {}, f"lab machines not predicted: {exc}"
    out = {v.path: found for v in ran if (found := every_family.predict_lecture(v, families))}
    return out, "" if out else "the runner model predicted no lecture on a lab machine"


def audit_lectures(root: Path) -> list[LectureFacts]:
    """The lecture audit's static verdicts for a repository, as facts."""
    from jaxci.audit import repo

    return from_verdicts(repo.audit_static(Path(root)))
