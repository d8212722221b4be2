"""asv's files one at a time: a results file through asv's own `Results`, machine.json and benchmarks.json with
their format version checked, asv's writer for what is written back, and the merge of two results files of one
machine and commit (an import adds what is new, a measured value never replaced by a failed one). Every path is
checked first (jaxci.util.safeio), so a FIFO or a link to a device is refused instead of blocking a reader.
"""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

from jaxci.util import safeio


class ResultsError(ValueError):
    """The results directory itself is unusable (missing, not a directory)."""


class FormatError(ResultsError):
    """A file is not what asv writes (or of another asv format); the message names the file and the cause."""

    def __init__(self, path, reason: str):
        super().__init__(f"{path}: {reason}" if path else reason)
        self.path, self.reason = path, reason


#: the largest asv file read (a results file of the whole suite is under 1 MiB; machine.json a few hundred bytes)
RESULT_LIMIT = 32 * 1024 * 1024
MACHINE_LIMIT = 1024 * 1024
#: asv's files nest 4 deep (results -> row -> column -> value list)
FORMAT_DEPTH = 16


def load_file(path: str | Path, machine: str | None = None):
    """One asv results file as asv's `Results` (the one place result files are opened). Raises FormatError.
    The path is checked first (a regular file, at most RESULT_LIMIT bytes), so a FIFO or a link to a device
    is refused instead of blocking asv's reader."""
    from asv.results import Results

    try:
        safeio.check(path, RESULT_LIMIT)
    except safeio.UnsafeFile as exc:
        raise FormatError(path, exc.reason) from None
    try:
        return Results.load(str(path), machine_name=machine)
    except RecursionError:
        raise FormatError(path, "not an asv results file (JSON nested too deep)") from None
    except Exception as exc:  # asv raises UserError; a truncated or damaged file can raise anything
        raise FormatError(path, f"not an asv results file ({_short(exc)})") from None


def _short(exc: Exception) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= 300 else text[:300] + "..."


def _load_versioned(path, api_version: int, limit: int) -> dict:
    """A JSON file of asv's with its "version" key checked and removed (asv's util.load_json, through safeio)."""
    try:
        data = safeio.load_json(path, limit, max_depth=FORMAT_DEPTH)
    except safeio.UnsafeFile as exc:
        raise FormatError(path, exc.reason) from None
    if not isinstance(data, dict):
        raise FormatError(path, f"malformed: a JSON {type(data).__name__}, not an object")
    version = data.pop("version", None)
    if version is None:
        raise FormatError(path, "no version specified (not a file asv wrote)")
    if version != api_version:
        raise FormatError(path, f"asv format version {version!r}; this asv reads version {api_version}")
    return data


def read_results_json(path: str | Path) -> dict:
    """An asv results file (format 2) as its JSON, version key kept (for merge_files), through safeio."""
    from asv.results import Results

    data = _load_versioned(path, Results.api_version, RESULT_LIMIT)
    if not isinstance(data.get("results"), dict) or not isinstance(data.get("result_columns"), list):
        raise FormatError(path, "malformed: no results object or result_columns list")
    data["version"] = Results.api_version
    return data


def load_machine_json(path: str | Path) -> dict:
    """results/<machine>/machine.json (asv's api version checked). Raises FormatError."""
    from asv.machine import Machine

    info = _load_versioned(path, Machine.api_version, MACHINE_LIMIT)
    if not isinstance(info.get("machine"), str):
        raise FormatError(path, "malformed: no machine name")
    bad = [k for k, v in info.items() if not isinstance(v, (str, int, float, type(None))) or isinstance(v, bool)]
    if bad:
        raise FormatError(path, f"malformed: {bad[0]!r} is a {type(info[bad[0]]).__name__}, not text or a number")
    return info


def load_benchmarks_json(path: str | Path) -> dict:
    """results/benchmarks.json (asv's api version 2) without its version key. Raises FormatError."""
    data = _load_versioned(path, 2, RESULT_LIMIT)
    bad = [k for k, v in data.items() if not isinstance(v, dict)]
    if bad:
        raise FormatError(path, f"malformed: entry {bad[0]!r} is a {type(data[bad[0]]).__name__}, not an object "
                                f"({len(bad)} such)")
    for key, entry in data.items():
        for field_, kind in (("version", str), ("params", list), ("param_names", list)):
            if field_ in entry and not isinstance(entry[field_], kind):
                raise FormatError(path, f"malformed: {key}: {field_} is a {type(entry[field_]).__name__}, "
                                        f"not a {kind.__name__}")
        if len(entry.get("params") or []) != len(entry.get("param_names") or []):
            raise FormatError(path, f"malformed: {key}: {len(entry.get('params') or [])} param lists but "
                                    f"{len(entry.get('param_names') or [])} param names")
    return data


def save_file(path: str | Path, data: dict) -> None:
    """Write an asv results file (format 2) with asv's own writer, so it stays one asv reads and writes."""
    from asv.util import write_json

    write_json(str(path), data, api_version=2, compact=True)


def set_requirements(machine_dir: str | Path, versions: dict) -> None:
    """Record package versions in each result file of a machine folder that has none (asv's `existing`
    environment records no requirements); the rest of each file stays as asv wrote it."""
    from asv import util
    from asv.results import Results

    for path in sorted(Path(machine_dir).glob("*.json")):
        if path.name == "machine.json":
            continue
        data = util.load_json(str(path), api_version=Results.api_version)
        if not data.get("requirements"):
            data["requirements"] = versions
            util.write_json(str(path), data, api_version=Results.api_version)


