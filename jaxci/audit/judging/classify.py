"""A lecture's regime, device recommendation and one-line reason, from its static scan (and, when run,
its timings) and the thresholds of one runner family.

The model: a loop whose step carries few elements is latency-bound (each step is a few tiny device kernels;
incidents: a scalar scan 1,340x slower on a T4, a 25x25 while_loop 5-6x slower) and belongs on the CPU; a
loop whose step carries at least the family's elementwise crossover is bulk work, the GPU's best case;
arrays past the crossover favour the GPU; the middle ground and what the scan cannot see must be measured.
The thresholds come from jaxci.audit.judging.family: that family's measurements, else predictions, else built-in
numbers, and the verdict says which (`basis`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from jaxci.analysis.prediction import LecturePrediction
from jaxci.audit.judging import family as fam
from jaxci.audit.reading.sizes import BULK, LATENCY, NEAR, UNKNOWN, classify_loop
from jaxci.audit.reading.static import LectureScan
from jaxci.policy import margins, placement

#: built-in moderate size; with a family, a tenth of its crossover
MODERATE_ELEMENTS = 10_000

SMALL_F64_SEQ = "small-f64-sequential"
SMALL_F32_SEQ = "small-f32-sequential"
NUTS_SMALL = "nuts-small"
MODERATE = "moderate-grids"
LARGE = "large-arrays"
BULK_LOOPS = "bulk-loops"
MIXED = "mixed-loops"
UNSEEN = "sizes-not-visible"
TRIVIAL = placement.TRIVIAL  # the one constant: jaxci.policy.placement reads audit records by it
REGIMES = {
    SMALL_F64_SEQ: "latency-bound loop + float64",
    SMALL_F32_SEQ: "latency-bound loop in float32",
    NUTS_SMALL: "NUTS on a small model",
    MODERATE: "moderate grids",
    LARGE: "large arrays",
    BULK_LOOPS: "bulk loop (large carry)",
    MIXED: "latency-bound loop next to bulk work",
    UNSEEN: "loop sizes not visible",
    TRIVIAL: "trivial",
}
#: the recommendations: the one set of constants, jaxci.policy.placement's (the whole build reads records by them)
KEEP_GPU, PIN_CPU, MEASURE, EITHER = placement.KEEP_GPU, placement.PIN_CPU, placement.MEASURE, placement.EITHER
#: measured GPU/CPU wall ratio beyond which a run overrides the static recommendation (the one margin:
#: jaxci.policy.margins)
GPU_SLOWER, GPU_FASTER = margins.GPU_SLOWER, margins.GPU_FASTER


@dataclass
class Classification:
    regime: str
    recommendation: str
    why: str  # the one-line reason
    basis: str  # measured | predicted | not known: where the deciding threshold came from
    reasons: list = field(default_factory=list)  # the evidence, one item each


def _n(x) -> str:
    if x < 1e5:
        return f"{x:,.0f}"
    mant, exp = f"{x:.1e}".split("e")
    return f"{mant.rstrip('0').rstrip('.')}e{int(exp)}"


def _loop_text(loop) -> str:
    steps = f"{_n(loop.trips)} steps" if loop.trips is not None else "unknown steps"
    carry = (f"{_n(loop.carry)} element{'s' if loop.carry != 1 else ''}" if loop.carry is not None
             else "unknown carry")
    return f"{loop.kind} over {carry} x {steps}"


def classify(scan: LectureScan, model: fam.FamilyModel | None = None) -> tuple[str, str, list[str]]:
    """(regime, recommendation, reasons) for one scanned lecture; `decide` has the full decision."""
    d = decide(scan, model)
    return d.regime, d.recommendation, [d.why] + d.reasons


def decide(scan: LectureScan, model: fam.FamilyModel | None = None) -> Classification:
    model = model or fam.builtin()
    d = _decide(scan, model)
    if model.missing and d.basis == fam.NOT_KNOWN:  # never a silent fallback: every row says there is no model
        d.basis = f"{fam.NOT_KNOWN}: no runner model for {model.family}"
    return d


def _decide(scan: LectureScan, model: fam.FamilyModel) -> Classification:
    if not (scan.uses_jax or scan.uses_numpyro):
        return Classification(TRIVIAL, PIN_CPU, "does not import jax or numpyro: nothing here uses a GPU",
                              fam.NOT_KNOWN, [])
    dtype = lecture_dtype(scan)
    cross = model.crossover_for(dtype)
    c = model.crossover_elements(dtype)
    acc = model.accelerator
    where = model.family or f"a {acc} runner"
    basis = cross.label
    loops = scan.loops
    for loop in loops:  # each loop against the crossover of the dtype it runs in (x64 may come on late)
        loop.cls = classify_loop(loop, model.crossover_elements(loop.dtype if scan.float64 else "float32"))
    reasons = _evidence(scan, cross, dtype)
    latency = [lp for lp in loops if lp.cls == LATENCY]
    bulk = [lp for lp in loops if lp.cls == BULK]
    unsure = [lp for lp in loops if lp.cls in (NEAR, UNKNOWN)]
    size = scan.max_elements
    big = size is not None and size >= c
    moderate = (size is not None and size >= min(c / 10, MODERATE_ELEMENTS if model.family is None else c))
    moderate = moderate or scan.grid
    cross_text = _crossover_text(cross, acc)

    def speed(elements) -> str:
        return _speed_text(model.speedup(elements, dtype), where, acc)

    def gpu_wins(elements) -> str:
        """keep on GPU unless the family's numbers put this size within 25% of break-even"""
        r = model.speedup(elements, dtype)
        return KEEP_GPU if r is None or r >= 1 / GPU_FASTER else MEASURE

    if scan.nuts and not big and not bulk:
        return Classification(NUTS_SMALL, PIN_CPU, "NUTS on a small model: each sampler step is a chain of tiny "
                              f"kernels, latency-bound on a {acc} ({cross_text})", basis, reasons)
    if latency and (bulk or big):
        return _mixed(scan, model, latency, bulk, dtype, where, reasons, basis)
    if latency and not unsure:
        return _latency_loops(scan, model, latency, dtype, where, cross_text, basis, reasons)
    if bulk:  # bulk evidence outranks a loop the scan cannot size
        top = max(bulk, key=lambda lp: lp.carry or 0)
        carry = top.carry or 0  # a bulk loop's carry is known: classify_loop calls an unknown one unknown
        return Classification(
            BULK_LOOPS, gpu_wins(carry), f"bulk {_loop_text(top)}: {speed(carry)} ({cross_text})",
            basis if model.speedup(carry, dtype) is None else _curve_basis(model), reasons)
    if big and size is not None:  # so do arrays past the crossover
        return Classification(
            LARGE, gpu_wins(size), f"arrays of {_n(size)} elements, no loop: {speed(size)} ({cross_text})"
            + (f"; {len(unsure)} loop(s) not sized statically" if unsure else ""),
            basis if model.speedup(size, dtype) is None else _curve_basis(model), reasons)
    if unsure:
        lp = unsure[0]
        if lp.cls == NEAR:
            why = f"{_loop_text(lp)}: carry near the {cross_text}: measure both devices"
        else:
            why = (f"{lp.describe()}: the carry size is not visible statically: measure (or run "
                   "`jaxci audit --execute` to see it)")
        return Classification(UNSEEN if lp.cls == UNKNOWN else MODERATE, MEASURE, why, fam.NOT_KNOWN
                              if lp.cls == UNKNOWN else basis, reasons)
    if moderate:
        what = f"arrays of {_n(size)} elements" if size else "a grid of unknown size"
        return Classification(MODERATE, MEASURE, f"{what}{' (grid)' if scan.grid else ''}: within 10x of the "
                              f"{cross_text}: measure both devices", basis, reasons)
    what = f"largest array {_n(size)} elements" if size else "no array sizes visible"
    return Classification(TRIVIAL, PIN_CPU, f"{what}, no long loops: compile time dominates on either device "
                          f"({cross_text})", basis, reasons)


