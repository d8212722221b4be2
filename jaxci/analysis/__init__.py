"""What we compute from results: pure functions over `jaxci.results.records.Record` lists: crossover, FP64
penalty, cold-start compile share, sampler and concurrency tables, achieved fraction of peak, predictions. No JAX,
no I/O, and nothing from jaxci but this package and the pure jaxci.util.versions and jaxci.util.scales (advice,
prices and timeouts are jaxci.policy)."""

from __future__ import annotations

import math
import statistics
from collections import defaultdict

from jaxci.util.scales import SCALE_RANK, scale_label  # noqa: F401 (the recorded scales: analysis' users read them here)

AXES = ("n", "dtype", "device")


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
