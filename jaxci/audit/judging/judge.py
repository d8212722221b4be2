"""A lecture's verdict, and the rules that set it: from its static scan, then from what its runs traced and
measured, then from its predicted seconds on the judged family.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from jaxci.accel import accelerator_run
from jaxci.analysis.prediction import LecturePrediction
from jaxci.audit.judging import classify
from jaxci.audit.judging import family as fam
from jaxci.audit.reading import book
from jaxci.audit.reading.sizes import Loop
from jaxci.audit.reading.static import LectureScan
from jaxci.policy import timeouts
from jaxci.policy.placement import narrative_of

#: proposed per-cell timeout: the one rule, jaxci.policy.timeouts.cell_timeout (MARGIN x the slowest cell)
MARGIN = timeouts.CELL_MARGIN


#: how `not_executed` begins for a lecture --only left out: the one wording the audit writes and the report reads
NOT_SELECTED = "not selected for execution"

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
    why: str = ""  # the one-line reason
    basis: str = ""  # measured | predicted | not known: where the deciding threshold came from
    family: str | None = None  # the runner family judged for (None: built-in thresholds)
    excluded: bool = False  # excluded from execution by the book's exclude_patterns
    not_executed: str = ""  # why --execute did not run it (excluded, missing modules, NOT_SELECTED ...)
    selected: bool = True  # chosen to execute (False: left out by --only; its static verdict stands)
    predicted: dict[str, LecturePrediction] = field(default_factory=dict)  # family -> prediction (executed)
    failure: dict | None = None  # whose failure, the lecture's or the harness's, and why (judging.failure)

    @property
    def status(self) -> str:
        if self.scan.status == "unreadable":
            return "unreadable"
        for run in self.runs.values():
            if not run.ok and not self.errors_allowed(run):
                return run.status
        return "ok" if self.scan.status == "error" and self.errors_allowed() else self.scan.status

    @property
    def errors(self) -> list[str]:
        scan = [] if self.errors_allowed() else self.scan.errors
        return scan + [f"{p}: {r.error}" for p, r in self.runs.items() if r.error and not self.errors_allowed(r)]

    def errors_allowed(self, run=None) -> bool:
        """The book sets execute.allow_errors: a cell's error (a raised exception, a syntax error) is kept in its
        output and the build goes on, so it is no failure; a timeout or a dead kernel still is."""
        allowed = bool(self.config and self.config.allow_errors)
        return allowed and (run is None or run.status == "error")

    def allowed_errors(self) -> list[str]:
        """The errors the book's allow_errors lets through (said as notes, not failures)."""
        if not self.errors_allowed():
            return []
        return self.scan.errors + [f"{p}: {r.error}" for p, r in self.runs.items() if r.error and r.status == "error"]

    @property
    def failed(self) -> bool:
        return self.status != "ok"

    @property
    def timeout(self) -> float | None:
        """Per-cell seconds the build applies to this lecture (None: no limit): its own metadata, else the book's."""
        if self.scan.timeout_origin:
            return self.scan.timeout_override
        return self.config.timeout if self.config else None

    def as_dict(self) -> dict:
        return {"path": self.path, "status": self.status, "errors": self.errors, "regime": self.regime,
                "regime_text": classify.REGIMES.get(self.regime), "recommendation": self.recommendation,
                "why": self.why, "basis": self.basis, "family": self.family, "not_executed": self.not_executed,
                "selected": self.selected,
                "reasons": self.reasons, "scan": self.scan.as_dict(), "timeout": self.timeout,
                "timeout_origin": self._timeout_origin(),
                "timeout_kind": self._timeout_kind(), "proposed_timeout": self.proposed_timeout,
                "over_timeout": self.over_timeout,
                "notes": self.notes + [f"{e} (execute.allow_errors: not a failure)" for e in self.allowed_errors()],
                "runs": {p: r.as_dict() for p, r in self.runs.items()},
                "predicted": {f: p.as_dict() for f, p in self.predicted.items()},
                "shows_gpu": bool(narrative_of(self.scan.gpu_shown, self.regime)),
                "failure": self.failure}

    def _timeout_kind(self) -> str | None:
        """Whose timeout applies (jaxci.policy.timeouts: the notebook's or the book's), None without one."""
        if self.scan.timeout_origin:
            return timeouts.NOTEBOOK_TIMEOUT
        return timeouts.BOOK_TIMEOUT if self.config and self.config.timeout_origin else None

    def _timeout_origin(self) -> str | None:
        if self.scan.timeout_origin:
            return "notebook metadata"
        return self.config.timeout_origin if self.config else None


