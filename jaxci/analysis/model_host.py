"""The runner model's host-side and sampler terms: NUTS by leapfrog steps, NumPy's matmul through the CPU GEMM
scaling, the pure-Python probe (docs/runner-model.md). A mixin of jaxci.analysis.model.RunnerModel."""

from __future__ import annotations

import math

from jaxci.analysis import evidence as E
from jaxci.analysis import primitives as P
from jaxci.analysis import provenance as pv
from jaxci.analysis.estimate import Estimate, Unpredictable, others_first
from jaxci.analysis.host_speed import family_probe
from jaxci.analysis.model_reads import ModelReads
from jaxci.analysis.primitives import Band, combine
from jaxci.analysis.work import dense_flops


class HostTerms(ModelReads):
    def _nuts(self, family, iterations, dtype, device) -> Estimate:
        """iterations x leapfrog steps per iteration (any machine: the sampler's count) x seconds per step on the
        family's device (NutsLeapfrogStep on a ref of that device, else the Kalman gradient as proxy) + compile."""
        if not (isinstance(iterations, int) and iterations > 0):
            raise Unpredictable(
                "nuts needs n = the run's iterations (chains x (warm-up + samples); the incident: 4 x 800)")
        steps, inputs = self._nuts_steps(dtype)
        per, per_inputs, proxy, note = self._nuts_per_step(family, dtype, device)
        run = steps.scale(per).scale(float(iterations))
        comp, comp_text = self._nuts_compile(family, dtype, device)
        basis = "iterations x leapfrog steps per iteration x seconds per step" + (" (Kalman-gradient proxy)"
                                                                                  if proxy else "") + " + compile"
        return Estimate(run + comp, inputs + per_inputs + [pv.cite(f"{comp_text}{note}", comp_text)], basis)

    def _nuts_steps(self, dtype) -> tuple[Band, list]:
        counts = P.nuts_counts(self.records, dtype)
        if not counts:
            raise Unpredictable("no nuts.NutsLeapfrogStep anywhere in these results: no leapfrog step count for the "
                                "state-space model (it belongs to the sampler, so one machine's capture is enough)",
                                P.NUTS_STEPS)
        own = [c for *_, dt, c in counts if dt == dtype] or [c for *_, c in counts]
        per_iter = [c / P.NUTS_DRAWS for *_, c in counts]
        mid = math.exp(sum(math.log(c / P.NUTS_DRAWS) for c in own) / len(own))
        band = Band.of(mid, min(per_iter), max(per_iter))
        seen = ", ".join(f"{dt} {c:,.0f} on {m} {d}" for m, d, dt, c in counts)
        return band, [pv.cite(f"leapfrog steps per iteration {mid:.1f} (band {band.low:.1f}-{band.high:.1f}: the "
                              f"float32 and float64 counts) from NutsLeapfrogStep's {P.NUTS_DRAWS} iterations "
                              f"({seen}), a longer warm-up adapts step size and mass matrix further, tree depth 8 caps "
                              "it at 255", [pv.Source(pv.MEASURED, m) for m, *_ in counts])]

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
                inputs += [pv.measured(m, text), htext]
                continue
            k, ktext = P.kalman_grad(self.records, m, device, dtype)
            if k:
                proxy.append((k.scale(h), [pv.measured(m, f"proxy: {ktext} taken as one leapfrog step's work (a "
                                                          "leapfrog step is one gradient of the same likelihood, "
                                                          "NutsLeapfrogStep not measured there)"), htext]))
        if direct:
            return combine(direct), inputs + ["per-step cost is latency-bound host work: carried"], False, note
        if proxy:
            return (combine([b for b, _ in proxy]), [t for _, ts in proxy for t in ts] + self._step_vs_grad(dtype)
                    + ["per-step cost latency-bound (launches of tiny ops): carried to the family unscaled"], True,
                    note)
        raise Unpredictable(
            f"no nuts.NutsLeapfrogStep and no sequential Kalman gradient ({dtype}) on {device} in these "
            "results", P.NUTS_STEP)

    def _step_vs_grad(self, dtype) -> list[pv.Input]:
        """Where one machine measured both, how a leapfrog step compares with a Kalman gradient (a check of the
        proxy, not applied: the ratio on a CPU need not hold on a GPU)."""
        out = []
        for m, device, dt, _ in P.nuts_counts(self.records, dtype):
            b, _ = P.nuts_cost(self.records, m, device, dt)
            k, _ = P.kalman_grad(self.records, m, device, dt)
            if dt == dtype and b and k:
                out.append(pv.measured(m, f"check: on {m} {device} a leapfrog step costs {b.mid / k.mid:.2f} of a "
                                          "Kalman gradient"))
        return out

    def _nuts_compile(self, family, dtype, device) -> tuple[Band, pv.Input]:
        for m in self._device_machines(family, device, (P.NUTS_COMPILE,))[0]:
            b, text = P.nuts_compile(self.records, m, device, dtype)
            if b:
                h, htext = self._host_ratio(m, family)
                h = h.mid if isinstance(h, Band) else h
                # sequential chains: compiled once (mid) up to once per chain of the incident's 4 (high end)
                return Band(b.mid * h, b.low * h, b.high * h * 4), pv.measured(m, pv.cite(
                    f"{text}, once (high end: once per chain of 4)", htext))
        return Band.of(0.0), pv.Input(f"compile not included: no NutsLeapfrogStep compile seconds on {device}")

    def _numpy_matmul(self, family, n, dtype) -> Estimate:
        rate, labels = self._pub_rate(family, "cpu", E.NUMPY_GEMM, dtype=dtype)
        if rate is not None:
            return Estimate(rate.inverse().scale(dense_flops("matmul", n)), labels, "FLOPs / published NumPy rate")
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
            inputs.append(pv.measured(m, pv.cite(f"{pt.source}: {pt.rate.mid / 1e9:.0f} GFLOP/s, x{scale.mid:.2f} "
                                                 f"({text})", text)))
        if not bands:
            raise Unpredictable(why or "no host.NumpyLinalg in these results", P.HOST_LINALG)
        return Estimate(
            combine(bands), inputs + ["the same CPU GEMM scaling as JAX's matmul (BLAS on all cores)" + note],
            "FLOPs / (NumPy rate per physical core x cores)")

    def _numpy_from_published_jax(self, family, n, dtype) -> Estimate | None:
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
            inputs.append(pv.measured(m, f"{numpy_pt.source} over {jax_pt.source} ({jax_pt.rate.mid / 1e9:.0f} "
                                         f"GFLOP/s): NumPy {dtype} / JAX float32 x{ratios[-1].mid:.2f}"))
        if not ratios:
            return None
        rate = jax_rate.scale(combine(ratios))
        return Estimate(rate.inverse().scale(dense_flops("matmul", n)), labels + inputs,
                        "FLOPs / (published JAX CPU matmul rate x NumPy-over-JAX rate measured here)")

    def _pure_python(self, family, n) -> Estimate:
        """host.PurePython int_sum: the family's host probe (jaxci.analysis.host_speed.family_probe: published,
        carried within a CPU model or predicted through single-thread scores, the figure the audit's host factor
        divides) at n, a pure-Python loop's time being linear in its trip count; without one, a measured machine's
        sum moved by a sourced single-thread ratio; without that, the measurement is quoted in the reason (a host
        score is never invented)."""
        probe = family_probe(self.published, family)
        if probe is not None and probe.n:
            text = (f"{probe.label()}: {probe.value.mid:.3g} s ({probe.value.low:.3g}-{probe.value.high:.3g}) at "
                    f"n={probe.n:,}, x {n:,}/{probe.n:,} (a pure-Python loop's time is linear in its trip count)")
            return Estimate(probe.value.scale(n / probe.n), [pv.published(probe, text)],
                            "the family's host probe at n (the audit's host factor reads the same probe)")
        refs, note = self._host_refs(family)
        bands, inputs, seen = [], [], []
        for m in refs:
            b, text = P.pure_python(self.records, m, n=n)
            if b is None:
                continue
            h, htext = self._host_ratio(m, family)
            if not htext.sources or pv.rests_on(htext.sources, pv.PUBLISHED):
                seen.append(text)   # unscaled, or by the published sum, which is this very figure: nothing moves it
                continue
            bands.append(b.scale(h))
            inputs += [pv.measured(m, text), htext]
        if not bands:
            raise Unpredictable(
                f"pure-Python is a host single-thread score: {', '.join(seen) or 'host.PurePython not measured'}"
                f", and no sourced cpu_single_thread_score for {family} and that machine moves it")
        return Estimate(combine(bands), inputs + ["single-thread interpreter work" + note], "measured x host ratio")

    def _host_refs(self, family) -> tuple[list[str], str]:
        return others_first(family, sorted({r.machine for r in self.records if r.benchmark.startswith("host.")}),
                            Unpredictable("no host suite results (host.NumpyLinalg) in this results directory",
                                          P.HOST_LINALG))
