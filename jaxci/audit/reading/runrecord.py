"""A run record read back from a file (the run cache, a baseline audit, an audit JSON): every field the judging
reads, checked, so a hostile or corrupt record is refused in one line naming the field instead of reaching the
arithmetic (a cell of `wall_s: -1e6` would be reused as -1,000,000 CPU seconds, NaN would become a proposed
timeout of days, a string `calls` a TypeError deep in the prediction).

The rules are the command line's: seconds finite, non-negative and bounded; counts whole and bounded; text one
line; each structure the type its readers expect. Fields nothing reads pass through as they are. Pure Python.
"""

from __future__ import annotations

import math

from jaxci.util.bounds import JOB_S
from jaxci.util.validate import InputError, number, one_line, quoted

#: a cell's seconds: at most a day, the bound of --slowest-cell-s and --cell-timeout
CELL_S = 86_400
#: a whole lecture's seconds: at most 5 days, the longest a self-hosted runner's job may run
LECTURE_S = JOB_S
#: counts (calls, compilations, loop trips, elements, bytes, flops): large, but finite and whole
COUNT = 1e18
#: memory in MiB: at most 4 TiB, the bound of jaxci env's --device-memory-mib and --peak-mib
MEMORY_MIB = 4 * 1024 * 1024
#: the most cells, call entries, loops or samplers one record may hold (the hooks keep 50 per kind per cell)
ITEMS = 100_000
#: the most shards one audit runs in (`--shard i/N`, and what `audit merge` accepts): a GitHub Actions matrix
#: holds at most 256 jobs
MAX_SHARDS = 256

CELL_SECONDS = ("wall_s", "client_s", "compile_s", "trace_s", "lower_s", "backend_s", "startup_s", "settle_s",
                "import_s", "trip_probe_s", "busy_s", "wait_s")
CELL_COUNTS = ("index", "compilations", "cache_hits", "cache_misses")
CELL_TEXT = ("status", "error", "expected_error", "error_name")
CALL_SECONDS = ("wall_s", "first_s", "compile_s", "warm_s")
CALL_COUNTS = ("calls", "elements", "largest", "flops", "bytes", "transcendentals", "fusions")
RUN_SECONDS = ("wall_s", "kernel_start_s", "cells_s", "compile_s", "run_s")
SAMPLER_COUNTS = ("chains", "warmup", "samples", "leapfrog", "leapfrog_iterations", "leapfrog_max",
                  "leapfrog_lockstep")


class RecordError(InputError):
    """A run record was refused; the message names the field (e.g. runs['cpu'].cells[3].calls[0].wall_s)."""


def run(where: str, value) -> dict:
    """A NotebookRun's as_dict(), checked (a copy: checked numbers replace the record's)."""
    return _checked(where, mapping(where, value), (
        (RUN_SECONDS, lambda w, v: seconds(w, v, LECTURE_S)),
        (("status", "error", "platform"), lambda w, v: text(w, v, 4000)),
        (("cells",), _items(cell)), (("peak_memory",), _peak_memory), (("host_probe",), _host_probe)))


def _host_probe(where: str, value) -> dict:
    """The host probe a run carries (jaxci.audit.runner.host_probe.as_dict): its seconds and trip count (a string
    there was read as no probe and fell back to a probe of None: a traceback in devsets --from-audit)."""
    return _checked(where, mapping(where, value), (
        (("seconds", "low", "high"), lambda w, v: seconds(w, v, CELL_S)), (("n",), count),
        (("text",), lambda w, v: text(w, v, 4000)), (("reused",), _flag)))


def _flag(where: str, value) -> bool:
    if not isinstance(value, bool):
        raise RecordError(f"{where}: expected true or false, got {type(value).__name__}")
    return value


def _peak_memory(where: str, value) -> dict:
    """A run's peak memory per kind, in MiB."""
    return _checked(where, mapping(where, value), (
        (("device_peak_mib", "live_buffers_mib", "host_rss_peak_mib"),
         lambda w, v: seconds(w, v, MEMORY_MIB, "MiB")),))


def cell(where: str, value) -> dict:
    """One CellTiming's as_dict(), checked: its seconds, counts, text and the hooks' records."""
    return _checked(where, mapping(where, value), (
        (CELL_SECONDS, lambda w, v: seconds(w, v, CELL_S)), (CELL_COUNTS, count),
        (CELL_TEXT, lambda w, v: text(w, v, 4000)), (("first_line",), lambda w, v: text(w, v, 4000, lines=True)),
        (("calls",), _items(call)), (("samplers",), _items(sampler)), (("loops",), _items(loop)),
        (("jitted", "memory"), _named_counts), (("eager",), eager), (("host_kinds",), _host_kinds),
        (("error_packages",), _items(lambda w, v: text(w, v, 200)))))


HOST_KINDS = ("python_s", "native_s", "threads_s")


def _host_kinds(where: str, value) -> dict:
    """A cell's CPU seconds by kind (jaxci.audit.runner.host_kinds): those three names, each seconds."""
    found = mapping(where, value)
    unknown = sorted(set(found) - set(HOST_KINDS))
    if unknown:
        raise RecordError(f"{where}: unknown kind {unknown[0]!r} (expected {', '.join(HOST_KINDS)})")
    return _checked(where, found, ((HOST_KINDS, lambda w, v: seconds(w, v, CELL_S)),))


def call(where: str, value) -> dict:
    """A jitted call entry (jit_calls.Called): its seconds, counts, name and loops."""
    return _checked(where, mapping(where, value), (
        (CALL_SECONDS, lambda w, v: seconds(w, v, LECTURE_S)), (CALL_COUNTS, count),
        (("name", "dtype", "placed"), text), (("loops",), _items(loop))))


