"""Predicted runtimes and crossovers for runner families that have no results: one small stated model.

    runtime(n) = dispatch_overhead + work(n) / (efficiency x catalogue_peak_of_the_family)

- work(n) is the kernel's nominal FLOPs (dense: compute-bound, against FLOP/s) or bytes (elementwise:
  memory-bound, against GB/s): jaxci.analysis.work. One launch per call (XLA fuses the elementwise mix; a
  dense op is one library call).
- GPU: dispatch_overhead is dispatch.TinyOp on a measured GPU machine; efficiency is that machine's achieved
  fraction of its own catalogue peak at its largest measured size of the same kernel and dtype.
- CPU: dispatch_overhead and the achieved rate come from a measured machine's cpu lines (largest measured
  size), scaled to the family by the ratio of sourced CPU peaks, else of core counts (same per-core rate).

Every number it returns is labelled "predicted" with the inputs above; it never fills a measured cell. When
the family has been measured, the measured value stands beside the prediction with the relative error. Sizes
are the benchmark's own param sizes (nothing outside them).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from jaxci.analysis import case_label, case_of, group
from jaxci.analysis.crossover import find_crossover
from jaxci.analysis.peak import peak_of
from jaxci.analysis.work import work

TINY = "dispatch.TinyOp.time_warm"


@dataclass
class Calibration:
    machine: str
    device: str
    dispatch_s: float
    # (benchmark, case, dtype) -> (bound, efficiency (gpu) or achieved work/s (cpu), at n, provenance)
    kernels: dict = field(default_factory=dict)
    cores: float | None = None
    provenance: str = ""


def _largest_ok(recs):
    ok = [r for r in recs if r.ok and isinstance(r.params.get("n"), int)]
    return max(ok, key=lambda r: r.params["n"]) if ok else None


def calibrate(records, machine: str, device: str, catalogue: dict, cores=None) -> Calibration | None:
    """Dispatch overhead and per-kernel efficiency (gpu) or rate (cpu) of one measured machine and device."""
    mine = [r for r in records if r.machine == machine and r.params.get("device") == device]
    tiny = [r for r in mine if r.benchmark == TINY and r.ok and r.params.get("dtype") == "float32"]
    if not tiny:
        return None
    o = tiny[0].value
    cal = Calibration(machine, device, o, cores=cores, provenance=tiny[0].provenance())
    lines = group([r for r in mine if work(r.benchmark, r.params)], lambda r: (r.benchmark, case_of(r), r.params["dtype"]))
    for key, recs in lines.items():
        top = _largest_ok(recs)
        if top is None or not (o < top.value < float("inf")):
            continue
        bound, flops, nbytes = work(top.benchmark, top.params)
        rate = (flops if bound == "flops" else nbytes) / (top.value - o)
        if device == "gpu":
            peak, _, _ = peak_of(catalogue.get(machine), "gpu", key[2], bound)
            if not peak:
                continue
            rate = rate / (peak * 1e9)   # efficiency: fraction of this machine's sourced peak
        cal.kernels[key] = (bound, rate, top.params["n"], top.provenance())
    return cal if cal.kernels else None


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

    @property
    def kernel(self) -> str:
        return case_label(self.benchmark, self.case)

    @property
    def error(self) -> float | None:
        if self.seconds is None or not self.measured:
            return None
        return self.seconds / self.measured - 1


class Predictor:
    """Holds the calibrations; `predict` answers one (family, kernel, dtype, device, n)."""

    def __init__(self, records, machines: dict, catalogue: dict):
        self.catalogue = catalogue
        self.gpu: list[Calibration] = []
        self.cpu: list[Calibration] = []
        for name, facts in sorted(machines.items()):
            if facts.has_gpu:
                cal = calibrate(records, name, "gpu", catalogue)
                if cal:
                    self.gpu.append(cal)
            try:
                cores = float(facts.get("cpu_cores"))
            except ValueError:
                cores = None
            cal = calibrate(records, name, "cpu", catalogue, cores=cores)
            if cal:
                self.cpu.append(cal)
        # CPU-only catalogue machines first: their CPU is what a CPU runner family is made of
        self.cpu.sort(key=lambda c: (machines[c.machine].has_gpu, machines[c.machine].get("jaxci_kind") != "catalogue"))

    def _pick(self, cals, family, key):
        usable = [c for c in cals if key in c.kernels]
        others = [c for c in usable if c.machine != family]
        return (others or usable or [None])[0]

    def predict(self, family: str, benchmark: str, case: tuple, dtype: str, device: str, n: int):
        """(seconds, inputs) or (None, why not)."""
        entry = self.catalogue.get(family)
        if entry is None:
            return None, f"{family} is not in the catalogue"
        w = work(benchmark, {**dict(case), "n": n, "dtype": dtype})
        if w is None:
            return None, "no work formula for this kernel"
        bound, flops, nbytes = w
        amount = flops if bound == "flops" else nbytes
        key = (benchmark, case, dtype)
        if device == "gpu":
            if not entry.has_gpu:
                return None, f"{family} has no GPU"
            cal = self._pick(self.gpu, family, key)
            if cal is None:
                return None, "no measured GPU machine with a sourced peak to calibrate from"
            peak, pkey, note = peak_of(entry, "gpu", dtype, bound)
            if peak is None:
                return None, f"{family}: {note}"
            _, eff, at_n, _prov = cal.kernels[key]
            seconds = cal.dispatch_s + amount / (eff * peak * 1e9)
            inputs = (f"dispatch {cal.dispatch_s * 1e6:.1f} µs and efficiency {eff:.2f} of peak at n={at_n:,} "
                      f"measured on {cal.machine}; {family} {pkey} = {peak:g} {'GFLOP/s' if bound == 'flops' else 'GB/s'} (catalogue)")
            if cal.machine == family:
                inputs += " [calibrated on this family itself: not an independent check]"
            return seconds, inputs
        cal = self._pick(self.cpu, family, key)
        if cal is None:
            return None, "no measured cpu line of this kernel to calibrate from"
        scale, how = self._cpu_scale(cal, entry, dtype, bound)
        if scale is None:
            return None, how
        _, rate, at_n, _prov = cal.kernels[key]
        seconds = cal.dispatch_s + amount / (rate * scale)
        inputs = (f"dispatch {cal.dispatch_s * 1e6:.1f} µs and {rate / 1e9:.2f} G{'FLOP' if bound == 'flops' else 'B'}/s at "
                  f"n={at_n:,} measured on {cal.machine}'s cpu, x{scale:.2f} ({how})")
        if cal.machine == family:
            inputs += " [calibrated on this family itself: not an independent check]"
        return seconds, inputs

    def _cpu_scale(self, cal, entry, dtype, bound):
        if cal.machine == entry.name:
            return 1.0, "same machine"
        if bound == "flops":
            target, _, _ = peak_of(entry, "cpu", dtype, "flops")
            ref, _, _ = peak_of(self.catalogue.get(cal.machine), "cpu", dtype, "flops")
            if target and ref:
                return target / ref, "ratio of catalogue CPU peaks"
        cores = entry.value("cpu_cores")
        if cores and cal.cores:
            return float(cores) / cal.cores, f"ratio of cores {cores} / {cal.cores:g}: same per-core rate assumed"
        return None, f"{entry.name}: no sourced CPU peak or core count to scale the measured CPU rate"


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

    @property
    def kernel(self) -> str:
        return case_label(self.benchmark, self.case)


def size_grid(records) -> dict:
    """(benchmark, case, dtype) -> every size in the benchmark's params (skipped ones included)."""
    out: dict = {}
    for r in records:
        if work(r.benchmark, r.params):
            out.setdefault((r.benchmark, case_of(r), r.params["dtype"]), set()).add(r.params["n"])
    return {k: sorted(v) for k, v in out.items()}


