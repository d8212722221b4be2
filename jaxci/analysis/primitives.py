"""Measured primitives of the runner model, read from asv records: what one machine's results say about it.

A primitive is a `Band` (mid, low, high) with the sentence that says where it came from. Nothing here moves a
number to another machine (jaxci.analysis.model does that, through sourced catalogue ratios only).

- dispatch floor per machine and device: dispatch.TinyOp.time_warm (median; band q25..q75);
- throughput points: the largest measured size of a kernel whose time is at least LATENCY_FACTOR times both the
  dispatch floor and the kernel's own time at its smallest measured size (a launch-bound point is never a rate);
- GEMM rate per precision path: dense.Dense (JAX default precision) and dense.DensePrecision (precision
  default / highest) matmuls; the other dense ops (solve, Cholesky) from dense.Dense;
- achieved bandwidth: elementwise.Bandwidth (track_gbps, else bytes over time_warm) at a throughput point;
- elementwise op mix per-element rate: elementwise.Elementwise (elements per second, not bytes);
- loop per-step slope per loop kind: least squares of time over the n series (scan unroll 1, fori);
- compile + first call: compile.CompileColdStart (per kernel), compile.JitSeriesTotal (the fresh-jit series);
- NUTS per leapfrog step and step count: nuts.NutsLeapfrogStep; Kalman gradient: kalman.KalmanGrad;
- while loop per iteration: loops.WhileConverge over its iteration count (work.while_iterations);
- host: NumPy matmul FLOP/s (host.NumpyLinalg, all threads), pure-Python seconds (host.PurePython).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from jaxci.analysis.work import bandwidth_bytes, dense_flops, elementwise_bytes

LATENCY_FACTOR = 5.0   # a point is a throughput point when t >= 5 x its launch floor (floor <= 20 % of t)

TINY = "dispatch.TinyOp.time_warm"
DENSE = "dense.Dense.time_warm"
PRECISION = "dense.DensePrecision.time_warm"
ELEMENTWISE = "elementwise.Elementwise.time_warm"
BANDWIDTH_T = "elementwise.Bandwidth.time_warm"
SCAN = "loops.Scan.time_warm"
FORI = "loops.ForiAccumulate.time_warm"
WHILE = "loops.WhileConverge.time_warm"
COLD = "compile.CompileColdStart.timeraw_first_call"
SERIES = "compile.JitSeriesTotal.track_total_s"
KALMAN = "kalman.KalmanGrad.time_warm"
NUTS_STEP = "nuts.NutsLeapfrogStep.track_s_per_leapfrog_step"
NUTS_STEPS = "nuts.NutsLeapfrogStep.track_leapfrog_steps"
NUTS_COMPILE = "nuts.NutsLeapfrogStep.track_compile_s"
NUTS_DRAWS = 20        # NutsLeapfrogStep: 10 warm-up + 10 draws, one chain (benchmarks/nuts.py STEP_DRAWS)
HOST_LINALG = "host.NumpyLinalg.time_run"
HOST_PYTHON = "host.PurePython.time_run"
LOOPS = {"scan": (SCAN, {"unroll": 1}), "fori": (FORI, {})}

# Sizes the cold-start kernels run at (benchmarks/compile.py CompileColdStart.build, SERIES_SIZES): restated
# because analysis never imports benchmarks; the first call minus a warm call at this size is the compile part.
COLD_SIZES = {"matmul": 1000, "op_mix": 50_000_000, "scan": 100_000}
SERIES_SIZES = (100, 500, 1000, 2000, 3000)


@dataclass(frozen=True)
class Band:
    mid: float
    low: float
    high: float

    @staticmethod
    def of(value: float, low=None, high=None) -> Band:
        lo = value if low is None else min(low, value)
        hi = value if high is None else max(high, value)
        return Band(value, lo, hi)

    def scale(self, f: Band | float) -> Band:
        f = f if isinstance(f, Band) else Band(f, f, f)
        return Band(self.mid * f.mid, self.low * f.low, self.high * f.high)

    def inverse(self) -> Band:
        return Band(1 / self.mid, 1 / self.high, 1 / self.low)

    def __add__(self, other: Band) -> Band:
        return Band(self.mid + other.mid, self.low + other.low, self.high + other.high)

    def minus(self, other: Band) -> Band:
        """self - other, each end clipped at 0 (a compile part never goes negative)."""
        return Band(max(self.mid - other.mid, 0.0), max(self.low - other.high, 0.0), max(self.high - other.low, 0.0))


def combine(bands: list[Band]) -> Band:
    """Several machines' estimates of one quantity: geometric mean of the mids, the widest ends."""
    mids = [b.mid for b in bands if b.mid > 0]
    mid = math.exp(sum(math.log(m) for m in mids) / len(mids)) if mids else 0.0
    return Band(mid, min(b.low for b in bands), max(b.high for b in bands))


