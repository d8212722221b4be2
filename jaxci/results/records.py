"""asv results of every machine, read through asv's own API, as plain records: the one adapter of asv's
result format, with jaxci.results.asvfiles (one file at a time). Every other module (the report, env advice, the
capture import, the release history, the GPU capture) reads result files, machine.json and benchmarks.json
through the two.

One `Record` per benchmark x parameter combination x result file. asv stores a failed combination as None
and a skipped one (n/a) as NaN: they become status "failed" / "skipped" with value None, so nothing
downstream can mistake them for numbers. A result file asv cannot load, a machine folder without a valid
machine.json, or a missing benchmarks.json becomes an entry in `ResultSet.errors`, and the rest is kept.
So does anything that would otherwise lose data silently: a value list shorter than its params, two
folders naming the same machine (the second is kept under its folder name).

The scale of a run is a recorded fact, never a guess: every suite module carries `track_scale`
(benchmarks/common.py: 1 at JAXCI_SCALE=full, 0 at ci), so each result file says per suite which scale
ran. Each record carries that scale ("unknown" where the file has no scale record), and `latest()` keeps
scales apart: a CI-scale result never replaces a full-scale one.
"""

from __future__ import annotations

import ast
import datetime as _dt
import functools
import hashlib
import itertools
import math
import os
import stat as _stat
from dataclasses import dataclass, field
from pathlib import Path

from jaxci import REPO_ROOT
from jaxci.results.asvfiles import (  # noqa: F401 (ResultsError, FormatError: the results' users read them here)
    RESULT_LIMIT,
    FormatError,
    ResultsError,
    combinations,
    load_benchmarks_json,
    load_file,
    load_machine_json,
)
from jaxci.results.captures import process_starts
from jaxci.util.git import GitError, git
from jaxci.util.scales import SCALE_RANK
from jaxci.util.validate import one_line


@dataclass(frozen=True)
class MachineFacts:
    """results/<machine>/machine.json: asv's fields plus what `jaxci machine` adds (gpu, backend, kind)."""

    name: str
    info: dict
    #: the probed process starts of its committed GPU captures (jaxci.results.captures): the backend start-up
    process_starts: tuple = ()

    def get(self, key: str, default: str = "unknown") -> str:
        return str(self.info.get(key, default))

    @property
    def has_gpu(self) -> bool:
        return self.get("gpu", "no GPU") not in ("no GPU", "unknown", "")

    @property
    def backend(self) -> str:
        return self.get("jaxci_backend")


@dataclass(frozen=True)
class Record:
    machine: str
    benchmark: str          # module.Class.method
    params: dict            # param name -> Python value (str / int / float)
    status: str             # "ok" | "skipped" | "failed"
    value: float | None     # asv's result (the median for time_* benchmarks); None unless ok
    unit: str
    commit: str
    date: str               # commit date, ISO (asv's "date")
    jax_version: str        # e.g. "0.10.2" or "unknown"
    jax_source: str         # where jax_version comes from
    env_name: str
    q25: float | None = None
    q75: float | None = None
    file: str = ""
    scale: str = "unknown"  # "full" | "ci" | "unknown": the suite's recorded JAXCI_SCALE in this file

    @property
    def suite(self) -> str:
        return self.benchmark.split(".")[0]

    @property
    def cls(self) -> str:
        parts = self.benchmark.split(".")
        return ".".join(parts[:-1])

    @property
    def method(self) -> str:
        return self.benchmark.rsplit(".", 1)[-1]

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def provenance(self) -> str:
        return f"{self.machine}, JAX {self.jax_version}, {self.date[:10]}, commit {self.commit[:8]}"


@dataclass
class ResultSet:
    records: list[Record] = field(default_factory=list)
    machines: dict[str, MachineFacts] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    runs: list[dict] = field(default_factory=list)  # per result file: machine, date, file, durations {bench: s}

    def latest(self, scale: str | None = None) -> list[Record]:
        """One record per (machine, benchmark, params): newest commit date, then file, within the best
        recorded scale (full, then unknown, then ci), so a newer CI-scale run never stands in for a
        full-scale result. `scale` keeps only records of that scale."""
        best: dict = {}
        for rec in self.records:
            if scale is not None and rec.scale != scale:
                continue
            key = (rec.machine, rec.benchmark, tuple(sorted(rec.params.items(), key=lambda kv: kv[0])))
            rank = (SCALE_RANK.get(rec.scale, 0), rec.date, rec.file)
            if key not in best or rank >= best[key][0]:
                best[key] = (rank, rec)
        return [rec for _, rec in best.values()]

    def copy(self) -> ResultSet:
        """New lists and dicts over the same (frozen) records: a caller may add errors without touching the read."""
        return ResultSet(list(self.records), dict(self.machines), list(self.errors), [dict(r) for r in self.runs])

    def scales(self, machine: str) -> set[str]:
        """The scales recorded in `machine`'s latest records."""
        return {r.scale for r in self.latest() if r.machine == machine}


