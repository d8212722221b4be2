"""What one runner family's numbers say about a lecture: the thresholds the audit decides with, each labelled.

Sources, best first:
- measured: that family's own results (asv results/<family>/): the elementwise crossover (where the GPU line
  crosses the CPU line, jaxci.analysis.crossover), the elementwise times at each size (speed-up of bulk work),
  the per-step cost of a latency-bound loop on each device (loops.Scan, unroll 1, at its largest measured
  length: seconds / steps), the dispatch cost of one tiny op (dispatch.TinyOp);
- predicted: the runner model (jaxci.analysis.model.RunnerModel, docs/runner-model.md) asked for the family, with
  the lab-inclusive catalogue as its inputs: crossovers per kernel kind and dtype, elementwise times, per-step
  loop costs, the dispatch floor and the compile part, each with band and inputs (`RunnerView`);
- not known: a built-in threshold, said to be one, and said on the audit's first line (`FamilyModel.missing`).
Reads results through jaxci.results.records and jaxci.analysis only (public functions); never imports JAX.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from pathlib import Path

MEASURED, PREDICTED, NOT_KNOWN = "measured", "predicted", "not known"
ELEMENTWISE = "elementwise.Elementwise.time_warm"
SCAN = "loops.Scan.time_warm"
TINY = "dispatch.TinyOp.time_warm"
DTYPES, DEVICES = ("float32", "float64"), ("cpu", "gpu")
#: without results: at or above this many elements an array op is taken to favour the GPU
BUILTIN_CROSSOVER = 1_000_000


class FamilyError(ValueError):
    """The family cannot be judged: unknown name, unreadable results directory."""


@dataclass
class Threshold:
    value: float | None
    label: str  # measured | predicted | not known
    source: str

    def short(self, unit: str = "") -> str:
        if self.value is None:
            return f"{self.label}: {self.source}"
        v = "never in the measured range" if math.isinf(self.value) else f"{self.value:,.3g}{unit}"
        return f"{self.label} {v}"


@dataclass
class FamilyModel:
    """Thresholds and costs for one family (or the built-in ones when `family` is None)."""

    family: str | None
    crossover: dict = field(default_factory=dict)  # dtype -> Threshold (elements)
    curve: dict = field(default_factory=dict)  # (dtype, device) -> sorted [(n, seconds)]
    curve_label: str = NOT_KNOWN
    curve_basis: str = NOT_KNOWN  # MEASURED or PREDICTED: where the curve came from (the label says it in words)
    step: dict = field(default_factory=dict)  # (dtype, device) -> Threshold (seconds per loop step)
    dispatch: dict = field(default_factory=dict)  # device -> Threshold (seconds)
    notes: list = field(default_factory=list)
    crossovers: dict = field(default_factory=dict)  # (kernel kind, dtype) -> Threshold (elements, or matrix order)
    runner: object = None  # RunnerView: the runner model asked for this family (None: no model)
    accelerator: str = "GPU"  # what the verdicts call the family's accelerator: "TPU" on a TPU family, never "GPU"
    published: object = None  # jaxci.results.published_build.PublishedBuild on this family's hardware (--published)

    @property
    def missing(self) -> str:
        """Why this family has no model ('' when it has one): the audit says it on its first line."""
        if self.family is None or self.crossover:
            return ""
        if self.runner is not None:  # a CPU-only family: no GPU side to judge, its CPU side still predicted
            return (f"no runner model for {self.family}'s GPU (it has none: every lecture runs on its CPU; "
                    "--execute predicts its CPU seconds): verdicts use the built-in threshold "
                    f"{BUILTIN_CROSSOVER:,} elements")
        return (f"no runner model for {self.family}: nothing measured or predicted "
                f"({'; '.join(self.notes[-2:]) or 'no results'}): verdicts use the built-in threshold "
                f"{BUILTIN_CROSSOVER:,} elements")

    @property
    def name(self) -> str:
        return self.family or "any family (built-in thresholds)"

    def crossover_elements(self, dtype: str) -> float:
        """crossover_for's number: every crossover holds one (measured, predicted or built in)."""
        value = self.crossover_for(dtype).value
        return BUILTIN_CROSSOVER if value is None else value

    def crossover_for(self, dtype: str) -> Threshold:
        return self.crossover.get(dtype) or Threshold(
            BUILTIN_CROSSOVER, NOT_KNOWN,
            f"built-in threshold {BUILTIN_CROSSOVER:,} elements"
            + (f" (no runner model for {self.family}: no {dtype} elementwise crossover)" if self.family
               else " (no --machine)"))

    def bulk_time(self, elements: int, dtype: str, device: str) -> float | None:
        """Seconds of one elementwise op over `elements` on `device`, log-log interpolated between measured
        (or predicted) sizes; above the largest size, scaled linearly in n (bandwidth-bound); None below
        the smallest or without a curve."""
        points = self.curve.get((dtype, device)) or []
        if len(points) < 2 or elements < points[0][0]:
            return None
        for (n0, t0), (n1, t1) in zip(points, points[1:]):
            if n0 <= elements <= n1:
                x = (math.log(elements) - math.log(n0)) / (math.log(n1) - math.log(n0))
                return math.exp(math.log(t0) + x * (math.log(t1) - math.log(t0)))
        n1, t1 = points[-1]
        return t1 * elements / n1

    def speedup(self, elements: int, dtype: str) -> float | None:
        """cpu time / gpu time of bulk work of this size (above 1: the GPU is faster)."""
        cpu, gpu = self.bulk_time(elements, dtype, "cpu"), self.bulk_time(elements, dtype, "gpu")
        return cpu / gpu if cpu and gpu else None

    def step_ratio(self, dtype: str) -> tuple[float | None, str]:
        """gpu / cpu seconds per step of a latency-bound loop, and the text that says where it came from."""
        cpu, gpu = self.step.get((dtype, "cpu")), self.step.get((dtype, "gpu"))
        if cpu and gpu and cpu.value and gpu.value:
            return gpu.value / cpu.value, (f"{cpu.label} loops.Scan: cpu {cpu.value * 1e6:.3g} µs/step, gpu "
                                           f"{gpu.value * 1e6:.3g} µs/step")
        return None, f"{NOT_KNOWN}: no per-step loop costs for {self.name}"

    def summary(self) -> dict:
        return {"family": self.family,
                "crossover": {d: vars(f) for d, f in self.crossover.items()},
                "step_s": {f"{d}/{dev}": vars(f) for (d, dev), f in self.step.items()},
                "dispatch_s": {d: vars(f) for d, f in self.dispatch.items()},
                "bulk_curve": self.curve_label, "notes": self.notes, "missing": self.missing,
                "crossovers": {f"{k}/{d}": vars(f) for (k, d), f in self.crossovers.items()}}