def band_of(rec) -> Band:
    return Band.of(rec.value, rec.q25, rec.q75)


@dataclass(frozen=True)
class RatePoint:
    """A throughput point: `rate` in work units per second over (time - floor), its band from the quartiles
    and from whether the floor is subtracted (low end: W / q75; high end: W / (q25 - floor))."""
    n: int
    seconds: float
    rate: Band
    source: str


def _ok(records, machine, benchmark, device, **fixed):
    return [r for r in records if r.machine == machine and r.benchmark == benchmark and r.ok and r.value is not None
            and r.params.get("device", device) == device and 0 < r.value < float("inf")
            and all(r.params.get(k) == v for k, v in fixed.items())]


def _quartiles(r) -> tuple[float, float]:
    """(q25, q75) of a record, its median where asv recorded none."""
    return (r.value if r.q25 is None else r.q25), (r.value if r.q75 is None else r.q75)


def floor(records, machine: str, device: str, dtype: str = "float32") -> tuple[Band | None, str]:
    recs = _ok(records, machine, TINY, device, dtype=dtype) or _ok(records, machine, TINY, device)
    if not recs:
        return None, f"{machine}: no dispatch.TinyOp on {device}"
    r = recs[0]
    return band_of(r), f"dispatch floor {r.value * 1e6:.1f} µs (TinyOp {r.params.get('dtype')}, {machine} {device})"


def throughput_point(recs, work, floor_s: float, what: str) -> tuple[RatePoint | None, str]:
    """The largest size whose time is >= LATENCY_FACTOR x max(floor, time at the smallest size)."""
    recs = sorted((r for r in recs if isinstance(r.params.get("n"), int)), key=lambda r: r.params["n"])
    if not recs:
        return None, f"{what}: not measured"
    smallest = recs[0].value if len(recs) > 1 else 0.0
    launch = max(floor_s, smallest)
    ok = [r for r in recs if r.value >= LATENCY_FACTOR * launch and (len(recs) == 1 or r is not recs[0])]
    if not ok:
        top = recs[-1]
        return None, (f"{what}: every measured size is latency-bound (largest n={top.params['n']:,} takes "
                      f"{top.value * 1e6:.0f} µs, under {LATENCY_FACTOR:g}x its launch floor {launch * 1e6:.0f} µs)")
    r = ok[-1]
    w = work(r.params["n"])
    q25, q75 = _quartiles(r)
    rate = Band(w / max(r.value - floor_s, r.value * 1e-3), w / max(q75, r.value),
                w / max(min(q25, r.value) - floor_s, r.value * 1e-3))
    return RatePoint(r.params["n"], r.value, rate, f"{what} at n={r.params['n']:,} ({r.value * 1e3:.3g} ms)"), ""


def gemm_points(records, machine, device, dtype, floor_s) -> list[tuple[str, RatePoint]]:
    """(precision, point) for the matmul series: dense.Dense (default precision) and each DensePrecision."""
    out = []
    p, _ = throughput_point(_ok(records, machine, DENSE, device, op="matmul", dtype=dtype),
                            lambda n: dense_flops("matmul", n), floor_s, f"{machine} {device} matmul {dtype}")
    if p:
        out.append(("default", p))
    for prec in ("default", "highest"):
        recs = _ok(records, machine, PRECISION, device, precision=prec, dtype=dtype)
        p, _ = throughput_point(recs, lambda n: dense_flops("matmul", n), floor_s,
                                f"{machine} {device} DensePrecision {prec} {dtype}")
        if p:
            out.append((prec, p))
    return out


def dense_point(records, machine, device, op, dtype, floor_s) -> tuple[RatePoint | None, str]:
    return throughput_point(_ok(records, machine, DENSE, device, op=op, dtype=dtype),
                            lambda n: dense_flops(op, n), floor_s, f"{machine} {device} {op} {dtype}")


