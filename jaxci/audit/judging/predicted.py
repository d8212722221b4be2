"""A predicted CPU and GPU time per executed lecture on one runner family (and on Colab's free tier), from what the
instrumented run measured (jaxci.audit.runner.hooks) and the runner model (jaxci.audit.judging.family.RunnerView).

    T(device) = start-up: the kernel's start and the CPU client's start-up as measured here (on either device: a
                fresh kernel pays them wherever it runs), the first compile in a fresh process, once per kernel
              + backend (GPU): the CUDA client's start-up (the runner model's `backend_start`), once per kernel,
                where the lecture started a backend; modelled, so the host factor never moves it
              + compile: each further compilation at this run's measured seconds per compilation x the device's
                compile ratio (CPU 1; GPU: the geometric mean of the published same-source GPU / CPU pairs, their
                range as band; without them 1 .. first-compile GPU / CPU, geometric middle)
              + calls: per jitted call signature, calls x (its executable's time + its loops); on the CPU side of a
                CPU run, calls x this run's own waited time per call (the warm call, else the first less its compile)
              + loops: top-level lax loops, times run x (loop(trips) + trips x work per step)
              + sampler: a library sampler's runs (numpyro's MCMC.run) less their compiles, as this run measured
                them (GPU: x the latency-bound GPU / CPU ratio, between the dispatch floor's and the scalar scan
                step's; this host's seconds, so they move with the host factor)
              + leapfrog (GPU): in place of `sampler` for the HMC / NUTS runs whose leapfrog steps the hooks
                counted: serial steps x predicate reads per step x the family's while-loop turn
                (jaxci.audit.judging.leapfrog); modelled, so the host factor never moves it
              + eager: a cell's time outside its jitted calls, compile, start-up and import, less its loops and
                less what its main thread spent on the CPU beyond those (host code: `host`) (GPU: moved by the
                elementwise speed-up at its largest eager operand, band none .. all of it)
              + host: what no JAX part accounts for, as this run measured it on either device: `import jax` and
                the host code (Python, NumPy, plots) of cells without loops or eager JAX work, beside the loops
                of a cell predicted for another device, and the main thread's CPU seconds beyond a cell's JAX parts
On the CPU side of a CPU run, a cell's top-level loops and eager work stand as this run measured them. So
cpu_s and gpu_s are the whole lecture's seconds on each side (its cells), which build times add up.

An executable's time is the model's elementwise time at the elements it moves (XLA's bytes accessed / 2 / itemsize,
at least its largest argument), or a matmul of the order whose FLOPs match XLA's count when it is compute-heavy
(more than 10 FLOPs per byte). A loop step's work is the elementwise time at its carry (read through vmap; the
static scan's closed-over arrays where larger) less the dispatch floor. Every figure is labelled "predicted" with
its inputs and band; it never fills a measured cell.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from jaxci.analysis.prediction import PARTS, LecturePrediction, PredictedSide  # PARTS: the registry's names
from jaxci.audit.judging.call_seconds import call_seconds, filled_seconds, known_calls
from jaxci.audit.judging.compile_time import compile_time, overhead_s, placed_on_cpu
from jaxci.audit.judging.moved_work import dtype_of, eager_time, sampler_time
from jaxci.audit.reading.cell_records import JitCall, TracedLoop

if TYPE_CHECKING:
    from jaxci.audit.judging.family import RunnerView

ITEM = {"float32": 4, "float64": 8}
#: a measured cell this slow (seconds) is never "trivial", whatever the static class says
SLOW_CELL_S = 10.0
#: kernels in one step of the scalar scan whose per-step cost stands for one launch: docs/reference/incidents.md,
#: incident 1 (the T4 runner's 8 µs step: "three tiny kernels per iteration ... the rest launch gaps")
SCAN_STEP_KERNELS = 3


@dataclass
class Sum:
    mid: float = 0.0
    low: float = 0.0
    high: float = 0.0
    missing: list = field(default_factory=list)
    parts: dict = field(default_factory=lambda: dict.fromkeys(PARTS, 0.0))
    inputs: list = field(default_factory=list)  # labelled inputs a part took beyond this run (e.g. published)

    def add(self, part: str, p, times: float = 1.0, less=None) -> None:
        if not p:
            self.missing.append(p.reason)
            return
        cut = less.seconds if less else 0.0
        self.seconds(part, times * max(p.seconds - cut, 0.0),
                     times * max((p.low if p.low is not None else p.seconds) - cut, 0.0),
                     times * max((p.high if p.high is not None else p.seconds) - cut, 0.0))

    def seconds(self, part: str, mid: float, low: float | None = None, high: float | None = None) -> None:
        """Add a part's seconds with its band's ends (without them: a figure with no band, as measured here)."""
        low, high = mid if low is None else low, mid if high is None else high
        self.mid, self.low, self.high = self.mid + mid, self.low + low, self.high + high
        self.parts[part] += mid


def _work_elements(entry: JitCall) -> int:
    """The elements a jitted call's executable works on: half its bytes accessed (XLA's cost analysis: read and
    written) in its dtype, at least its largest argument."""
    dtype = dtype_of(entry.dtype)
    return max(int((entry.bytes or 0.0) / (2 * ITEM[dtype])), int(entry.largest or 0), 1)


def _call_time(view, entry: JitCall, device: str):
    dtype = dtype_of(entry.dtype)
    nbytes, flops = entry.bytes or 0.0, entry.flops or 0.0
    n = _work_elements(entry)
    p = view.call("elementwise", n, dtype, device)
    if flops > 10 * max(nbytes, 1.0):
        order = max(int(round((flops / 2) ** (1 / 3))), 1)
        q = view.call("matmul", order, dtype, device)
        if q and (not p or q.seconds > p.seconds):
            p = q
    k = _launches(view, entry, dtype, device)
    return k if k is not None and (not p or k.seconds > p.seconds) else p


@dataclass
class _Kernels:
    """A call's time as its kernel launches (the shape of a model Prediction: truthy, seconds and band)."""
    seconds: float
    low: float
    high: float
    reason: str = ""


