"""Published measurements read as runner-model inputs (jaxci.analysis.evidence), each with its source.

Two files: docs/reference/incidents.md (the T4 runner's own table, read through jaxci.report.published.figures,
the one parser of that file) and docs/reference/published-measurements.md (achieved GEMM and copy rates of the
T4, L4 and A10G). Every input names the published figures it came from (`figures`), so a leave-one-out score
can drop them. A value's band is the printed value's rounding interval (or the published range).
"""

from __future__ import annotations

import re
from pathlib import Path

from jaxci.analysis.evidence import (
    BANDWIDTH,
    CASE_FIRST,
    CASE_WARM,
    COMPILE,
    CPU_ELEM,
    CPU_GEMM,
    GEMM_RATE,
    HOST_PYTHON,
    NUMPY_GEMM,
    SCAN_STEP,
    SERIES,
    Evidence,
)
from jaxci.analysis.primitives import Band
from jaxci.analysis.provenance import figure_name
from jaxci.analysis.work import dense_flops, elementwise_bytes

GPU_OF = {"g4dn.2xlarge": "Tesla T4"}   # the incidents file's T4 runner: its GPU's device terms match by model
THROUGHPUT_N = 2048                     # a published GPU matmul below this order is launch-bound: never a rate


def figure_id(f) -> str:
    """The one name of a published figure (its case, family and device)."""
    return figure_name(f.case, f.family, f.device)


def _band(f) -> Band:
    lo, hi = f.published_s - f.resolution_s, f.published_s + f.resolution_s
    return Band(f.published_s, max(lo, 1e-12), hi)


def _rate(work: float, t: Band) -> Band:
    return Band(work / t.mid, work / t.high, work / t.low)


def _ev(f, where, term, value, *, key="", dtype="float32", n=None, figs=None) -> Evidence:
    src = f"incidents.md: {f.case}, {'T4 runner' if f.family == 'g4dn.2xlarge' else 'CPU runner'} {f.device}"
    return Evidence(where, f.device, term, value, src, key=key, dtype=dtype, n=n,
                    figures=frozenset(figs or {figure_id(f)}))


def from_figures(figs) -> list[Evidence]:
    """Model inputs from the incidents figures (jaxci.report.published.figures); bounds and ratios give none."""
    out: list[Evidence] = []
    warm = {(f.case.split(",")[0], f.family, f.device): f for f in figs
            if f.kernel in ("matmul", "elementwise") and not f.first_call}
    for f in figs:
        if f.kernel is None or f.bound or f.published_s != f.published_s:   # NaN: published as a ratio
            continue
        t = _band(f)
        gpu = f.device == "gpu"
        where = GPU_OF.get(f.family, f.family) if gpu else f.family
        if f.kernel in ("matmul", "elementwise"):  # the case itself, as published: no spread of its own
            out.append(_ev(f, f.family, CASE_FIRST if f.first_call else CASE_WARM, Band.of(f.published_s),
                           key=f.kernel, n=f.n, dtype=f.dtype))
        if f.kernel in ("matmul", "elementwise") and f.first_call:
            w = warm.get((f.case.split(",")[0], f.family, f.device))
            if w is not None:
                part = t.minus(_band(w))
                out.append(_ev(f, f.family, COMPILE, part, key=f.kernel, n=f.n,
                               figs={figure_id(f), figure_id(w)}))
        elif f.kernel == "matmul" and gpu and f.n >= THROUGHPUT_N:
            out.append(_ev(f, where, GEMM_RATE, _rate(dense_flops("matmul", f.n), t), key="fp32"))
        elif f.kernel == "matmul" and not gpu:
            out.append(_ev(f, f.family, CPU_GEMM, _rate(dense_flops("matmul", f.n), t)))
        elif f.kernel == "elementwise" and gpu:
            out.append(_ev(f, where, BANDWIDTH, _rate(elementwise_bytes(f.n, f.dtype), t)))
        elif f.kernel == "elementwise":
            out.append(_ev(f, f.family, CPU_ELEM, _rate(f.n, t)))
        elif f.kernel == "numpy_matmul":
            out.append(_ev(f, f.family, NUMPY_GEMM, _rate(dense_flops("matmul", f.n), t), dtype=f.dtype))
        elif f.kernel == "pure_python":
            out.append(_ev(f, f.family, HOST_PYTHON, t, n=f.n))
        elif f.kernel == "series":
            out.append(_ev(f, f.family, SERIES, t))
        elif f.kernel == "scan" and f.compile_only:
            out.append(_ev(f, f.family, COMPILE, t, key="scan", n=f.n))
        elif f.kernel == "scan":
            step = t if f.per_step else t.scale(1 / f.n)
            out.append(_ev(f, f.family, SCAN_STEP, step, n=None if f.per_step else f.n))
    return out


