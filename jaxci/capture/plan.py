"""The capture's plan: the steps in priority order, each with its question, the runner-model primitive it
feeds, its parameter combinations (asv's names for them) or command, and the work per benchmark process the
scheduler's estimates start from.

Two captures so far: the first (results/lab-h200, commit 024bc0aa) answered the seven questions on an H200;
the second measures the primitives the runner model needs to carry that evidence to a T4, A10G or L4 (true
FP32 GEMM, achieved bandwidth, NUTS per leapfrog step, kernel time vs gaps, autotuning's share of a compile)
and what the first could not reach (whole notebooks, the fraction policy, N = 4, the cache as the jax-env
action sets it). Steps the first capture measured are skipped unless asked for by name (`--only`)."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace


def combo(bench: str, *params) -> str:
    """asv's name for one parameter combination: `module.Class.method(repr(p0), repr(p1), ...)`."""
    return f"{bench}({', '.join(repr(p) for p in params)})"


@dataclass(frozen=True)
class CaptureStep:
    name: str
    question: str
    combos: tuple[str, ...]
    work_s: float                 # seconds per benchmark process beyond starting JAX on its device
    env: tuple = ()               # extra environment (name, value) pairs
    attrs: tuple = ("repeat=(1,5,1.0)", "warmup_time=0.05", "rounds=1")
    per_work: int = 1             # combinations sharing one heavy process (the others read its numbers)
    batches: tuple = ()           # (device, sequential batches, work s each) run once in a setup_cache
    primitive: str = ""           # the runner-model input it measures (docs/runner-model.md)
    call: int = 1                 # which device call of the second capture runs it (each at most 9 minutes)
    measured: str = ""            # where an earlier capture measured it: skipped unless asked for by name
    command: tuple = ()           # a non-asv step: `python -m ARGS...`, its JSON kept in the artifacts
    gpu_only: bool = False        # asks a GPU-only question (XLA's GPU autotuner): left out on another accelerator

    def devices(self) -> list[str]:
        """The device of each combination; a command step's, from its batches (it runs once per device)."""
        if self.is_command:
            return [device for device, _, _ in self.batches]
        return [device_of(c) for c in self.combos]

    @property
    def is_command(self) -> bool:
        return bool(self.command)

    def suites(self) -> set[str]:
        return {c.split(".")[0] for c in self.combos}

    def regexes(self, scale_done: set | frozenset = frozenset()) -> list[str]:
        """The combinations, and each suite's `track_scale` run fact unless an earlier step recorded it (a
        later step cut at its deadline would overwrite it with a failure)."""
        return ["^" + re.escape(c) + "$" for c in self.combos] + \
            [rf"^{s}\.track_scale$" for s in sorted(self.suites() - set(scale_done))]


def device_of(name: str) -> str:
    """The device param of an asv combination name: always its last param (tests/test_common.py)."""
    return name.rsplit("(", 1)[-1].rstrip(")").rsplit(",", 1)[-1].strip().strip("'\"")


def for_device(steps: list[CaptureStep], device: str) -> list[CaptureStep]:
    """The plan written for a GPU, for this machine's accelerator device param (jaxci.accel): each gpu combination
    and batch becomes the accelerator's, and a GPU-only step is left out. Unchanged for a GPU."""
    if device == "gpu":
        return steps
    swap = lambda c: c[: -len("'gpu')")] + f"'{device}')" if c.endswith("'gpu')") else c
    return [replace(s, combos=tuple(swap(c) for c in s.combos),
                    batches=tuple((device if d == "gpu" else d, n, w) for d, n, w in s.batches))
            for s in steps if not s.gpu_only]


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


def _concurrency() -> CaptureStep:
    conc = [combo(f"concurrency.Concurrency.{m}", n, p, d) for m in CONC_TRACKS for n in (1, 2, 3)
            for p, d in (("default", "cpu"), ("default", "gpu"), ("no-prealloc", "gpu"))]
    return CaptureStep("concurrency", "3: N = 1..3 workers under default and no-prealloc (the preallocation race)",
                       tuple(conc), 0.0, env=(("JAXCI_POLICIES", "default,no-prealloc"), ("JAXCI_MAX_WORKERS", "3")),
                       attrs=(), per_work=10**6, batches=(("cpu", 4, 8.0), ("gpu", 8, 4.0)))


def _nuts() -> list[CaptureStep]:
    """One step per chain method: a sampler that overruns loses only its own step."""
    return [CaptureStep(
        f"nuts-{ch_m[:3]}{ch}", f"4: NUTS {ch_m} x {ch} chain(s) on the small model, 200 draws (float64)",
        tuple(_tracks("nuts.Nuts", NUTS_TRACKS, "regression", ch_m, ch, 200, "float64")), 40.0, attrs=(),
        per_work=3)
            for ch_m, ch in (("sequential", 1), ("vectorized", 4), ("parallel", 4), ("sequential", 4))]


