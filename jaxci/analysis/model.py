"""The runner model: one machine's measured primitives become another catalogue family's predicted seconds.

    warm(n)   = floor + max(FLOPs / (eff x peak of the precision path), bytes / (eff_bw x bandwidth))   (one launch)
    loop(n)   = intercept + n x per-step slope                                                  (scan, fori)
    first(n)  = (cold first call - warm at the cold kernel's size) x host ratio + warm(n)         (compile part)
    nuts(it)  = it x leapfrog steps per iteration (any machine) x s per step (device; else Kalman-gradient proxy)
    while(n)  = floor + n x (WhileConverge - floor) / its iteration count (restated from its source: work.py)
    numpy(n)  = 2 n^3 / (host.NumpyLinalg rate x the CPU GEMM scaling)
    backend   = (GPU process start - CPU process start, a capture's probes) x host ratio      (once per process)

docs/runner-model.md states every term, what moves between machines and why. In short:

- GPU: the efficiency (achieved / the ref's peak of the path it ran on: TF32, FP32, FP64, FP64 tensor) moves to
  the family's peak of the path the same call takes there (jaxci.analysis.peak.gemm_path); the dispatch floor,
  the loop per-step cost, compile seconds and the latency-bound Kalman gradient are host + driver latency and
  move by a sourced host single-thread ratio (else carried unscaled, and said so); a GPU floor moves instead by
  the family's published scan step over the ref's measured one where that is published (launch + sync).
- CPU: GEMM rate per physical core x the family's physical cores (or the ratio of sourced CPU peaks); the op mix's
  per-element rate is not scaled by cores (XLA:CPU barely spreads it); loops and compile as on the GPU.
- Every estimate is a Band: the quartiles asv recorded, the floor subtracted or not, the plausible range of an
  unknown (an unknown SMT split: cores/2..cores; an unmeasured bandwidth efficiency: measured lower bound..1),
  and several reference machines (geometric mean, widest ends).

Inputs are measured records and sourced catalogue figures; published measurements on a family's hardware
(incidents.md, published-measurements.md) enter only when passed as `published` (jaxci.analysis.evidence,
labelled "published (source)"); without them the model is transfer-only, and the report holds them against
its output.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from jaxci.analysis import evidence as E
from jaxci.analysis import primitives as P
from jaxci.analysis import provenance as pv
from jaxci.analysis.estimate import Estimate, Unpredictable, fmt_published, geo, others_first
from jaxci.analysis.host_speed import score_ratio
from jaxci.analysis.kernels import KERNEL, KERNELS
from jaxci.analysis.model_compile import CompileTerms
from jaxci.analysis.model_host import HostTerms
from jaxci.analysis.model_warm import WarmTerms
from jaxci.analysis.primitives import Band, combine
from jaxci.analysis.work import ITEMSIZE


@dataclass
class Prediction:
    """Predicted seconds with a band, the inputs (measured records and catalogue figures) and the equation used;
    `seconds is None` with `reason` when the model cannot predict. `provenance` holds the inputs, each with the
    sources it rests on (jaxci.analysis.provenance): code and tests read `sources`, a reader `inputs`."""
    family: str
    kernel: str
    n: int | None
    dtype: str
    device: str
    first_call: bool = False
    seconds: float | None = None
    low: float | None = None
    high: float | None = None
    basis: str = ""
    reason: str = ""
    label: str = "predicted"
    provenance: tuple = ()
    needs: str = ""   # without a prediction: the suite benchmark whose results would give one ("": none would)

    @property
    def inputs(self) -> str:
        return pv.render(self.provenance)

    @property
    def sources(self) -> frozenset:
        return pv.sources_of(self.provenance)

    def __bool__(self) -> bool:
        return self.seconds is not None

    def to_dict(self) -> dict:
        return {k: getattr(self, k) for k in ("family", "kernel", "n", "dtype", "device", "first_call", "seconds",
                                              "low", "high", "inputs", "basis", "reason", "needs", "label")} | {
            "sources": pv.as_json(self.sources)}

    def rests_on(self, kind: str, origin: str | None = None) -> bool:
        """Whether an input of this prediction is of `kind` (jaxci.analysis.provenance), from `origin` if given."""
        return pv.rests_on(self.sources, kind, origin)


class RunnerModel(WarmTerms, CompileTerms, HostTerms):
    """predict(family, kernel, n, dtype, device, first_call=False) for every catalogue family; the report, the
    audit, `jaxci predict` and `jaxci published-score` all ask this one object."""

    def __init__(self, records, machines: dict, catalogue: dict, published=(), fixed=None, named=()):
        #: the machines whose results are inputs (`input_machines`): the committed kinds, and those `named`
        self.named = tuple(named)
        self.inputs = input_machines(machines, named)
        self.records = accelerator_side([r for r in records if r.ok and is_input(r, machines, self.inputs, named)],
                                        catalogue)
        self.fixed = fixed                 # jaxci.analysis.fixed_costs.FixedCosts: a notebook's, or None
        self.published = list(published)   # jaxci.analysis.evidence.Evidence: published on a family's hardware
        self.machines = machines
        self.catalogue = catalogue
        #: the accelerator side's reference machines, by accelerator kind: a GPU family is predicted from GPUs
        #: only, a TPU from TPUs only (never across kinds)
        self.accel_refs = {kind: sorted(m for m, f in machines.items()
                                        if self._kind(m, f) == kind and P.floor(self.records, m, "gpu")[0])
                           for kind in ("gpu", "tpu")}
        self.gpu_refs = self.accel_refs["gpu"]
        # a TPU machine's host is no CPU reference: adding a lent sandbox's CPU to every family's references would
        # change their predictions outside the protocol (docs/runner-model.md); its own CPU side, like any family's,
        # is predicted from the other machines (others first)
        self.cpu_refs = sorted(m for m in machines if P.floor(self.records, m, "cpu")[0] and self._kind(m) != "tpu")

    def _kind(self, name: str, facts=None) -> str | None:
        """The accelerator kind of a machine: its catalogue entry's (jaxci.catalogue.Machine.accelerator), else
        the registered facts' (a GPU seen by NVML)."""
        entry = self.catalogue.get(name)
        if entry is not None:
            return entry.accelerator
        return "gpu" if facts is not None and facts.has_gpu else None

    @classmethod
    def from_results(cls, records, machines: dict, catalogue: dict, published=(), fixed=None,
                     named=()) -> RunnerModel:
        return cls(records, machines, catalogue, published, fixed, named)

    # ---- the one interface ----

    def predict(self, family: str, kernel: str, n: int | None, dtype: str = "float32", device: str = "gpu",
                first_call: bool = False, precision: str = "default", compile_only: bool = False) -> Prediction:
        out = Prediction(family, kernel, n, dtype, device, first_call)
        case = None if compile_only or precision != "default" else self._published_case(family, kernel, n, dtype,
                                                                                         device, first_call)
        if case is not None:  # this very case was published on the family: the figure, labelled, no band added
            out.seconds = out.low = out.high = case.value.mid
            out.provenance, out.label = (pv.published(case, case.label() + " (no spread published)"),), "published"
            out.basis = "the published figure of this case"
            return out
        try:
            est = self._predict(family, kernel, n, dtype, device, first_call, precision, compile_only)
        except Unpredictable as why:
            out.reason, out.needs = str(why), why.needs
            return out
        out.seconds, out.low, out.high = est.band.mid, est.band.low, est.band.high
        out.provenance = tuple(est.inputs)
        out.basis = est.basis
        return out

    def _predict(self, family, kernel, n, dtype, device, first_call, precision, compile_only) -> Estimate:
        entry = self.catalogue.get(family)
        if entry is None:
            raise Unpredictable(f"{family} is not in the catalogue")
        k = KERNEL.get(kernel)
        if k is None:
            raise Unpredictable(f"kernel {kernel!r}: the model knows {', '.join(KERNELS)}")
        if dtype not in ITEMSIZE:
            raise Unpredictable(f"dtype {dtype!r}: float32 or float64")
        if device == "gpu" and entry.accelerator is None:
            raise Unpredictable(f"{family} has no GPU (no accelerator)")
        if k.answer is not None and not k.host:  # answered whole, its size (if any) checked by its method
            return k.answer(self, family, n, dtype, device, first_call)
        if k.size is not None and k.size.required and not (isinstance(n, int) and n > 0):
            raise Unpredictable(f"{kernel} needs a size n > 0")
        if k.host and (device != "cpu" or first_call or compile_only):
            raise Unpredictable(f"{kernel} is host work: device cpu, warm only")
        if k.answer is not None:
            return k.answer(self, family, n, dtype, device, first_call)
        if first_call or compile_only:
            return self._first_call(family, kernel, n, dtype, device, precision, compile_only)
        return self._warm(family, kernel, n, dtype, device, precision)

    # ---- published measurements on the family's hardware (the nearest evidence after our own) ----

    def _where(self, family, term: str | None = None) -> tuple:
        """The names a published input may be filed under for a family: itself, its GPU model and, for a term
        that does not grow with the core count (E.PER_CORES), the families with the same CPU and GPU models (a
        figure published on g4dn.2xlarge holds on g4dn.xlarge: the same T4 and the same Xeon)."""
        entry = self.catalogue.get(family)
        gpu = entry.value("gpu_model") if entry is not None else None
        twins = () if term in E.PER_CORES or entry is None else tuple(
            f for f, e in self.catalogue.items() if f != family and not e.is_lab
            and all(entry.value(k) is not None and e.value(k) == entry.value(k) for k in ("cpu_model", "gpu_model")))
        return (family,) + twins + ((gpu,) if gpu and gpu != "none" else ())

    def _pub(self, family, device, term, key="", dtype=None) -> list:
        return E.select(self.published, self._where(family, term), device, term, key, dtype)

    def _pub_rate(self, family, device, term, key="", dtype=None) -> tuple[Band | None, list]:
        """One published rate (several: geometric mean, widest ends) and its labelled inputs."""
        ev = self._pub(family, device, term, key, dtype)
        if not ev:
            return None, []
        return combine([e.value for e in ev]), [pv.published(e, f"{e.label()}: {fmt_published(e)}") for e in ev]

    # ---- references ----

    def _refs(self, family, device) -> tuple[list[str], str]:
        kind = self._kind(family) or "gpu"
        return others_first(family, self.accel_refs[kind] if device == "gpu" else self.cpu_refs,
                            Unpredictable(f"no measured {device} machine in these results to calibrate from", P.TINY))

    def _floor(self, refs, device, dtype) -> Estimate:
        bands, inputs = [], []
        for m in refs:
            b, text = P.floor(self.records, m, device, dtype)
            if b:
                bands.append(b)
                inputs.append(pv.measured(m, text))
        if not bands:
            raise Unpredictable(f"no dispatch.TinyOp on {device} in these results", P.TINY)
        return Estimate(combine(bands), inputs)

    def _host_ratio(self, ref: str, family: str) -> tuple[float | Band, pv.Input]:
        """Host single-thread ratio ref / family: the family's published pure-Python sum over the ref's measured
        one (host.PurePython, same loop), else the sourced single-thread scores of both CPU models
        (jaxci.analysis.host_speed.score_ratio), else 1, said."""
        pub = self._pub(family, "cpu", E.HOST_PYTHON)
        mine, text = P.pure_python(self.records, ref, n=pub[0].n) if pub and pub[0].n else (None, "")
        if pub and mine is not None and ref != family:
            h = pub[0].value.scale(mine.inverse())
            return h, pv.published(pub[0], pv.measured(ref, (
                f"host single-thread ratio {h.mid:.2f} ({h.low:.2f}-{h.high:.2f}): {pub[0].label()} "
                f"{pub[0].value.mid:.3g} s over {text}")))
        ratio = score_ratio(self.catalogue, ref, family)   # time on the family's host over the ref's
        if ratio is not None and ref != family:
            text = (f"host single-thread ratio {ratio.mid:.2f} ({ratio.low:.2f}-{ratio.high:.2f}): sourced "
                    f"single-thread scores of {ref}'s and {family}'s CPU models (catalogue)")
            return ratio, pv.catalogue(ref, pv.catalogue(family, text))
        return 1.0, pv.Input("host-side cost carried unscaled (no sourced single-thread score for both hosts)")

    def _cores(self, machine: str, target: bool) -> tuple[Band, pv.Input]:
        entry = self.catalogue.get(machine)
        if entry is not None and "cpu_physical_cores" in entry.figures:
            fig = entry.figure("cpu_physical_cores")
            if fig.value is not None:
                return Band.of(float(fig.value)), pv.catalogue(machine, f"{machine} {fig.value:g} physical cores "
                                                                        "(catalogue)")
            reg = self.machines.get(machine)
            vcpu = entry.value("vcpu") or (reg.get("cpu_cores") if reg else None)
            try:
                if vcpu is None:
                    raise TypeError("no vCPU count")
                v = float(vcpu)
            except (TypeError, ValueError):
                raise Unpredictable(f"{machine}: physical cores unknown ({fig.reason})") from None
            text = f"{machine} {v / 2:g}-{v:g} physical cores (SMT unknown)"
            cite = pv.catalogue if entry.value("vcpu") else pv.registered   # where the vCPU count came from
            return Band(geo(v / 2, v), v / 2, v), cite(machine, text)
        if target:
            cores = entry.value("cpu_cores") if entry is not None else None
            if cores is None:
                raise Unpredictable(f"{machine}: no sourced physical core count to scale a CPU rate to")
            return Band.of(float(cores)), pv.catalogue(machine, f"{machine} {cores} cores (catalogue cpu_cores)")
        reg = self.machines.get(machine)
        try:
            raw = reg.get("cpu_cores") if reg else entry.value("cpu_cores") if entry is not None else None
            if raw is None:
                raise TypeError("no core count")
            v = float(raw)
        except (TypeError, ValueError, AttributeError):
            raise Unpredictable(f"{machine}: core count not recorded") from None
        if reg:
            return Band.of(v), pv.registered(machine, f"{machine} {v:g} cores (registration)")
        return Band.of(v), pv.catalogue(machine, f"{machine} {v:g} cores (catalogue cpu_cores)")