def decide(verdict: Verdict, model: fam.FamilyModel | None) -> None:
    """(Re)decide a readable lecture from its scan (with any executed loops merged in)."""
    d = classify.decide(verdict.scan, model)
    verdict.regime, verdict.recommendation, verdict.why, verdict.basis = d.regime, d.recommendation, d.why, d.basis
    verdict.reasons = [d.why] + d.reasons
    verdict.family = model.family if model else None
    published_outranks(verdict, model)


def published_side(verdict: Verdict, model: fam.FamilyModel | None):
    """The lecture's published run time on the judged family's hardware as the GPU side (None: none published)."""
    from jaxci.policy import placement

    build = getattr(model, "published", None)
    if build is None:
        return None
    seconds = build.lecture(verdict.path)
    return placement.published_side(seconds, build.source) if seconds is not None else None


def published_outranks(verdict: Verdict, model: fam.FamilyModel | None) -> None:
    """A static "pin to CPU" of a JAX lecture that the site's own build ran on the family's GPU, with no CPU
    prediction to hold against it, becomes "either" (jaxci.policy.placement: published seconds win, and a pin needs
    the CPU predicted faster)."""
    from jaxci.policy import placement

    gpu = published_side(verdict, model)
    if gpu is None or model is None or verdict.recommendation != classify.PIN_CPU or model.family in verdict.predicted:
        return
    found = placement.place(verdict.path, None, gpu.seconds, gpu.source, model.family or "")
    verdict.recommendation, verdict.why, verdict.basis = classify.EITHER, found.why, placement.PUBLISHED
    verdict.reasons.insert(0, found.why)


def merge_traced(verdict: Verdict) -> None:
    """Trip counts and carry sizes the tracing hooks saw (first run with traces, CPU first) fill what the
    static scan left unknown; traced lax loops it did not see are added, labelled executed. A Python loop
    gets its carry from the largest argument its jitted function was traced with (its trip count stays
    the static one: calls are not counted, see runner)."""
    run = next((r for p, r in sorted(verdict.runs.items()) if r.cells and any(c.loops or c.jitted for c in r.cells)),
               None)
    if run is None:
        return
    scan = verdict.scan
    pending = [lp for lp in scan.loops if lp.trips is None or lp.carry is None]
    # the largest trace wins (over the whole run): a loop first traced small and later large is the large one
    traces = sorted(((cell.index, loop.kind, loop.trips, loop.carry) for cell in run.cells
                     for loop in cell.loops or []), key=lambda t: -(t[3] or 0))
    for index, kind, trips, carry in traces:
        match = next((lp for lp in pending if lp.kind == kind and lp.cell == index), None) or \
            next((lp for lp in pending if lp.kind == kind), None)
        if match is None:
            if not any(lp.kind == kind and lp.trips == trips and lp.carry == carry for lp in scan.loops):
                scan.loops.append(Loop(kind, index, 0, trips, "traced at execution" if trips is not None
                                       else "", carry, "traced at execution", source="executed"))
            continue
        _fill(match, trips, carry)
        pending.remove(match)
    for cell in run.cells:
        for name, largest in (cell.jitted or {}).items():
            match = next((lp for lp in pending if lp.in_python and lp.carry is None and lp.jitted == name), None)
            if match is not None:
                _fill(match, None, largest)
                match.carry_why = f"traced at execution: largest argument of `{name}`"
                pending.remove(match)
    for lp in scan.loops:
        if lp.source != "static" and lp.carry is not None:
            scan.max_elements = max(scan.max_elements or 0, lp.carry)


def _fill(loop: Loop, trips, carry) -> None:
    if loop.trips is None and trips is not None:
        loop.trips, loop.trips_why = trips, "traced at execution"
    if loop.carry is None and carry is not None:
        loop.carry, loop.carry_why = carry, "traced at execution"
    loop.source = "static+executed"