def _checked(where: str, value: dict, rules) -> dict:
    """A copy of `value` with each field present (not None) checked by its rule: ((keys, check(where, v)), ...)."""
    out = dict(value)
    for keys, check in rules:
        for key in keys:
            if value.get(key) is not None:
                out[key] = check(f"{where}.{key}", value[key])
    return out


def _items(check):
    """A rule for a list whose every item `check` checks."""
    return lambda where, value: [check(f"{where}[{i}]", x) for i, x in enumerate(sequence(where, value))]


def _named_counts(where: str, value) -> dict:
    """An object of counts by name (a string value, such as a device's platform, passes as it is)."""
    return {k: v if isinstance(v, str) else count(f"{where}[{k!r}]", v) for k, v in mapping(where, value).items()}


def loop(where: str, value):
    """A lax loop (cell_records.TracedLoop): its asdict(), or the positional form written before,
    [kind, trips or None, carry elements, then times noted or a label, within]."""
    if isinstance(value, dict):
        if "kind" not in value:
            raise RecordError(f"{where}: no kind")
        return _checked(where, value, ((("kind", "within", "count"), text), (("trips", "carry", "times"), count)))
    items = sequence(where, value)
    if len(items) < 3:
        raise RecordError(f"{where}: expected [kind, trips, carry, ...], got {len(items)} item(s)")
    out = [text(f"{where}[0]", items[0]), count(f"{where}[1]", items[1], none=True),
           count(f"{where}[2]", items[2], none=True)]
    for i, rest in enumerate(items[3:], start=3):
        out.append(text(f"{where}[{i}]", rest) if isinstance(rest, str) else count(f"{where}[{i}]", rest, none=True))
    return out


def eager(where: str, value) -> dict:
    """Eager work: ops, seconds, and its size classes (cell_records.EagerWork)."""
    value = mapping(where, value)
    out = {**value, "ops": count(f"{where}.ops", value.get("ops", 0)),
           "s": seconds(f"{where}.s", value.get("s", 0.0), CELL_S)}
    if "sizes" in value:
        sizes = sequence(f"{where}.sizes", value["sizes"])
        out["sizes"] = [size_class(f"{where}.sizes[{i}]", x) for i, x in enumerate(sizes)]
    return out


def size_class(where: str, value) -> dict:
    """One size class of eager work: {largest, ops, dtype} (cell_records.EagerSize), or the positional
    [largest, ops, dtype] of saved runs."""
    if isinstance(value, dict):
        return {"largest": count(f"{where}.largest", value.get("largest")),
                "ops": count(f"{where}.ops", value.get("ops")), "dtype": text(f"{where}.dtype", value.get("dtype", ""))}
    items = sequence(where, value)
    if len(items) < 3:
        raise RecordError(f"{where}: expected [largest, ops, dtype], got {len(items)} item(s)")
    return {"largest": count(f"{where}[0]", items[0]), "ops": count(f"{where}[1]", items[1]),
            "dtype": text(f"{where}[2]", items[2])}


def sampler(where: str, value) -> dict:
    """A library sampler's run: seconds, chains and draws, leapfrog steps."""
    value = mapping(where, value)
    out = {**value, "s": seconds(f"{where}.s", value.get("s"), CELL_S)}
    for key in SAMPLER_COUNTS:
        if value.get(key) is not None:
            out[key] = count(f"{where}.{key}", value[key])
    return out


# ---- one rule per kind of value ----

def mapping(where: str, value) -> dict:
    if not isinstance(value, dict):
        raise RecordError(f"{where}: expected an object, got {kind(value)}")
    return value


def sequence(where: str, value) -> list:
    if not isinstance(value, list):
        raise RecordError(f"{where}: expected a list, got {kind(value)}")
    if len(value) > ITEMS:
        raise RecordError(f"{where}: {len(value):,} items, at most {ITEMS:,}")
    return value


def text(where: str, value, limit: int = 1000, *, lines: bool = False) -> str:
    """A string of at most `limit` characters, one line unless `lines` (a cell's first line may hold a tab)."""
    if not isinstance(value, str):
        raise RecordError(f"{where}: expected a string, got {kind(value)}")
    if not is_line(value, limit, lines=lines):
        raise RecordError(f"{where}: {quoted(value, 80)}: must be one line of at most {limit:,} characters")
    return value


def is_line(value, limit: int = 4000, *, lines: bool = False) -> bool:
    """A string of at most `limit` characters without control characters (a tab too, with `lines`)."""
    return isinstance(value, str) and len(value) <= limit and not any(
        (ord(c) < 32 and not (lines and c == "\t")) or ord(c) == 127 for c in value)


def seconds(where: str, value, high: float, unit: str = "seconds") -> float | None:
    """A finite number in [0, high] (validate.number, as the command line checks seconds); None where nothing
    was measured; a bool or a string is refused, not read as 1 or parsed."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise RecordError(f"{where}: expected a number, got {kind(value)}")
    if isinstance(value, int) and not -high <= value <= high:  # a 400-digit integer: no float() overflow
        value = math.copysign(math.inf, value)
    try:
        return number(where, value, low=0, high=high, unit=unit, low_inclusive=True)
    except InputError as exc:
        raise RecordError(str(exc)) from None


def count(where: str, value, *, none: bool = False):
    """A finite non-negative number of things (a mean of turns may be fractional), at most COUNT."""
    if value is None and none:
        return None
    checked = seconds(where, value, COUNT, "")
    return value if isinstance(value, int) else checked  # a whole count stays an int


def kind(value) -> str:
    return f"{type(value).__name__} {quoted(value, 40)}" if isinstance(value, str) else \
        f"{type(value).__name__} {one_line(value, 40)}"
