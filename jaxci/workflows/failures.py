"""Fail once: record the notebooks a jupyter-cache project failed on, and skip them elsewhere until they change.

jupyter-cache stores a notebook that fails (a cell error or a timeout) as a project record with a traceback and
never caches it, so every later build executes it again; it has no option to skip known failures, and
`allow_errors` caches the error outputs as if they were results. The policy here:

1. the gating build executes the project and runs `record`: each failed notebook with the jupyter-cache hash of
   its code cells (the hash jupyter-cache itself matches a cache entry with) and the traceback's last line;
2. every other builder runs `skip` before executing: a recorded failure whose notebook still has that hash is
   listed (and, with remove=True, taken out of the jupyter-cache project), so it is not executed again; a
   notebook whose code changed has a new hash and runs again.
"""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path

from jaxci.util.quoting import glob_literal
from jaxci.util.safeio import UnsafeFile, check, check_name, load_json
from jaxci.util.validate import InputError, inside, quoted

FORMAT = 1
#: the tables and columns of jupyter-cache's database this module reads (jupyter-cache 1.x)
SCHEMA = {"nbproject": {"pk", "uri", "read_data", "traceback"}, "nbcache": {"pk", "hashkey", "uri"}}
SQLITE_HEADER = b"SQLite format 3\x00"


class FailuresError(ValueError):
    """A cache folder or a known-failures file that cannot be read: the message says which and why."""


def check_database(path) -> Path:
    """The cache folder's global.db, refused unless it is a regular file (not a link), an SQLite database
    and has jupyter-cache's tables: read-only, before jupyter-cache opens it (which would add its tables to
    an empty or foreign database and raise a traceback on a corrupt one)."""
    db = Path(path, "global.db")
    if not Path(path).is_dir() or not db.exists() and not db.is_symlink():
        raise FailuresError(f"{path}: not a jupyter-cache folder (no global.db)")
    try:
        check_name(db, links=False)
        with open(db, "rb") as fh:
            head = fh.read(len(SQLITE_HEADER))
    except (UnsafeFile, OSError) as exc:
        raise FailuresError(f"{db}: {getattr(exc, 'reason', None) or exc}") from None
    if head != SQLITE_HEADER:
        raise FailuresError(f"{db}: not a jupyter-cache database ({'empty' if not head else 'not SQLite'})")
    try:
        with contextlib.closing(sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True)) as con:
            tables = {t: {c[1] for c in con.execute(f"pragma table_info({t})")} for t in SCHEMA}
    except sqlite3.Error as exc:
        raise FailuresError(f"{db}: not a jupyter-cache database ({type(exc).__name__}: corrupt?)") from None
    lacking = [t for t, columns in SCHEMA.items() if not columns <= tables[t]]
    if lacking:
        raise FailuresError(f"{db}: not a jupyter-cache database (no {' or '.join(lacking)} table as jupyter-cache "
                            "1.x writes it)")
    return db


def _cache(path):
    try:
        from jupyter_cache import get_cache
    except ImportError:
        raise FailuresError("jupyter-cache is not installed (pip install jupyter-cache)") from None
    check_database(path)
    return get_cache(str(path))


@contextlib.contextmanager
def _reading(path):
    """jupyter-cache's errors (sqlalchemy's, a RuntimeError, a notebook it cannot parse) as one line: the type
    only, since its messages may quote what a record names."""
    try:
        yield
    except (FailuresError, InputError):
        raise
    except Exception as exc:  # noqa: BLE001 (a third-party database: any error is "cannot be read")
        raise FailuresError(f"{path}: the jupyter-cache project cannot be read ({type(exc).__name__})") from None


def notebook(rec, project: Path) -> Path | None:
    """The notebook a cache record names, if it lies inside `project` (links resolved); None when it is not
    a regular file of at most safeio's text limit (missing, a FIFO, a device: it cannot match a failure).
    Outside the project it is refused: nothing it names is opened."""
    uri = Path(rec.uri)
    if not uri.is_absolute() or not inside(uri, project):
        raise FailuresError(f"cache record {rec.pk}: notebook {quoted(rec.uri, 80)} is outside the project "
                            f"{project.resolve()} (--project, default: the current folder); refused, not read")
    try:
        check(uri)
    except UnsafeFile:
        return None
    return uri


def _hash(cache, uri) -> str | None:
    try:
        nb = cache.get_project_notebook(str(uri)).nb
    except Exception:  # noqa: BLE001 (the notebook cannot be parsed: it cannot match a recorded failure)
        return None
    return cache.create_hashed_notebook(nb)[1]


def record(cache_path, project=".") -> dict:
    """{"format": 1, "failures": {uri: {"hash", "error"}}}: every project notebook with a traceback and no cache;
    every notebook a record names must lie inside `project`."""
    project = Path(project)
    with _reading(cache_path):
        cache = _cache(cache_path)
        failures = {}
        for rec in cache.list_project_records():
            if not rec.traceback:
                continue
            uri = notebook(rec, project)
            digest = _hash(cache, uri) if uri else None
            if digest is not None and cache.get_cached_project_nb(rec.pk) is not None:
                continue
            last = [line for line in rec.traceback.strip().splitlines() if line.strip()]
            failures[rec.uri] = {"hash": digest, "error": last[-1][:300] if last else ""}
    return {"format": FORMAT, "failures": failures}


def known_entry(uri, entry, source) -> dict:
    """One recorded failure as `record` writes it: a notebook path and {"hash": str or null, "error": str}."""
    if not isinstance(uri, str) or not isinstance(entry, dict):
        raise FailuresError(f"{source}: entry {quoted(uri, 80)} is not an object with hash and error")
    if not isinstance(entry.get("hash"), (str, type(None))) or not isinstance(entry.get("error", ""), str):
        raise FailuresError(f"{source}: entry {quoted(uri, 80)}: hash must be a string or null, error a string")
    return {"hash": entry.get("hash"), "error": entry.get("error", "")}


def load_known(path) -> dict:
    try:
        data = load_json(path)
    except (OSError, ValueError) as exc:
        raise FailuresError(f"{path}: cannot read known failures: {exc}") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(data.get("failures"), dict):
        raise FailuresError(f"{path}: not a known-failures file (written by `jaxci failures record`)")
    return {uri: known_entry(uri, entry, path) for uri, entry in data["failures"].items()}


def to_skip(cache_path, known: dict, remove: bool = False, project=".") -> list[str]:
    """Globs (one a line, for nb_execution_excludepatterns) of the recorded failures whose notebook is
    unchanged (same jupyter-cache hash); with remove=True they are taken out of the jupyter-cache project, so
    its executors do not run them. Every name is checked as a glob before anything is removed."""
    project = Path(project)
    with _reading(cache_path):
        cache = _cache(cache_path)
        records = {rec.uri: rec for rec in cache.list_project_records()}
        same = []
        for uri, entry in sorted(known.items()):
            path = notebook(records[uri], project) if uri in records else None
            if path and entry["hash"] and _hash(cache, path) == entry["hash"]:
                same.append(uri)
        try:
            patterns = [glob_literal(uri, "notebook") for uri in same]
        except InputError as exc:
            raise FailuresError(str(exc)) from None
        if remove:
            for uri in same:
                cache.remove_nb_from_project(uri)
    return patterns
