"""A lecture's regime and the device recommendation, from its static scan (and, when run, its timings).

The model is a stated heuristic, not a measurement: sequential work on small arrays is launch-bound and
loses on a GPU (incidents: a scalar scan 1,340x slower on a T4, a 25x25 while_loop 5-6x slower, a small
float64 NUTS model past a 2,400 s cell timeout), large elementwise/dense work wins on a GPU, the middle
ground must be measured. Thresholds are element counts of the largest literal array the scan could see.
"""

from __future__ import annotations

from jaxci.audit.static import LectureScan

#: largest literal array at or above this many elements: "large arrays" (a GPU pays off)
LARGE_ELEMENTS = 1_000_000
#: at or above this (or a meshgrid / nested vmap): "moderate grids"
MODERATE_ELEMENTS = 10_000

SMALL_F64_SEQ = "small-f64-sequential"
SMALL_F32_SEQ = "small-f32-sequential"
NUTS_SMALL = "nuts-small"
MODERATE = "moderate-grids"
LARGE = "large-arrays"
TRIVIAL = "trivial"
REGIMES = {
    SMALL_F64_SEQ: "small model + float64 + sequential loop",
    SMALL_F32_SEQ: "small sequential loop in float32",
    NUTS_SMALL: "NUTS on a small model",
    MODERATE: "moderate grids",
    LARGE: "large arrays",
    TRIVIAL: "trivial",
}
KEEP_GPU, PIN_CPU, MEASURE = "keep on GPU", "pin to CPU", "measure"
#: measured GPU/CPU wall ratio beyond which a run overrides the static recommendation
GPU_SLOWER, GPU_FASTER = 1.2, 0.8


def classify(scan: LectureScan) -> tuple[str, str, list[str]]:
    """(regime, recommendation, reasons) for one scanned lecture."""
    reasons = []
    if not (scan.uses_jax or scan.uses_numpyro):
        return TRIVIAL, PIN_CPU, ["does not import jax or numpyro: nothing here uses a GPU"]
    size = scan.max_elements
    large = size is not None and size >= LARGE_ELEMENTS
    moderate = (size is not None and size >= MODERATE_ELEMENTS) or scan.grid
    if size is None:
        reasons.append("no literal array sizes visible")
    else:
        reasons.append(f"largest literal array {size:,} elements")
    if scan.grid:
        reasons.append("grid construction (meshgrid / mgrid / nested vmap)")
    if scan.float64:
        reasons.append("float64 enabled (" + scan.float64[0] + ")")
    if scan.nuts:
        chains = [n for n in scan.nuts if "num_chains" in n]
        text = ", ".join(f"num_chains={n['num_chains']}, chain_method={n['chain_method']!r}" for n in chains[:1])
        reasons.append("numpyro NUTS" + (f" ({text})" if text else ""))
    if scan.sequential:
        reasons.append(f"sequential: {scan.sequential[0]}" + (f" (+{len(scan.sequential) - 1} more)"
                                                              if len(scan.sequential) > 1 else ""))
    if scan.pinned_cpu:
        reasons.append("already pins the CPU (" + scan.device_pins[0] + ")")
    if scan.gpu_narrative and not large:
        reasons.append("prints GPU narrative: the text needs review if pinned to CPU")

    if scan.nuts and not large:
        return NUTS_SMALL, PIN_CPU, reasons
    if scan.sequential and not large:
        if scan.float64:
            return SMALL_F64_SEQ, PIN_CPU, reasons + ["launch-bound loop, and float64 is slow on most CI GPUs"]
        return SMALL_F32_SEQ, PIN_CPU, reasons + ["launch-bound loop: each step is a few tiny kernels"]
    if large:
        if scan.sequential or scan.nuts:
            return LARGE, MEASURE, reasons + ["large arrays next to a sequential loop: measure both devices"]
        return LARGE, KEEP_GPU, reasons
    if moderate:
        return MODERATE, MEASURE, reasons + ["between the sizes where CPU and GPU win: measure"]
    return TRIVIAL, PIN_CPU, reasons + ["small arrays, no loops: compile time dominates on either device"]


def with_measurements(recommendation: str, cpu_s: float | None, gpu_s: float | None) -> tuple[str, str | None]:
    """Static recommendation adjusted by measured whole-lecture times; returns (recommendation, reason)."""
    if cpu_s is None or gpu_s is None or cpu_s <= 0:
        return recommendation, None
    ratio = gpu_s / cpu_s
    text = f"measured GPU/CPU time {ratio:.2f} ({gpu_s:.1f} s / {cpu_s:.1f} s)"
    if ratio > GPU_SLOWER:
        return PIN_CPU, text
    if ratio < GPU_FASTER:
        return KEEP_GPU, text
    return (PIN_CPU if recommendation == MEASURE else recommendation), text + ": no clear GPU gain"
