"""Predicted runtimes and crossovers for every catalogue family: the report's and the audit's view of the runner
model (jaxci.analysis.model.RunnerModel, stated in docs/runner-model.md).

Every number is labelled "predicted" with its inputs and a band (low, high); it never fills a measured cell.
When the family has been measured, the measured value stands beside the prediction with the relative error.
Sizes are the benchmark's own param sizes (nothing outside them). A predicted crossover carries the range of
sizes it moves over when the two lines take the ends of their bands (cpu slow / gpu fast and the reverse).

One crossover algorithm on the model's curves (`curve_crossover`), used by the report and the lecture audit alike:
the sides at the benchmark's sizes decide the kind (jaxci.analysis.crossover.find_crossover); each crossing is
then found on the model itself by bisection over integer sizes, so the break-even n* is the size at which
`jaxci predict` flips: at n* the GPU is predicted faster, at n* - 1 the CPU.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from jaxci.analysis import case_label, case_of
from jaxci.analysis import provenance as pv
from jaxci.analysis.crossover import CROSSING, GPU_ALWAYS, NONE_IN_RANGE, NOT_MEASURED, CrossoverResult, find_crossover
from jaxci.analysis.kernels import CROSSOVER_BENCHMARK, kernel_of
from jaxci.analysis.model import RunnerModel
from jaxci.analysis.work import work

TINY = "dispatch.TinyOp.time_warm"


@dataclass
class CasePrediction:
    family: str
    benchmark: str
    case: tuple
    dtype: str
    device: str
    n: int
    seconds: float | None
    inputs: str
    measured: float | None = None
    low: float | None = None
    high: float | None = None
    basis: str = ""
    sources: frozenset = frozenset()   # what the inputs rest on (jaxci.analysis.provenance)

    @property
    def kernel(self) -> str:
        return case_label(self.benchmark, self.case)

    def rests_on(self, kind: str, origin: str | None = None) -> bool:
        return pv.rests_on(self.sources, kind, origin)

    @property
    def error(self) -> float | None:
        if self.seconds is None or not self.measured:
            return None
        return self.seconds / self.measured - 1


class Predictor:
    """The model asked by (benchmark, case): `predict` returns (seconds, inputs) or (None, why not). `published`:
    the published inputs on the families' hardware, from the caller (analysis reads no file)."""

    def __init__(self, records, machines: dict, catalogue: dict, published=(), named=()):
        self.model = RunnerModel.from_results(records, machines, catalogue, published, named=named)
        self.catalogue = catalogue

    def full(self, family, benchmark, case, dtype, device, n):
        kernel = kernel_of(benchmark, case)
        if kernel is None:
            return None
        precision = dict(case).get("precision", "default")
        return self.model.predict(family, kernel, n, dtype, device, precision=precision)

    def predict(self, family: str, benchmark: str, case: tuple, dtype: str, device: str, n: int):
        seconds, inputs, _, _ = self.predict_band(family, benchmark, case, dtype, device, n)
        return seconds, inputs

    def predict_band(self, family: str, benchmark: str, case: tuple, dtype: str, device: str, n: int):
        """(seconds, inputs, low, high) from one model call, or (None, why not, None, None)."""
        if family not in self.catalogue:
            return None, f"{family} is not in the catalogue", None, None
        p = self.full(family, benchmark, case, dtype, device, n)
        if p is None:
            return None, "no work formula for this kernel", None, None
        if not p:
            return None, p.reason, None, None
        return p.seconds, p.inputs, p.low, p.high


@dataclass
class PredictedCrossover:
    family: str
    benchmark: str
    case: tuple
    dtype: str
    kind: str
    n: float | None
    points: list
    inputs: str
    measured: object = None     # the measured Crossover for the same family, kernel, dtype, when there is one
    low: float | None = None    # earliest crossing (cpu line at its slow end, gpu at its fast end); None: none
    high: float | None = None   # latest crossing (the reverse); None: no crossing in the measured range there
    sources: frozenset = frozenset()   # what the predicted lines rest on (jaxci.analysis.provenance)

    @property
    def kernel(self) -> str:
        return case_label(self.benchmark, self.case)


def size_grid(records) -> dict:
    """(benchmark, case, dtype) -> every size in the benchmark's params (skipped ones included)."""
    out: dict = {}
    for r in records:
        if work(r.benchmark, r.params) and kernel_of(r.benchmark, case_of(r)):
            out.setdefault((r.benchmark, case_of(r), r.params["dtype"]), set()).add(r.params["n"])
    return {k: sorted(v) for k, v in out.items()}


def crossover_sizes(records, kernel: str, dtype: str) -> list:
    """The benchmark's own sizes for a model kernel's crossover ([] when the results hold none)."""
    bench = CROSSOVER_BENCHMARK.get(kernel)
    return size_grid(records).get((*bench, dtype), []) if bench else []


def _flip(gpu_faster, lo: int, hi: int) -> int:
    """The smallest integer size in (lo, hi] on hi's side, given lo and hi on opposite sides (bisection)."""
    want = gpu_faster(hi)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if gpu_faster(mid) == want else (mid, hi)
    return hi