def _compile() -> CaptureStep:
    cold = [c for k in ("matmul", "op_mix", "scan", "kalman_grad")
            for c in _both("compile.CompileColdStart.timeraw_first_call", k, "float32")]
    series = _both("compile.JitSeriesTotal.track_total_s", "float32") + \
        _tracks("compile.PersistentCache", ("track_cold_s", "track_warm_s", "track_compile_saved_s"), "float32")
    return CaptureStep("compile", "5: cold first calls, a lecture-like jit series, the persistent cache",
                       tuple(cold + series), 6.0, attrs=("repeat=(1,3,10.0)", "rounds=1"))


def _extra() -> CaptureStep:
    extra = [c for op in ("solve", "cholesky") for n in (256, 1024) for dt in ("float32", "float64")
             for c in _both("dense.Dense.time_warm", op, n, dt)]
    extra += [c for n in (1, 100) for d in ("h2d", "d2h") for c in _both("dispatch.Transfer.time_transfer", d, n)]
    return CaptureStep("extra", "2: solve, Cholesky and transfers (if time is left)", tuple(extra), 1.5,
                       attrs=("repeat=(1,5,1.0)", "rounds=1"))


FIRST = "results/lab-h200 (the first capture, commit 024bc0aa)"


def first() -> list[CaptureStep]:
    """The first capture's steps in priority order (the seven questions: crossover first, then FP64, incident
    shapes, concurrency, sampler, compile)."""
    steps = [
        CaptureStep("sanity", "first: both devices start and dispatch (a broken GPU shows here, cheaply)",
                    tuple(_both("dispatch.TinyOp.time_warm", "float32")), 1.0),
        CaptureStep(
            "crossover-f32", "2: crossover of memory-bound (op mix) and compute-bound (matmul) kernels (float32)",
            tuple(_kernels("float32")), 3.0),
        CaptureStep("loops-f32", "2: scan, fori and while per-step cost (float32)", tuple(_loops("float32")), 2.0),
        CaptureStep("crossover-f64", "1: FP64 penalty on the same kernels and dispatch (float64)",
                    tuple(_kernels("float64") + _both("dispatch.TinyOp.time_warm", "float64")), 3.0),
        CaptureStep("loops-f64", "1: FP64 penalty on the loops (float64)", tuple(_loops("float64")), 2.0),
        CaptureStep("kalman-seq", "1+2: Kalman gradient at the incident shape (k=11, n=96), sequential lax.scan",
                    _kalman("sequential"), 6.0),
        CaptureStep("kalman-par", "1+2: the same gradient, parallel-in-time lax.associative_scan (compiles longer)",
                    _kalman("parallel"), 15.0),
        _concurrency(),
        *_nuts(),
        _compile(),
        _extra(),
    ]
    return [replace(s, measured=FIRST) for s in steps]


def _precision() -> CaptureStep:
    """float32 matmul at JAX's default precision (TF32 on Ampere and later) and at `highest` (true FP32), and
    float64, at sizes past the launch-bound range; the CPU at the sizes it can do in a capture step."""
    gpu = [combo("dense.DensePrecision.time_warm", p, n, "float32", "gpu")
           for p in ("default", "highest") for n in (2048, 4096, 8192)]
    gpu += [combo("dense.DensePrecision.time_warm", "default", n, "float64", "gpu") for n in (4096, 8192)]
    cpu = [combo("dense.DensePrecision.time_warm", "default", n, dt, "cpu") for n in (2048, 4096)
           for dt in ("float32", "float64")]
    return CaptureStep("gemm-precision", "2+6: matmul rate per precision path (TF32 vs true FP32 vs FP64)",
                       tuple(gpu + cpu), 4.0, primitive="GEMM rate per precision path (large n)", call=1)


def _bandwidth() -> CaptureStep:
    sizes = {"axpy": (10_000_000, 100_000_000), "scale": (100_000_000,)}  # GB/s follows from time and bytes
    combos = [c for op, ns in sizes.items() for n in ns for dt in ("float32", "float64")
              for c in _both("elementwise.Bandwidth.time_warm", op, n, dt)]
    return CaptureStep("bandwidth", "2+6: achieved memory bandwidth at sizes that are not launch-bound (up to 800 MB)",
                       tuple(combos), 4.0, primitive="achieved bandwidth (GB/s) per device", call=1)


def _nuts_step() -> CaptureStep:
    tracks = ("track_s_per_leapfrog_step", "track_leapfrog_steps", "track_compile_s")
    combos = [c for m in tracks for dt in ("float64", "float32")
              for c in _both(f"nuts.NutsLeapfrogStep.{m}", dt)]
    # one sampler run per (dtype, device), its three tracks read by the other processes: ~1,000 float64 steps,
    # 2-3 ms each on a 2-core CPU and ~40 ms each on the H200 (the first capture's Kalman gradient), + compile
    return CaptureStep(
        "nuts-step", "4 (incident 2): seconds per leapfrog step of the 11-state model (k=11, 96 quarters, "
        "dense mass, depth 8)", tuple(combos), 35.0, attrs=(), per_work=3,
        primitive="NUTS cost per leapfrog step", call=1)


