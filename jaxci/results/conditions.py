"""How a machine's results were measured: `results/<machine>/conditions.toml`, beside asv's result files.

asv's result format has no place for the machine's load, yet load decides whether a step between two releases is
the release's or a neighbour's test suite's. `jaxci history` appends here, for every release it runs, the CPU and
the 1-minute load average sampled through the run (`[[run]]`), and for every step it re-measures to confirm it,
the first and the rerun ratio (`[[confirmation]]`). Each record also has `cpu_own` and `cpu_others`: the CPUs the
run and every other process used through it (util.loadavg), which is what the quiet rule reads. asv reads only
`*.json` in a machine folder, so it never sees
this file; `jaxci report` reads it to split confirmed steps from unconfirmed ones. Written through util.safewrite,
read through util.safeio; every record is checked on the way in (a bad one is reported and left out, the rest kept).
"""

from __future__ import annotations

import json
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from jaxci.results.asvfiles import is_number
from jaxci.util import safeio, safewrite
from jaxci.util.loadavg import Load
from jaxci.util.validate import quoted
from jaxci.util.versions import RELEASE

FILE = "conditions.toml"
HEADER = ("# How these results were measured (jaxci history): the load of every run, and the re-measured steps.\n"
          "# asv reads only *.json here; jaxci report reads this file (docs/history.md, 'Confirmed steps').\n")
_BENCH = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*){1,3}")
_COMMIT = re.compile(r"[0-9a-f]{7,40}")
_PARAMS = re.compile(r"[A-Za-z0-9_.=, '\"+-]{0,300}")
_TEXT = re.compile(r"[ -~]{0,200}")  # printable ASCII, one line
PURPOSES = ("backfill", "rerun", "confirm")


class ConditionsError(ValueError):
    """The conditions file or one of its records is unusable; str() is one line naming it."""


@dataclass(frozen=True)
class Run:
    """One asv run of one release: the CPU and the load samples taken through it."""

    release: str
    commit: str
    date: str
    cpu: str
    load: tuple[float, ...]
    purpose: str = "backfill"
    cpus: tuple[int, ...] = ()   # the CPUs the run was pinned to (its affinity); () when not recorded
    own: float | None = None      # CPUs the run itself used, on average; None: not recorded
    others: float | None = None   # CPUs other processes used meanwhile (util.loadavg); None: not recorded

    @property
    def load_median(self) -> float | None:
        return Load(self.load).median

    @property
    def measured_load(self) -> Load:
        return Load(self.load, self.own, self.others)


@dataclass(frozen=True)
class Confirmation:
    """A step re-measured: both releases run again back to back; the rerun's ratio beside the first run's."""

    benchmark: str
    params: str          # "name=value, ..." as analysis.releases.params_text writes a step's params
    before: str
    after: str
    first_ratio: float
    rerun_ratio: float | None   # None: the rerun measured no value for this combination
    load: tuple[float, ...]
    date: str
    own: float | None = None
    others: float | None = None

    @property
    def measured_load(self) -> Load:
        return Load(self.load, self.own, self.others)


def path_of(results_dir: str | Path, machine: str) -> Path:
    return Path(results_dir) / machine / FILE


def _text(where: str, key: str, value, pattern: re.Pattern) -> str:
    if not isinstance(value, str) or not pattern.fullmatch(value):
        raise ConditionsError(f"{where}: {key} {quoted(value)} is not valid")
    return value


def _release(where: str, key: str, value) -> str:
    if not isinstance(value, str) or not RELEASE.fullmatch(value):
        raise ConditionsError(f"{where}: {key} {quoted(value)} is not a JAX release like 0.11.1")
    return value


def _optional_ratio(where: str, key: str, value) -> float | None:
    return None if value is None else _ratio(where, key, value)


def _ratio(where: str, key: str, value) -> float:
    if not is_number(value) or value <= 0:
        raise ConditionsError(f"{where}: {key} {quoted(value)} is not a positive finite number")
    return float(value)


def _loads(where: str, value) -> tuple[float, ...]:
    if not isinstance(value, list) or len(value) > 10_000:
        raise ConditionsError(f"{where}: load must be a list of at most 10,000 load averages")
    for x in value:
        if not is_number(x) or not 0 <= x <= 10_000:
            raise ConditionsError(f"{where}: load sample {quoted(x)} is not a load average")
    return tuple(float(x) for x in value)


def _cpu_share(where: str, key: str, value) -> float | None:
    if value is None:
        return None
    if not is_number(value) or not 0 <= value <= 4096:
        raise ConditionsError(f"{where}: {key} {quoted(value)} is not a number of CPUs")
    return float(value)


def _cpus(where: str, value) -> tuple[int, ...]:
    if not isinstance(value, list) or len(value) > 4096 or not all(
            isinstance(c, int) and not isinstance(c, bool) and 0 <= c < 4096 for c in value):
        raise ConditionsError(f"{where}: cpus must be a list of CPU numbers")
    return tuple(value)


