"""The capture's plan: the steps in priority order, each with its question, its parameter combinations (asv's
names for them) and the work per benchmark process the scheduler's estimates start from."""

from __future__ import annotations

import re
from dataclasses import dataclass


def combo(bench: str, *params) -> str:
    """asv's name for one parameter combination: `module.Class.method(repr(p0), repr(p1), ...)`."""
    return f"{bench}({', '.join(repr(p) for p in params)})"


@dataclass(frozen=True)
class Step:
    name: str
    question: str
    combos: tuple[str, ...]
    work_s: float                 # seconds per benchmark process beyond starting JAX on its device
    env: tuple = ()               # extra environment (name, value) pairs
    attrs: tuple = ("repeat=(1,5,1.0)", "warmup_time=0.05", "rounds=1")
    per_work: int = 1             # combinations sharing one heavy process (the others read its numbers)
    batches: tuple = ()           # (device, sequential batches, work s each) run once in a setup_cache

    def devices(self) -> list[str]:
        return [("gpu" if c.endswith("'gpu')") else "cpu") for c in self.combos]

    def suites(self) -> set[str]:
        return {c.split(".")[0] for c in self.combos}

    def regexes(self, scale_done: set = frozenset()) -> list[str]:
        """The combinations, and each suite's `track_scale` run fact unless an earlier step recorded it (a
        later step cut at its deadline would overwrite it with a failure)."""
        return ["^" + re.escape(c) + "$" for c in self.combos] + \
            [rf"^{s}\.track_scale$" for s in sorted(self.suites() - set(scale_done))]


def _both(bench: str, *params) -> list[str]:
    return [combo(bench, *params, d) for d in ("cpu", "gpu")]


def _kernels(dtype: str) -> list[str]:
    """The crossover kernels at sizes that bracket a break-even on a fast GPU, one dtype, both devices."""
    out = []
    for n in (10_000, 100_000, 1_000_000, 10_000_000):
        out += _both("elementwise.Elementwise.time_warm", n, dtype)
    for n in (64, 256, 1024, 4096):
        out += _both("dense.Dense.time_warm", "matmul", n, dtype)
    return out


def _loops(dtype: str) -> list[str]:
    out = []
    for n in (1_000, 10_000, 100_000):
        out += _both("loops.Scan.time_warm", n, 1, dtype)
    for n in (1_000, 10_000, 100_000):
        out += _both("loops.ForiAccumulate.time_warm", n, dtype)
    out += _both("loops.WhileConverge.time_warm", dtype)
    return out


def _tracks(cls: str, methods: tuple[str, ...], *params) -> list[str]:
    return [c for m in methods for c in _both(f"{cls}.{m}", *params)]


NUTS_TRACKS = ("track_wall_s", "track_ess_per_s", "track_leapfrog_steps_per_s")
CONC_TRACKS = ("track_workers_died", "track_slowdown", "track_peak_memory_mib")


def _kalman(method: str) -> tuple[str, ...]:
    """The Kalman gradient at the incident shape (k=11, n=96), both dtypes, both devices."""
    return tuple(combo("kalman.KalmanGrad.time_warm", method, 11, 96, dt, d)
                 for dt in ("float32", "float64") for d in ("cpu", "gpu"))


def _concurrency() -> Step:
    conc = [combo(f"concurrency.Concurrency.{m}", n, p, d) for m in CONC_TRACKS for n in (1, 2, 3)
            for p, d in (("default", "cpu"), ("default", "gpu"), ("no-prealloc", "gpu"))]
    return Step("concurrency", "3: N = 1..3 workers under default and no-prealloc (the preallocation race)",
                tuple(conc), 0.0, env=(("JAXCI_POLICIES", "default,no-prealloc"), ("JAXCI_MAX_WORKERS", "3")),
                attrs=(), per_work=10**6, batches=(("cpu", 4, 8.0), ("gpu", 8, 4.0)))


def _nuts() -> list[Step]:
    """One step per chain method: a sampler that overruns loses only its own step."""
    return [Step(f"nuts-{ch_m[:3]}{ch}", f"4: NUTS {ch_m} x {ch} chain(s) on the small model, 200 draws (float64)",
                 tuple(_tracks("nuts.Nuts", NUTS_TRACKS, "regression", ch_m, ch, 200, "float64")), 40.0, attrs=(),
                 per_work=3)
            for ch_m, ch in (("sequential", 1), ("vectorized", 4), ("parallel", 4), ("sequential", 4))]


def _compile() -> Step:
    cold = [c for k in ("matmul", "op_mix", "scan", "kalman_grad")
            for c in _both("compile.CompileColdStart.timeraw_first_call", k, "float32")]
    series = _both("compile.JitSeriesTotal.track_total_s", "float32") + \
        _tracks("compile.PersistentCache", ("track_cold_s", "track_warm_s", "track_compile_saved_s"), "float32")
    return Step("compile", "5: cold first calls, a lecture-like jit series, the persistent cache",
                tuple(cold + series), 6.0, attrs=("repeat=(1,3,10.0)", "rounds=1"))


def _extra() -> Step:
    extra = [c for op in ("solve", "cholesky") for n in (256, 1024) for dt in ("float32", "float64")
             for c in _both("dense.Dense.time_warm", op, n, dt)]
    extra += [c for n in (1, 100) for d in ("h2d", "d2h") for c in _both("dispatch.Transfer.time_transfer", d, n)]
    return Step("extra", "2: solve, Cholesky and transfers (if time is left)", tuple(extra), 1.5,
                attrs=("repeat=(1,5,1.0)", "rounds=1"))


def plan() -> list[Step]:
    """The steps in priority order (the seven questions: crossover first, then FP64, incident shapes,
    concurrency, sampler, compile); the capture runs them in this order while the budget allows."""
    return [
        Step("sanity", "first: both devices start and dispatch (a broken GPU shows here, cheaply)",
             tuple(_both("dispatch.TinyOp.time_warm", "float32")), 1.0),
        Step("crossover-f32", "2: crossover of memory-bound (op mix) and compute-bound (matmul) kernels (float32)",
             tuple(_kernels("float32")), 3.0),
        Step("loops-f32", "2: scan, fori and while per-step cost (float32)", tuple(_loops("float32")), 2.0),
        Step("crossover-f64", "1: FP64 penalty on the same kernels and dispatch (float64)",
             tuple(_kernels("float64") + _both("dispatch.TinyOp.time_warm", "float64")), 3.0),
        Step("loops-f64", "1: FP64 penalty on the loops (float64)", tuple(_loops("float64")), 2.0),
        Step("kalman-seq", "1+2: Kalman gradient at the incident shape (k=11, n=96), sequential lax.scan",
             _kalman("sequential"), 6.0),
        Step("kalman-par", "1+2: the same gradient, parallel-in-time lax.associative_scan (compiles longer)",
             _kalman("parallel"), 15.0),
        _concurrency(),
        *_nuts(),
        _compile(),
        _extra(),
    ]


def select(steps: list[Step], only: str | None) -> list[Step]:
    """The steps whose names match the regex `only` (all of them without one)."""
    return [s for s in steps if not only or re.search(only, s.name)]