_UNIT = {"TFLOP/s": 1e12, "GB/s": 1e9}
_NUM = re.compile(r"([\d.]+)(?:\s*/\s*([\d.]+))?\s*(TFLOP/s|GB/s)?\s*([A-Za-z0-9 ]*)")


def _values(cell: str, default_path: str) -> list[tuple[Band, str, float]]:
    """(band, path, unit) of each value in a published-measurements cell: "4.17 / 4.43 TFLOP/s" is one range;
    "12.53 TFLOP/s true FP32, 24.00 TF32" two paths; a unit carries forward to a value that omits it."""
    out, unit = [], None
    for part in cell.split(","):
        m = _NUM.search(part)
        if not m:
            continue
        unit = _UNIT.get(m[3], unit)
        if unit is None:
            raise ValueError(f"published-measurements.md: no unit in {cell!r}")
        a, b = float(m[1]), float(m[2] or m[1])
        path = "tf32" if "TF32" in m[4] else ("fp32" if "FP32" in m[4] else default_path)
        out.append((Band((a * b) ** 0.5 * unit, min(a, b) * unit, max(a, b) * unit), path, unit))
    return out


def from_measurements(text: str) -> list[Evidence]:
    """Achieved GEMM and copy rates of the "Achieved rates" table of published-measurements.md."""
    out: list[Evidence] = []
    section = text.split("## Achieved rates", 1)[-1].split("\n## ", 1)[0] if "## Achieved rates" in text else ""
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 4 or cells[0] in ("family hardware", "") or set(cells[0]) <= {"-"}:
            continue
        hw = [h.split("(")[0].strip() for h in cells[0].split(";")]
        parts = cells[2].split(";") if len(hw) > 1 else [cells[2]]
        copy = "copy" in cells[1]
        for where, part in zip(hw, parts):
            for band, path, unit in _values(part, "fp32"):
                term = BANDWIDTH if unit == 1e9 else GEMM_RATE
                if term == GEMM_RATE and copy:
                    continue
                src = cells[3].replace(";", ",")   # one input, one sentence: "; " separates inputs when shown
                out.append(Evidence(where, "gpu", term, band, f"published-measurements.md: {src}",
                                    key="" if term == BANDWIDTH else path))
    return out


def load(incidents: Path | None, measurements: Path | None) -> list[Evidence]:
    """Every published input of the two files (a missing file gives none)."""
    from jaxci.report.published import figures

    out: list[Evidence] = []
    if incidents is not None and Path(incidents).is_file():
        out += from_figures(figures(Path(incidents).read_text()))
    if measurements is not None and Path(measurements).is_file():
        out += from_measurements(Path(measurements).read_text())
    return out


def reference() -> list[Evidence]:
    """The published inputs of this checkout's two reference files: the nearest evidence every command gives the
    runner model by default (the audit, `jaxci predict`, the report), so they give one answer. With them, every
    runner family's host probe where it publishes none (jaxci.analysis.host_speed: carried within a CPU model, else
    predicted through the catalogue's sourced single-thread scores)."""
    from jaxci import REPO_ROOT

    ref = REPO_ROOT / "docs" / "reference"
    return with_host_probes(load(ref / "incidents.md", ref / "published-measurements.md"))


def with_host_probes(published: list[Evidence], catalogue: dict | None = None) -> list[Evidence]:
    """`published` and the host probes derived from it (jaxci.analysis.host_speed.derive)."""
    from jaxci.analysis.host_speed import derive
    from jaxci.catalogue import load_catalogue

    return published + derive(published, load_catalogue() if catalogue is None else catalogue)