def machine_files(results_dir: str | Path, machine: str, pattern: str = "*.json") -> list:
    """Every loadable result file of results/<machine>/ whose name matches `pattern`, as asv's `Results`
    (unreadable ones left out)."""
    out = []
    for path in sorted((Path(results_dir) / machine).glob(pattern)):
        if path.name == "machine.json":
            continue
        try:
            out.append(load_file(path, machine))
        except FormatError:
            continue
    return out


def combinations(res):
    """(benchmark, combination as asv's param strings, value) of every result in a loaded file; a benchmark
    without params has one combination, (). Values are asv's: a number, None (failed) or NaN (n/a)."""
    for key in res.get_all_result_keys():
        params = res.get_result_params(key) or []
        values = res.get_result_value(key, params)
        if not params:
            yield key, (), values[0] if isinstance(values, list) else values
            continue
        yield from ((key, combo, value) for combo, value in zip(itertools.product(*params), values))


def is_number(value) -> bool:
    """A measured value: a finite number (not failed, not n/a, not a bool)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def commit_files(results_dir: Path, machine: str, commit: str) -> list:
    """The loaded result files of `commit` in results/<machine>/ (unreadable ones left out)."""
    return [res for res in machine_files(results_dir, machine, f"{commit[:8]}-*.json") if res.commit_hash == commit]


def measured_keys(results_dir: Path, machine: str, commit: str) -> set[str]:
    """Benchmarks with a result for `commit` in results/<machine>/ (any value, failed included)."""
    return {key for res in commit_files(results_dir, machine, commit) for key in res.get_all_result_keys()}


def any_value(results_dir: Path, machine: str, commit: str) -> bool:
    """True when a result file of `commit` holds at least one measured number (not failed, not n/a)."""
    return any(is_number(value) for res in commit_files(results_dir, machine, commit)
               for _, _, value in combinations(res))


def _outcome_rank(value) -> int:
    """n/a (NaN) < failed (None) < measured: a later capture may only move a combination up."""
    return 2 if is_number(value) else (0 if isinstance(value, float) else 1)


def merge_files(old: dict, new: dict) -> tuple[dict, int, list[str]]:
    """Two asv results files (JSON, format 2) of one machine, commit and environment: the combinations of
    `new` that `old` lacks (n/a there, or failed there and measured here) are taken with every column.
    asv has no API for this, so it is done on the file format, here beside the rest of it.
    Returns the merged file, how many combinations it gained, and a note per combination measured in both."""
    if old.get("version") != 2 or new.get("version") != 2 or old.get("result_columns") != new.get("result_columns"):
        raise FormatError(None, "results files of another asv format: cannot merge them combination by combination")
    columns = old["result_columns"]
    merged, gained, again = json.loads(json.dumps(old)), 0, []
    for key, row in new["results"].items():
        ours = merged["results"].get(key)
        if ours is None or ours[columns.index("version")] != row[columns.index("version")] \
                or ours[columns.index("params")] != row[columns.index("params")]:
            if ours is not None:
                again.append(f"{key}: another benchmark version or params: kept the first")
                continue
            merged["results"][key] = row
            gained += sum(_outcome_rank(v) > 0 for v in (row[0] if isinstance(row[0], list) else [row[0]]))
            continue
        ours.extend([None] * (len(columns) - len(ours)))   # asv drops trailing empty columns
        if not isinstance(row[0], list):                   # a benchmark without params: one outcome, whole row
            if is_number(ours[0]) and is_number(row[0]) and ours[0] != row[0]:
                again.append(f"{key}: measured in both, kept the first ({ours[0]:.4g}; this one {row[0]:.4g})")
            elif _outcome_rank(row[0]) > _outcome_rank(ours[0]):
                merged["results"][key], gained = row, gained + 1
            continue
        gained += _merge_row(key, ours, row, columns, again)
    for name, seconds in new.get("durations", {}).items():
        merged.setdefault("durations", {}).setdefault(name, seconds)
    return merged, gained, again


def _merge_row(key: str, ours: list, row: list, columns: list, again: list[str]) -> int:
    """Take into `ours` each combination of `row` that ranks higher (every per-combination column)."""
    per_combo = [i for i, c in enumerate(columns) if c == "result" or c.startswith("stats_") or c == "samples"]
    combos, gained = list(itertools.product(*row[1])), 0   # asv's order of combinations
    for j, value in enumerate(row[0]):
        first = ours[0][j]
        if is_number(first) and is_number(value) and value != first:
            again.append(f"{key}({', '.join(combos[j])}): measured in both, kept the first ({first:.4g}; this one "
                         f"{value:.4g}, x{value / first:.2f})")
        elif _outcome_rank(value) > _outcome_rank(first):
            for i in per_combo:
                theirs = row[i] if i < len(row) and isinstance(row[i], list) else None
                if theirs is not None:
                    ours[i] = ours[i] if isinstance(ours[i], list) else [None] * len(row[0])
                    ours[i][j] = theirs[j]
                elif isinstance(ours[i], list):
                    ours[i][j] = None
            gained += 1
    return gained
