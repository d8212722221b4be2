"""Published figures as runner-model inputs (jaxci.analysis.evidence), each with its source.

One file, docs/reference/published-figures.json, read through its one loader (jaxci.evidence.published.read): the
incidents' figures (the T4 runner's own table, incidents.md) and the achieved GEMM and copy rates of the T4, L4,
A10G and A10 (published-measurements.md). Every input names the published figures it came from (`figures`), so
a leave-one-out score can drop them. A value's band is the printed value's rounding interval (or the published
range).
"""

from __future__ import annotations

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
    HOST_RATIO,
    NUMPY_GEMM,
    SCAN_STEP,
    SERIES,
    Evidence,
)
from jaxci.analysis.primitives import Band
from jaxci.analysis.provenance import figure_name
from jaxci.analysis.work import dense_flops, elementwise_bytes
from jaxci.evidence.published import UNITS, PublishedFigures, read

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
    src = f"incidents.md: {f.case}, {f.runner or f.family} {f.device}"
    return Evidence(where, f.device, term, value, src, key=key, dtype=dtype, n=n,
                    figures=frozenset(figs or {figure_id(f)}))


def from_figures(figs) -> list[Evidence]:
    """Model inputs from the incidents' figures (jaxci.evidence.published.PublishedFigure); bounds and ratios give
    none."""
    out: list[Evidence] = []
    models = _gpu_models()
    warm = {(f.case.split(",")[0], f.family, f.device): f for f in figs
            if f.kernel in ("matmul", "elementwise") and not f.first_call}
    for f in figs:
        if f.kernel is None or f.bound or f.published_s != f.published_s:   # NaN: published as a ratio
            continue
        t = _band(f)
        gpu = f.device == "gpu"
        where = models.get(f.family, f.family) if gpu else f.family
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


def from_rates(rates, document: str) -> list[Evidence]:
    """Achieved GEMM and copy rates (jaxci.evidence.published.Rate): a range's band spans it, its middle the
    geometric mean."""
    out: list[Evidence] = []
    for r in rates:
        a, b = r.value[0], r.value[-1]
        unit = UNITS[r.unit]
        band = Band((a * b) ** 0.5 * unit, min(a, b) * unit, max(a, b) * unit)
        out.append(Evidence(r.where, "gpu", r.term, band, f"{document}: {r.source}", key=r.key))
    return out


def from_host_ratios(ratios, document: str) -> list[Evidence]:
    """Published host ratios (jaxci.evidence.published.HostRatio): `where` the family whose seconds are over `key`'s
    for the same work; the middle the range's geometric mean."""
    return [Evidence(r.family, "cpu", HOST_RATIO, Band((r.low * r.high) ** 0.5, r.low, r.high),
                     f"{document}: {r.source}", key=r.over, figures=frozenset({r.name})) for r in ratios]


def of(figures: PublishedFigures, incidents: bool = True, rates: bool = True) -> list[Evidence]:
    """The model's inputs of a figures record: its incidents' figures, its rates and host ratios, or both."""
    return ((from_figures(figures.incidents) if incidents else [])
            + (from_rates(figures.rates, figures.rates_document)
               + from_host_ratios(figures.host_ratios, figures.rates_document) if rates else []))


def load(path: Path | None) -> list[Evidence]:
    """Every published input of the figures file at `path` (None or a missing file gives none)."""
    if path is None or not Path(path).is_file():
        return []
    return of(read(path))


def reference() -> list[Evidence]:
    """The published inputs of this checkout's figures file (docs/reference/published-figures.json): the nearest
    evidence every command gives the runner model by default (the audit, `jaxci predict`, the report), so they give
    one answer. With them, every runner family's host probe where it publishes none (jaxci.analysis.host_speed:
    carried within a CPU model, else predicted through the catalogue's sourced single-thread scores)."""
    from jaxci.evidence.published import default_path

    return with_host_probes(load(default_path()))


def with_host_probes(published: list[Evidence], catalogue: dict | None = None) -> list[Evidence]:
    """`published` and the host probes derived from it (jaxci.analysis.host_speed.derive); a family's own published
    probe is replaced by the same probe with its band over every source (host_speed.spread)."""
    from jaxci.analysis.host_speed import derive
    from jaxci.catalogue import load_catalogue

    derived = derive(published, load_catalogue() if catalogue is None else catalogue)
    probed = {e.where for e in derived}
    return [e for e in published if not (e.term == HOST_PYTHON and e.where in probed)] + derived


def _gpu_models() -> dict[str, str]:
    """family -> its GPU model (the catalogue's gpu_model): a GPU figure is filed under its GPU model, so that the
    device terms hold on every family with that GPU ({} without a readable catalogue: filed under the family)."""
    from jaxci.catalogue import CatalogueError, load_catalogue

    try:
        catalogue = load_catalogue()
    except CatalogueError:
        return {}
    return {name: str(e.value("gpu_model")) for name, e in catalogue.items() if e.has_gpu}