#: the registered kinds (machine.json's jaxci_kind) whose results the model reads unasked: a catalogue family's runs
#: and a lab capture, the folders git holds (.gitignore un-ignores them by name). A local run (`local-<host>`,
#: what bench.sh writes) is shown as measured but moves no family's prediction unless it is named
#: (`jaxci report --model-input NAME`, `jaxci predict --model-input NAME`)
INPUT_KINDS = ("catalogue", "lab")


def input_machines(machines: dict, named=()) -> tuple[str, ...]:
    """The machines of `machines` (name -> MachineFacts) whose results the model reads: those of INPUT_KINDS and
    those `named`, sorted."""
    return tuple(sorted(m for m, facts in machines.items()
                        if facts.get("jaxci_kind") in INPUT_KINDS or m in set(named)))


def is_input(record, machines: dict, inputs, named=()) -> bool:
    """Whether one record is a model input: its machine is one of `inputs`, and it is no quick CI-scale run of a
    runner family (a family's prediction rests on its full-scale runs; a lab capture is committed at the scale it
    was taken, and a named machine is read as it is)."""
    if record.machine not in inputs:
        return False
    facts = machines.get(record.machine)
    kind = facts.get("jaxci_kind") if facts is not None else "unknown"
    return record.scale != "ci" or kind == "lab" or record.machine in set(named)


def accelerator_side(records, catalogue: dict) -> list:
    """The records as the model reads them: device "gpu" is the accelerator side. A TPU machine's `tpu` results
    are read there (the model's terms are the same for any accelerator: floor, efficiency of a sourced peak, bytes
    over bandwidth, per-step latency, compile); what the model prints is labelled by the family's own name."""
    tpu = {name for name, entry in catalogue.items() if entry.accelerator == "tpu"}
    return [replace(r, params={**r.params, "device": "gpu"})
            if r.machine in tpu and r.params.get("device") == "tpu" else r for r in records]