def builtin() -> FamilyModel:
    return FamilyModel(None, notes=["no --machine: built-in thresholds, not measurements"])


def _steps(records, family: str) -> dict:
    out = {}
    for dtype, device in itertools.product(DTYPES, DEVICES):
        ok = [r for r in records if r.machine == family and r.benchmark == SCAN and r.ok
              and r.params.get("unroll") == 1 and r.params.get("dtype") == dtype
              and r.params.get("device") == device and isinstance(r.params.get("n"), int)]
        if ok:
            top = max(ok, key=lambda r: r.params["n"])
            out[(dtype, device)] = Threshold(top.value / top.params["n"], MEASURED,
                                             f"loops.Scan n={top.params['n']:,} ({top.provenance()})")
    return out


def _measured_curve(records, family: str) -> dict:
    out: dict = {}
    for r in records:
        if r.machine == family and r.benchmark == ELEMENTWISE and r.ok and isinstance(r.params.get("n"), int):
            out.setdefault((r.params["dtype"], r.params["device"]), []).append((r.params["n"], r.value))
    return {k: sorted(v) for k, v in out.items()}


def results_and_catalogue(results_dir, catalogue: dict | None = None):
    """The results under `results_dir` and the catalogue with its lab machines (their sourced peaks calibrate the
    model): what every family's model is built from. Raises FamilyError for results that cannot be read."""
    from jaxci.results.records import ResultsError, load_results

    if catalogue is None:
        from jaxci.catalogue import load_catalogue

        catalogue = load_catalogue(include_lab=True)
    try:
        return load_results(Path(results_dir)), catalogue
    except ResultsError as exc:
        raise FamilyError(str(exc)) from None