def element_point(records, machine, device, dtype, floor_s) -> tuple[RatePoint | None, str]:
    """Op-mix elements per second at a throughput point."""
    return throughput_point(_ok(records, machine, ELEMENTWISE, device, dtype=dtype), float, floor_s,
                            f"{machine} {device} elementwise op mix {dtype}")


def element_rate_at(records, machine, device, dtype, n: int, floor_s: float) -> tuple[RatePoint | None, str]:
    """Op-mix elements per second at size n on the CPU: the machine's measured rates n_i / (t_i - floor),
    interpolated in log n - log rate between the measured sizes around n (held above the largest). The rate
    depends on the size (a 1e5-element op mix runs in cache, 5e7 elements from memory), so a line near a
    crossover at n ~ 1e4 must not take the rate of the largest size. Below the smallest size see `_below`."""
    recs = sorted((r for r in _ok(records, machine, ELEMENTWISE, device, dtype=dtype)
                   if isinstance(r.params.get("n"), int) and r.value > floor_s), key=lambda r: r.params["n"])
    if not recs:
        return None, f"{machine} {device} elementwise op mix {dtype}: not measured"
    if n < recs[0].params["n"] and len(recs) > 1:
        return _below(recs[0], recs[1], n, floor_s, f"{machine} {device} elementwise op mix {dtype}"), ""

    def rates(r):
        q25, q75 = _quartiles(r)
        k = r.params["n"]
        return (k / (r.value - floor_s), k / max(q75, r.value), k / max(min(q25, r.value) - floor_s, r.value * 1e-3))

    lo = max([r for r in recs if r.params["n"] <= n], key=lambda r: r.params["n"], default=recs[0])
    hi = min([r for r in recs if r.params["n"] >= n], key=lambda r: r.params["n"], default=recs[-1])
    a, b = rates(lo), rates(hi)
    na, nb = lo.params["n"], hi.params["n"]
    w = 0.0 if nb == na else (math.log(n) - math.log(na)) / (math.log(nb) - math.log(na))
    mid, low, high = (math.exp((1 - w) * math.log(x) + w * math.log(y)) for x, y in zip(a, b))
    where = f"n={na:,}" if na == nb else f"n={na:,}..{nb:,}"
    return RatePoint(n, 0.0, Band(mid, min(low, mid), max(high, mid)),
                     f"{machine} {device} elementwise op mix {dtype} at {where}"), ""


def _below(r0, r1, n: int, floor_s: float, what: str) -> RatePoint:
    """The op mix below a machine's smallest measured size n0: the line through its two smallest sizes (a fixed
    cost of the call plus a per-element cost, as the loops' intercept + slope), clipped to what the two ends
    allow. Holding the rate of n0 would take the call's whole fixed cost as the TinyOp floor; every CPU measured
    at 1e3 shows the op mix costing 6-12x TinyOp there. Band: the time of n0 held (q75: time does not fall as n
    grows) to the rate of n0 held (the fixed cost no more than the floor)."""
    n0, n1 = r0.params["n"], r1.params["n"]
    t0, t1 = r0.value, r1.value
    q75 = _quartiles(r0)[1]
    held = floor_s + (t0 - floor_s) * n / n0                      # the rate of n0 held: the fastest end
    line = t0 - (t1 - t0) / (n1 - n0) * (n0 - n)                  # fixed + per-element cost through n0, n1
    t = min(max(line, held), t0)

    def rate(sec):
        return n / max(sec - floor_s, sec * 1e-3)

    return RatePoint(n, t, Band(rate(t), rate(max(q75, t)), rate(held)),
                     f"{what} below its smallest size n={n0:,}: the line through n={n0:,} and {n1:,} "
                     f"({t * 1e6:.3g} µs at n={n:,}; band up to the time of n={n0:,} held)")


def op_mix_lower_bound(records, machine, device, dtype) -> tuple[RatePoint | None, str]:
    """The op mix's largest measured size as a lower bound on bandwidth (bytes / whole time, floor included)."""
    recs = sorted(_ok(records, machine, ELEMENTWISE, device, dtype=dtype), key=lambda r: r.params["n"])
    if not recs:
        return None, f"{machine} {device}: no elementwise op mix measured"
    r = recs[-1]
    b = elementwise_bytes(r.params["n"], dtype)
    text = f"op mix n={r.params['n']:,} {r.value * 1e6:.0f} µs"
    return RatePoint(r.params["n"], r.value, Band.of(b / r.value), text), ""


