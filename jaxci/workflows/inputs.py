"""Checks of what a workflow hands to jaxci, before any label, path or command is built from it.

`workflow_dispatch` inputs and pull-request data are attacker-reachable text. They reach jaxci only through
environment variables (never `${{ }}` in a shell line) and leave these checks only as values that passed:
a family must be a catalogue name, a benchmark filter a compiling regex of safe characters (the shared
`jaxci.util.validate.bench_filter`), a commit a hex hash or a plain ref, a run id a number, a suite a plain
identifier. Anything else raises InputError naming the input and the reason.
"""

from __future__ import annotations

import re

from jaxci.catalogue import Machine
from jaxci.util.validate import InputError, bench_filter, full_sha, plain, quoted
from jaxci.workflows.suites import is_suite_name

__all__ = ["InputError", "validate_families", "validate_scale", "validate_filter", "validate_commits",
           "validate_sha", "validate_run_id", "validate_suite"]  # InputError lives in jaxci.util.validate

SCALES = ("ci", "full")
MAX_COMMITS = 10
_SEPARATORS = re.compile(r"[, ]+")
_HASH = re.compile(r"[0-9a-f]{7,40}")
_REF_PART = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
_RUN_ID = re.compile(r"[0-9]{1,20}")


def _items(name: str, text: str | None) -> list[str]:
    return [item for item in _SEPARATORS.split(plain(name, text)) if item]


def validate_families(text: str | None, catalogue: dict[str, Machine]) -> list[str]:
    """Catalogue names, comma/space separated; empty means every family with bench = true."""
    items = _items("families", text)
    if not items:
        return [name for name, m in catalogue.items() if m.bench]
    unknown = [item for item in items if item not in catalogue]
    if unknown:
        raise InputError(f"input 'families': {', '.join(map(repr, unknown))} not in env_matrix/machines.toml; "
                         f"known families: {', '.join(catalogue)}")
    return list(dict.fromkeys(items))


def validate_scale(text: str | None) -> str:
    """ci or full; empty (a scheduled run) means full."""
    scale = plain("scale", text) or "full"
    if scale not in SCALES:
        raise InputError(f"input 'scale': {scale!r} is not one of {', '.join(SCALES)}")
    return scale


def validate_filter(text: str | None) -> str | None:
    """asv --bench regex of a workflow input (None when empty): the shared check, jaxci.util.validate."""
    return bench_filter("input 'bench'", text, allow_empty=True)


def _valid_rev(item: str) -> bool:
    if _HASH.fullmatch(item):
        return True
    suffix = re.search(r"~[0-9]{1,4}$", item)
    ref = item[:suffix.start()] if suffix else item
    parts = ref.split("/")
    return (len(ref) <= 100 and all(_REF_PART.fullmatch(p) and not p.endswith((".", ".lock")) for p in parts)
            and ".." not in ref)


def validate_commits(text: str | None) -> list[str]:
    """Commit hashes or plain refs (branch, tag, HEAD, optionally ~N), comma/space separated; empty: HEAD."""
    items = _items("commits", text)
    if not items:
        return ["HEAD"]
    if len(items) > MAX_COMMITS:
        raise InputError(f"input 'commits': {len(items)} commits, at most {MAX_COMMITS} per run "
                         "(each one is a full suite on every family)")
    bad = [item for item in items if not _valid_rev(item)]
    if bad:
        raise InputError(f"input 'commits': {', '.join(map(repr, bad))} is not a commit hash or a plain ref "
                         "(hex hash of 7-40 characters, or a branch/tag name of letters, digits, . _ - /, "
                         "optionally ~N)")
    return list(dict.fromkeys(items))


validate_sha = full_sha  # the shared check of jaxci.util.validate


def validate_run_id(text: str | None) -> str:
    run_id = plain("run id", text)
    if not _RUN_ID.fullmatch(run_id):
        raise InputError(f"run id {run_id!r} is not a number (GITHUB_RUN_ID)")
    return run_id


def validate_suite(name: str, text: str | None) -> str:
    """The suite a family job says it runs: required, and a plain identifier (it lands in markdown)."""
    if not text:
        raise InputError(f"{name}: --suite is required (the benchmarks/ module that runs)")
    if not is_suite_name(text):
        raise InputError(f"{name}: --suite {quoted(text, 80)} is not a suite name "
                         "(a plain lower-case identifier, as the modules of benchmarks/)")
    return text
