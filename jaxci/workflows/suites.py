"""The suites of benchmarks/, listed in one place.

A suite is a module of benchmarks/ that defines benchmarks. Each one runs as its own `asv run` (asv saves
results when a run ends, so an interruption loses one suite, not all), and three places need the list: the
bench workflow's plan (one --bench regex per suite), scripts/run-suites.sh (through `jaxci inputs suites`)
and measure/suite_cost.py. They all ask this module, so a new suite module is run everywhere once it exists.
"""

from __future__ import annotations

import re
from pathlib import Path

from jaxci import REPO_ROOT
from jaxci.util.validate import InputError

BENCHMARKS = REPO_ROOT / "benchmarks"
#: modules of benchmarks/ that the suites import but that define no benchmarks of their own
#: (benchmarks/kernels/ and benchmarks/notebook_fixtures/ are folders, never matched by *.py)
HELPERS = ("__init__", "common")
_SUITE = re.compile(r"[a-z_][a-z0-9_]*")


def is_suite_name(name: object) -> bool:
    """A plain lower-case identifier, as the suite modules are named (safe in a regex, a path, markdown)."""
    return isinstance(name, str) and bool(_SUITE.fullmatch(name))


def suites(benchmark_dir: Path = BENCHMARKS) -> list[str]:
    """The suite modules of `benchmark_dir`, sorted by name (the order scripts/run-suites.sh runs them)."""
    names = sorted(p.stem for p in benchmark_dir.glob("*.py") if p.stem not in HELPERS)
    bad = [n for n in names if not is_suite_name(n)]
    if bad:
        raise InputError(f"{benchmark_dir}: suite module names {bad} are not plain identifiers")
    return names
