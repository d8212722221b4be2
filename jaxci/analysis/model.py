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

import math
from dataclasses import dataclass, field

from jaxci.analysis import evidence as E
from jaxci.analysis import primitives as P
from jaxci.analysis.peak import gemm_path
from jaxci.analysis.primitives import Band, combine
from jaxci.analysis.work import ITEMSIZE, dense_flops, elementwise_bytes, elementwise_ops

DENSE_OPS = ("matmul", "solve", "cholesky")
LOOP_KINDS = ("scan", "fori", "while")
KERNELS = DENSE_OPS + ("elementwise", "dispatch") + LOOP_KINDS + ("kalman_grad", "series", "nuts", "numpy_matmul",
                                                                  "pure_python", "backend_start",
                                                                  "notebook_start")
COLD_KERNEL = {"matmul": "matmul", "elementwise": "op_mix", "scan": "scan"}


@dataclass
class Prediction:
    """Predicted seconds with a band, the inputs (measured records and catalogue figures) and the equation used;
    `seconds is None` with `reason` when the model cannot predict."""
    family: str
    kernel: str
    n: int | None
    dtype: str
    device: str
    first_call: bool = False
    seconds: float | None = None
    low: float | None = None
    high: float | None = None
    inputs: str = ""
    basis: str = ""
    reason: str = ""
    label: str = "predicted"

    def __bool__(self) -> bool:
        return self.seconds is not None

    def to_dict(self) -> dict:
        return {k: getattr(self, k) for k in ("family", "kernel", "n", "dtype", "device", "first_call", "seconds",
                                              "low", "high", "inputs", "basis", "reason", "label")}


class _Why(Exception):
    """Raised inside the model where a term cannot be estimated; its text is the prediction's reason."""


@dataclass
class _Est:
    band: Band
    inputs: list = field(default_factory=list)
    basis: str = ""


def _geo(a: float, b: float) -> float:
    return math.sqrt(a * b)


def _fmt(e) -> str:
    """A published input's value in its unit."""
    v = e.value
    if e.term in (E.GEMM_RATE, E.CPU_GEMM, E.NUMPY_GEMM):
        return f"{v.mid / 1e12:.3g} TFLOP/s ({v.low / 1e12:.3g}-{v.high / 1e12:.3g}) {e.key}".rstrip()
    if e.term == E.BANDWIDTH:
        return f"{v.mid / 1e9:.3g} GB/s"
    if e.term == E.CPU_ELEM:
        return f"{v.mid / 1e6:.3g} M elements/s"
    if e.term == E.SCAN_STEP:
        return f"{v.mid * 1e9:.3g} ns per step" + (f" (read at n={e.n:,})" if e.n else "")
    return f"{v.mid:.3g} s" + (f" at n={e.n:,}" if e.n else "")