def _launches(view, entry: JitCall, dtype: str, device: str) -> _Kernels | None:
    """A small executable's seconds on the GPU as its kernels: the dispatch floor + one launch per fusion (XLA's
    count), each at the family's per-step cost of a latency-bound loop (loops.Scan, unroll 1) over the kernels in
    such a step: from SCAN_STEP_KERNELS of them (the low end) to one (the high end), geometric middle. One
    elementwise op's time at the executable's bytes counts one launch (without it, a training loop of many calls of
    a multi-fusion update comes out at the floor alone). None on the CPU (an executable runs there as one host
    function) or without both figures."""
    fusions = int(entry.fusions or 0)
    if device != "gpu" or fusions < 2:
        return None
    floor, step = view.call("dispatch", None, dtype, device), view.step("scan", dtype, device)
    if not (floor and step and step.value):
        return None
    low, high = fusions * step.value / SCAN_STEP_KERNELS, fusions * step.value
    return _Kernels(floor.seconds + math.sqrt(low * high), floor.seconds + low, floor.seconds + high)


@dataclass(frozen=True)
class Side:
    """One side of a lecture's prediction: the device its cells are priced on, and what pricing them reads (the
    runner model's view of the family, the dtype the lecture computes in, the dispatch floor on this device and on
    the CPU, this run's own seconds and the static scan's per-step work)."""

    view: RunnerView
    device: str
    base: str
    floor: object
    cpu_floor: object
    measured_cpu: bool  # this run measured the CPU: its own times stand on the CPU side
    known: dict  # per jitted function: this run's waited seconds per call (call_seconds.known_calls)
    static: dict  # (cell, loop kind) -> the static scan's per-step work (static_work)

    @classmethod
    def of(cls, view, run, device: str, float64: bool, static: dict) -> Side:
        base = "float64" if float64 else "float32"
        floor = view.call("dispatch", None, base, device)
        cpu_floor = floor if device == "cpu" else view.call("dispatch", None, base, "cpu")
        measured_cpu = (run.platform or "cpu") == "cpu"
        return cls(view, device, base, floor, cpu_floor, measured_cpu, known_calls(run) if measured_cpu else {},
                   static)

    @property
    def float64(self) -> bool:
        return self.base == "float64"

    @property
    def here(self) -> bool:
        """This run measured this side's device: its own times stand."""
        return self.device == "cpu" and self.measured_cpu

    def on_cpu(self) -> Side:
        """The same prediction priced on the CPU (work the lecture places there)."""
        return replace(self, device="cpu", floor=self.cpu_floor)