SCALE_TRACK = "track_scale"  # benchmarks/common.py: a run fact per suite, not a measurement
SCALE_VALUES = {0.0: "ci", 1.0: "full"}
#: benchmarks whose value is a time or a size: a negative value is not a measurement
NON_NEGATIVE = ("time_", "timeraw_", "peakmem_", "mem_")


@functools.lru_cache(maxsize=65536)
def _literal(text):
    """asv stores param values as their repr(); give back the value, or the text when it is not a literal.
    Memoised: the same few param strings repeat in every file (10,000 files: most of the read time)."""
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def _guess_names(params: list[list[str]]) -> list[str]:
    names = []
    for i, values in enumerate(params):
        vals = {_literal(v) for v in values}
        names.append("device" if vals <= {"cpu", "gpu"} else "dtype" if vals <= {"float32", "float64"} else f"param{i}")
    return names


def _unit(method: str, meta: dict | None) -> str:
    if meta and meta.get("unit"):
        return str(meta["unit"])
    if method.startswith(("time_", "timeraw_")):
        return "seconds"
    if method.startswith("peakmem_"):
        return "bytes"
    return "unknown"


def _iso(js_ms) -> str:
    if not isinstance(js_ms, (int, float)) or isinstance(js_ms, bool):
        return "unknown"
    try:
        return _dt.datetime.fromtimestamp(js_ms / 1000, _dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    except (ValueError, OverflowError, OSError):
        raise FormatError(None, f"date {js_ms!r} is not a time (asv records milliseconds since 1970)") from None


_PIN_CACHE: dict = {}


def jax_pin(commit: str, backend: str, repo: Path = REPO_ROOT) -> str | None:
    """The jax pin in env_matrix/<backend>/requirements.txt at `commit` of this checkout; None if unreadable."""
    key = (commit, backend, str(repo))
    if key not in _PIN_CACHE:
        _PIN_CACHE[key] = None
        if backend in ("cpu", "cuda13") and commit:
            try:
                text = git(repo, "show", f"{commit}:env_matrix/{backend}/requirements.txt", timeout=30)
            except GitError:
                text = ""
            if text:
                for line in text.splitlines():
                    line = line.split("#", 1)[0].strip()
                    name, sep, version = line.partition("==")
                    if sep and name.split("[")[0].strip().lower() == "jax":
                        _PIN_CACHE[key] = version.strip()
    return _PIN_CACHE[key]


def _jax_version(results, backend: str) -> tuple[str, str]:
    """From asv's recorded requirements when they name jax, else the env_matrix pin at the commit."""
    reqs = getattr(results, "_requirements", None)  # asv has no public accessor for it
    reqs = reqs if isinstance(reqs, dict) else {}
    for name, version in reqs.items():
        if name.split("[")[0].lower() in ("jax", "pip+jax") and version:
            return str(version), "asv requirements"
    pin = jax_pin(results.commit_hash, backend)
    env = results.env_name or ""
    if pin is None:
        return "unknown", (f"no jax in asv requirements; env_matrix/{backend} pin not readable at "
                           f"{results.commit_hash[:8]}")
    if env.startswith("existing"):
        return pin, (f"env_matrix/{backend} pin at {results.commit_hash[:8]} (asv 'existing' environment: installed "
                     "version not recorded)")
    return pin, f"env_matrix/{backend} pin at {results.commit_hash[:8]}"


def load_benchmarks_meta(results_dir: Path, errors: list[str]) -> dict | None:
    path = results_dir / "benchmarks.json"
    if not path.is_file():
        errors.append(f"{path}: missing (asv writes it on every run): units and param names are guessed, "
                      "stale benchmark versions are not filtered")
        return None
    try:
        return load_benchmarks_json(path)
    except FormatError as exc:
        errors.append(str(exc))
        return None


#: called as progress(files_read, files_total) while load_results reads (set by `jaxci report`; None: silent)
PROGRESS: dict = {"hook": None}


def load_results(results_dir: str | Path) -> ResultSet:
    """Every machine's results in an asv results directory (results/<machine>/*.json).

    A folder named as before whose files are byte for byte those of an earlier read in this process is not parsed
    again (one command answering several questions, the tests' in-process commands); the caller gets its own
    copy. The name is part of the key: errors and records quote their files by the path they were given."""
    results_dir = Path(results_dir)
    if not results_dir.is_dir():
        raise ResultsError(f"{results_dir}: not a directory of asv results (expected results/<machine>/*.json)")
    try:
        return _parsed(str(results_dir), _content_digest(results_dir)).copy()
    except OSError as exc:  # an entry that cannot be listed or read: one line naming it, never a traceback
        where = getattr(exc, "filename", None) or results_dir
        raise ResultsError(f"{where}: cannot read it ({exc.strerror or type(exc).__name__})") from None


@functools.lru_cache(maxsize=4)
def _parsed(results_dir: str, digest: str) -> ResultSet:
    """The read of a folder, once per name and content (`digest`: _content_digest)."""
    return _read_results(Path(results_dir))


#: a file the read opens whose bytes the digest covers; a larger one is keyed by its size and times (never read
#: whole here: the loader refuses it with its own limit)
_DIGEST_LIMIT = 64 * 1024 * 1024


def _read_files(results_dir: Path) -> list[Path]:
    """The files a read of `results_dir` opens (benchmarks.json, each folder's machine.json, result files, capture
    summaries and records), an unlistable folder skipped: what the read depends on, nothing else (a stray archive
    of any size is never read)."""
    out = [results_dir / "benchmarks.json"]
    try:
        folders = sorted(e.path for e in os.scandir(results_dir) if e.is_dir())
    except OSError:
        return out
    for folder in folders:
        try:
            names = sorted(e.name for e in os.scandir(folder))
        except OSError:
            continue
        out += [Path(folder, n) for n in names if n.endswith(".json") or (n.startswith("capture-") and
                                                                        n.endswith((".md", ".toml")))]
    return out


def _content_digest(results_dir: Path) -> str:
    """Every file the read opens (`_read_files`), by its relative path and bytes (one over _DIGEST_LIMIT or not
    a regular file by its kind, size and times; one that cannot be read by its error): what a read depends on,
    apart from the pins in git history (jax_pin, itself memoised)."""
    digest = hashlib.blake2b(digest_size=16)
    for path in _read_files(results_dir):
        digest.update(str(path.relative_to(results_dir)).encode() + b"\0")
        try:
            st = path.stat()
            if path.is_file() and st.st_size <= _DIGEST_LIMIT:
                digest.update(path.read_bytes())
            else:
                digest.update(f"{st.st_mode} {st.st_size} {st.st_mtime_ns} {st.st_ino}".encode())
        except OSError as exc:
            digest.update(repr(exc).encode())
    return digest.hexdigest()


def _read_results(results_dir: Path) -> ResultSet:
    hook = PROGRESS["hook"]
    out = ResultSet()
    meta = load_benchmarks_meta(results_dir, out.errors)
    folders: dict = {}  # machine name -> the folder it was first read from
    found = []
    for mdir in sorted(p for p in results_dir.iterdir() if p.is_dir()):
        files = sorted(f for f in mdir.glob("*.json") if f.name != "machine.json")
        try:
            info = load_machine_json(mdir / "machine.json")
        except FormatError as exc:
            if files:
                out.errors.append(f"{mdir / 'machine.json'}: {exc.reason}; the folder's results skipped")
            continue
        found.append((mdir, files, info))
    total, done = sum(len(f[1]) for f in found), 0
    # a folder named as its machine keeps the name when another folder claims it too
    for mdir, files, info in sorted(found, key=lambda f: (f[0].name != f[2]["machine"], f[0].name)):
        name = info["machine"]
        if name in out.machines:
            renamed = f"{name} (folder {mdir.name})"
            out.errors.append(f"{mdir / 'machine.json'}: machine name {name!r} is also used by "
                              f"{folders[name] / 'machine.json'}: these results are kept apart as {renamed!r}")
            name = renamed
        facts = MachineFacts(name, info, process_starts(mdir, out.errors))
        out.machines[facts.name] = facts
        folders[name] = mdir
        for path in files:
            done += 1
            if hook is not None:
                hook(done, total)
            try:
                res = load_file(path, info["machine"])
                scales = _suite_scales(res, str(path), out.errors)
                out.records.extend(_records(res, facts, meta, str(path), out.errors, scales))
                out.runs.append({"machine": facts.name, "date": _iso(res.date), "file": str(path), "scales": scales,
                                 "durations": {k: float(v) for k, v in (res.duration or {}).items()
                                               if isinstance(v, (int, float))}})
            except FormatError as exc:
                out.errors.append(f"{path}: not loaded: {exc.reason}")
            except Exception as exc:  # a truncated row can raise anything in asv's accessors
                out.errors.append(f"{path}: not loaded: {exc}")
        ci_scale = any(r.scale == "ci" for r in out.records if r.machine == facts.name)
        if facts.get("jaxci_kind") == "catalogue" and ci_scale:
            out.errors.append(f"{mdir}: CI-scale results under the catalogue family name {facts.name!r}: kept apart "
                              "(never read as full scale, never replacing a full-scale result); they do not belong "
                              "in the committed history")
    if not out.machines and not out.errors:
        out.errors.append(f"{results_dir}: no machine folders with results")
    return out


def _suite_scales(res, path: str, errors: list[str]) -> dict:
    """suite -> "full" | "ci" from each suite's `track_scale` run fact in this result file."""
    out = {}
    for key in res.get_all_result_keys():
        suite, _, method = key.partition(".")
        if method != SCALE_TRACK:
            continue
        value = res.get_result_value(key, [])
        value = value[0] if isinstance(value, list) and value else value
        if isinstance(value, (int, float)) and float(value) in SCALE_VALUES:
            out[suite] = SCALE_VALUES[float(value)]
        else:
            errors.append(f"{path}: {key} = {value!r}: scale not recorded for suite {suite!r}")
    return out


def _records(res, facts: MachineFacts, meta: dict | None, path: str, errors: list[str],
             scales: dict | None = None) -> list[Record]:
    keys = res.get_result_keys(meta) if meta is not None else set(res.get_all_result_keys())
    scales = scales or {}
    if meta is not None:
        stale = set(res.get_all_result_keys()) - keys
        if stale:
            errors.append(f"{path}: {len(stale)} result(s) of benchmarks not in benchmarks.json or of an older "
                          f"benchmark version ignored (as asv publish does): {', '.join(sorted(stale)[:5])}")
    keys = {k for k in keys if k.partition(".")[2] != SCALE_TRACK}  # run facts, read by _suite_scales
    jax_version, jax_source = _jax_version(res, facts.backend)
    date = _iso(res.date)
    rel = os.path.relpath(path, Path(path).parent.parent)
    out = []
    for key in sorted(keys):
        params = res.get_result_params(key) or []
        bmeta = (meta or {}).get(key)
        names = list(bmeta["param_names"]) if bmeta and bmeta.get("param_names") else _guess_names(params)
        if len(names) != len(params):
            errors.append(f"{path}: {key}: {len(params)} param lists but {len(names)} names; skipped")
            continue
        raw = getattr(res, "_results", {}).get(key)  # asv pads a short list with None: say so instead
        expected = math.prod(len(p) for p in params) if params else 1
        if isinstance(raw, list) and params and len(raw) != expected:
            errors.append(f"{path}: {key}: {len(raw)} value(s) for {expected} param combinations: the file is "
                          f"truncated or mismatched; the {max(expected - len(raw), 0)} combination(s) without a "
                          "value read as failed")
        values = res.get_result_value(key, params)
        stats = res.get_result_stats(key, params)
        if not params:
            values = [values[0] if isinstance(values, list) else values]
            stats = [stats[0] if isinstance(stats, list) else stats]
        method = key.rsplit(".", 1)[-1]
        for combo, value, stat in zip(itertools.product(*params) if params else [()], values, stats):
            if value is None:
                status, val = "failed", None
            elif isinstance(value, float) and math.isnan(value):
                status, val = "skipped", None
            elif isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) \
                    and (value >= 0 or not method.startswith(NON_NEGATIVE)):
                status, val = "ok", float(value)
            else:
                errors.append(f"{path}: {key}{combo}: unreadable value {value!r}; not measured")
                status, val = "failed", None
            stat = stat if isinstance(stat, dict) else {}
            out.append(Record(
                machine=facts.name, benchmark=key, params={n: _literal(v) for n, v in zip(names, combo)},
                status=status, value=val, unit=_unit(method, bmeta), commit=res.commit_hash or "unknown",
                date=date, jax_version=jax_version, jax_source=jax_source, env_name=res.env_name or "",
                q25=stat.get("q_25") if status == "ok" else None, q75=stat.get("q_75") if status == "ok" else None,
                file=rel, scale=scales.get(key.split(".")[0], "unknown")))
    return out


def loader_reason(error: str, results_dir) -> str:
    """A loader error as every command quotes it in a message that names the results folder already: the folder's
    own path taken out (however deep the folder, the file and the cause fit the line), on one line, shortened by
    the one limit of quoted text (validate.one_line)."""
    return one_line(" ".join(error.replace(str(Path(results_dir)) + os.sep, "").split()))