def bandwidth_point(records, machine, device, dtype, floor_s) -> tuple[RatePoint | None, str]:
    """Achieved bytes/s of elementwise.Bandwidth (axpy, else scale) at a throughput point."""
    for op in ("axpy", "scale"):
        recs = _ok(records, machine, BANDWIDTH_T, device, op=op, dtype=dtype)
        if recs:
            return throughput_point(recs, lambda n, op=op: bandwidth_bytes(op, n, dtype), floor_s,
                                    f"{machine} {device} Bandwidth {op} {dtype}")
    return None, f"{machine} {device}: elementwise.Bandwidth not measured (the second GPU capture adds it)"


def fit_line(points) -> tuple[float, float] | None:
    """Least squares t = a + b n; None with fewer than two sizes."""
    if len({n for n, _ in points}) < 2:
        return None
    k = len(points)
    mn = sum(n for n, _ in points) / k
    mt = sum(t for _, t in points) / k
    sxx = sum((n - mn) ** 2 for n, _ in points)
    b = sum((n - mn) * (t - mt) for n, t in points) / sxx
    return mt - b * mn, b


def loop_slope(records, machine, device, kind, dtype) -> tuple[tuple[Band, Band] | None, str]:
    """(intercept, per-step slope) of one loop kind over its n series; the band from fitting the q25 and q75
    series and from the other dtype's fit (the loops are latency-bound: dtype barely moves them)."""
    if kind not in LOOPS:
        return None, (f"{kind}: the suite times no n series for this loop kind (loops.WhileConverge runs to "
                      "convergence, its iteration count is not recorded): no per-step slope")
    bench, fixed = LOOPS[kind]
    fits = {}
    for dt in ("float32", "float64"):
        recs = _ok(records, machine, bench, device, dtype=dt, **fixed)
        mid = fit_line([(r.params["n"], r.value) for r in recs])
        if mid is None:
            continue
        lo = fit_line([(r.params["n"], _quartiles(r)[0]) for r in recs])
        hi = fit_line([(r.params["n"], _quartiles(r)[1]) for r in recs])
        if lo is None or hi is None:  # the same sizes as the middle's fit: never, unless a quartile is missing
            continue
        fits[dt] = (mid, lo, hi, max(r.params["n"] for r in recs))
    if not fits:
        return None, f"{machine} {device}: {kind} loop measured at fewer than two sizes"
    main = fits.get(dtype) or next(iter(fits.values()))
    slopes = [b for f in fits.values() for (_, b) in f[:3]]
    icpts = [a for f in fits.values() for (a, _) in f[:3]]
    slope = Band(max(main[0][1], 0.0), max(min(slopes), 0.0), max(slopes))
    icpt = Band(max(main[0][0], 0.0), max(min(icpts), 0.0), max(max(icpts), 0.0))
    return (icpt, slope), (f"{kind} per-step slope {slope.mid * 1e9:,.0f} ns fitted over n up to {main[3]:,} "
                           f"({machine} {device}, {'/'.join(sorted(fits))})")


def cold_call(records, machine, device, kernel, dtype) -> tuple[Band | None, str]:
    recs = _ok(records, machine, COLD, device, kernel=kernel, dtype=dtype) or \
        _ok(records, machine, COLD, device, kernel=kernel)
    if not recs:
        return None, f"{machine} {device}: no compile.CompileColdStart for {kernel}"
    r = recs[0]
    return band_of(r), f"cold first call of {kernel} {r.value:.3g} s ({machine} {device}, {r.params.get('dtype')})"


def series_total(records, machine, device, dtype) -> tuple[Band | None, str]:
    recs = _ok(records, machine, SERIES, device, dtype=dtype) or _ok(records, machine, SERIES, device)
    if not recs:
        return None, f"{machine} {device}: no compile.JitSeriesTotal"
    return band_of(recs[0]), f"fresh-jit series {recs[0].value:.3g} s ({machine} {device})"