#: the pins that act on the code of their own cell (a device for its arrays), not on the whole process
LOCAL_PINS = ("jax.default_device", "jax.devices", "jax.local_devices")
#: the settings whose CPU-only list keeps JAX from starting CUDA (`jax_platform_name` only picks the default device)
CPU_ONLY_SETTINGS = ("JAX_PLATFORMS", "jax_platforms")
#: the runner model's kernel for each traced loop kind (jaxci.audit.runner.jit_calls names them); any other: scan
_LOOP_KERNEL = {"lax.fori_loop": "fori", "lax.while_loop": "while"}


def _loop(side: Side, total: Sum, part: str, loop: TracedLoop, times: float, extra: int = 0) -> None:
    """A lax loop's turns on the side's device, at its kind's per-step cost (a while loop's at the `while` kernel's:
    on a GPU each turn reads its predicate back to the host), plus its carry's elementwise work per turn."""
    view, dtype, device = side.view, side.base, side.device
    kind, trips, carry = loop.kind, loop.trips, loop.carry
    if trips is None:
        total.missing.append(f"{kind} with a trip count not known")
        return
    trips = max(int(round(trips)), 1)  # a counted while loop's trips are its mean turns per run
    kernel = _LOOP_KERNEL.get(kind, "scan")
    total.add(part, view.call(kernel, trips, dtype, device), times)
    carry = max(carry or 0, extra)  # closed-over arrays the trace cannot see
    if carry:
        total.add(part, view.call("elementwise", int(carry), dtype, device), times * trips, less=side.floor)


def cpu_cells(pins, cells) -> frozenset:
    """The cells whose JAX work the lecture itself places on the CPU, on any machine: from a process-wide CPU pin
    (config jax_platforms / jax_platform_name, JAX_PLATFORMS, numpyro.set_platform) to the end, and the cell of a
    local one (jax.default_device, jax.devices("cpu") for a device_put, local_devices(backend="cpu"))."""
    indices = [c.index for c in cells]
    out: set = set()
    for pin in pins or ():
        if not pin.pinned_cpu:
            continue
        local = pin.setting in LOCAL_PINS
        out |= {pin.cell} if local else {i for i in indices if i >= pin.cell}
    return frozenset(out)


def starts_cuda(run, pins=()) -> bool:
    """Does the lecture make a GPU machine's kernel create JAX's CUDA client? Once it starts a backend (a compile,
    or a client's start-up in some cell; importing JAX starts none), unless a CPU-only platform list
    (`JAX_PLATFORMS` or `jax_platforms` = cpu) is set in or before that cell: JAX then never creates it
    (`jax_platform_name` only picks the default device, every backend still starts)."""
    first = next((c.index for c in run.cells if (c.compilations or 0) or (c.startup_s or 0.0)), None)
    if first is None:
        return False
    return not any(p.platforms == ("cpu",) and p.setting in CPU_ONLY_SETTINGS and p.cell <= first for p in pins or ())


def device_time(view, run, device: str, float64: bool, static: dict, on_cpu: frozenset = frozenset(),
                 cuda: bool = False) -> Sum:
    total = Sum()
    side = Side.of(view, run, device, float64, static)
    compile_time(view, run, device, side.base, total, on_cpu, cuda)
    for cell in run.cells:
        placed = device == "gpu" and cell.index in on_cpu  # placed on the CPU by the lecture: the CPU side's figure
        _cell_time(side.on_cpu() if placed else side, total, cell)
    return total