def _exact(points, line) -> CrossoverResult:
    """find_crossover over (n, cpu, gpu) points, each crossing moved to the integer size where `line` flips."""
    found = find_crossover(points)
    if not found.crossings:
        return found

    def gpu_faster(n):
        cpu, gpu = line(int(n))
        return gpu < cpu

    exact = [float(_flip(gpu_faster, int(n0), int(n1)))
             for (n0, c0, g0), (n1, c1, g1) in zip(points, points[1:]) if (g0 < c0) != (g1 < c1)]
    moved = dict(zip((old for old, _ in found.crossings), exact))
    crossings = [(moved.get(x, x), what) for x, what in found.crossings]
    bands = [(moved.get(lo, lo), moved.get(hi, hi)) for lo, hi in found.bands]
    n = crossings[-1][0] if found.kind == CROSSING else None
    return CrossoverResult(found.kind, n, crossings, bands, found.sides)


def curve_crossover(call, sizes):
    """The one crossover on the runner model's curves. `call(n, device)` -> a model Prediction (falsy when it
    cannot). Returns (CrossoverResult at the middle lines, points [(n, cpu_s, gpu_s)], earliest crossing (cpu
    at its slow end, gpu at its fast end), latest crossing (the reverse)), or None when a side cannot be predicted.
    Every crossing is the integer size where the model flips, not an interpolation between benchmark sizes."""
    preds = {}
    for n in sizes:
        cpu, gpu = call(n, "cpu"), call(n, "gpu")
        if not (cpu and gpu):
            return None
        preds[n] = (cpu, gpu)

    def pick(n, which):
        cpu, gpu = preds.get(n) or (call(n, "cpu"), call(n, "gpu"))
        c = {"mid": cpu.seconds, "early": cpu.high, "late": cpu.low}[which]
        g = {"mid": gpu.seconds, "early": gpu.low, "late": gpu.high}[which]
        return (c if c is not None else cpu.seconds), (g if g is not None else gpu.seconds)

    def run(which):
        return _exact([(n, *pick(n, which)) for n in sizes], lambda n: pick(n, which))

    mid, early, late = run("mid"), run("early"), run("late")
    points = [(n, preds[n][0].seconds, preds[n][1].seconds) for n in sizes]
    return mid, points, (early.n if early.kind == CROSSING else None), (late.n if late.kind == CROSSING else None)


def threshold(kind: str, n, smallest) -> float | None:
    """A crossover as one size the audit decides with: the break-even; the smallest size where the GPU wins at
    every one; inf where it never does in range; None otherwise (a band, or not measured)."""
    if kind == CROSSING:
        return n
    if kind == GPU_ALWAYS:
        return float(smallest)
    if kind == NONE_IN_RANGE:
        return math.inf
    return None


def predictions(records, machines: dict, catalogue: dict, measured_crossovers=(), predictor: Predictor | None = None):
    """(runtime predictions, predicted crossovers) for every catalogue family x kernel x dtype x size.

    `catalogue` must hold the measured lab machines too (load_catalogue(include_lab=True)): their sourced
    peaks calibrate the GPU terms. Lab machines are never predicted as families. `predictor`: one already built
    over the same records (the report builds the runner model once)."""
    pred = predictor or Predictor(records, machines, catalogue)
    measured = {(r.machine, r.benchmark, case_of(r), r.params["dtype"], r.params.get("device"), r.params["n"]): r.value
                for r in records if r.ok and work(r.benchmark, r.params)}
    mx = {(c.gpu_machine, c.benchmark, c.case, c.dtype): c for c in measured_crossovers
          if c.cpu_machine == c.gpu_machine}
    runtimes, crossings = [], []
    for family, entry in sorted(catalogue.items()):
        if getattr(entry, "is_lab", False):
            continue  # a lab machine (kind "lab") calibrates predictions; it is never predicted as a family
        for (bench, case, dtype), sizes in sorted(size_grid(records).items(), key=str):
            lines: dict = {}
            reasons = []
            for device in (["cpu", "gpu"] if entry.has_gpu else ["cpu"]):
                for n in sizes:
                    p = pred.full(family, bench, case, dtype, device, n)
                    runtimes.append(CasePrediction(
                        family, bench, case, dtype, device, n, p.seconds, p.inputs or p.reason,
                        measured.get((family, bench, case, dtype, device, n)), p.low, p.high,
                        p.basis, p.sources))
                    if p:
                        lines.setdefault(device, {})[n] = p
                    else:
                        reasons.append(f"{device}: {p.reason}")
            if entry.has_gpu:
                cpu, gpu = lines.get("cpu", {}), lines.get("gpu", {})
                common = sorted(set(cpu) & set(gpu))

                def call(n, device, family=family, bench=bench, case=case, dtype=dtype, got=lines):
                    return got.get(device, {}).get(n) or pred.full(family, bench, case, dtype, device, n)

                found = curve_crossover(call, common) if len(common) >= 2 else None
                if found is None:
                    kind, n_star, points, early, late = NOT_MEASURED, None, [], None, None
                else:
                    (kind, n_star, _), points, early, late = found
                why = ("cpu: " + cpu[common[0]].inputs + " | gpu: " + gpu[common[0]].inputs) if common else \
                    (reasons[-1] if reasons else "")
                rests = pv.sources_of([p.provenance for line in lines.values() for p in line.values()])
                crossings.append(PredictedCrossover(family, bench, case, dtype, kind, n_star, points, why,
                                                    mx.get((family, bench, case, dtype)), early, late, rests))
    return runtimes, crossings
