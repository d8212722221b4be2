"""Audit a lecture repository: find lectures, scan each, optionally execute each, and merge into verdicts.

One lecture's failure (unreadable file, bad notebook, missing kernel, a cell error, a dead kernel) becomes
that lecture's status and error; the others are still audited.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from pathlib import Path

from jaxci.audit import book, classify
from jaxci.audit.static import LectureScan, is_lecture, scan_notebook

SKIP_DIRS = {"_build", "node_modules", ".ipynb_checkpoints", "__pycache__", "site-packages"}
#: proposed per-cell timeout = slowest measured cell x MARGIN, rounded up to a whole minute, at least 60 s
MARGIN = 3.0
MIN_TIMEOUT = 60.0


@dataclass
class Verdict:
    path: str
    scan: LectureScan
    regime: str = classify.TRIVIAL
    recommendation: str = classify.PIN_CPU
    reasons: list[str] = field(default_factory=list)
    config: book.BookConfig | None = None
    runs: dict = field(default_factory=dict)  # platform ("cpu", "cuda") -> runner.NotebookRun
    proposed_timeout: float | None = None
    over_timeout: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    path_abs: Path | None = None  # where --execute finds the file (not serialised)

    @property
    def status(self) -> str:
        if self.scan.status == "unreadable":
            return "unreadable"
        for run in self.runs.values():
            if not run.ok:
                return run.status
        return self.scan.status

    @property
    def errors(self) -> list[str]:
        return self.scan.errors + [f"{p}: {r.error}" for p, r in self.runs.items() if r.error]

    @property
    def failed(self) -> bool:
        return self.status != "ok"

    @property
    def timeout(self) -> float | None:
        if self.scan.timeout_override is not None:
            return self.scan.timeout_override
        return self.config.timeout if self.config else None

    def as_dict(self) -> dict:
        return {"path": self.path, "status": self.status, "errors": self.errors, "regime": self.regime,
                "regime_text": classify.REGIMES.get(self.regime), "recommendation": self.recommendation,
                "reasons": self.reasons, "scan": self.scan.as_dict(), "timeout": self.timeout,
                "timeout_origin": self._timeout_origin(), "proposed_timeout": self.proposed_timeout,
                "over_timeout": self.over_timeout, "notes": self.notes,
                "runs": {p: r.as_dict() for p, r in self.runs.items()}}

    def _timeout_origin(self) -> str | None:
        if self.scan.timeout_override is not None:
            return "notebook metadata"
        return self.config.timeout_origin if self.config else None


def find_lectures(root: Path) -> list[Path]:
    """Every .ipynb and every MyST-notebook .md under root, sorted; root may be one file."""
    if root.is_file():
        return [root]
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d not in SKIP_DIRS)
        for name in sorted(filenames):
            path = Path(dirpath) / name
            if path.suffix == ".ipynb":
                found.append(path)
            elif path.suffix == ".md":
                try:
                    text = path.read_bytes().decode("utf-8")
                except UnicodeDecodeError:
                    found.append(path)  # cannot tell: report it as unreadable rather than drop it
                    continue
                except OSError:
                    found.append(path)
                    continue
                if is_lecture(path, text):
                    found.append(path)
    return sorted(found)


def scan_file(path: Path, rel: str) -> LectureScan:
    from jaxci.audit.runner import NotebookReadError, read_notebook

    try:
        nb = read_notebook(path)
    except NotebookReadError as exc:
        return LectureScan(rel, status="unreadable", errors=[str(exc)])
    return scan_notebook(nb, rel)


def audit_static(root: Path) -> list[Verdict]:
    root = Path(root)
    base = root if root.is_dir() else root.parent
    configs = book.find_configs(base)
    verdicts = []
    for path in find_lectures(root):
        rel = path.relative_to(base).as_posix()
        scan = scan_file(path, rel)
        verdict = Verdict(rel, scan, config=book.config_for(path, configs), path_abs=path)
        if scan.status != "unreadable":
            verdict.regime, verdict.recommendation, verdict.reasons = classify.classify(scan)
        else:
            verdict.regime, verdict.recommendation, verdict.reasons = "", "", []
        if verdict.config:
            if verdict.config.error:
                verdict.notes.append(verdict.config.error)
            verdict.notes += verdict.config.notes
            if verdict.config.exclude and verdict.config.excluded(path):
                verdict.notes.append("excluded from execution by exclude_patterns")
        verdicts.append(verdict)
    return verdicts


def platforms_here() -> list[str]:
    """cpu always; cuda where NVML sees a GPU."""
    from jaxci.nvml import gpu_present

    return ["cpu", "cuda"] if gpu_present() else ["cpu"]


def execute(verdicts: list[Verdict], *, platforms: list[str], cell_timeout: float = 600,
            kernel_name: str | None = None, progress: bool = True, env: dict | None = None) -> None:
    """Run every readable lecture on each platform with the instrumented runner, then merge."""
    from tqdm import tqdm

    from jaxci.audit.runner import run_notebook

    todo = [(v, p) for v in verdicts if v.scan.status != "unreadable" for p in platforms]
    bar = tqdm(todo, desc="executing lectures", unit="run", disable=not progress, leave=False)
    for verdict, platform in bar:
        bar.set_postfix_str(f"{verdict.path} [{platform}]")
        verdict.runs[platform] = run_notebook(verdict.path_abs, timeout=cell_timeout, platform=platform,
                                              kernel_name=kernel_name, env=env)
    bar.close()
    for verdict in verdicts:
        merge(verdict)


def merge(verdict: Verdict) -> None:
    """Measured times into the verdict: adjusted recommendation, cells over the configured timeout,
    and a proposed per-cell timeout from the device the lecture will run on."""
    if not verdict.runs:
        return
    cpu, gpu = verdict.runs.get("cpu"), verdict.runs.get("cuda")
    cpu_s = cpu.cells_s if cpu and cpu.ok else None
    gpu_s = gpu.cells_s if gpu and gpu.ok else None
    if verdict.recommendation:
        verdict.recommendation, reason = classify.with_measurements(verdict.recommendation, cpu_s, gpu_s)
        if reason:
            verdict.reasons.append(reason)
    limit = verdict.timeout
    for platform, run in verdict.runs.items():
        for cell in run.cells:
            if cell.status == "dead":  # its time is when the death was noticed, not a cell time
                continue
            if limit is not None and cell.wall_s > limit:
                verdict.over_timeout.append(f"{platform} cell {cell.index}: {cell.wall_s:.1f} s > {limit:g} s")
    target = gpu if (gpu is not None and verdict.recommendation == classify.KEEP_GPU) else cpu
    if target is not None and target.ok and target.cells:
        slowest = target.slowest.wall_s
        verdict.proposed_timeout = max(MIN_TIMEOUT, math.ceil(slowest * MARGIN / 60) * 60)


def pin_list(verdicts: list[Verdict]) -> list[str]:
    """Lectures that use JAX or numpyro and should run with JAX_PLATFORMS=cpu."""
    return [v.path for v in verdicts if v.recommendation == classify.PIN_CPU
            and (v.scan.uses_jax or v.scan.uses_numpyro)]
