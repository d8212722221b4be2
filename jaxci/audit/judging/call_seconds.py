"""The seconds of a lecture's jitted calls as the hooks recorded them: a call's own measurement (its warm call,
else its first less its compile), else the same function's measured elsewhere in the run (the fast-path calls
are counted, not timed), kept within the cell's time and, where calls are the cell's only sizeable JAX work,
scaled up to fill it.
"""

from __future__ import annotations

import statistics

from jaxci.audit.reading.cell_records import JitCall


def measured_call(entry: JitCall) -> float | None:
    """Seconds of one call measured here with its result waited for: the warm call, else the first less its own
    compile part; None when neither was timed."""
    if entry.warm_s is not None:
        return float(entry.warm_s)
    if entry.first_s is not None and entry.compile_s is not None:
        return max(float(entry.first_s) - float(entry.compile_s), 0.0)
    return None


def known_calls(run) -> dict:
    """Per jitted function: this run's waited seconds per call where some cell timed one (the median over them):
    the figure for its fast-path calls, which are counted, not timed."""
    seen: dict = {}
    for cell in run.cells:
        for entry in cell.calls or []:
            mine = measured_call(entry)
            if mine is not None and entry.name:
                seen.setdefault(entry.name, []).append(mine)
    return {name: statistics.median_high(v) for name, v in seen.items()}


def call_seconds(cell, known: dict) -> list:
    """Seconds per call of each of the cell's call entries: measured in this cell, else the same function's
    measured elsewhere in the run (fast-path calls), scaled down together so they never exceed the cell's time
    outside compile, start-up and import, and the fast-path calls scaled up to fill it where calls are the cell's
    only sizeable JAX work (_fill); None where neither is known."""
    per = _unfilled(cell, known)
    budget = max(cell.wall_s - (cell.compile_s or 0.0) - (cell.startup_s or 0.0) - (cell.import_s or 0.0), 0.0)
    spent = sum((s or 0.0) * e.calls for s, e in zip(per, cell.calls or []))
    if spent > budget:
        return [None if s is None else s * budget / spent for s in per]
    fast = _fill(cell, per, budget - spent)
    return [None if s is None else s * (1.0 + _fillable(e) * (fast - 1.0) / max(e.calls, 1))
            for s, e in zip(per, cell.calls or [])]


def _unfilled(cell, known: dict) -> list:
    """Seconds per call of each entry before _fill: measured in this cell, else known from elsewhere in the run."""
    return [measured_call(e) if measured_call(e) is not None else known.get(e.name) for e in cell.calls or []]


def _fillable(entry: JitCall) -> int:
    """An entry's fast-path calls (counted, not timed) that _fill may scale: all of its calls when none was timed in
    this cell; when some were (the compiling call, the warm call after it), the others, but only where the two
    timed calls differ by more than VARIES times: its seconds vary with its arguments, so the timed ones do not
    stand for the rest. 0 otherwise."""
    calls = entry.calls
    if measured_call(entry) is None:
        return calls
    first, warm = entry.first_s, entry.warm_s
    if first is None or warm is None or entry.compile_s is None:
        return 0
    alone = max(first - entry.compile_s, 1e-12)
    return max(calls - 2, 0) if max(alone, warm) > VARIES * max(min(alone, warm), 1e-12) else 0


#: two timed calls of one signature this many times apart vary with their arguments (_fillable)
VARIES = 2.0


def _fill(cell, per: list, left: float) -> float:
    """The factor on a cell's fast-path calls so that they fill its time left beyond all its calls, when calls are
    its only sizeable JAX work (no top-level loop; eager ops, if any, only on tiny operands: _tiny_eager). One
    function's seconds vary with its arguments (a solver over a growing grid, a simulation over longer horizons),
    so the seconds measured for one call undercount the others, and the rest would stand as host or eager time
    carried to the GPU. 1 elsewhere. The GPU side keeps the filled part as host time at its band's high end
    (filled_seconds)."""
    if any(loop.top_level for loop in cell.loops or []) or not _tiny_eager(cell):
        return 1.0
    left -= cell.eager.s if cell.eager else 0.0  # the tiny ops' own counted seconds stay eager work
    fast = sum((s or 0.0) * _fillable(e) for s, e in zip(per, cell.calls or []))
    if fast <= 0 or left <= 0:
        return 1.0
    return (fast + left) / fast


#: eager operands this small (elements) compute in well under a microsecond on a CPU core: such an op's time is its
#: dispatch, which the hooks count (`eager["s"]`), so a cell's seconds beyond those are not eager work
TINY_EAGER = 1024


def _tiny_eager(cell) -> bool:
    """The cell ran no eager op, or only ops whose operands the hooks sized (every one) at TINY_EAGER or fewer."""
    eager = cell.eager
    if eager is None or not eager.ops:
        return True
    return bool(eager.sizes) and sum(size.ops for size in eager.sizes) >= eager.ops \
        and eager.biggest.largest <= TINY_EAGER


def filled_seconds(cell, known: dict) -> float:
    """Seconds _fill moved from a cell's host time to its fast-path calls (0 where it moved none)."""
    before, after = _unfilled(cell, known), call_seconds(cell, known)
    return sum(max((a or 0.0) - (b or 0.0), 0.0) * e.calls
               for a, b, e in zip(after, before, cell.calls or []))