def lecture_dtype(scan: LectureScan) -> str:
    """float64 only where the deciding work runs after jax_enable_x64 is switched on (its cell, not the lecture)."""
    if not scan.float64:
        return "float32"
    x64 = scan.x64_cell if scan.x64_cell is not None else 0
    cells = [lp.cell for lp in scan.loops]  # the loops decide; without loops, the largest array
    top = max(scan.size_findings, key=lambda f: f.elements, default=None)
    if top is not None and not cells:
        cells.append(top.cell)
    return "float64" if not cells or any(c >= x64 for c in cells) else "float32"


def _crossover_text(cross, acc: str = "GPU") -> str:
    """How the threshold a verdict used reads: measured / predicted crossover, or the built-in one."""
    c = cross.value
    if c == float("inf"):
        return f"{cross.label}: the {acc} never beat the CPU on elementwise work in the measured range"
    if cross.label == fam.NOT_KNOWN:
        return f"built-in threshold {_n(c)} elements, not a measurement"
    return f"{cross.label} crossover {_n(c)} elements"


def _speed_text(ratio: float | None, where: str, acc: str = "GPU") -> str:
    """'GPU ~12x faster on g4dn.2xlarge' from the family's speedup curve (or 'expected faster' without one)."""
    if ratio is None:
        return f"{acc} expected faster on {where}"
    word = "faster" if ratio >= 1 else "slower"
    x = max(ratio, 1 / ratio)
    return f"{acc} ~{x:.0f}x {word} on {where}" if x >= 10 else f"{acc} ~{x:.1f}x {word} on {where}"