def merge(verdict: Verdict) -> None:
    """Measured times into the verdict: adjusted recommendation, cells over the configured timeout,
    and a proposed per-cell timeout from the device the lecture will run on."""
    if not verdict.runs:
        return
    accelerator, gpu = accelerator_run(verdict.runs)   # the accelerator it ran on, whichever kind
    cpu = verdict.runs.get("cpu")
    cpu_s = cpu.cells_s if cpu and cpu.ok else None
    gpu_s = gpu.cells_s if gpu and gpu.ok else None
    if verdict.recommendation:
        verdict.recommendation, reason = classify.with_measurements(verdict.recommendation, cpu_s, gpu_s,
                                                                    "TPU" if accelerator == "tpu" else "GPU")
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
        verdict.proposed_timeout = timeouts.cell_timeout(target.slowest.wall_s)


def measured_on_both(verdict: Verdict) -> bool:
    """The lecture ran here on the CPU and on an accelerator (cuda, rocm or tpu), both completed: a measured
    ratio, which outranks every prediction."""
    accelerator = accelerator_run(verdict.runs)[1]
    return bool("cpu" in verdict.runs and verdict.runs["cpu"].ok and accelerator and accelerator.ok)


def decide_predicted(verdict: Verdict, model: fam.FamilyModel | None) -> None:
    """The executed lecture's predicted seconds on the family's CPU and GPU decide (a measured GPU/CPU ratio from
    this run still outranks them); without predictions a measured slow cell outranks a static "trivial"."""
    from jaxci.audit.judging import colab, predicted

    run = next((r for p, r in sorted(verdict.runs.items()) if r.ok and r.cells), None)
    measured_both = measured_on_both(verdict)
    judged = model is not None and model.runner is not None and bool(model.crossover)  # a family with a GPU side
    pred = (predicted.gpu_family(run, model.runner, classify.lecture_dtype(verdict.scan) == "float64",
                                 verdict.scan.loops, verdict.scan.pins)
            if judged and model is not None and run is not None else None)
    if pred is not None and model is not None and model.family:
        verdict.predicted[model.family] = pred
        verdict.predicted.update(colab.colab(run, model, float64=bool(pred.float64), loops=verdict.scan.loops,
                                                 judged=pred, pins=verdict.scan.pins))
        if not measured_both:
            published = published_side(verdict, model)
            rec, why = classify.verdict_from(pred, model.family or "", published)
            verdict.recommendation, verdict.why = rec, why
            verdict.basis = published.basis if published else "predicted"
            verdict.reasons.insert(0, why)
            return
    slow = predicted.slow_cell(run)
    if slow and run is not None and verdict.regime == classify.TRIVIAL and verdict.recommendation == classify.PIN_CPU \
            and not measured_both and (verdict.scan.uses_jax or verdict.scan.uses_numpyro):
        why = (f"cell {slow[0]} measured {slow[1]:.1f} s on {run.platform or 'cpu'}: not trivial, whatever the static "
               "class says; measure on the GPU (no runner model prediction)")
        verdict.recommendation, verdict.why = classify.MEASURE, why
        verdict.reasons.insert(0, why)


def decide_on_record(verdict: Verdict, model: fam.FamilyModel | None) -> None:
    """Decide the judged family again from the lecture's final record on it (the host-scaled one every family
    gets, jaxci.audit.judging.every_family), so the verdict, the pin list, the patch and the report all read one
    prediction; only a verdict that a prediction decided (not a measured ratio, not a slow cell to measure)."""
    pred = verdict.predicted.get(model.family) if model is not None and model.family else None
    if model is None or pred is None or measured_on_both(verdict) \
            or verdict.basis not in ("predicted", "published"):
        return
    published = published_side(verdict, model)
    rec, why = classify.verdict_from(pred, model.family or "", published)
    if verdict.reasons and verdict.reasons[0] == verdict.why:
        verdict.reasons[0] = why
    verdict.recommendation, verdict.why = rec, why


def placed_on_cpu(verdicts: list[Verdict]) -> list[Verdict]:
    """The JAX lectures the verdicts place on the CPU (`pinning.placement`, the rule the decision sheet applies)."""
    from jaxci.audit.judging import pinning

    return [v for v in verdicts
            if pinning.placement(v.recommendation, v.scan.uses_jax or v.scan.uses_numpyro) == pinning.CPU]


def pin_list(verdicts: list[Verdict]) -> list[str]:
    """The lectures --emit-config switches to the CPU kernel (the audit's `pin_to_cpu`, the report's pins): placed on
    the CPU, not already pinned in their own code, and not a lecture whose purpose is to show the GPU."""
    return [v.path for v in placed_on_cpu(verdicts)
            if not v.scan.pinned_cpu and not narrative_of(v.scan.gpu_shown, v.regime)]
