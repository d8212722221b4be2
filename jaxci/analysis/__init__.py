"""What we compute from results: pure functions over `jaxci.results.records.Record` lists: crossover, FP64
penalty, cold-start compile share, sampler and concurrency tables, achieved fraction of peak, predictions. No JAX,
no I/O, and nothing from jaxci but this package (advice, prices and timeouts are jaxci.policy)."""

from __future__ import annotations

import math
import statistics
from collections import defaultdict

AXES = ("n", "dtype", "device")
#: the scales a run records (benchmarks/common.py's track_scale), least to most trustworthy for a figure
SCALE_RANK = {"ci": 0, "unknown": 1, "full": 2}


def scale_label(scales) -> str:
    """One label for a set of recorded scales: "full", "ci", "mixed: ci, full" or "unrecorded"."""
    scales = set(scales)
    if not scales or scales == {"unknown"}:
        return "unrecorded"
    if len(scales) == 1:
        return next(iter(scales))
    return "mixed: " + ", ".join(sorted(s if s != "unknown" else "unrecorded" for s in scales))


def case_of(rec, drop=AXES) -> tuple:
    """The params that name a kernel variant (everything but the size, dtype and device axes), sorted."""
    return tuple(sorted((k, v) for k, v in rec.params.items() if k not in drop))


def case_label(benchmark: str, case: tuple) -> str:
    extra = " ".join(f"{k}={v}" for k, v in case)
    return f"{benchmark} {extra}".strip()


def is_timing(rec) -> bool:
    """Lower-is-better wall times of warm calls (time_*); cold first calls are kept apart."""
    return rec.method.startswith("time_")


def group(records, key) -> dict:
    out = defaultdict(list)
    for rec in records:
        out[key(rec)].append(rec)
    return dict(out)


def median(values):
    """statistics.median, None for no values."""
    values = list(values)
    return statistics.median(values) if values else None


def safe_ratio(a, b) -> float | None:
    """a / b for finite numbers with b != 0, else None: a 0.0 or inf time is legal in asv results, and a
    ratio of it is undefined ("not measured"), never a crash, inf or nan."""
    if not all(isinstance(x, (int, float)) and math.isfinite(x) for x in (a, b)) or b == 0:
        return None
    return a / b


def finite_or_none(obj):
    """`obj` (dicts, lists, tuples nested) with every NaN and infinity replaced by None, so that
    json.dumps writes strict JSON (no bare NaN / Infinity, which strict parsers reject)."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: finite_or_none(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [finite_or_none(v) for v in obj]
    return obj