def _cell_time(side: Side, total: Sum, cell) -> None:
    """One cell's seconds on the side's device."""
    imp = cell.import_s or 0.0
    total.seconds("host", imp)
    if not side.here:  # the part _fill gave the fast-path calls may be host code after all: the band's high end
        total.seconds("host", 0.0, 0.0, filled_seconds(cell, side.known))
    _calls_time(side, total, cell)
    sampled = _sampler_s(cell, side.known)
    if sampled and side.here:
        total.seconds("sampler", sampled)
    elif sampled:
        sampler_time(side.view, total, cell, sampled, side.base, side.device)
    top = [loop for loop in cell.loops or [] if loop.top_level]  # within a jitted call: _calls_time
    eager = cell.eager.ops if cell.eager else 0
    if side.here and (top or eager):
        rest = _rest(cell, side.known)
        total.seconds("loops" if top else "eager", rest)
        return
    if not top and not eager:  # host code only: it runs on the host whatever the device
        rest = _rest(cell, side.known)
        total.seconds("host", rest)
        return
    on_cpu = Sum()
    for loop in top:
        extra = side.static.get((cell.index, loop.kind), 0)
        _loop(side, total, "loops", loop, loop.times or 1, extra)
        _loop(side.on_cpu(), on_cpu, "loops", loop, loop.times or 1, extra)
    beside = max(_rest(cell, side.known) - on_cpu.mid, 0.0)  # the cell's measured time beyond its loops' CPU time
    if eager and side.measured_cpu:
        host = _busy_beyond(cell, beside)
        total.seconds("host", host)
        eager_time(side.view, total, cell, side.device, side.float64, beside - host)
    elif not eager:
        total.seconds("host", beside)


def _calls_time(side: Side, total: Sum, cell) -> None:
    """A cell's jitted calls on the side's device (a call the lecture places on the CPU: on the CPU)."""
    for entry, measured in zip(cell.calls or [], call_seconds(cell, side.known)):
        calls = entry.calls
        where = side.on_cpu() if placed_on_cpu(entry) else side
        mine = measured if side.here or (where.device == "cpu" and side.measured_cpu) else None
        if mine is not None:  # this run's own waited time on a CPU: measured beats the model's op-mix rate
            total.seconds("calls", calls * mine)
            continue
        passes = _inferred_passes(side, entry, measured)
        if passes is None:
            total.add("calls", _call_time(side.view, entry, where.device), calls)
        else:
            _repeated(total, _call_time(side.view, entry, where.device), passes, calls)
        for loop in entry.loops:
            if loop.trips is None and passes is not None:  # its trips: the passes the measured call allows
                loop = replace(loop, trips=max(int(round(passes[0])), 1))
            # a counted loop's turns each do the executable's work (XLA counts a while body once; the body, not
            # the carry, is what a value-function iteration computes per turn)
            _loop(where, total, "calls", loop, calls, _work_elements(entry) if loop.counted else 0)
        extra = _host_side(side.view, entry, measured) if where.device != "cpu" else 0.0
        total.seconds("host", calls * extra, 0.0, calls * extra)


def _inferred_passes(side: Side, entry: JitCall, measured: float | None) -> tuple | None:
    """(mid, low, high) passes of a jitted call's work when a loop in it has a trip count no trace knows (a
    `while_loop` to convergence: value-function iteration, a root search), else None: this run's waited CPU
    seconds per call, less its known loops' modelled CPU time, over the model's CPU time for the executable. XLA's
    cost analysis counts a while body once, so one pass is one trip of its work; at least 1. Without it such a loop
    would be left out of the GPU side."""
    loops = entry.loops
    if measured is None or not any(loop.trips is None for loop in loops):
        return None
    once = _call_time(side.view, entry, "cpu")
    if not once or once.seconds <= 0:
        return None
    known = Sum()
    for loop in loops:
        if loop.trips is not None:
            _loop(side.on_cpu(), known, "calls", loop, 1)
    left = max(measured - known.mid, 0.0)
    fastest = max(min(once.low or once.seconds, once.seconds), 1e-12)
    slowest = max(once.high or once.seconds, once.seconds)
    return tuple(max(left / per_pass, 1.0) for per_pass in (once.seconds, slowest, fastest))


