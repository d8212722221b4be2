"""How far the predicted CPU/GPU crossovers move when the CPU machines in the results change (issue 26 goal;
`jaxci crossover-stability`, docs/runner-model.md).

Builds results sets from a results directory: every machine as committed, then each GPU machine with
one CPU-only machine at a time (e.g. lab-h200 + ref-epyc-2c-ci, lab-h200 + lab-epyc-2c), copied into a temp
directory, and renders each family's predicted crossover per kernel and dtype on each set, with the largest
over smallest. The GPU machine's own host CPU is in every set: it calibrates CPU terms too.

A crossover is compared as the size the audit decides with (jaxci.analysis.predict.threshold): the break-even,
the smallest measured size where the GPU is faster at every size ("<= n"), or "none" where it never is. Two sets
that both say "none" agree; "none" against a size is a changed decision (printed "inf"). Mixing "<= n" with a
break-even compares the smallest size with it: the move of the decision over the measured sizes, a lower bound
on the move of the crossing itself (which lies below the measured range there).

`--published` gives the model the published inputs (docs/reference/published-figures.json),
as the report takes them; without it the crossovers are transfer-only.

`--held-out` checks the CPU op-mix rule below a machine's smallest size instead: each CPU machine's smallest
measured size predicted from its next two (the line through them, jaxci.analysis.primitives.element_rate_at)
beside the rate held, against what it measured there.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

FAMILIES = ("g4dn.2xlarge", "g5.2xlarge", "g6.2xlarge")


def subsets(results: Path) -> dict[str, list[str]]:
    """Name -> machine directories: all, and each GPU machine with one CPU-only machine."""
    from jaxci.results.records import load_results

    rs = load_results(results)
    gpu = sorted(m for m, f in rs.machines.items() if f.has_gpu)
    cpu = sorted(m for m, f in rs.machines.items() if not f.has_gpu)
    out = {"all: " + " + ".join(sorted(rs.machines)): sorted(rs.machines)}
    for c in cpu:
        out[" + ".join(gpu + [c])] = gpu + [c]
    return out


def crossovers(results: Path, machines: list[str], families, published=()) -> dict:
    """Each family's predicted crossovers on one results set; `published`: the model's published inputs
    (jaxci.evidence.inputs.load), none by default (transfer-only)."""
    from jaxci.analysis.model import RunnerModel
    from jaxci.analysis.predict import Predictor, predictions
    from jaxci.catalogue import load_catalogue
    from jaxci.results.records import load_results

    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp) / "results"
        d.mkdir()
        shutil.copy(results / "benchmarks.json", d / "benchmarks.json")
        for m in machines:
            shutil.copytree(results / m, d / m)
        rs = load_results(d)
        cat = load_catalogue(include_lab=True)
        pred = Predictor(rs.latest(), rs.machines, cat)
        pred.model = RunnerModel.from_results(rs.latest(), rs.machines, cat, published)
        _, cross = predictions(rs.latest(), rs.machines, cat, predictor=pred)
    return {(c.family, c.kernel, c.dtype): c for c in cross if c.family in families}


def decision(c) -> float | None:
    """The size the audit decides with (predict.threshold): break-even, smallest size (GPU faster at every
    size), inf (never in range); None: no crossover to compare (a band, not measured, not predicted)."""
    from jaxci.analysis.predict import threshold

    if c is None:
        return None
    smallest = c.points[0][0] if c.points else None
    return threshold(c.kind, c.n, smallest) if smallest is not None else None


def _n(c) -> str:
    d = decision(c)
    if c is None:
        return "—"
    if d is None:
        return c.kind
    if d == float("inf"):
        return "none"
    lo = f"{c.low:.0f}" if c.low is not None else "none"
    hi = f"{c.high:.0f}" if c.high is not None else "none"
    return (f"<= {d:,.0f}" if c.n is None else f"{d:,.0f}") + f" ({lo}-{hi})"


def spread(ds: list) -> float | None:
    """Largest over smallest decision size; inf when some sets say "none" and others a size; None: all "none"
    or fewer than two sets to compare."""
    ds = [d for d in ds if d is not None]
    if len(ds) < 2:
        return None
    finite = [d for d in ds if d != float("inf")]
    if not finite:
        return None
    return float("inf") if len(finite) < len(ds) else max(finite) / min(finite)


def _ends(cs) -> str:
    """CPU over GPU time at the largest common size, per set: near 1 the two lines run parallel there (both
    compute-bound), so a small change of either rate moves the crossing far or removes it (ill-conditioned)."""
    out = []
    for c in cs:
        pts = [p for p in (c.points if c is not None else []) if p[1] and p[2]]
        out.append(f"{pts[-1][1] / pts[-1][2]:.2f} (n={pts[-1][0]:,})" if pts else "—")
    return ", ".join(out)


def held_out(results: Path) -> str:
    """Each CPU machine's smallest op-mix size, predicted from its next two sizes: the line through them (the
    rule) and the rate held (the rule before), against the measured median."""
    from jaxci.analysis import primitives as P
    from jaxci.results.records import load_results

    recs = load_results(results).latest()
    lines = ["| machine | dtype | n | measured µs | line through the next two µs (x) | rate held µs (x) |",
             "|---|---|---|---|---|---|"]
    for m in sorted({r.machine for r in recs if r.benchmark == P.ELEMENTWISE}):
        for dtype in ("float32", "float64"):
            f, _ = P.floor(recs, m, "cpu", dtype)
            pts = sorted((r for r in P._ok(recs, m, P.ELEMENTWISE, "cpu", dtype=dtype)), key=lambda r: r.params["n"])
            if f is None or len(pts) < 3:
                continue
            n = pts[0].params["n"]
            rest = [r for r in recs if r not in pts[:1]]
            line, _ = P.element_rate_at(rest, m, "cpu", dtype, n, f.mid)
            if line is None:  # no rate from the next two sizes: nothing to hold against the measurement
                continue
            held = f.mid + (pts[1].value - f.mid) * n / pts[1].params["n"]
            t = f.mid + n / line.rate.mid
            lines.append(f"| {m} | {dtype} | {n:,} | {pts[0].value * 1e6:.1f} | {t * 1e6:.1f} "
                         f"(x{t / pts[0].value:.2f}) | {held * 1e6:.1f} (x{held / pts[0].value:.2f}) |")
    return "\n".join(lines)


def compared(results: Path, families, published=()) -> str:
    """The table of every family's crossovers on each results set, with the largest move and the count within
    1.5x; `published`: the model's published inputs (none: transfer-only)."""
    sets = subsets(results)
    got = {name: crossovers(results, ms, families, published) for name, ms in sets.items()}
    keys = sorted({k for g in got.values() for k in g})
    names = list(sets)
    lines = ["| family | kernel | dtype | " + " | ".join(names) + " | max / min | cpu / gpu at the largest n |",
             "|---|---|---|" + "---|" * len(names) + "---|---|"]
    worst = []
    for k in keys:
        cs = [got[name].get(k) for name in names]
        s = spread([decision(c) for c in cs])
        if s:
            worst.append((s, k, any(c is not None and c.n is not None for c in cs)))
        tail = (f" | {s:.2f} |" if s else " | — |") + f" {_ends(cs)} |"
        lines.append(f"| {k[0]} | {k[1]} | {k[2]} | " + " | ".join(_n(c) for c in cs) + tail)
    if worst:
        s, k, _ = max(worst)
        crossing = [w for w, _, has in worst if has]
        lines.append(f"\nlargest move: {s:.2f}x ({k[0]} {k[1]} {k[2]}); {sum(w <= 1.5 for w, *_ in worst)} of "
                     f"{len(worst)} compared within 1.5x; with a break-even in some set: "
                     f"{sum(w <= 1.5 for w in crossing)} of {len(crossing)}")
    return "\n".join(lines)
