"""Every runner family's host single-thread speed, as the pure-Python probe (host.PurePython int_sum 10M) the host
factor h divides: published where the family's own runner published it, else carried from a family with the same
CPU model, else predicted through sourced single-thread scores of the two CPU models.

Why single-thread: a lecture's seconds are one kernel's, and what the host factor moves (host code, tracing,
compiles, the CPU side's Python) runs on one thread, so the CPU's single-thread figure moves it, never its core
count. Two families with the same CPU model therefore get the same probe (their published single-thread scores
differ by 1-8 % between instance sizes: the spread of the measurement, kept in the band).

    probe(F) = probe(A) x score(A) / score(F)     for every family A with a published probe; the score ratio is the
               geometric mean over the score kinds (PassMark single-thread, Geekbench 6 single-core) of the
               geometric mean over every pair of instances of the two CPU models (`score_ratio`)

The middle is the geometric mean over the anchors; the band runs from the lowest to the highest end (every pair
of instances of each kind). A family with its own published probe keeps it as its middle, with a band over every
other source of the same figure (`spread`: the other anchors through the scores, and a published ratio of the same
lecture work on the two runners where one exists). The runner model's host ratio between two machines without a
published probe uses the same `score_ratio`. A predicted probe is an `Evidence` of kind "predicted" that names the
published probes it came from (`figures`), so a leave-one-out score of a probe drops everything derived from it.
Without a published probe (a transfer-only model) or without a score for the family's CPU, nothing is derived: the
family has no probe and says so.
"""

from __future__ import annotations

import math
from dataclasses import replace

from jaxci.analysis.evidence import HOST_PYTHON, HOST_RATIO, Evidence, select
from jaxci.analysis.primitives import Band

#: catalogue figures of a CPU model's single-thread speed (higher is faster), each sourced per instance type
SCORES = ("cpu_single_thread_score", "cpu_geekbench6_single")


def cpu_model(entry) -> str | None:
    """The family's sourced CPU model, the key two families share their single-thread speed by."""
    value = entry.value("cpu_model") if entry is not None else None
    return str(value).strip() if value else None


def _scores(catalogue: dict, model: str, kind: str) -> list[tuple[str, float]]:
    """(family, score) of every catalogue family with this CPU model and a sourced score of this kind."""
    out = []
    for name, entry in catalogue.items():
        value = entry.value(kind) if cpu_model(entry) == model else None
        if value:
            out.append((name, float(value)))
    return out


def family_probe(published, family: str) -> Evidence | None:
    """The family's pure-Python probe among `published` (with `derive`'s output: published, carried within a CPU
    model, or predicted through single-thread scores), or None: the one host speed the audit's host factor, the
    runner model's host terms, `jaxci predict --kernel pure_python` and the report all read."""
    found = [e for e in select(published or (), (family,), "cpu", HOST_PYTHON) if e.n]
    return found[0] if found else None


def derive(published, catalogue: dict) -> list[Evidence]:
    """A probe for every runner family: its own published one with its band over every source (`spread`), carried
    within a CPU model, else predicted."""
    anchors = {name: ev for name in catalogue if (ev := family_probe(published, name)) is not None}
    spread_out = {name: spread(name, anchors, catalogue, published) for name in anchors}
    out = list(spread_out.values())
    for name, entry in catalogue.items():
        model = cpu_model(entry)
        if entry.is_lab or name in anchors or model is None:
            continue
        same = next((a for a in anchors if cpu_model(catalogue[a]) == model), None)
        if same is not None:
            ev = spread_out[same]
            carried = f"{ev.source}; carried from {same}, the same CPU model ({model})"
            out.append(replace(ev, where=name, source=carried))
            continue
        found = predicted(name, model, anchors, catalogue)
        if found is not None:
            out.append(found)
    return out