class RunnerModel:
    """predict(family, kernel, n, dtype, device, first_call=False) for every catalogue family; the report, the
    audit, `jaxci predict` and measure/predict_vs_published.py all ask this one object."""

    def __init__(self, records, machines: dict, catalogue: dict, published=(), fixed=None):
        self.records = [r for r in records if r.ok]
        self.fixed = fixed                 # jaxci.analysis.fixed_costs.FixedCosts: a notebook's, or None
        self.published = list(published)   # jaxci.analysis.evidence.Evidence: published on a family's hardware
        self.machines = machines
        self.catalogue = catalogue
        self.gpu_refs = sorted(m for m, f in machines.items() if f.has_gpu and P.floor(self.records, m, "gpu")[0])
        self.cpu_refs = sorted(m for m in machines if P.floor(self.records, m, "cpu")[0])

    @classmethod
    def from_results(cls, records, machines: dict, catalogue: dict, published=(), fixed=None) -> RunnerModel:
        return cls(records, machines, catalogue, published, fixed)

    # ---- the one interface ----

    def predict(self, family: str, kernel: str, n: int | None, dtype: str = "float32", device: str = "gpu",
                first_call: bool = False, precision: str = "default", compile_only: bool = False) -> Prediction:
        out = Prediction(family, kernel, n, dtype, device, first_call)
        case = None if compile_only or precision != "default" else self._published_case(family, kernel, n, dtype,
                                                                                         device, first_call)
        if case is not None:  # this very case was published on the family: the figure, labelled, no band added
            out.seconds = out.low = out.high = case.value.mid
            out.inputs, out.label = case.label() + " (no spread published)", "published"
            out.basis = "the published figure of this case"
            return out
        try:
            est = self._predict(family, kernel, n, dtype, device, first_call, precision, compile_only)
        except _Why as why:
            out.reason = str(why)
            return out
        out.seconds, out.low, out.high = est.band.mid, est.band.low, est.band.high
        out.inputs = "; ".join(dict.fromkeys(est.inputs))
        out.basis = est.basis
        return out

    def _predict(self, family, kernel, n, dtype, device, first_call, precision, compile_only) -> _Est:
        entry = self.catalogue.get(family)
        if entry is None:
            raise _Why(f"{family} is not in the catalogue")
        if kernel not in KERNELS:
            raise _Why(f"kernel {kernel!r}: the model knows {', '.join(KERNELS)}")
        if dtype not in ITEMSIZE:
            raise _Why(f"dtype {dtype!r}: float32 or float64")
        if device == "gpu" and not entry.has_gpu:
            raise _Why(f"{family} has no GPU")
        if kernel == "backend_start":
            return self._backend_start(family, device)
        if kernel == "notebook_start":
            return self._notebook_start(family, device, first_call)
        if kernel in ("series", "nuts"):
            return self._series(family, dtype, device) if kernel == "series" else self._nuts(family, n, dtype, device)
        if kernel not in ("dispatch", "while", "kalman_grad") and not (isinstance(n, int) and n > 0):
            raise _Why(f"{kernel} needs a size n > 0")
        if kernel in ("numpy_matmul", "pure_python"):
            if device != "cpu" or first_call or compile_only:
                raise _Why(f"{kernel} is host work: device cpu, warm only")
            return self._numpy_matmul(family, n, dtype) if kernel == "numpy_matmul" else self._pure_python(family, n)
        if first_call or compile_only:
            return self._first_call(family, kernel, n, dtype, device, precision, compile_only)
        return self._warm(family, kernel, n, dtype, device, precision)

    # ---- published measurements on the family's hardware (the nearest evidence after our own) ----

    def _where(self, family) -> tuple:
        """The names a published input may be filed under for a family: itself and its GPU model."""
        entry = self.catalogue.get(family)
        gpu = entry.value("gpu_model") if entry is not None else None
        return (family,) + ((gpu,) if gpu and gpu != "none" else ())

    def _pub(self, family, device, term, key="", dtype=None) -> list:
        return E.select(self.published, self._where(family), device, term, key, dtype)

    def _pub_rate(self, family, device, term, key="", dtype=None) -> tuple[Band | None, list]:
        """One published rate (several: geometric mean, widest ends) and its labelled inputs."""
        ev = self._pub(family, device, term, key, dtype)
        if not ev:
            return None, []
        return combine([e.value for e in ev]), [f"{e.label()}: {_fmt(e)}" for e in ev]

    # ---- references ----

    def _refs(self, family, device) -> tuple[list[str], str]:
        refs = self.gpu_refs if device == "gpu" else self.cpu_refs
        others = [m for m in refs if m != family]
        if others:
            return others, ""
        if refs:
            return refs, " [calibrated on this family itself: not an independent check]"
        raise _Why(f"no measured {device} machine in these results to calibrate from")

    def _floor(self, refs, device, dtype) -> _Est:
        bands, inputs = [], []
        for m in refs:
            b, text = P.floor(self.records, m, device, dtype)
            if b:
                bands.append(b)
                inputs.append(text)
        if not bands:
            raise _Why(f"no dispatch.TinyOp on {device} in these results")
        return _Est(combine(bands), inputs)

    def _host_ratio(self, ref: str, family: str) -> tuple[float | Band, str]:
        """Host single-thread ratio ref / family: the family's published pure-Python sum over the ref's measured
        one (host.PurePython, same loop), else sourced `cpu_single_thread_score` on both, else 1, said."""
        pub = self._pub(family, "cpu", E.HOST_PYTHON)
        mine, text = P.pure_python(self.records, ref, n=pub[0].n) if pub and pub[0].n else (None, "")
        if pub and mine is not None and ref != family:
            h = pub[0].value.scale(mine.inverse())
            return h, (f"host single-thread ratio {h.mid:.2f} ({h.low:.2f}-{h.high:.2f}): {pub[0].label()} "
                       f"{pub[0].value.mid:.3g} s over {text}")
        a, b = self.catalogue.get(ref), self.catalogue.get(family)
        sa = a.value("cpu_single_thread_score") if a is not None else None
        sb = b.value("cpu_single_thread_score") if b is not None else None
        if sa and sb:
            return float(sb) / float(sa), f"host single-thread ratio {float(sb) / float(sa):.2f} (catalogue)"
        return 1.0, "host-side cost carried unscaled (no sourced single-thread score for both hosts)"

    def _cores(self, machine: str, target: bool) -> tuple[Band, str]:
        entry = self.catalogue.get(machine)
        if entry is not None and "cpu_physical_cores" in entry.figures:
            fig = entry.figure("cpu_physical_cores")
            if fig.value is not None:
                return Band.of(float(fig.value)), f"{machine} {fig.value:g} physical cores (catalogue)"
            reg = self.machines.get(machine)
            vcpu = entry.value("vcpu") or (reg.get("cpu_cores") if reg else None)
            try:
                v = float(vcpu)
            except (TypeError, ValueError):
                raise _Why(f"{machine}: physical cores unknown ({fig.reason})") from None
            return Band(_geo(v / 2, v), v / 2, v), f"{machine} {v / 2:g}-{v:g} physical cores (SMT unknown)"
        if target:
            cores = entry.value("cpu_cores") if entry is not None else None
            if cores is None:
                raise _Why(f"{machine}: no sourced physical core count to scale a CPU rate to")
            return Band.of(float(cores)), f"{machine} {cores} cores (catalogue cpu_cores)"
        reg = self.machines.get(machine)
        try:
            v = float(reg.get("cpu_cores")) if reg else float(entry.value("cpu_cores"))
        except (TypeError, ValueError, AttributeError):
            raise _Why(f"{machine}: core count not recorded") from None
        return Band.of(v), f"{machine} {v:g} cores (registration)"

    # ---- warm calls ----

    def _warm(self, family, kernel, n, dtype, device, precision="default") -> _Est:
        refs, note = self._refs(family, device)
        if kernel == "while":
            return self._while(family, refs, note, n, dtype, device)
        if kernel in LOOP_KINDS:
            return self._loop(family, refs, note, kernel, n, dtype, device)
        if kernel == "kalman_grad":
            return self._kalman(family, refs, note, n, dtype, device)
        floor = self._floor(refs, device, dtype)
        h, text = self._floor_ratio(refs[0], family, device)
        if kernel == "dispatch":
            return _Est(floor.band.scale(h), floor.inputs + [text + note], "floor (dispatch.TinyOp)")
        if device == "gpu":
            work, inputs, basis = self._gpu_work(family, refs, kernel, n, dtype, precision)
        else:
            work, inputs, basis = self._cpu_work(family, refs, kernel, n, dtype)
        return _Est(floor.band.scale(h) + work, floor.inputs + inputs + [text + note], "floor + " + basis)

    def _floor_ratio(self, ref: str, family: str, device: str) -> tuple[float | Band, str]:
        """What moves a dispatch floor from the ref to the family: on a GPU the launch + sync latency ratio
        where the family's GPU has a published figure of it, else the host single-thread ratio."""
        if device == "gpu":
            ratio = self._latency_ratio(ref, family)
            if ratio is not None:
                return ratio
        return self._host_ratio(ref, family)

    def _latency_ratio(self, ref: str, family: str) -> tuple[Band, str] | None:
        """Family over ref for a GPU call's launch + sync latency: the family's published scalar-scan step over
        the ref's measured one. A step of that scan is three tiny launches and one device-to-host sync, the
        path a warm call's floor takes too (host dispatch included), and the published step was timed on the
        family's own host and driver; None where either side is missing."""
        step, labels = self._pub_rate(family, "gpu", E.SCAN_STEP)
        fit, why = P.loop_slope(self.records, ref, "gpu", "scan", "float32")
        if step is None or fit is None or fit[1].low <= 0:
            return None
        r = step.scale(fit[1].inverse())
        return r, (f"GPU launch + sync latency x{r.mid:.2f} ({r.low:.2f}-{r.high:.2f}), {family} over {ref}: "
                   f"{', '.join(labels)} over {why}")

    def _gpu_work(self, family, refs, kernel, n, dtype, precision):
        entry = self.catalogue[family]
        if kernel == "elementwise":
            return self._gpu_elementwise(family, refs, n, dtype)
        path, key, peak, src = gemm_path(entry, dtype, precision)
        rate, labels = self._pub_rate(family, "gpu", E.GEMM_RATE, path, dtype) if kernel == "matmul" else (None, [])
        if rate is not None:
            return (rate.inverse().scale(dense_flops(kernel, n)), labels,
                    f"FLOPs / published achieved {path} rate on {family}'s GPU")
        inputs, floor_note = [], ""
        if peak is None and path == "tf32":
            _, key, peak, src = gemm_path(entry, dtype, "highest")
            floor_note = " (TF32 peak unsourced: the FP32 peak is used, so the time is an upper bound)"
            path = "fp32"
        if peak is None:
            raise _Why(f"{family}: {key} has no sourced figure ({src})")
        effs = []
        for m in refs:
            ref = self.catalogue.get(m)
            f, _ = P.floor(self.records, m, "gpu", dtype)
            if kernel == "matmul":
                pts = P.gemm_points(self.records, m, "gpu", dtype, f.mid)
            else:
                pt, why = P.dense_point(self.records, m, "gpu", kernel, dtype, f.mid)
                if pt is None:
                    raise _Why(why)
                pts = [("default", pt)]
            same = [(p, pt) for p, pt in pts if gemm_path(ref, dtype, p)[0] == path] if ref is not None else []
            for prec, pt in (same or pts):
                rpath, rkey, rpeak, _ = gemm_path(ref, dtype, prec)
                if rpeak is None:
                    continue
                eff = pt.rate.scale(1 / (rpeak * 1e9))
                effs.append(eff)
                inputs.append(f"{pt.source}: efficiency {eff.mid:.2f} of the {rpath} peak {rpeak / 1000:g} TFLOP/s, "
                              f"measured on {m}")
        if not effs:
            raise _Why(f"no measured GPU {kernel} {dtype} throughput point with a sourced peak on {', '.join(refs)}"
                       " (a lab machine's peaks come from the catalogue including lab machines)")
        eff = combine(effs)
        inputs.append(f"{family} {path} peak {peak / 1000:g} TFLOP/s (catalogue {key}: {src}){floor_note}")
        flops = dense_flops(kernel, n)
        return eff.scale(peak * 1e9).inverse().scale(flops), inputs, f"FLOPs / (efficiency x {path} peak)"

    def _gpu_elementwise(self, family, refs, n, dtype):
        """The op mix on a GPU: the larger of its bandwidth time and its arithmetic time (XLA's cost analysis:
        flops and transcendentals, each counted as one op at the family's vector peak of the dtype, so the
        arithmetic time is a lower bound). Which one binds is computed, not assumed: at FP64 1:32 or 1:64 it is
        close, and the inputs give the cost per transcendental above which the arithmetic would bind."""
        t_bw, inputs, basis = self._gpu_bytes(family, refs, elementwise_bytes(n, dtype), dtype)
        key = "gpu_fp64_tflops" if dtype == "float64" else "gpu_fp32_tflops"
        peak = self.catalogue[family].value(key)
        if not peak:
            return t_bw, inputs + [f"{family} {key} unsourced: the arithmetic bound is not checked"], basis
        flops, trans = elementwise_ops(n)
        t_c = (flops + trans) / (float(peak) * 1e12)
        even = (t_bw.mid * float(peak) * 1e12 - flops) / trans
        binds = "arithmetic" if t_c > t_bw.mid else "bandwidth"
        inputs.append(f"XLA cost analysis of the op mix: {flops / n:g} flops + {trans / n:g} transcendentals per "
                      f"element, at {family}'s {key} {peak:g}: {t_c * 1e3:.3g} ms (each transcendental one op: a "
                      f"lower bound) vs bandwidth {t_bw.mid * 1e3:.3g} ms: {binds}-bound"
                      + (f"; arithmetic would bind above {even:.1f} ops per transcendental" if even > 0 else ""))
        band = Band(max(t_bw.mid, t_c), max(t_bw.low, t_c), max(t_bw.high, t_c))
        return band, inputs, basis if binds == "bandwidth" else f"(flops + transcendentals) / {key}"

    def _gpu_bytes(self, family, refs, nbytes, dtype):
        entry = self.catalogue[family]
        rate, labels = self._pub_rate(family, "gpu", E.BANDWIDTH)
        if rate is not None:
            return rate.inverse().scale(nbytes), labels, f"bytes / published achieved bandwidth of {family}'s GPU"
        bw = entry.value("gpu_bandwidth_gbs")
        if bw is None:
            raise _Why(f"{family}: gpu_bandwidth_gbs has no sourced figure")
        effs, inputs = [], []
        for m in refs:
            ref = self.catalogue.get(m)
            rbw = ref.value("gpu_bandwidth_gbs") if ref is not None else None
            if rbw is None:
                continue
            f, _ = P.floor(self.records, m, "gpu", dtype)
            pt, why = P.bandwidth_point(self.records, m, "gpu", dtype, f.mid)
            if pt is not None:
                eff = pt.rate.scale(1 / (float(rbw) * 1e9))
                inputs.append(f"{pt.source}: {eff.mid:.2f} of {m}'s {rbw:g} GB/s")
            else:
                lb, _ = P.op_mix_lower_bound(self.records, m, "gpu", dtype)
                if lb is None:
                    continue
                lo = min(lb.rate.mid / (float(rbw) * 1e9), 1.0)
                eff = Band(_geo(lo, 1.0), lo, 1.0)
                inputs.append(f"{why}; bandwidth efficiency {lo:.2f}..1 of {m}'s {rbw:g} GB/s (lower end: {lb.source}, "
                              "floor included: a latency-bound point bounds the bandwidth from below only)")
            effs.append(eff)
        if not effs:
            raise _Why(f"no measured GPU bandwidth or op mix on {', '.join(refs)} with a sourced bandwidth")
        eff = combine(effs)
        inputs.append(f"{family} bandwidth {bw:g} GB/s (catalogue)")
        return eff.scale(float(bw) * 1e9).inverse().scale(nbytes), inputs, "bytes / (efficiency x bandwidth)"

    def _cpu_work(self, family, refs, kernel, n, dtype):
        target = self.catalogue[family]
        term = {"matmul": E.CPU_GEMM, "elementwise": E.CPU_ELEM}.get(kernel)
        rate, labels = self._pub_rate(family, "cpu", term, dtype=dtype) if term else (None, [])
        if rate is not None:
            work = n if kernel == "elementwise" else dense_flops(kernel, n)
            return rate.inverse().scale(work), labels, f"work / published achieved rate on {family}'s CPU"
        bands, inputs = [], []
        why = ""
        for m in refs:
            f, _ = P.floor(self.records, m, "cpu", dtype)
            if kernel == "elementwise":
                pt, why = P.element_rate_at(self.records, m, "cpu", dtype, n, f.mid)
                if pt is None:
                    continue
                bands.append(pt.rate.inverse().scale(n))
                inputs.append(f"{pt.source}: {pt.rate.mid / 1e6:.0f} M elements/s, not scaled by cores "
                              "(the op mix is arithmetic-bound and XLA:CPU barely spreads it over cores)")
                continue
            if kernel == "matmul":
                pts = [pt for _, pt in P.gemm_points(self.records, m, "cpu", dtype, f.mid)]
                pt = max(pts, key=lambda p: p.n) if pts else None
                if pt is None:
                    why = f"{m} cpu matmul {dtype}: no throughput point"
            else:
                pt, why = P.dense_point(self.records, m, "cpu", kernel, dtype, f.mid)
            if pt is None:
                continue
            scale, text = self._cpu_scale(m, target, dtype)
            rate = pt.rate.scale(scale)
            bands.append(rate.inverse().scale(dense_flops(kernel, n)))
            inputs.append(f"{pt.source}: {pt.rate.mid / 1e9:.0f} GFLOP/s on {m}, x{scale.mid:.2f} ({text})")
        if not bands:
            raise _Why(why or f"no CPU {kernel} {dtype} results to calibrate from")
        basis = "n / element rate" if kernel == "elementwise" else "FLOPs / (rate per physical core x cores)"
        return combine(bands), inputs, basis

    def _cpu_scale(self, ref: str, target, dtype) -> tuple[Band, str]:
        if ref == target.name:
            return Band.of(1.0), "same machine"
        key = "cpu_fp64_gflops" if dtype == "float64" else "cpu_fp32_gflops"
        r = self.catalogue.get(ref)
        tp, rp = target.value(key), (r.value(key) if r is not None else None)
        if tp and rp:
            return Band.of(float(tp) / float(rp)), f"ratio of catalogue CPU peaks {tp} / {rp}"
        tc, ttext = self._cores(target.name, target=True)
        rc, rtext = self._cores(ref, target=False)
        return tc.scale(rc.inverse()), f"{ttext} / {rtext}: same rate per physical core assumed"

    def _loop(self, family, refs, note, kind, n, dtype, device) -> _Est:
        step, labels = self._pub_rate(family, device, E.SCAN_STEP) if kind == "scan" else (None, [])
        if step is not None:
            return _Est(step.scale(float(n)), labels + ["published per-step cost of the family's own runner"],
                        "n x published per-step cost")
        bands, inputs, why = [], [], ""
        for m in refs:
            fit, why = P.loop_slope(self.records, m, device, kind, dtype)
            if fit is None:
                continue
            icpt, slope = fit
            h, htext = self._host_ratio(m, family)
            bands.append((icpt + slope.scale(n)).scale(h))
            inputs += [why, htext]
        if not bands:
            raise _Why(why)
        what = ("per-step cost is launch + sync latency (host and driver), carried unscaled: a faster GPU does "
                "not remove it") if device == "gpu" else "per-step cost is single-thread host work"
        return _Est(combine(bands), inputs + [what + note], "intercept + n x per-step slope")

    def _kalman(self, family, refs, note, n, dtype, device) -> _Est:
        steps = n or 96
        bands, inputs = [], []
        for m in refs:
            b, text = P.kalman_grad(self.records, m, device, dtype)
            if b:
                h, htext = self._host_ratio(m, family)
                bands.append(b.scale(h).scale(steps / 96))
                inputs += [text, htext]
        if not bands:
            raise _Why(f"no sequential Kalman gradient (k = 11, n = 96, {dtype}) on {device} in these results")
        return _Est(combine(bands), inputs + ["a sequential scan of tiny ops: latency-bound, carried per step"
                                              + note], "Kalman gradient x n / 96")

    # ---- first calls, compile, the fresh-jit series, NUTS ----

    def _ref_warm(self, m, kernel, n, dtype, device) -> Band:
        """The reference's own warm time at a size (exact record, else its own primitives), to take off a
        cold first call so what remains is the compile part."""
        bench = {"matmul": P.DENSE, "elementwise": P.ELEMENTWISE, "scan": P.SCAN}[kernel]
        fixed = {"op": "matmul"} if kernel == "matmul" else ({"unroll": 1} if kernel == "scan" else {})
        exact = [r for r in P._ok(self.records, m, bench, device, dtype=dtype, **fixed) if r.params.get("n") == n]
        if exact:
            return P.band_of(exact[0])
        f, _ = P.floor(self.records, m, device, dtype)
        f = f or Band.of(0.0)
        if kernel == "scan":
            fit, _ = P.loop_slope(self.records, m, device, "scan", dtype)
            return (fit[0] + fit[1].scale(n)) if fit else f
        if kernel == "matmul":
            pts = P.gemm_points(self.records, m, device, dtype, f.mid)
            return f + pts[-1][1].rate.inverse().scale(dense_flops("matmul", n)) if pts else f
        pt, _ = P.element_point(self.records, m, device, dtype, f.mid)
        if pt is None:
            lb, _ = P.op_mix_lower_bound(self.records, m, device, dtype)
            return Band(0.0, 0.0, elementwise_bytes(n, dtype) / lb.rate.mid) if lb else f
        return f + pt.rate.inverse().scale(n)

    def _published_case(self, family, kernel, n, dtype, device, first_call):
        """The published figure of exactly this case on the family (kernel, size, dtype, device, first or warm
        call), else None."""
        term = E.CASE_FIRST if first_call else E.CASE_WARM
        return next((e for e in self.published if e.where == family and e.device == device and e.term == term
                     and e.key == kernel and e.n == n and e.dtype == dtype), None)

    def _published_compile(self, family, kernel, n, dtype, device) -> _Est | None:
        """The family's own published compile part of this kernel at the published size nearest n (in log n),
        else, for a matmul, the published fresh-jit series less its predicted warm calls, per jit."""
        ev = sorted(self._pub(family, device, E.COMPILE, kernel), key=lambda e: e.n or 0)
        if ev:
            n = n or ev[0].n
            near = min(ev, key=lambda e: abs(math.log((e.n or n) / n)))
            k, ktext = self._compile_growth(family, kernel, n, near)
            part = near.value.scale((n / (near.n or n)) ** k)
            return _Est(part, [f"{near.label()}: compile part {_fmt(near)} (first call less the warm call)"]
                        + ([ktext] if near.n and near.n != n else []), "published compile part x per-size growth")
        series = self._pub(family, device, E.SERIES) if kernel == "matmul" else []
        if not series:
            return None
        warm = self._warm_sum(family, dtype, device)
        per = series[0].value.minus(warm).scale(1 / len(P.SERIES_SIZES))
        return _Est(per, [f"{series[0].label()}: fresh-jit series {_fmt(series[0])}, less the predicted warm "
                          f"matmuls {warm.mid:.3g} s, per jit {per.mid:.3g} s"], "published series compile per jit")

    def _compile_growth(self, family, kernel, n, near) -> tuple[float, str]:
        """Per-size growth exponent k of a compile part (part ~ n^k): from the family's own two published sizes
        around n, else from another runner's published pair of the same kernel; else 0 (said)."""
        def pair(ev):
            ev = sorted((e for e in ev if e.n and e.value.mid > 0), key=lambda e: e.n)
            if len(ev) < 2 or ev[0].n == ev[-1].n:
                return None
            a, b = ev[0], ev[-1]
            return math.log(b.value.mid / a.value.mid) / math.log(b.n / a.n), f"{a.label()} and {b.label()}"
        own = pair(self._pub(family, near.device, E.COMPILE, kernel))
        if own:
            return own[0], f"per-size growth n^{own[0]:.2f} between the family's own published sizes ({own[1]})"
        for e in self.published:
            if e.term == E.COMPILE and e.key == kernel and e.where != family:
                other = pair([x for x in self.published if x.term == E.COMPILE and x.key == kernel
                              and x.where == e.where and x.device == e.device])
                if other:
                    return other[0], (f"per-size growth n^{other[0]:.2f} carried from {e.where} {e.device} "
                                      f"({other[1]})")
        return 0.0, "no per-size growth evidence: the compile part is taken as size-independent"

    def _warm_sum(self, family, dtype, device) -> Band:
        warm = Band.of(0.0)
        for n in P.SERIES_SIZES:
            warm = warm + self._warm(family, "matmul", n, dtype, device).band
        return warm

    def _compile_part(self, family, kernel, dtype, device, n=None) -> _Est:
        if kernel not in COLD_KERNEL:
            raise _Why(f"{kernel}: the suite times no cold first call for it (compile.CompileColdStart: "
                       f"{', '.join(COLD_KERNEL)})")
        if device == "gpu":
            return self._gpu_compile(family, kernel, dtype, n)
        pub = self._published_compile(family, kernel, n, dtype, device)
        if pub is not None:
            return pub
        refs, note = self._refs(family, device)
        cold = COLD_KERNEL[kernel]
        bands, inputs = [], []
        for m in refs:
            b, text = P.cold_call(self.records, m, device, cold, dtype)
            if b is None:
                continue
            part = b.minus(self._ref_warm(m, kernel, P.COLD_SIZES[cold], dtype, device))
            h, htext = self._host_ratio(m, family)
            bands.append(part.scale(h))
            inputs += [f"{text}, less its warm call at n={P.COLD_SIZES[cold]:,} = compile part {part.mid:.3g} s",
                       htext]
        if not bands:
            raise _Why(f"no compile.CompileColdStart for {cold} on {device} in these results")
        return _Est(combine(bands), inputs + ["compile is host work (XLA on the host): moves with single-thread "
                                              "speed, not with the device" + note], "compile part")

    def _own_compile(self, m, kernel, dtype, device) -> tuple[Band | None, str]:
        """One machine's compile part of a kernel on a device: its cold first call less its own warm call."""
        cold = COLD_KERNEL[kernel]
        b, text = P.cold_call(self.records, m, device, cold, dtype)
        if b is None:
            return None, text
        part = b.minus(self._ref_warm(m, kernel, P.COLD_SIZES[cold], dtype, device))
        return part, f"{text}, less its warm call at n={P.COLD_SIZES[cold]:,} = {part.mid:.3g} s"

    def _host_compile(self, family, kernel, dtype) -> tuple[Band | None, list]:
        """Part 1, host-side compile (tracing, lowering, XLA's host passes): the CPU-device compile part of each
        measured host, moved by that host's single-thread ratio h to the family's host."""
        bands, inputs = [], []
        for m in self.cpu_refs:
            part, text = self._own_compile(m, kernel, dtype, "cpu")
            if part is None:
                continue
            h, htext = self._host_ratio(m, family)
            bands.append(part.scale(h))
            inputs.append(f"part host-side compile: {text} ({htext})")
        return (combine(bands) if bands else None), inputs

    def _gpu_share(self, family, kernel, dtype) -> tuple[Band | None, list]:
        """Part 2, GPU autotuning and GPU code generation: a GPU machine's compile part less its own host's
        CPU-device compile part. It depends on the architecture (XLA autotunes GEMMs per compute capability):
        carried as is to the same compute capability, else its band runs from 0 to the measured share."""
        cc = self.catalogue[family].value("gpu_compute_capability")
        bands, inputs = [], []
        for m in self.gpu_refs:
            gpu, gtext = self._own_compile(m, kernel, dtype, "gpu")
            host, _ = self._own_compile(m, kernel, dtype, "cpu")
            if gpu is None or host is None:
                continue
            share = gpu.minus(host)
            ref = self.catalogue.get(m)
            rcc = ref.value("gpu_compute_capability") if ref is not None else None
            same = cc is not None and rcc is not None and float(cc) == float(rcc)
            bands.append(share if same else Band(share.mid, 0.0, share.high))
            inputs.append(f"part GPU autotuning + code generation: {gtext}, less {m}'s own host-side part "
                          f"{host.mid:.3g} s = {share.mid:.3g} s on compute capability {rcc}"
                          + ("" if same else f"; {family} is {cc}: autotuning differs by architecture and "
                             "compile.AutotuneCompile has run on no GPU, so the band runs from 0"))
        return (combine(bands) if bands else None), inputs

    def _size_growth_note(self, dtype) -> str:
        """Part 4 for a carried compile: the GPU machine's fresh-jit series per jit against its one cold call."""
        for m in self.gpu_refs:
            b, _ = P.series_total(self.records, m, "gpu", dtype)
            one, _ = self._own_compile(m, "matmul", dtype, "gpu")
            if b is not None and one is not None and one.mid > 0:
                per = b.mid / len(P.SERIES_SIZES)
                return (f"part per-size growth: {m}'s fresh-jit series is {per:.3g} s per jit over sizes "
                        f"{P.SERIES_SIZES[0]}-{P.SERIES_SIZES[-1]} against {one.mid:.3g} s at n=1,000 "
                        f"(x{per / one.mid:.2f}): taken as size-independent")
        return "part per-size growth: not measured on a GPU; taken as size-independent"

    def _gpu_compile(self, family, kernel, dtype, n) -> _Est:
        """A GPU compile part as its parts: host-side compile, GPU autotuning + code generation, per-size growth
        (backend start-up is once per process and outside it). The family's own published total, where one
        exists, is the nearest evidence of the sum; the parts then say how it splits."""
        host, hin = self._host_compile(family, kernel, dtype)
        startup = ("part backend start-up: once per process, not per jit, so not in this term "
                   "(CompileColdStart starts the backend before its timer)")
        pub = self._published_compile(family, kernel, n, dtype, "gpu")
        if pub is not None:
            split = hin[:]
            if host is not None:
                rest = pub.band.minus(host)
                split.append(f"part GPU autotuning + code generation = the published total less the host-side "
                             f"part: {rest.mid:.3g} s ({rest.low:.3g}-{rest.high:.3g}), derived")
            return _Est(pub.band, pub.inputs + split + [startup], pub.basis)
        gpu, gin = self._gpu_share(family, kernel, dtype)
        if gpu is None or host is None:
            raise _Why(f"no compile.CompileColdStart for {COLD_KERNEL[kernel]} on both a GPU and its host's CPU "
                       "in these results")
        return _Est(host + gpu, hin + gin + [startup, self._size_growth_note(dtype)],
                    "host-side compile + GPU autotuning and code generation")

    def _backend_start(self, family, device) -> _Est:
        """Creating JAX's CUDA client in a fresh process, once per notebook kernel (never per jit): a GPU machine's
        probed process start on the GPU less the same probe on its CPU (import JAX + one op each: jaxci.capture
        prepare.probe_start, read from its committed capture summaries), band over its captures, geometric middle;
        the family's own captures where it has some (nearest evidence), else the other GPU machines'. Host-side
        work (loading the CUDA libraries, creating the context), so it moves by the host ratio. The CPU client's
        start is not here: the audit measures it where the lecture runs."""
        if device != "gpu":
            raise _Why("backend start-up is the GPU's: a CPU client's start is measured where a lecture runs")
        own = getattr(self.machines.get(family), "process_starts", ())
        refs, note = ([family], " [measured on this family]") if own else self._refs(family, "gpu")
        bands, inputs = [], []
        for m in refs:
            facts = self.machines.get(m)
            starts = [s for s in getattr(facts, "process_starts", ()) if s.backend_s > 0]
            if not starts:
                continue
            lo, hi = min(s.backend_s for s in starts), max(s.backend_s for s in starts)
            h, htext = self._host_ratio(m, family)
            bands.append(Band(_geo(lo, hi), lo, hi).scale(h))
            inputs.append(f"process start gpu less cpu (import JAX + one op) {lo:.3g}-{hi:.3g} s over "
                          f"{len(starts)} capture(s) ({m}: " + ", ".join(s.source for s in starts) + f"); {htext}")
        if not bands:
            raise _Why("no GPU machine's process start on both devices in these results (a GPU capture probes it)")
        return _Est(combine(bands), inputs, "GPU process start less CPU process start, once per process" + note)

    def _notebook_start(self, family, device, cold) -> _Est:
        """A fresh notebook kernel's fixed costs on the family (jaxci.analysis.fixed_costs.notebook_start); the
        build's first notebook with `cold` (the --first-call of this kernel)."""
        from jaxci.analysis.fixed_costs import notebook_start

        if self.fixed is None:
            raise _Why("no notebook fixed-cost measurement (docs/reference/notebook-fixed-costs.md) given")
        pub = self._pub(family, "cpu", E.HOST_PYTHON)
        probe = (pub[0].value.mid, pub[0].label()) if pub else None
        backend = self._backend_start(family, "gpu") if device == "gpu" else None
        band, inputs, basis = notebook_start(self.fixed, family, probe, backend, cold)
        return _Est(band, inputs, basis)

    def _first_call(self, family, kernel, n, dtype, device, precision, compile_only) -> _Est:
        comp = self._compile_part(family, kernel, dtype, device, n)
        if compile_only:
            return comp
        warm = self._warm(family, kernel, n, dtype, device, precision)
        return _Est(comp.band + warm.band, comp.inputs + warm.inputs, "compile part + warm call")

    def fresh_jit_ratio(self, family: str) -> tuple[Band, list] | None:
        """GPU / CPU seconds per fresh jit on the family's host, from one source that measured both devices the same
        way: the family's published GPU fresh-jit series over another runner's published CPU series moved to the
        family's host by the two hosts' published pure-Python sums, each less its predicted warm matmuls. A ratio
        of two sources (a published GPU total over our own CPU compile part) mixes JAX releases and set-ups: the
        CPU runner's published series is 6x the lab CPUs' at the same host speed. In the series' own dtype:
        compiling is host work on the same graph whatever the element type. None without such a pair."""
        gpu, py = self._pub(family, "gpu", E.SERIES), self._pub(family, "cpu", E.HOST_PYTHON)
        for cpu in [e for e in self.published if e.term == E.SERIES and e.device == "cpu" and e.where != family]:
            other = self._pub(cpu.where, "cpu", E.HOST_PYTHON)
            if not (gpu and py and other) or cpu.where not in self.catalogue:
                continue
            try:
                g = gpu[0].value.minus(self._warm_sum(family, gpu[0].dtype, "gpu"))
                c = cpu.value.minus(self._warm_sum(cpu.where, cpu.dtype, "cpu"))
            except _Why:
                continue
            h = py[0].value.scale(other[0].value.inverse())
            if c.low <= 0 or g.mid <= 0:
                continue
            ratio = g.scale(c.scale(h).inverse())
            return ratio, [f"{gpu[0].label()}: {_fmt(gpu[0])} less its predicted warm matmuls = {g.mid:.3g} s",
                           f"{cpu.label()}: {_fmt(cpu)} less its predicted warm matmuls = {c.mid:.3g} s, x host "
                           f"ratio {h.mid:.2f} ({py[0].label()} over {other[0].label()})",
                           f"GPU / CPU per fresh jit on {family}'s host {ratio.mid:.3g} "
                           f"({ratio.low:.3g}-{ratio.high:.3g})"]
        return None

    def compile_ratio(self, family: str) -> tuple[Band, list] | None:
        """GPU / CPU seconds per further compilation on the family's host, from every same-source published pair:
        the fresh-jit series (fresh_jit_ratio) and each case whose compile part (first call less warm call) one
        source published on the family's GPU and on another runner's CPU at the same size, the CPU side moved to
        the family's host by the two hosts' pure-Python sums. The pairs differ by what compiles (on g4dn: a
        matmul 2.8-2.9x, a 50M-element elementwise op 0.18x, a scalar scan 12.7x, the matmul series 1.09x) and a
        lecture compiles a mix, so: their geometric mean, band from the lowest to the highest. None without one."""
        pairs, inputs = [], []
        series = self.fresh_jit_ratio(family)
        if series is not None:
            pairs.append(series[0])
            inputs.append(f"fresh-jit series: {series[1][-1]}")
        where = self._where(family)
        for gpu in [e for e in self.published if e.where in where and (e.device, e.term) == ("gpu", E.COMPILE)]:
            for cpu in self.published:
                if (cpu.term, cpu.key, cpu.n, cpu.device) != (E.COMPILE, gpu.key, gpu.n, "cpu") or \
                        cpu.where in where or cpu.value.low <= 0:
                    continue
                h, htext = self._published_host_ratio(cpu.where, family)
                ratio = gpu.value.scale(cpu.value.scale(h).inverse())
                pairs.append(ratio)
                inputs.append(f"{gpu.key} at {gpu.n:,}: {gpu.label()} {gpu.value.mid:.3g} s over {cpu.label()} "
                              f"{cpu.value.mid:.3g} s x {htext}: {ratio.mid:.3g}")
        if not pairs:
            return None
        both = combine(pairs)
        return both, inputs + [f"GPU / CPU per further compilation on {family}'s host: geometric mean of "
                               f"{len(pairs)} published pairs {both.mid:.3g} ({both.low:.3g}-{both.high:.3g})"]

    def _series(self, family, dtype, device) -> _Est:
        pub = self._pub(family, device, E.SERIES)
        if pub:
            return _Est(pub[0].value, [f"{pub[0].label()}: {_fmt(pub[0])}"], "published fresh-jit series")
        if self._pub(family, device, E.COMPILE, "matmul"):
            total, inputs = self._series_parts(family, dtype, device)
            surplus = self._series_surplus(family, dtype)
            if surplus is None:
                return _Est(total, inputs, "published compile part per size (nearest published size) + warm matmuls")
            return _Est(total + surplus.band, inputs + surplus.inputs,
                        "published compile part per size + warm matmuls + another runner's series surplus")
        refs, note = self._refs(family, device)
        bands, inputs = [], []
        for m in refs:
            b, text = P.series_total(self.records, m, device, dtype)
            if b is None:
                continue
            ref_warm = Band.of(0.0)
            for n in P.SERIES_SIZES:
                ref_warm = ref_warm + self._ref_warm(m, "matmul", n, dtype, device)
            h, htext = self._host_ratio(m, family)
            bands.append(b.minus(ref_warm).scale(h))
            inputs += [f"{text}, less its warm matmuls {ref_warm.mid:.3g} s", htext]
        if not bands:
            raise _Why(f"no compile.JitSeriesTotal on {device} in these results")
        warm = Band.of(0.0)
        for n in P.SERIES_SIZES:
            w = self._warm(family, "matmul", n, dtype, device)
            warm = warm + w.band
        inputs.append(f"plus {family}'s predicted warm matmuls at {', '.join(map(str, P.SERIES_SIZES))}: "
                      f"{warm.mid:.3g} s" + note)
        total = combine(bands) + warm
        if device == "gpu":   # the same parts as one compile: the GPU share's band runs from 0 on another architecture
            one = self._gpu_compile(family, "matmul", dtype, None).band
            low = len(P.SERIES_SIZES) * one.low + warm.low
            if low < total.low:
                total = Band(total.mid, low, total.high)
                inputs.append(f"low end {low:.3g} s: {len(P.SERIES_SIZES)} x the host-side compile part alone (the "
                              "GPU share's band runs from 0 on another compute capability, see the compile parts)")
        return _Est(total, inputs, "series compile part + warm matmuls")

    def _series_parts(self, family, dtype, device) -> tuple[Band, list[str]]:
        """The family's published compile part at each size of the series (nearest published size, grown) plus
        its predicted warm matmuls: what the series would cost if it paid nothing else."""
        parts = [self._published_compile(family, "matmul", n, dtype, device) for n in P.SERIES_SIZES]
        total = self._warm_sum(family, dtype, device)
        for part in parts:
            total = total + part.band
        return total, [t for part in parts for t in part.inputs] + ["plus the predicted warm matmuls"]

    def _series_surplus(self, family, dtype) -> _Est | None:
        """What other runners' published fresh-jit series cost beyond their own published compile parts and
        predicted warm calls, moved to this family's host by the published pure-Python sums; None without one.

        Both published runners pay such a surplus, and the single first calls do not show it: the published
        script's series generates its inputs (`jax.random.normal`, a new generator compile per new shape) and a
        second reduction inside its total (docs/runner-model.md, "What the published script timed"). No benchmark
        here measures that series, so the surplus is carried as host time between runners, labelled with both
        figures, and never derived from the family's own series."""
        bands, inputs = [], []
        for ev in self.published:
            if ev.term != E.SERIES or ev.where in self._where(family):
                continue
            if not self._pub(ev.where, ev.device, E.COMPILE, "matmul"):
                continue
            parts, _ = self._series_parts(ev.where, dtype, ev.device)
            surplus = ev.value.minus(parts)
            h, htext = self._published_host_ratio(ev.where, family)
            bands.append(surplus.scale(h))
            inputs.append(f"{ev.label()}: fresh-jit series {_fmt(ev)} less its published compile parts and "
                          f"predicted warm matmuls {parts.mid:.3g} s = surplus {surplus.mid:.3g} s, x {htext}")
        if not bands:
            return None
        return _Est(combine(bands), inputs, "another runner's series surplus")

    def _published_host_ratio(self, other: str, family: str) -> tuple[Band | float, str]:
        """Host single-thread ratio other / family from both families' published pure-Python sums, else 1."""
        mine, theirs = self._pub(family, "cpu", E.HOST_PYTHON), self._pub(other, "cpu", E.HOST_PYTHON)
        if mine and theirs:
            h = mine[0].value.scale(theirs[0].value.inverse())
            return h, (f"host ratio {h.mid:.2f} ({mine[0].label()} {mine[0].value.mid:.3g} s over "
                       f"{theirs[0].label()} {theirs[0].value.mid:.3g} s)")
        return 1.0, "host ratio 1 (no published pure-Python sum for both runners)"

    def _nuts(self, family, iterations, dtype, device) -> _Est:
        """iterations x leapfrog steps per iteration (any machine: the sampler's count) x seconds per step on the
        family's device (NutsLeapfrogStep on a ref of that device, else the Kalman gradient as proxy) + compile."""
        if not (isinstance(iterations, int) and iterations > 0):
            raise _Why("nuts needs n = the run's iterations (chains x (warm-up + samples); the incident: 4 x 800)")
        steps, inputs = self._nuts_steps(dtype)
        per, per_inputs, proxy, note = self._nuts_per_step(family, dtype, device)
        run = steps.scale(per).scale(float(iterations))
        comp, comp_text = self._nuts_compile(family, dtype, device)
        basis = "iterations x leapfrog steps per iteration x seconds per step" + (" (Kalman-gradient proxy)"
                                                                                  if proxy else "") + " + compile"
        return _Est(run + comp, inputs + per_inputs + [comp_text + note], basis)

    def _nuts_steps(self, dtype) -> tuple[Band, list]:
        counts = P.nuts_counts(self.records, dtype)
        if not counts:
            raise _Why("no nuts.NutsLeapfrogStep anywhere in these results: no leapfrog step count for the "
                       "state-space model (it belongs to the sampler, so one machine's capture is enough)")
        own = [c for *_, dt, c in counts if dt == dtype] or [c for *_, c in counts]
        per_iter = [c / P.NUTS_DRAWS for *_, c in counts]
        mid = math.exp(sum(math.log(c / P.NUTS_DRAWS) for c in own) / len(own))
        band = Band.of(mid, min(per_iter), max(per_iter))
        seen = ", ".join(f"{dt} {c:,.0f} on {m} {d}" for m, d, dt, c in counts)
        return band, [f"leapfrog steps per iteration {mid:.1f} (band {band.low:.1f}-{band.high:.1f}: the float32 "
                      f"and float64 counts) from NutsLeapfrogStep's {P.NUTS_DRAWS} iterations ({seen}), a longer "
                      "warm-up adapts step size and mass matrix further, tree depth 8 caps it at 255"]

    def _device_machines(self, family, device, benchmarks) -> tuple[list[str], str]:
        """Machines with any of `benchmarks` on `device` (the family itself only when it is the sole one)."""
        have = sorted({r.machine for r in self.records if r.benchmark in benchmarks
                       and r.params.get("device", "cpu") == device})
        others = [m for m in have if m != family]
        return (others, "") if others or not have else (have, " [calibrated on this family itself]")

    def _nuts_per_step(self, family, dtype, device) -> tuple[Band, list, bool, str]:
        refs, note = self._device_machines(family, device, (P.NUTS_STEP, P.KALMAN))
        direct, proxy, inputs = [], [], []
        for m in refs:
            h, htext = self._host_ratio(m, family)
            b, text = P.nuts_cost(self.records, m, device, dtype)
            if b:
                direct.append(b.scale(h))
                inputs += [text, htext]
                continue
            k, ktext = P.kalman_grad(self.records, m, device, dtype)
            if k:
                proxy.append((k.scale(h), [f"proxy: {ktext} taken as one leapfrog step's work (a leapfrog step is "
                                           "one gradient of the same likelihood, NutsLeapfrogStep not measured "
                                           "there)", htext]))
        if direct:
            return combine(direct), inputs + ["per-step cost is latency-bound host work: carried"], False, note
        if proxy:
            return (combine([b for b, _ in proxy]), [t for _, ts in proxy for t in ts] + self._step_vs_grad(dtype)
                    + ["per-step cost latency-bound (launches of tiny ops): carried to the family unscaled"], True,
                    note)
        raise _Why(f"no nuts.NutsLeapfrogStep and no sequential Kalman gradient ({dtype}) on {device} in these "
                   "results")

    def _step_vs_grad(self, dtype) -> list[str]:
        """Where one machine measured both, how a leapfrog step compares with a Kalman gradient (a check of the
        proxy, not applied: the ratio on a CPU need not hold on a GPU)."""
        out = []
        for m, device, dt, _ in P.nuts_counts(self.records, dtype):
            b, _ = P.nuts_cost(self.records, m, device, dt)
            k, _ = P.kalman_grad(self.records, m, device, dt)
            if dt == dtype and b and k:
                out.append(f"check: on {m} {device} a leapfrog step costs {b.mid / k.mid:.2f} of a Kalman gradient")
        return out

    def _nuts_compile(self, family, dtype, device) -> tuple[Band, str]:
        for m in self._device_machines(family, device, (P.NUTS_COMPILE,))[0]:
            b, text = P.nuts_compile(self.records, m, device, dtype)
            if b:
                h, htext = self._host_ratio(m, family)
                h = h.mid if isinstance(h, Band) else h
                # sequential chains: compiled once (mid) up to once per chain of the incident's 4 (high end)
                return Band(b.mid * h, b.low * h, b.high * h * 4), f"{text}, once (high end: once per chain of 4)"
        return Band.of(0.0), f"compile not included: no NutsLeapfrogStep compile seconds on {device}"

    def _while(self, family, refs, note, n, dtype, device) -> _Est:
        from jaxci.analysis.work import while_iterations

        its = while_iterations(dtype)
        if its is None:
            raise _Why("the while loop's iteration count is computed with NumPy, which is not installed")
        steps = n if isinstance(n, int) and n > 0 else its
        bands, inputs, why = [], [], ""
        for m in refs:
            f, _ = P.floor(self.records, m, device, dtype)
            if f is None:
                continue
            per, why = P.while_cost(self.records, m, device, dtype, its, f.mid)
            if per is None:
                continue
            h, htext = self._host_ratio(m, family)
            bands.append((f + per.scale(float(steps))).scale(h))
            inputs += [why, htext]
        if not bands:
            raise _Why(why or f"no loops.WhileConverge on {device} in these results")
        inputs.append(f"iteration count {its} computed from the benchmark's fixed 25x25 matrix and tolerance 1e-6 "
                      "(NumPy restatement, jaxci.analysis.work.while_iterations); per-iteration cost latency-bound: "
                      "carried" + note)
        return _Est(combine(bands), inputs, f"floor + {steps} iterations x per-iteration cost")

    def _numpy_matmul(self, family, n, dtype) -> _Est:
        rate, labels = self._pub_rate(family, "cpu", E.NUMPY_GEMM, dtype=dtype)
        if rate is not None:
            return _Est(rate.inverse().scale(dense_flops("matmul", n)), labels, "FLOPs / published NumPy rate")
        on_family = self._numpy_from_published_jax(family, n, dtype)
        if on_family is not None:
            return on_family
        refs, note = self._host_refs(family)
        target = self.catalogue[family]
        bands, inputs, why = [], [], ""
        for m in refs:
            pt, why = P.numpy_gemm_point(self.records, m, dtype)
            if pt is None:
                continue
            scale, text = self._cpu_scale(m, target, dtype)
            bands.append(pt.rate.scale(scale).inverse().scale(dense_flops("matmul", n)))
            inputs.append(f"{pt.source}: {pt.rate.mid / 1e9:.0f} GFLOP/s, x{scale.mid:.2f} ({text})")
        if not bands:
            raise _Why(why or "no host.NumpyLinalg in these results")
        return _Est(combine(bands), inputs + ["the same CPU GEMM scaling as JAX's matmul (BLAS on all cores)" + note],
                    "FLOPs / (NumPy rate per physical core x cores)")

    def _numpy_from_published_jax(self, family, n, dtype) -> _Est | None:
        """NumPy's matmul from the family's own published JAX CPU matmul rate (float32) x NumPy's rate in `dtype`
        over JAX's float32 rate, both measured on the same machine here: the nearest evidence is the family's
        hardware, and only the ratio between the two libraries (and dtypes) is carried. None without both."""
        jax_rate, labels = self._pub_rate(family, "cpu", E.CPU_GEMM)
        if jax_rate is None:
            return None
        ratios, inputs = [], []
        for m in self._host_refs(family)[0]:
            numpy_pt, _ = P.numpy_gemm_point(self.records, m, dtype)
            floor, _ = P.floor(self.records, m, "cpu", "float32")
            jax_pts = P.gemm_points(self.records, m, "cpu", "float32", floor.mid if floor else 0.0)
            if numpy_pt is None or not jax_pts:
                continue
            jax_pt = jax_pts[0][1]
            ratios.append(numpy_pt.rate.scale(jax_pt.rate.inverse()))
            inputs.append(f"{numpy_pt.source} over {jax_pt.source} ({jax_pt.rate.mid / 1e9:.0f} GFLOP/s): "
                          f"NumPy {dtype} / JAX float32 x{ratios[-1].mid:.2f}")
        if not ratios:
            return None
        rate = jax_rate.scale(combine(ratios))
        return _Est(rate.inverse().scale(dense_flops("matmul", n)), labels + inputs,
                    "FLOPs / (published JAX CPU matmul rate x NumPy-over-JAX rate measured here)")

    def _pure_python(self, family, n) -> _Est:
        """host.PurePython int_sum moved only by a sourced single-thread ratio; without one, the measurement is
        quoted in the reason (a host score is never invented)."""
        refs, note = self._host_refs(family)
        bands, inputs, seen = [], [], []
        for m in refs:
            b, text = P.pure_python(self.records, m, n=n)
            if b is None:
                continue
            h, htext = self._host_ratio(m, family)
            if not htext.startswith("host single-thread ratio") or "published" in htext:
                seen.append(text)   # the published sum is this very figure: it moves nothing else here
                continue
            bands.append(b.scale(h))
            inputs += [text, htext]
        if not bands:
            raise _Why(f"pure-Python is a host single-thread score: {', '.join(seen) or 'host.PurePython not measured'}"
                       f", and no sourced cpu_single_thread_score for {family} and that machine moves it")
        return _Est(combine(bands), inputs + ["single-thread interpreter work" + note], "measured x host ratio")

    def _host_refs(self, family) -> tuple[list[str], str]:
        refs = sorted({r.machine for r in self.records if r.benchmark.startswith("host.")})
        others = [m for m in refs if m != family]
        if others:
            return others, ""
        if refs:
            return refs, " [calibrated on this family itself: not an independent check]"
        raise _Why("no host suite results (host.NumpyLinalg) in this results directory")
