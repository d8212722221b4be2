"""Predicted runtimes and crossovers for every catalogue family: the report's and the audit's view of the runner
model (jaxci.analysis.model.RunnerModel, stated in docs/runner-model.md).

Every number is labelled "predicted" with its inputs and a band (low, high); it never fills a measured cell.
When the family has been measured, the measured value stands beside the prediction with the relative error.
Sizes are the benchmark's own param sizes (nothing outside them). A predicted crossover carries the range of
sizes it moves over when the two lines take the ends of their bands (cpu slow / gpu fast and the reverse).
"""

from __future__ import annotations

from dataclasses import dataclass

from jaxci.analysis import case_label, case_of
from jaxci.analysis.crossover import CROSSING, find_crossover
from jaxci.analysis.model import RunnerModel
from jaxci.analysis.work import work

TINY = "dispatch.TinyOp.time_warm"
_KERNEL = {"dense.Dense.time_warm": lambda case: dict(case).get("op"),
           "dense.DensePrecision.time_warm": lambda case: "matmul",
           "elementwise.Elementwise.time_warm": lambda case: "elementwise"}


def kernel_of(benchmark: str, case: tuple) -> str | None:
    """The model's kernel name for a suite benchmark and case (None: the model has no term for it)."""
    f = _KERNEL.get(benchmark)
    return f(case) if f else None


@dataclass
class Prediction:
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

    @property
    def kernel(self) -> str:
        return case_label(self.benchmark, self.case)

    @property
    def error(self) -> float | None:
        if self.seconds is None or not self.measured:
            return None
        return self.seconds / self.measured - 1


class Predictor:
    """The model asked by (benchmark, case): `predict` returns (seconds, inputs) or (None, why not)."""

    def __init__(self, records, machines: dict, catalogue: dict):
        self.model = RunnerModel.from_results(records, machines, catalogue)
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


def _crossing(points) -> float | None:
    kind, n, _ = find_crossover(points)
    return n if kind == CROSSING else None


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
                    runtimes.append(Prediction(family, bench, case, dtype, device, n, p.seconds, p.inputs or p.reason,
                                               measured.get((family, bench, case, dtype, device, n)), p.low, p.high,
                                               p.basis))
                    if p:
                        lines.setdefault(device, {})[n] = p
                    else:
                        reasons.append(f"{device}: {p.reason}")
            if entry.has_gpu:
                cpu, gpu = lines.get("cpu", {}), lines.get("gpu", {})
                common = sorted(set(cpu) & set(gpu))
                points = [(n, cpu[n].seconds, gpu[n].seconds) for n in common]
                kind, n_star, _ = find_crossover(points)
                # earliest crossing: cpu slow, gpu fast; latest: the reverse (None: no crossing in range at that end)
                early = _crossing([(n, cpu[n].high, gpu[n].low) for n in common])
                late = _crossing([(n, cpu[n].low, gpu[n].high) for n in common])
                why = ("cpu: " + cpu[common[0]].inputs + " | gpu: " + gpu[common[0]].inputs) if common else \
                    (reasons[-1] if reasons else "")
                crossings.append(PredictedCrossover(family, bench, case, dtype, kind, n_star, points, why,
                                                    mx.get((family, bench, case, dtype)), early, late))
    return runtimes, crossings
