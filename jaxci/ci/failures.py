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

from pathlib import Path

from jaxci.util.safeio import load_json

FORMAT = 1


class FailuresError(ValueError):
    """A cache folder or a known-failures file that cannot be read: the message says which and why."""


def _cache(path):
    try:
        from jupyter_cache import get_cache
    except ImportError:
        raise FailuresError("jupyter-cache is not installed (pip install jupyter-cache)") from None
    if not Path(path, "global.db").is_file():
        raise FailuresError(f"{path}: not a jupyter-cache folder (no global.db)")
    return get_cache(str(path))


def _hash(cache, uri) -> str | None:
    try:
        nb = cache.get_project_notebook(uri).nb
    except Exception:  # the notebook moved or cannot be read: it cannot match a recorded failure
        return None
    return cache.create_hashed_notebook(nb)[1]


def record(cache_path) -> dict:
    """{"format": 1, "failures": {uri: {"hash", "error"}}}: every project notebook with a traceback and no cache."""
    cache = _cache(cache_path)
    failures = {}
    for rec in cache.list_project_records():
        if not rec.traceback or cache.get_cached_project_nb(rec.pk) is not None:
            continue
        last = [line for line in rec.traceback.strip().splitlines() if line.strip()]
        failures[rec.uri] = {"hash": _hash(cache, rec.uri), "error": last[-1][:300] if last else ""}
    return {"format": FORMAT, "failures": failures}


def load_known(path) -> dict:
    try:
        data = load_json(path)
    except (OSError, ValueError) as exc:
        raise FailuresError(f"{path}: cannot read known failures: {exc}") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(data.get("failures"), dict):
        raise FailuresError(f"{path}: not a known-failures file (written by `jaxci failures record`)")
    return data["failures"]


def to_skip(cache_path, known: dict, remove: bool = False) -> list[str]:
    """The recorded failures whose notebook is unchanged (same jupyter-cache hash); with remove=True they are
    taken out of the jupyter-cache project, so its executors do not run them."""
    cache = _cache(cache_path)
    uris = {rec.uri for rec in cache.list_project_records()}
    out = []
    for uri, entry in sorted(known.items()):
        if uri in uris and entry.get("hash") and _hash(cache, uri) == entry["hash"]:
            out.append(uri)
            if remove:
                cache.remove_nb_from_project(uri)
    return out
