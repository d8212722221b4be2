"""The one place the CI audit reads lecture verdicts: an adapter from `jaxci.audit`'s public functions
(`repo.audit_static`, `repo.execute`, the `Verdict` records, `classify`'s recommendation names) to the few
facts the CI findings need. When the lecture audit changes shape, only this module changes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace

KEEP_GPU, PIN_CPU, MEASURE = "keep on GPU", "pin to CPU", "measure"


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
    predicted: dict = field(default_factory=dict)  # family -> predict_lecture's record (cpu_s, gpu_s, bands)
    narrative: str = ""             # why the lecture shows the GPU backend (and has little work), else ""
    executed: bool = False          # --execute ran it

    @property
    def measured(self) -> bool:
        return self.cpu_s is not None or self.gpu_s is not None


def _constants():
    try:
        from jaxci.audit.judging import classify
        return (getattr(classify, "KEEP_GPU", KEEP_GPU), getattr(classify, "PIN_CPU", PIN_CPU),
                getattr(classify, "MEASURE", MEASURE))
    except ImportError:  # pragma: no cover - the lecture audit always ships classify today
        return KEEP_GPU, PIN_CPU, MEASURE


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
    keep, pin, measure = _constants()
    scan = v.scan
    rec = {keep: KEEP_GPU, pin: PIN_CPU, measure: MEASURE}.get(getattr(v, "recommendation", ""), "")
    runs = getattr(v, "runs", {}) or {}
    cpu_s, cpu_c, cpu_slow = _run_facts(runs.get("cpu"))
    gpu_s, gpu_c, gpu_slow = _run_facts(runs.get("cuda"))
    slow = [s for s in (cpu_slow, gpu_slow) if s is not None]
    notes = " ".join(getattr(v, "notes", []) or [])
    return LectureFacts(
        path=v.path, uses_jax=bool(scan.uses_jax or scan.uses_numpyro), uses_numpyro=bool(scan.uses_numpyro),
        recommendation=rec, sequential=bool(getattr(scan, "sequential", None)), failed=bool(getattr(v, "failed", 0)),
        cpu_s=cpu_s, gpu_s=gpu_s, compile_cpu_s=cpu_c, compile_gpu_s=gpu_c,
        slowest_cell_s=max(slow) if slow else None, proposed_timeout=getattr(v, "proposed_timeout", None),
        excluded="excluded from execution" in notes,
        predicted={**(predictions or {}), **(getattr(v, "predicted", {}) or {})}, narrative=narrative(v),
        executed=bool(runs))


def from_verdicts(verdicts, predictions: dict | None = None) -> list[LectureFacts]:
    """Facts per lecture; `predictions` (predict_families) adds each executed lecture's predicted seconds
    on every family."""
    return [from_verdict(v, (predictions or {}).get(v.path)) for v in verdicts]


def _executed_run(v):
    return next((r for _, r in sorted((getattr(v, "runs", {}) or {}).items()) if r.ok and r.cells), None)


def predict_families(verdicts, results_dir, published=()) -> tuple[dict, str]:
    """path -> family -> predicted record for every executed lecture on every catalogue family the runner
    model covers (runner families and lab machines), from one runner model built from `results_dir`; and
    why nothing was predicted ('' when something was). Never raises: a model that cannot be built is a reason."""
    from jaxci.analysis.model import RunnerModel
    from jaxci.audit.judging import classify, predicted
    from jaxci.audit.judging.family import RunnerView
    from jaxci.catalogue import CatalogueError, load_catalogue
    from jaxci.results.records import ResultsError, load_results

    runs = [(v, _executed_run(v)) for v in verdicts if not getattr(v, "excluded", False)]
    runs = [(v, r) for v, r in runs if r is not None]
    if not runs:
        return {}, "no lecture was executed (run jaxci audit with --execute)"
    try:
        catalogue = load_catalogue(include_lab=True)
        rs = load_results(Path(results_dir))
        model = RunnerModel.from_results(rs.latest(), rs.machines, catalogue, published)
    except (CatalogueError, ResultsError, OSError) as exc:
        return {}, f"runner model not built: {exc}"
    out: dict = {}
    for name, entry in catalogue.items():
        holder = SimpleNamespace(runner=RunnerView(model, name))
        for v, run in runs:
            pred = predicted.predict_lecture(run, holder, float64=classify.lecture_dtype(v.scan) == "float64",
                                             loops=v.scan.loops)
            if pred is None:
                continue
            if not entry.has_gpu:
                pred = {**pred, "gpu_s": None, "gpu_low_s": None, "gpu_high_s": None,
                        "missing": [m for m in pred["missing"] if "gpu" not in m.lower()]}
            out.setdefault(v.path, {})[name] = pred
    return out, "" if out else "the runner model predicted no lecture on any family"


def audit_lectures(root: Path) -> list[LectureFacts]:
    """The lecture audit's static verdicts for a repository, as facts."""
    from jaxci.audit import repo

    return from_verdicts(repo.audit_static(Path(root)))