def from_results(results_dir, family: str, catalogue: dict | None = None, published=()) -> FamilyModel:
    """The model for `family` from an asv results directory (measured first, then predicted). `published`: the
    published inputs on the families' hardware (jaxci.analysis.evidence.Evidence, from the caller: the commands pass
    jaxci.evidence.inputs.reference(), the nearest evidence after the family's own results)."""
    from jaxci.analysis import crossover as cx

    rs, catalogue = results_and_catalogue(results_dir, catalogue)
    if family not in rs.machines and family not in catalogue:
        known = sorted(set(rs.machines) | set(catalogue))
        raise FamilyError(f"--machine {family!r}: not a machine in {results_dir} nor in the catalogue "
                          f"(known: {', '.join(known)})")
    records = rs.latest()
    entry = catalogue.get(family)
    model = FamilyModel(family, accelerator="TPU" if entry is not None and entry.accelerator == "tpu" else "GPU")
    model.notes += [e for e in rs.errors if family in e]
    for c in cx.crossovers(records):
        if c.benchmark == ELEMENTWISE and c.cpu_machine == c.gpu_machine == family:
            value = _crossover_value(c)
            if value is not None:
                model.crossover[c.dtype] = Threshold(value, MEASURED, f"elementwise crossover, {c.answer()} "
                                                                   f"({c.provenance})")
    curve = _measured_curve(records, family)
    if {k[1] for k in curve} >= {"cpu", "gpu"}:
        model.curve, model.curve_label = curve, f"{MEASURED} elementwise times on {family}"
        model.curve_basis = MEASURED
    model.step = _steps(records, family)
    for r in records:
        if r.machine == family and r.benchmark == TINY and r.ok and r.params.get("dtype") == "float32":
            model.dispatch[r.params["device"]] = Threshold(r.value, MEASURED, f"dispatch.TinyOp ({r.provenance()})")
    if not model.crossover or not model.curve:
        _predicted(model, records, rs.machines, catalogue, published)
    return model


def _crossover_value(c) -> float | None:
    from jaxci.analysis.predict import threshold

    return threshold(c.kind, c.n, c.points[0][0] if c.points else None)


def _predicted(model: FamilyModel, records, machines, catalogue, published=()) -> None:
    """Fill what the family's own results lack from the runner model (one interface: RunnerView)."""
    from jaxci.analysis.model import RunnerModel

    if model.family is None or model.family not in catalogue:
        model.notes.append(f"{model.family} is not in the catalogue: nothing to predict from")
        return
    try:
        view = RunnerView(RunnerModel.from_results(records, machines, catalogue, published), model.family, records)
    except Exception as exc:  # a model that cannot be built is "not known", never a crash
        model.notes.append(f"runner model for {model.family} failed: {type(exc).__name__}: {exc}")
        return
    model.runner = view
    if not catalogue[model.family].has_gpu:
        model.notes.append(f"{model.family} has no GPU: every lecture runs on its CPU")
        return
    for dtype in DTYPES:
        for kernel in ("elementwise", "matmul"):
            fig = view.crossover(kernel, dtype)
            if fig is not None:
                model.crossovers[(kernel, dtype)] = fig
        if dtype not in model.crossover and ("elementwise", dtype) in model.crossovers:
            model.crossover[dtype] = model.crossovers[("elementwise", dtype)]
        for device in DEVICES:
            if (dtype, device) not in model.step:
                step = view.step("scan", dtype, device)
                if step is not None:
                    model.step[(dtype, device)] = step
            if device not in model.dispatch:
                p = view.call("dispatch", None, "float32", device)
                if p:
                    model.dispatch[device] = Threshold(p.seconds, PREDICTED, f"dispatch floor ({p.inputs[:160]})")
    if not model.curve:
        curve: dict = {}
        for dtype, device, n in itertools.product(DTYPES, DEVICES, GRID):
            p = view.call("elementwise", n, dtype, device)
            if p:
                curve.setdefault((dtype, device), []).append((n, p.seconds))
        if {k[1] for k in curve} >= {"cpu", "gpu"}:
            model.curve = curve
            model.curve_label = f"{PREDICTED} elementwise times for {model.family} (runner model)"
            model.curve_basis = PREDICTED
    if not model.crossover:
        model.notes.append(f"the runner model predicts no elementwise crossover for {model.family}")


