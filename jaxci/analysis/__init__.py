"""Pure functions over `jaxci.results.Record` lists: crossover, FP64 penalty, cold-start compile share,
sampler and concurrency tables, achieved fraction of peak, cost, predictions. No JAX, no I/O."""

from __future__ import annotations

from collections import defaultdict

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
    values = sorted(values)
    if not values:
        return None
    mid = len(values) // 2
    return values[mid] if len(values) % 2 else (values[mid - 1] + values[mid]) / 2
