"""Which engine a build job executes its notebooks with, and how many at once as it is set up, read from the
job's commands and the book's config (jaxci.policy.concurrency.Engine). Question 3 is then answered in that
engine's setting (jaxci.policy.concurrency.decide).

- `myst build` (mystmd), or `jupyter-book build` / `jb build` where the repository has `myst.yml` (Jupyter Book 2
  is mystmd): `--execute-parallel N` when written; otherwise mystmd's default, one document per CPU less one.
- `jupyter-book build` / `jb build` with `_config.yml` (Jupyter Book 1.x): one notebook at a time, unless
  `jcache project execute --executor local-parallel` runs first (one worker per CPU) or a Sphinx build runs
  with `-j N`.
- `pytest --nbmake -n N` or `xargs -P N`: a pool of N kernels (nbclient under the hood).
"""

from __future__ import annotations

import re
from pathlib import Path

from jaxci.policy.concurrency import JB1, MYSTMD, NBCLIENT, Engine

_MYST = re.compile(r"\bmyst\s+build\b[^\n]*")
_BOOK = re.compile(r"\b(?:jb|jupyter-book)\s+build\b[^\n]*")
_EXECUTE_PARALLEL = re.compile(r"--execute-parallel(?:\s+|=)(\d+)\b")
_JCACHE_PARALLEL = re.compile(r"\bjcache\b[^\n]*--executor\s+local-parallel\b")
_SPHINX_JOBS = re.compile(r"\bsphinx-build\b[^\n]*?\s-j\s*(\d+|auto)\b")
_POOLS = (re.compile(r"\bpytest\b[^\n]*--nbmake[^\n]*\s-n\s*(\d+|auto)\b|\bpytest\b[^\n]*\s-n\s*(\d+|auto)\b[^\n]*"
                     r"--nbmake"), re.compile(r"\bxargs\b[^\n]*\s-P\s*(\d+)\b"))


#: the most kernels a count in a command line is read as (a 5,000-digit `-n` is "very many", not a ValueError)
MAX_COUNT = 1_000_000


def _count(value: str, vcpu: int | None) -> int | None:
    """A count written in a command line (ASCII digits, read without int()'s 4,300-digit limit: only its length
    decides past MAX_COUNT); `auto` or anything else is one per CPU."""
    if not (value.isascii() and value.isdigit()):
        return vcpu
    return MAX_COUNT if len(value) > len(str(MAX_COUNT)) else min(int(value), MAX_COUNT)


def engine_of(commands: list[tuple[str, str]], root: Path, vcpu: int | None) -> Engine | None:
    """The engine of a job from its (where, run text) commands; None when it runs no notebook build we know."""
    has_myst_yml = (Path(root) / "myst.yml").is_file()
    for where, run in commands:
        for line in run.splitlines():
            if _MYST.search(line) or (_BOOK.search(line) and has_myst_yml):
                m = _EXECUTE_PARALLEL.search(line)
                now = _count(m.group(1), vcpu) if m else (max(1, vcpu - 1) if vcpu else None)
                return Engine(MYSTMD, now, f"{where} `{line.strip()}`")
            if _JCACHE_PARALLEL.search(line):
                return Engine(JB1, vcpu, f"{where} `{line.strip()}`", per_cpu=True)
            m = _SPHINX_JOBS.search(line)
            if m:
                return Engine(JB1, _count(m.group(1), vcpu), f"{where} `{m.group(0).strip()}`",
                              option="sphinx-build -j")
            for pool in _POOLS:
                m = pool.search(line)
                if m:
                    value = next(g for g in m.groups() if g)
                    return Engine(NBCLIENT, _count(value, vcpu), f"{where} `{m.group(0).strip()}`")
    for where, run in commands:
        m = _BOOK.search(run)
        if m:
            return Engine(JB1, 1, f"{where} `{m.group(0).strip()}`")
    return None