def spread(name: str, anchors: dict, catalogue: dict, published) -> Evidence:
    """The family's own published probe (its middle) with a band over every source of the same figure: each other
    anchor's probe through the two CPU models' single-thread scores (`score_ratio`) and through a published ratio of
    the same lecture work on the two runners (evidence HOST_RATIO). One probe, timed once, on a host whose
    single-thread speed sources put elsewhere, is not known to better than their spread. Its `figures` stay its own:
    the middle rests on them alone."""
    own = anchors[name]
    lows, highs, parts = [own.value.low], [own.value.high], []
    for other, ev in anchors.items():
        if other == name:
            continue
        for how, ratio in _ratios(other, name, catalogue, published):
            lows.append(ev.value.low * ratio.low)
            highs.append(ev.value.high * ratio.high)
            parts.append(f"{other} {ev.value.mid:.3g} s x {how} {ratio.low:.3g}-{ratio.high:.3g}")
    if not parts:
        return own
    band = Band(own.value.mid, min(lows), max(highs))
    return replace(own, value=band, source=f"{own.source}; band {band.low:.3g}-{band.high:.3g} s over every source: "
                                           f"{'; '.join(parts)}")


def _ratios(ref: str, family: str, catalogue: dict, published) -> list[tuple[str, Band]]:
    """How long the same host work takes on `family` over `ref`: the single-thread scores' ratio, and each
    published ratio of lecture work between the two (either way round)."""
    out = []
    scores = score_ratio(catalogue, ref, family)
    if scores is not None and cpu_model(catalogue.get(ref)) != cpu_model(catalogue.get(family)):
        out.append(("single-thread scores", scores))
    return out + [("published lecture ratio", r) for r in published_ratios(ref, family, published)]


def published_ratios(ref: str, family: str, published) -> list[Band]:
    """Each published ratio of the same lecture work on `family`'s host over `ref`'s (evidence HOST_RATIO, stored
    either way round)."""
    out = []
    for ev in published or ():
        if ev.term == HOST_RATIO and (ev.where, ev.key) == (family, ref):
            out.append(ev.value)
        elif ev.term == HOST_RATIO and (ev.where, ev.key) == (ref, family):
            out.append(Band(1 / ev.value.mid, 1 / ev.value.high, 1 / ev.value.low))
    return out


def predicted(name: str, model: str, anchors: dict, catalogue: dict) -> Evidence | None:
    """The family's probe from each anchor's published probe x the ratio of the two CPU models' scores."""
    mids, lows, highs, used, parts = [], [], [], set(), []
    for anchor, ev in anchors.items():
        ratio = score_ratio(catalogue, anchor, name)
        if ratio is None:
            continue
        mids.append(ev.value.mid * ratio.mid)
        lows.append(ev.value.low * ratio.low)
        highs.append(ev.value.high * ratio.high)
        used |= set(ev.figures)
        parts.append(f"{anchor} {ev.value.mid:.3g} s x {ratio.mid:.3g} ({ratio.low:.3g}-{ratio.high:.3g}) "
                     f"= {ev.value.mid * ratio.mid:.3g} s")
    if not mids:
        return None
    value = Band(_geo(mids), min(lows), max(highs))
    n = next(iter(anchors.values())).n
    source = (f"{name}'s probe predicted from the published ones x single-thread score ratios (catalogue): {model}; "
              f"{'; '.join(parts)} ({', '.join(SCORES)}, each sourced); geometric mean, band over every pair of "
              "instances")
    return Evidence(name, "cpu", HOST_PYTHON, value, source, n=n, figures=frozenset(used), kind="predicted")


def score_ratio(catalogue: dict, ref: str, family: str) -> Band | None:
    """How long single-threaded work takes on `family`'s host over `ref`'s, from the sourced single-thread scores
    of their CPU models (a higher score is faster): per score kind the geometric mean over every pair of scored
    instances, then over the kinds; the band the lowest and highest pair. 1 for the same CPU model; None without a
    sourced CPU model or a score of one kind on both."""
    a, f = cpu_model(catalogue.get(ref)), cpu_model(catalogue.get(family))
    if a is None or f is None:
        return None
    if a == f:
        return Band.of(1.0)
    mids, every = [], []
    for kind in SCORES:
        theirs, mine = _scores(catalogue, a, kind), _scores(catalogue, f, kind)
        ratios = [x / y for _, x in theirs for _, y in mine]
        if ratios:
            mids.append(_geo(ratios))
            every += ratios
    return Band(_geo(mids), min(every), max(every)) if mids else None


def _geo(values) -> float:
    values = list(values)
    return math.prod(values) ** (1 / len(values))