def _run(where: str, rec) -> Run:
    if not isinstance(rec, dict):
        raise ConditionsError(f"{where}: not a table")
    purpose = rec.get("purpose", "backfill")
    if purpose not in PURPOSES:
        raise ConditionsError(f"{where}: purpose {quoted(purpose)} is not one of {', '.join(PURPOSES)}")
    return Run(_release(where, "release", rec.get("release")), _text(where, "commit", rec.get("commit"), _COMMIT),
               _text(where, "date", rec.get("date", ""), _TEXT), _text(where, "cpu", rec.get("cpu", ""), _TEXT),
               _loads(where, rec.get("load", [])), purpose, _cpus(where, rec.get("cpus", [])),
               _cpu_share(where, "cpu_own", rec.get("cpu_own")),
               _cpu_share(where, "cpu_others", rec.get("cpu_others")))


def _confirmation(where: str, rec) -> Confirmation:
    if not isinstance(rec, dict):
        raise ConditionsError(f"{where}: not a table")
    return Confirmation(_text(where, "benchmark", rec.get("benchmark"), _BENCH),
                        _text(where, "params", rec.get("params", ""), _PARAMS),
                        _release(where, "before", rec.get("before")), _release(where, "after", rec.get("after")),
                        _ratio(where, "first_ratio", rec.get("first_ratio")),
                        _optional_ratio(where, "rerun_ratio", rec.get("rerun_ratio")),
                        _loads(where, rec.get("load", [])), _text(where, "date", rec.get("date", ""), _TEXT),
                        _cpu_share(where, "cpu_own", rec.get("cpu_own")),
                        _cpu_share(where, "cpu_others", rec.get("cpu_others")))


def load(results_dir: str | Path, machine: str, errors: list[str] | None = None
         ) -> tuple[list[Run], list[Confirmation]]:
    """The machine's run and confirmation records ([] and [] when it has no file). A record that fails its check
    is left out and its one-line reason appended to `errors`; an unreadable file is one error, nothing lost."""
    errors = [] if errors is None else errors
    path = path_of(results_dir, machine)
    if not path.exists() and not path.is_symlink():
        return [], []
    try:
        data = tomllib.loads(safeio.read_text(path, limit=safeio.MIB * 4, links=False))
    except RecursionError:  # tomllib recurses per nesting level: a hostile file is refused, not a traceback
        errors.append(f"{path}: not read: nested deeper than Python's TOML parser goes")
        return [], []
    except (safeio.UnsafeFile, tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        errors.append(f"{path}: not read: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}")
        return [], []
    runs: list = []
    confirmations: list = []
    for key, make, out in (("run", _run, runs), ("confirmation", _confirmation, confirmations)):
        items = data.get(key, [])
        if not isinstance(items, list):
            errors.append(f"{path}: [[{key}]] must be an array of tables")
            continue
        for i, rec in enumerate(items):
            try:
                out.append(make(f"{path}: {key} {i + 1}", rec))
            except ConditionsError as exc:
                errors.append(str(exc))
    return runs, confirmations


def _toml_value(value) -> str:
    if isinstance(value, str):
        return json.dumps(value)  # a JSON string of printable ASCII is a TOML basic string
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return repr(float(value))


def _table(kind: str, fields: dict) -> str:
    lines = [f"[[{kind}]]"] + [f"{k} = {_toml_value(v)}" for k, v in fields.items() if v is not None]
    return "\n".join(lines) + "\n\n"


def append_run(results_dir: str | Path, machine: str, run: Run) -> None:
    """Add one run record (the file is rewritten whole, atomically, through util.safewrite)."""
    fields = {"release": run.release, "commit": run.commit, "date": run.date, "cpu": run.cpu,
              "cpus": list(run.cpus) or None, "purpose": run.purpose, "cpu_own": run.own, "cpu_others": run.others,
              "load": list(run.load)}
    _run("new run record", {k: v for k, v in fields.items() if v is not None})
    _append(results_dir, machine, _table("run", fields))


def append_confirmation(results_dir: str | Path, machine: str, c: Confirmation) -> None:
    _append(results_dir, machine, _table("confirmation", {
        "benchmark": c.benchmark, "params": c.params, "before": c.before, "after": c.after,
        "first_ratio": c.first_ratio, "rerun_ratio": c.rerun_ratio, "date": c.date,
        "cpu_own": c.own, "cpu_others": c.others, "load": c.load}))


def _append(results_dir, machine: str, table: str) -> None:
    path = path_of(results_dir, machine)
    old = safeio.read_text(path, limit=safeio.MIB * 4, links=False) if path.exists() else HEADER
    try:
        tomllib.loads(old + table)
    except RecursionError:
        raise ConditionsError(f"{path}: nested deeper than Python's TOML parser goes; not appended to") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConditionsError(f"{path}: appending would make it unreadable ({exc})") from None
    safewrite.write_text(path, old + table)