def _profiles() -> CaptureStep:
    return CaptureStep(
        "profile", "kernel time vs gaps: is a scan step's ~8 us launch, sync or device work?", (), 0.0,
        attrs=(), batches=(("cpu", 2, 6.0), ("gpu", 2, 8.0)), primitive="per-launch cost and device time "
        "per kernel (jax.profiler)", call=1,
        command=("jaxci.capture.profiles", "scan:float32", "kalman-grad:float64"))


def _autotune() -> CaptureStep:
    combos = [combo(f"compile.AutotuneCompile.{m}", a, k, dt, "gpu")
              for m in ("track_trace_s", "track_lower_s", "track_backend_s") for a in ("default", "off")
              for k, dt in (("matmul", "float32"), ("kalman_grad", "float64"))]
    combos += [combo("compile.AutotuneCompile.track_backend_s", "default", k, dt, "cpu")
               for k, dt in (("matmul", "float32"), ("kalman_grad", "float64"))]
    return CaptureStep("autotune", "5: compile stages with XLA's GPU autotuning on and off (what moves between GPUs)",
                       tuple(combos), 8.0, attrs=("repeat=(1,3,10.0)", "rounds=1"), per_work=3,
                       primitive="compile stage seconds per device, autotune share", call=2, gpu_only=True)


def _fraction() -> CaptureStep:
    conc = [combo(f"concurrency.Concurrency.{m}", n, p, "gpu") for m in CONC_TRACKS for n in (1, 2, 3, 4)
            for p in ("fraction", "default")]
    conc += [combo(f"concurrency.Concurrency.{m}", 4, "no-prealloc", "gpu") for m in CONC_TRACKS]
    return CaptureStep(
        "concurrency-fraction", "3: the fraction policy jaxci env recommends, N = 1..4, beside the default",
        tuple(conc), 0.0, env=(("JAXCI_POLICIES", "fraction,default,no-prealloc"),
        ("JAXCI_MAX_WORKERS", "4")),
        # the suite's setup_cache runs 1 + N = 1..4 worker batches per (policy, device): three GPU
        # policies and the CPU's default (the first capture: ~7 s a batch of 3 GiB lecture-like workers)
        attrs=(), per_work=10**6, batches=(("cpu", 5, 8.0), ("gpu", 15, 5.0)),
        primitive="safe N and slowdown per policy", call=2)


def _cache() -> CaptureStep:
    combos = [c for dt in ("float32", "float64") for c in
              _tracks("compile.PersistentCache", ("track_cold_s", "track_warm_s", "track_compile_saved_s",
                                                  "track_warm_cache_hits"), dt)]
    return CaptureStep("cache", "5: the persistent cache as the jax-env action sets it (every compile cached)",
                       tuple(c for c in combos if "float64" in c or c.endswith("'gpu')")), 10.0,
                       attrs=("repeat=(1,3,10.0)", "rounds=1"), per_work=4,
                       primitive="compile seconds saved per lecture-like series", call=2)


NOTEBOOKS = ("elementwise_f64", "grid_scan", "nuts_f64", "fresh_compiles")  # benchmarks/notebook_fixtures


def _notebooks() -> list[CaptureStep]:
    """Whole notebooks (each a fresh kernel per timed run), then their compile/run split (one process for all)."""
    # the NUTS notebook whole is ~100 compilations (minutes on a GPU); its split below still times it once
    whole = [c for nb in NOTEBOOKS if nb != "nuts_f64" for c in _both("notebooks.Notebook.time_notebook", nb)]
    split = [c for m in ("track_compile_s", "track_run_s") for nb in NOTEBOOKS
             for c in _both(f"notebooks.NotebookSplit.{m}", nb)]
    return [CaptureStep("notebooks", "7: whole notebooks through a Jupyter kernel on the GPU", tuple(whole), 12.0,
                        attrs=("repeat=(1,2,10.0)", "rounds=1"), primitive="whole-lecture seconds per device", call=2),
            CaptureStep(
                "notebooks-split", "5+7: the same notebooks' compile vs run seconds per cell", tuple(split), 0.0,
                attrs=(), per_work=10**6, batches=(("cpu", 1, 45.0), ("gpu", 1, 45.0)),
                primitive="compile and run seconds of a lecture per device", call=2)]


def second() -> list[CaptureStep]:
    """The second capture in priority order: call 1 the runner model's primitives, call 2 the rest."""
    sanity = replace(first()[0], measured="", primitive="dispatch floor per device (TinyOp)", call=1)
    return [sanity, _precision(), _bandwidth(), _nuts_step(), _profiles(),
            _autotune(), _fraction(), _cache(), *_notebooks()]


def plan() -> list[CaptureStep]:
    """Every step the capture knows: the second capture's, then the first's (skipped unless named)."""
    steps: dict = {}
    for step in second() + first():
        steps.setdefault(step.name, step)
    return list(steps.values())


def select(steps: list[CaptureStep], only: str | None, call: int | None = None) -> list[CaptureStep]:
    """The steps whose names match the regex `only`; without one, those no earlier capture measured, of
    device call `call` when given (the second capture spends its loan in two calls)."""
    if only:
        return [s for s in steps if re.search(only, s.name)]
    return [s for s in steps if not s.measured and (call is None or s.call == call)]