def predictions(records, machines: dict, catalogue: dict, measured_crossovers=()):
    """(runtime predictions, predicted crossovers) for every catalogue family x kernel x dtype x size."""
    pred = Predictor(records, machines, catalogue)
    measured = {(r.machine, r.benchmark, case_of(r), r.params["dtype"], r.params.get("device"), r.params["n"]): r.value
                for r in records if r.ok and work(r.benchmark, r.params)}
    mx = {(c.gpu_machine, c.benchmark, c.case, c.dtype): c for c in measured_crossovers if c.cpu_machine == c.gpu_machine}
    runtimes, crossings = [], []
    for family, entry in sorted(catalogue.items()):
        if getattr(entry, "is_lab", False):
            continue  # a lab machine (kind "lab") calibrates predictions; it is never predicted as a family
        for (bench, case, dtype), sizes in sorted(size_grid(records).items(), key=str):
            lines = {}
            for device in (["cpu", "gpu"] if entry.has_gpu else ["cpu"]):
                for n in sizes:
                    seconds, inputs = pred.predict(family, bench, case, dtype, device, n)
                    runtimes.append(Prediction(family, bench, case, dtype, device, n, seconds, inputs,
                                               measured.get((family, bench, case, dtype, device, n))))
                    if seconds is not None:
                        lines.setdefault(device, {})[n] = (seconds, inputs)
            if entry.has_gpu:
                cpu, gpu = lines.get("cpu", {}), lines.get("gpu", {})
                common = sorted(set(cpu) & set(gpu))
                points = [(n, cpu[n][0], gpu[n][0]) for n in common]
                kind, n_star, _ = find_crossover(points)
                why = ("cpu: " + cpu[common[0]][1] + " | gpu: " + gpu[common[0]][1]) if common else \
                      next((p.inputs for p in runtimes[::-1] if p.family == family and p.seconds is None), "")
                crossings.append(PredictedCrossover(family, bench, case, dtype, kind, n_star, points, why,
                                                    mx.get((family, bench, case, dtype))))
    return runtimes, crossings