def _latency_loops(scan, model, latency, dtype, where, cross_text, basis, reasons) -> Classification:
    """Only latency-bound loops: the family's measured per-step ratio decides, else the launch-cost rule."""
    worst = max(latency, key=lambda lp: lp.trips or 0)
    ratio, how = model.step_ratio(dtype)
    regime = SMALL_F64_SEQ if lecture_dtype(scan) == "float64" else SMALL_F32_SEQ
    if ratio is not None:
        word = "slower" if ratio >= 1 else "faster"
        why = (f"latency-bound {_loop_text(worst)}: {model.accelerator} ~{max(ratio, 1 / ratio):.0f}x {word} per "
               f"step on {where} ({how})")
        label = model.step[(dtype, "cpu")].label
        return Classification(regime, PIN_CPU if ratio >= GPU_FASTER else MEASURE, why, label, reasons)
    why = (f"latency-bound {_loop_text(worst)}: each step is a few tiny kernels, launch cost dominates on a "
           f"{model.accelerator} ({cross_text}" + (f"; {how})" if model.family else ")"))
    slow64 = f", and float64 is slow on most CI {model.accelerator}s" if scan.float64 else ""
    return Classification(regime, PIN_CPU, why + slow64, basis, reasons)


def _curve_basis(model) -> str:
    return fam.MEASURED if model.curve_basis == fam.MEASURED else fam.PREDICTED


def _mixed(scan, model, latency, bulk, dtype, where, reasons, basis) -> Classification:
    """A latency-bound loop next to bulk work: add up both on each device when the family's costs are
    known, else measure."""
    ratio, how = model.step_ratio(dtype)
    cpu_step = model.step.get((dtype, "cpu"))
    gpu_step = model.step.get((dtype, "gpu"))
    text = f"latency-bound {_loop_text(max(latency, key=lambda lp: lp.trips or 0))} next to " + (
        f"bulk {_loop_text(max(bulk, key=lambda lp: lp.carry))}" if bulk else
        f"arrays of {_n(scan.max_elements)} elements")
    if ratio is None or any(lp.trips is None for lp in latency + bulk):
        return Classification(MIXED, MEASURE, f"{text}: measure both devices ({how})", basis, reasons)
    total = {}
    for device, step in (("cpu", cpu_step), ("gpu", gpu_step)):
        t = sum(lp.trips * step.value for lp in latency)
        for lp in bulk:
            one = model.bulk_time(lp.carry, dtype, device)
            if one is None:
                return Classification(MIXED, MEASURE, f"{text}: no elementwise time at {_n(lp.carry)} elements for "
                                      f"{where}: measure both devices", basis, reasons)
            t += lp.trips * one
        if not bulk:
            one = model.bulk_time(scan.max_elements, dtype, device)
            t += one or 0.0
        total[device] = t
    r = total["gpu"] / total["cpu"] if total["cpu"] else None
    est = (f"estimated {model.accelerator} {total['gpu']:.3g} s vs CPU {total['cpu']:.3g} s on {where} ({how}; "
           f"{model.curve_label})")
    if r is None:
        return Classification(MIXED, MEASURE, f"{text}: {est}", basis, reasons)
    rec = PIN_CPU if r > GPU_SLOWER else KEEP_GPU if r < GPU_FASTER else MEASURE
    return Classification(MIXED, rec, f"{text}: {est}", _curve_basis(model), reasons)