#: sizes the predicted elementwise curve and crossovers are evaluated at (1e2 .. 1e9, 4 per decade)
GRID = [int(round(10 ** (2 + i / 4))) for i in range(29)]


class RunnerView:
    """The runner model asked for one family: the audit's only way to its predictions."""

    def __init__(self, model, family: str, records=()):
        self.model, self.family, self.records = model, family, list(records)

    def call(self, kernel: str, n, dtype: str, device: str, **kw):
        """jaxci.analysis.model.Prediction (falsy with `reason` when it cannot predict)."""
        return self.model.predict(self.family, kernel, n, dtype, device, **kw)

    def crossover(self, kernel: str, dtype: str) -> Threshold | None:
        """The report's predicted crossover for this family and kernel (jaxci.analysis.predict.curve_crossover,
        over the benchmark's own sizes): the size at which `jaxci predict` flips to the GPU, with its band; inf
        when the GPU never wins in range; None without sizes or a prediction."""
        from jaxci.analysis.predict import crossover_sizes, curve_crossover, threshold

        sizes = crossover_sizes(self.records, kernel, dtype)
        found = curve_crossover(lambda n, device: self.call(kernel, n, dtype, device), sizes) if len(sizes) >= 2 \
            else None
        if found is None:
            return None
        result, points, early, late = found
        value = threshold(result.kind, result.n, sizes[0])
        if value is None:
            return None
        band = f"band {f'{early:,.0f}' if early else 'none'}..{f'{late:,.0f}' if late else 'not in range'}"
        what = "elements" if kernel == "elementwise" else "matrix order"
        first = (self.call(kernel, sizes[0], dtype, "cpu"), self.call(kernel, sizes[0], dtype, "gpu"))
        src = (f"runner model {kernel} {dtype} crossover ({what}, {result.kind} over n = {sizes[0]:,} .. "
               f"{sizes[-1]:,}; {band}; cpu: {first[0].inputs[:120]} | gpu: {first[1].inputs[:120]})")
        return Threshold(value, PREDICTED, src)

    def step(self, kind: str, dtype: str, device: str) -> Threshold | None:
        """Predicted seconds per step of a latency-bound loop: the slope between 1e4 and 1e5 steps."""
        band = self.step_band(kind, dtype, device)
        return Threshold(band[0], PREDICTED, f"runner model {kind} per step ({band[3]})") if band else None

    def step_band(self, kind: str, dtype: str, device: str) -> tuple[float, float, float, str] | None:
        """(mid, low, high, inputs) seconds per step of a loop of `kind`: the slopes between 1e4 and 1e5 steps of
        the prediction's middle and of its band's ends (the loop's floor cancels); None without a prediction."""
        a, b = self.call(kind, 10_000, dtype, device), self.call(kind, 100_000, dtype, device)
        if not (a and b):
            return None
        mid = (b.seconds - a.seconds) / 90_000
        ends = [mid] + [(hi - lo) / 90_000 for lo, hi in ((a.low, b.low), (a.high, b.high)) if None not in (lo, hi)]
        return mid, max(min(ends), 0.0), max(ends), b.inputs[:160]
