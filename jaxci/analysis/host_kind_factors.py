"""Host work scaled by what it is (issue 81 item 2): per runner family, how long each kind of host work takes there
over a reference family, with its band and sources. The kinds are those the kernel records per cell
(jaxci.audit.runner.host_kinds): the interpreter (`python_s`), native code on the main thread (`native_s`), and
other threads (`threads_s`).

    python   the runner model's pure-Python probe (host.PurePython int_sum at 10M: published on the T4 and CPU
             runners, else predicted through single-thread scores; jaxci.analysis.host_speed.family_probe)
    native   the two CPU models' sourced single-thread scores (host_speed.score_ratio: PassMark single-thread,
             Geekbench 6 single-core); where a published ratio of the same lecture work without JAX exists between
             the two runners, the band is widened to it (docs/reference/published-figures.json host_ratios)
    threads  the runner model's NumPy float64 matmul at n = 3,000 (BLAS on every core: published on both runners,
             else scaled by the catalogue's CPU figures; jaxci.analysis.model_host)

A factor above 1 means slower there. Each factor is the output of the model or of a sourced ratio, never a
measured cell; it is not yet read by the prediction (the development sets' runs do not record the kinds yet).
"""

from __future__ import annotations

from dataclasses import dataclass

from jaxci.analysis.primitives import Band

KINDS = ("python", "native", "threads")
REFERENCE = "ubuntu-latest"


@dataclass(frozen=True)
class KindFactor:
    kind: str
    family: str
    ref: str
    value: Band | None          # seconds on `family` over seconds on `ref` (mid, low, high); None: not known
    source: str                 # where it came from, or why it is not known


def _ratio(here: Band, there: Band) -> Band:
    """`here` over `there`, the band from the lowest to the highest quotient of their ends."""
    return Band(here.mid / there.mid, here.low / there.high, here.high / there.low)


def _predicted(model, family: str, kernel: str, n: int, dtype: str) -> tuple[Band | None, str]:
    p = model.predict(family, kernel, n, dtype, "cpu")
    if not p:
        return None, p.reason
    return Band(p.seconds, p.low, p.high), f"{p.label} {p.seconds:.3g} s ({p.basis})"


def _by_model(model, kind: str, family: str, ref: str, kernel: str, n: int, dtype: str) -> KindFactor:
    (here, said_here), (there, said_there) = (_predicted(model, f, kernel, n, dtype) for f in (family, ref))
    if here is None or there is None:
        return KindFactor(kind, family, ref, None, f"not known: {said_here if here is None else said_there}")
    return KindFactor(kind, family, ref, _ratio(here, there),
                      f"{kernel} n={n:,} {dtype}: {family} {said_here}; {ref} {said_there}")


def _native(model, family: str, ref: str) -> KindFactor:
    from jaxci.analysis import host_speed

    scores = host_speed.score_ratio(model.catalogue, ref, family)
    if scores is None:
        return KindFactor("native", family, ref, None, "not known: no sourced single-thread score of both CPUs")
    source = (f"single-thread scores ({', '.join(host_speed.SCORES)}, catalogue) "
              f"{scores.mid:.3g} ({scores.low:.3g}-{scores.high:.3g})")
    band = scores
    for ratio in host_speed.published_ratios(ref, family, model.published):
        band = Band(band.mid, min(band.low, ratio.low), max(band.high, ratio.high))
        source += f"; band widened to a published lecture ratio {ratio.low:.3g}-{ratio.high:.3g}"
    return KindFactor("native", family, ref, band, source)


def factors(model, family: str, ref: str = REFERENCE) -> list[KindFactor]:
    """The three kinds' factors of `family` over `ref`, in KINDS' order (1 for the reference itself)."""
    if family == ref:
        return [KindFactor(kind, family, ref, Band.of(1.0), "the reference") for kind in KINDS]
    return [_by_model(model, "python", family, ref, "pure_python", 10_000_000, "float32"),
            _native(model, family, ref),
            _by_model(model, "threads", family, ref, "numpy_matmul", 3000, "float64")]