def _evidence(scan: LectureScan, cross, dtype) -> list[str]:
    reasons = []
    top = max(scan.size_findings, key=lambda s: s.elements, default=None)
    if top is not None:
        reasons.append("largest array: " + top.text())
    elif scan.max_elements is None:
        reasons.append("no array sizes visible")
    for f in scan.size_findings:
        if f is not top and f.mapped:
            reasons.append("mapped: " + f.text())
    for loop in scan.loops[:4]:
        ev = loop.evidence()
        reasons.append(f"{loop.cls} loop: {loop.describe()}" + (f" [{ev}]" if ev else ""))
    if len(scan.loops) > 4:
        reasons.append(f"+{len(scan.loops) - 4} more loops")
    if scan.grid:
        reasons.append("grid construction (meshgrid / mgrid / nested vmap)")
    if scan.float64:
        reasons.append("float64 enabled (" + scan.float64[0] + ")" + (
            "; the deciding work runs before it, in float32" if dtype == "float32" else ""))
    if scan.nuts:
        chains = [n for n in scan.nuts if "num_chains" in n]
        text = ", ".join(f"num_chains={n['num_chains']}, chain_method={n['chain_method']!r}" for n in chains[:1])
        reasons.append("numpyro NUTS" + (f" ({text})" if text else ""))
    if scan.sequential:
        reasons.append(f"sequential: {scan.sequential[0]}" + (f" (+{len(scan.sequential) - 1} more)"
                                                              if len(scan.sequential) > 1 else ""))
    reasons.append(f"threshold ({dtype}): {cross.short(' elements')} [{cross.source}]")
    if scan.cpu_pin is not None:
        reasons.append("already pins the CPU (" + scan.cpu_pin.text() + ")")
    if scan.gpu_narrative:
        reasons.append("prints GPU narrative: the text needs review if pinned to CPU")
    return reasons


def with_measurements(recommendation: str, cpu_s: float | None, gpu_s: float | None,
                      accelerator: str = "GPU") -> tuple[str, str | None]:
    """Static recommendation adjusted by measured whole-lecture times; returns (recommendation, reason). The reason
    names the accelerator that ran (a TPU's time is never called a GPU's)."""
    if cpu_s is None or gpu_s is None or cpu_s <= 0:
        return recommendation, None
    ratio = gpu_s / cpu_s
    text = f"measured {accelerator}/CPU time {ratio:.2f} ({gpu_s:.1f} s / {cpu_s:.1f} s)"
    if ratio > GPU_SLOWER:
        return PIN_CPU, text
    if ratio < GPU_FASTER:
        return KEEP_GPU, text
    return (PIN_CPU if recommendation == MEASURE else recommendation), text + f": no clear {accelerator} gain"


def verdict_from(pred: LecturePrediction, family: str, published=None) -> tuple[str, str]:
    """(recommendation, why) from the predicted seconds on both devices, the GPU side's published run time where
    the site's build published one (`published`: jaxci.policy.placement.Side), by the one pin rule
    (jaxci.policy.placement); a measured slow cell the prediction does not explain outranks it (measure)."""
    from jaxci.policy import placement

    found = placement.place("", pred, published.seconds if published else None,
                            published.source if published else "", family)
    rec = {placement.CPU: PIN_CPU, placement.GPU: KEEP_GPU}.get(found.device or "", EITHER)
    if pred.unexplained:
        return MEASURE, f"{pred.unexplained}: measure on the GPU ({found.why})"
    return rec, found.why