def _repeated(total: Sum, p, passes: tuple, calls: float) -> None:
    """A call's executable time on a device, run `passes` times per call (band end with band end)."""
    if not p:
        total.missing.append(p.reason)
        return
    low = p.low if p.low is not None else p.seconds
    high = p.high if p.high is not None else p.seconds
    total.seconds("calls", calls * passes[0] * p.seconds, calls * passes[1] * low, calls * passes[2] * high)
    total.inputs.append("a loop's trip count no trace knows: its call's measured CPU seconds over the model's CPU "
                        "time for one pass of its executable (XLA counts a while body once)")


#: an executable whose modelled CPU time is within this factor of the model's smallest op mix (elementwise at one
#: element) does no work worth the name: the rest of its measured call is the host's handling of the call
#: (arguments, outputs), paid on any device
TINY_CALL = 2.0


def _host_side(view, entry: JitCall, measured: float | None) -> float:
    """Seconds per call of a tiny executable's host-side handling, measured here: its measured CPU call less the
    model's CPU time for its work, where that work is within TINY_CALL of the model's op mix at one element (0
    elsewhere, or without a measurement). A small update with tens of arrays in and out can take ten times the
    model's time per call in its handling alone, which launches do not account for. The band's low end is 0 (all
    of it CPU-side execution)."""
    if measured is None:
        return 0.0
    dtype = dtype_of(entry.dtype)
    cpu, least = _call_time(view, entry, "cpu"), view.call("elementwise", 1, dtype, "cpu")
    if not (cpu and least) or cpu.seconds > TINY_CALL * least.seconds:
        return 0.0
    return max(measured - cpu.seconds, 0.0)


def _rest(cell, known: dict | None = None) -> float:
    """A cell's measured seconds outside its jitted calls (timed, or fast-path calls at the function's seconds
    measured elsewhere), compile, start-up, `import jax` and library sampler runs: its top-level loops, eager work
    and host code."""
    return max(_outside_calls(cell, known) - _sampler_s(cell, known), 0.0)


def _outside_calls(cell, known: dict | None = None) -> float:
    per = call_seconds(cell, known or {})
    calls = sum((s or 0.0) * e.calls for s, e in zip(per, cell.calls or []))
    return max(cell.wall_s - (cell.compile_s or 0.0) - (cell.startup_s or 0.0) - (cell.import_s or 0.0) - calls, 0.0)


def _sampler_s(cell, known: dict | None = None) -> float:
    """Seconds of the cell's library sampler runs (numpyro's MCMC.run, timed by the hooks) less the cell's compiles
    (a run's compiles land in the cell's compile seconds), within the cell's time outside its jitted calls."""
    runs = sum(r.s for r in cell.samplers or [])
    if runs <= 0:
        return 0.0
    return min(max(runs - (cell.compile_s or 0.0), 0.0), _outside_calls(cell, known))


def _busy_beyond(cell, beside: float) -> float:
    """Of a cell's seconds beyond its JAX parts (`beside`), those its main thread spent on the CPU beyond all the
    seconds of those parts: host code, which no device speeds up (SciPy's MINPACK around a JAX Jacobian is such host
    time, not eager work to move at a large array's speed-up). XLA computes on its own
    threads while the main thread waits, so bulk eager work stays eager; every JAX part is taken as busy (the
    smallest host share). 0 for a run that did not record the main thread's CPU seconds."""
    if cell.busy_s is None:
        return 0.0
    return min(max(cell.busy_s - (cell.wall_s - beside), 0.0), beside)


def static_work(loops) -> dict:
    """The static scan's per-step work (a closed-over matrix) per (cell, loop kind), where it is known."""
    out: dict = {}
    for lp in loops:
        if lp.carry:
            out[(lp.cell, lp.kind)] = max(out.get((lp.cell, lp.kind), 0), lp.carry)
    return out


def side_of(total: Sum) -> PredictedSide:
    """A device's sum as the prediction's side: its seconds, band and parts."""
    return PredictedSide(total.mid, total.low, total.high, dict(total.parts))