def kalman_grad(records, machine, device, dtype, k=11, n=96) -> tuple[Band | None, str]:
    recs = _ok(records, machine, KALMAN, device, variant="sequential", k=k, n=n, dtype=dtype)
    if not recs:
        return None, f"{machine} {device}: no sequential Kalman gradient k={k}, n={n}, {dtype}"
    return band_of(recs[0]), f"Kalman gradient {recs[0].value * 1e3:.3g} ms ({machine} {device} {dtype})"


def nuts_counts(records, dtype: str) -> list[tuple[str, str, str, float]]:
    """(machine, device, dtype, leapfrog steps of NutsLeapfrogStep's 10 + 10 draws) on every machine and device:
    the count belongs to the sampler and the seed, not the device (devices differ only by rounding)."""
    return [(r.machine, r.params.get("device", "cpu"), r.params.get("dtype"), r.value) for r in records
            if r.benchmark == NUTS_STEPS and r.ok and r.value and r.value > 0]


def nuts_cost(records, machine, device, dtype) -> tuple[Band | None, str]:
    """Seconds per leapfrog step (NutsLeapfrogStep: executed seconds over steps, compile taken off)."""
    per = _ok(records, machine, NUTS_STEP, device, dtype=dtype)
    if not per:
        return None, f"{machine} {device}: nuts.NutsLeapfrogStep {dtype} not measured"
    return band_of(per[0]), f"{per[0].value * 1e3:.3g} ms per leapfrog step ({machine} {device} {dtype}, measured)"


def nuts_compile(records, machine, device, dtype) -> tuple[Band | None, str]:
    recs = _ok(records, machine, NUTS_COMPILE, device, dtype=dtype)
    if not recs:
        return None, f"{machine} {device}: no NutsLeapfrogStep compile seconds"
    return band_of(recs[0]), f"NUTS compile {recs[0].value:.3g} s ({machine} {device} {dtype})"


def while_cost(records, machine, device, dtype, iterations: int, floor_s: float) -> tuple[Band | None, str]:
    """Seconds per iteration of loops.WhileConverge: (time - floor) / its iteration count (computed from the
    benchmark's fixed matrix and tolerance, jaxci.analysis.work.while_iterations); the low end keeps the floor
    in, the high end takes it off the q75 time."""
    recs = _ok(records, machine, WHILE, device, dtype=dtype)
    if not recs:
        return None, f"{machine} {device}: loops.WhileConverge {dtype} not measured"
    r = recs[0]
    q25, q75 = _quartiles(r)
    per = Band(max(r.value - floor_s, 0.0) / iterations, max(q25 - floor_s, 0.0) / iterations, q75 / iterations)
    return per, (f"while loop {r.value * 1e6:,.0f} µs for its {iterations} iterations: "
                 f"{per.mid * 1e6:.3g} µs per iteration after the floor ({machine} {device} {dtype})")


def numpy_gemm_point(records, machine, dtype) -> tuple[RatePoint | None, str]:
    """NumPy (BLAS) matmul FLOP/s at all threads, largest measured n (host.NumpyLinalg; no dispatch floor)."""
    recs = sorted(_ok(records, machine, HOST_LINALG, "cpu", op="matmul", threads="all", dtype=dtype),
                  key=lambda r: r.params["n"])
    if not recs:
        return None, f"{machine}: host.NumpyLinalg matmul {dtype} at threads=all not measured"
    r = recs[-1]
    w = dense_flops("matmul", r.params["n"])
    q25, q75 = _quartiles(r)
    one = [x for x in _ok(records, machine, HOST_LINALG, "cpu", op="matmul", threads="1", dtype=dtype)
           if x.params["n"] == r.params["n"]]
    extra = f" (one thread {w / one[0].value / 1e9:.0f} GFLOP/s)" if one else ""
    return RatePoint(
        r.params["n"], r.value, Band(w / r.value, w / q75, w / q25),
        f"{machine} NumPy matmul {dtype} n={r.params['n']:,} all threads {r.value * 1e3:.3g} ms{extra}"), ""


def pure_python(records, machine, kernel="int_sum", n=10_000_000) -> tuple[Band | None, str]:
    recs = [r for r in _ok(records, machine, HOST_PYTHON, "cpu", kernel=kernel) if r.params.get("n") == n]
    if not recs:
        return None, f"{machine}: host.PurePython {kernel} n={n:,} not measured"
    return band_of(recs[0]), f"host.PurePython {kernel} n={n:,} {recs[0].value:.3g} s on {machine}"
