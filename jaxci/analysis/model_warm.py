"""The runner model's warm calls: GPU and CPU work of one executable, loops and the Kalman gradient, moved from
the reference machines to a family (docs/runner-model.md, "Equations"). A mixin of jaxci.analysis.model.RunnerModel:
it reads the model's records, references and published inputs through the methods the model defines."""

from __future__ import annotations

from jaxci.analysis import evidence as E
from jaxci.analysis import primitives as P
from jaxci.analysis import provenance as pv
from jaxci.analysis.estimate import Estimate, Unpredictable, geo
from jaxci.analysis.kernels import LOOP_KINDS
from jaxci.analysis.model_reads import ModelReads
from jaxci.analysis.peak import gemm_path
from jaxci.analysis.primitives import Band, combine
from jaxci.analysis.work import dense_flops, elementwise_bytes, elementwise_ops, while_iterations


class WarmTerms(ModelReads):
    # ---- warm calls ----

    def _warm(self, family, kernel, n, dtype, device, precision="default") -> Estimate:
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
            return Estimate(floor.band.scale(h), floor.inputs + [pv.cite(f"{text}{note}", text)],
                            "floor (dispatch.TinyOp)")
        if device == "gpu":
            work, inputs, basis = self._gpu_work(family, refs, kernel, n, dtype, precision)
        else:
            work, inputs, basis = self._cpu_work(family, refs, kernel, n, dtype)
        return Estimate(floor.band.scale(h) + work, floor.inputs + inputs + [pv.cite(f"{text}{note}", text)],
                        "floor + " + basis)

    def _floor_ratio(self, ref: str, family: str, device: str) -> tuple[float | Band, pv.Input]:
        """What moves a dispatch floor from the ref to the family: on a GPU the launch + sync latency ratio
        where the family's GPU has a published figure of it, else the host single-thread ratio."""
        if device == "gpu":
            ratio = self._latency_ratio(ref, family)
            if ratio is not None:
                return ratio
        return self._host_ratio(ref, family)

    def _latency_ratio(self, ref: str, family: str) -> tuple[Band, pv.Input] | None:
        """Family over ref for a GPU call's launch + sync latency: the family's published scalar-scan step over
        the ref's measured one. A step of that scan is three tiny launches and one device-to-host sync, the
        path a warm call's floor takes too (host dispatch included), and the published step was timed on the
        family's own host and driver; None where either side is missing."""
        step, labels = self._pub_rate(family, "gpu", E.SCAN_STEP)
        fit, why = P.loop_slope(self.records, ref, "gpu", "scan", "float32")
        if step is None or fit is None or fit[1].low <= 0:
            return None
        r = step.scale(fit[1].inverse())
        return r, pv.measured(ref, pv.cite(f"GPU launch + sync latency x{r.mid:.2f} ({r.low:.2f}-{r.high:.2f}), "
                                           f"{family} over {ref}: {', '.join(map(str, labels))} over {why}", labels))

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
            raise Unpredictable(f"{family}: {key} has no sourced figure ({src})")
        effs = []
        for m in refs:
            ref = self.catalogue.get(m)
            f, _ = P.floor(self.records, m, "gpu", dtype)
            if kernel == "matmul":
                pts = P.gemm_points(self.records, m, "gpu", dtype, f.mid)
            else:
                pt, why = P.dense_point(self.records, m, "gpu", kernel, dtype, f.mid)
                if pt is None:
                    raise Unpredictable(why, P.DENSE)
                pts = [("default", pt)]
            same = [(p, pt) for p, pt in pts if gemm_path(ref, dtype, p)[0] == path] if ref is not None else []
            for prec, pt in (same or pts):
                rpath, rkey, rpeak, _ = gemm_path(ref, dtype, prec)
                if rpeak is None:
                    continue
                eff = pt.rate.scale(1 / (rpeak * 1e9))
                effs.append(eff)
                inputs.append(pv.catalogue(m, pv.measured(m, f"{pt.source}: efficiency {eff.mid:.2f} of the {rpath} "
                                                              f"peak {rpeak / 1000:g} TFLOP/s, measured on {m}")))
        if not effs:
            raise Unpredictable(
                f"no measured GPU {kernel} {dtype} throughput point with a sourced peak on {', '.join(refs)}"
                " (a lab machine's peaks come from the catalogue including lab machines)", P.DENSE)
        eff = combine(effs)
        inputs.append(pv.catalogue(family, f"{family} {path} peak {peak / 1000:g} TFLOP/s (catalogue {key}: {src})"
                                           f"{floor_note}"))
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
        inputs.append(pv.catalogue(family, (
            f"XLA cost analysis of the op mix: {flops / n:g} flops + {trans / n:g} transcendentals per element, at "
            f"{family}'s {key} {peak:g}: {t_c * 1e3:.3g} ms (each transcendental one op: a lower bound) vs bandwidth "
            f"{t_bw.mid * 1e3:.3g} ms: {binds}-bound"
            + (f", arithmetic would bind above {even:.1f} ops per transcendental" if even > 0 else ""))))
        band = Band(max(t_bw.mid, t_c), max(t_bw.low, t_c), max(t_bw.high, t_c))
        return band, inputs, basis if binds == "bandwidth" else f"(flops + transcendentals) / {key}"

    def _gpu_bytes(self, family, refs, nbytes, dtype):
        entry = self.catalogue[family]
        rate, labels = self._pub_rate(family, "gpu", E.BANDWIDTH)
        if rate is not None:
            return rate.inverse().scale(nbytes), labels, f"bytes / published achieved bandwidth of {family}'s GPU"
        bw = entry.value("gpu_bandwidth_gbs")
        if bw is None:
            raise Unpredictable(f"{family}: gpu_bandwidth_gbs has no sourced figure")
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
                inputs.append(pv.catalogue(m, pv.measured(m, f"{pt.source}: {eff.mid:.2f} of {m}'s {rbw:g} GB/s")))
            else:
                lb, _ = P.op_mix_lower_bound(self.records, m, "gpu", dtype)
                if lb is None:
                    continue
                lo = min(lb.rate.mid / (float(rbw) * 1e9), 1.0)
                eff = Band(geo(lo, 1.0), lo, 1.0)
                inputs.append(pv.catalogue(m, pv.measured(m, (
                    f"{why}, bandwidth efficiency {lo:.2f}..1 of {m}'s {rbw:g} GB/s (lower end: {lb.source}, "
                    "floor included: a latency-bound point bounds the bandwidth from below only)"))))
            effs.append(eff)
        if not effs:
            raise Unpredictable(f"no measured GPU bandwidth or op mix on {', '.join(refs)} with a sourced bandwidth",
                                P.BANDWIDTH_T)
        eff = combine(effs)
        inputs.append(pv.catalogue(family, f"{family} bandwidth {bw:g} GB/s (catalogue)"))
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
                inputs.append(pv.measured(m, f"{pt.source}: {pt.rate.mid / 1e6:.0f} M elements/s, not scaled by "
                                             "cores (the op mix is arithmetic-bound and XLA:CPU barely spreads it)"))
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
            inputs.append(pv.measured(m, pv.cite(f"{pt.source}: {pt.rate.mid / 1e9:.0f} GFLOP/s on {m}, "
                                                 f"x{scale.mid:.2f} ({text})", text)))
        if not bands:
            raise Unpredictable(why or f"no CPU {kernel} {dtype} results to calibrate from",
                                P.ELEMENTWISE if kernel == "elementwise" else P.DENSE)
        basis = "n / element rate" if kernel == "elementwise" else "FLOPs / (rate per physical core x cores)"
        return combine(bands), inputs, basis

    def _cpu_scale(self, ref: str, target, dtype) -> tuple[Band, pv.Input]:
        if ref == target.name:
            return Band.of(1.0), pv.Input("same machine")
        key = "cpu_fp64_gflops" if dtype == "float64" else "cpu_fp32_gflops"
        r = self.catalogue.get(ref)
        tp, rp = target.value(key), (r.value(key) if r is not None else None)
        if tp and rp:
            return Band.of(float(tp) / float(rp)), pv.catalogue(ref, pv.catalogue(
                target.name, f"ratio of catalogue CPU peaks {tp} / {rp}"))
        tc, ttext = self._cores(target.name, target=True)
        rc, rtext = self._cores(ref, target=False)
        return tc.scale(rc.inverse()), pv.cite(f"{ttext} / {rtext}: same rate per physical core assumed", ttext, rtext)

    def _loop(self, family, refs, note, kind, n, dtype, device) -> Estimate:
        step, labels = self._pub_rate(family, device, E.SCAN_STEP) if kind == "scan" else (None, [])
        if step is not None:
            return Estimate(step.scale(float(n)), labels + ["published per-step cost of the family's own runner"],
                            "n x published per-step cost")
        bands, inputs, why = [], [], ""
        for m in refs:
            fit, why = P.loop_slope(self.records, m, device, kind, dtype)
            if fit is None:
                continue
            icpt, slope = fit
            h, htext = self._host_ratio(m, family)
            bands.append((icpt + slope.scale(n)).scale(h))
            inputs += [pv.measured(m, why), htext]
        if not bands:
            raise Unpredictable(why, P.LOOPS[kind][0] if kind in P.LOOPS else "")
        what = ("per-step cost is launch + sync latency (host and driver), carried unscaled: a faster GPU does "
                "not remove it") if device == "gpu" else "per-step cost is single-thread host work"
        return Estimate(combine(bands), inputs + [what + note], "intercept + n x per-step slope")

    def _kalman(self, family, refs, note, n, dtype, device) -> Estimate:
        steps = n or 96
        bands, inputs = [], []
        for m in refs:
            b, text = P.kalman_grad(self.records, m, device, dtype)
            if b:
                h, htext = self._host_ratio(m, family)
                bands.append(b.scale(h).scale(steps / 96))
                inputs += [pv.measured(m, text), htext]
        if not bands:
            raise Unpredictable(f"no sequential Kalman gradient (k = 11, n = 96, {dtype}) on {device} in these results",
                                P.KALMAN)
        return Estimate(combine(bands), inputs + ["a sequential scan of tiny ops: latency-bound, carried per step"
                                                  + note], "Kalman gradient x n / 96")

    def _while(self, family, refs, note, n, dtype, device) -> Estimate:
        its = while_iterations(dtype)
        if its is None:
            raise Unpredictable("the while loop's iteration count is computed with NumPy, which is not installed")
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
            inputs += [pv.measured(m, why), htext]
        if not bands:
            raise Unpredictable(why or f"no loops.WhileConverge on {device} in these results", P.WHILE)
        inputs.append(f"iteration count {its} computed from the benchmark's fixed 25x25 matrix and tolerance 1e-6 "
                      "(NumPy restatement, jaxci.analysis.work.while_iterations); per-iteration cost latency-bound: "
                      "carried" + note)
        return Estimate(combine(bands), inputs, f"floor + {steps} iterations x per-iteration cost")