def prediction_record(cpu: Sum, gpu: Sum, basis: str) -> LecturePrediction:
    return LecturePrediction(side_of(cpu), side_of(gpu), basis, tuple(sorted(set(cpu.missing + gpu.missing))[:6]),
                             tuple(sorted(set(cpu.inputs + gpu.inputs))))


def gpu_family(run, view, float64: bool = False, loops=(), pins=()) -> LecturePrediction | None:
    """Both sides of one executed run on the family `view` asks the runner model for (a family with a GPU), with
    what they rest on; None when the run measured nothing. A run without code cells is its kernel's start alone: a
    build pays it for a code-free notebook too."""
    if not _started(run):
        return None
    static, on_cpu = static_work(loops), cpu_cells(pins, run.cells)
    cpu = device_time(view, run, "cpu", float64, static)
    gpu = device_time(view, run, "gpu", float64, static, on_cpu, starts_cuda(run, pins))
    calls = sum(len(c.calls or []) for c in run.cells)
    nloops = sum(len(c.loops or []) for c in run.cells)
    eager = sum(c.eager.ops for c in run.cells if c.eager)
    compiles = sum(c.compilations or 0 for c in run.cells)
    basis = (f"predicted (runner model for {view.family}) from the {run.platform or 'cpu'} run: {calls} jitted call "
             f"signature(s) with XLA cost analysis, {nloops} traced loop(s), {eager} eager op(s), {compiles} "
             "compilation(s) (first compile once, then this run's seconds per compilation); the CPU side takes this "
             "run's own times where it measured them (this host as the family's CPU)"
             + (f"; cells {_spans(on_cpu)} placed on the CPU by the lecture: their CPU side on the GPU side too"
                if on_cpu else ""))
    return replace(prediction_record(cpu, gpu, basis), unexplained=_unexplained(run, cpu), float64=bool(float64),
                   overhead_s=overhead_s(run))


def _started(run) -> bool:
    """The run measured something: cells, or at least its kernel's start (a notebook without code cells)."""
    return run is not None and bool(run.cells or run.kernel_start_s)


def cpu_family(run, view, float64: bool = False, loops=()) -> LecturePrediction | None:
    """The CPU side of one executed run on a CPU-only family `view` asks the runner model for (no GPU side, so no
    verdict from it): a build time on its CPU."""
    if not _started(run):
        return None
    cpu = device_time(view, run, "cpu", float64, static_work(loops))
    return LecturePrediction(
        side_of(cpu), None, basis=f"predicted (runner model for {view.family}, CPU only) from the "
                                  f"{run.platform or 'cpu'} run: this run's own times where it measured them (this "
                                  "host as the family's CPU)",
        missing=tuple(sorted(set(cpu.missing))[:6]), inputs=None, overhead_s=overhead_s(run))


def _spans(cells) -> str:
    """{3, 4, 5, 9} -> '3-5, 9'."""
    out = []
    for _, group in itertools.groupby(enumerate(sorted(cells)), lambda pair: pair[1] - pair[0]):
        run = [i for _, i in group]
        out.append(f"{run[0]}-{run[-1]}" if len(run) > 1 else f"{run[0]}")
    return ", ".join(out)


def _unexplained(run, cpu: Sum) -> str:
    """A measured slow cell the prediction's JAX parts do not account for (at most half the cell; the host part,
    time no hook saw, is what is left unexplained), or ''."""
    slow = slow_cell(run)
    jax_high = cpu.high - cpu.parts["host"] - overhead_s(run)  # a fresh kernel's start is no cell's JAX work
    if slow is None or jax_high >= slow[1] / 2:
        return ""
    return (f"cell {slow[0]} measured {slow[1]:.1f} s on {run.platform or 'cpu'} but the prediction's JAX work "
            f"accounts for {jax_high:.2g} s at most: work the hooks do not see "
            "(NumPy, library code, C++-dispatched jnp calls)")


def slow_cell(run) -> tuple[int, float] | None:
    """(cell, seconds) of the slowest measured cell when it reaches SLOW_CELL_S."""
    if run is None or not run.cells:
        return None
    top = max(run.cells, key=lambda c: c.wall_s)
    return (top.index, top.wall_s) if top.wall_s >= SLOW_CELL_S else None
