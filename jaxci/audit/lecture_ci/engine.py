"""Which engine a build job executes its notebooks with, and how many at once as it is set up, read from the
job's commands and the book's config (jaxci.policy.concurrency.Engine). Question 3 is then answered in that
engine's setting (jaxci.policy.concurrency.decide).

- `myst build` (mystmd), or `jupyter-book build` / `jb build` where the repository has `myst.yml` (Jupyter Book 2
  is mystmd): `--execute-parallel N` when written; otherwise mystmd's default, one document per CPU less one.
- `jupyter-book build` / `jb build` with `_config.yml` (Jupyter Book 1.x): one notebook at a time, unless
  `jcache project execute --executor local-parallel` runs first (one worker per CPU) or a Sphinx build runs
  with `-j N`.
- `pytest --nbmake -n N` or `xargs -P N`: a pool of N kernels (nbclient under the hood).

A pull request controls these lines, so they are read in linear time: each line is split into words once and
the words are scanned left to right (no regular expression that backtracks over a line). A count is read by
`count`: ASCII digits only; `xargs -P 0` ("as many at once as possible") and a count larger than AT_MOST (a
5,000-digit number included) both mean every notebook of the build at once.
"""

from __future__ import annotations

import re
from pathlib import Path

from jaxci.policy.concurrency import JB1, MYSTMD, NBCLIENT, Engine
from jaxci.util.quoting import code

#: what splits a shell line into words here: blanks and the shell's operators (one character class: linear)
_SEPARATORS = re.compile(r"[\s;&|()<>]+")
#: the most notebooks at once a written count is read as; above it (or `xargs -P 0`) means all of them at once
AT_MOST = 4096
#: a count written with more digits than this is above AT_MOST whatever it is (read without int() of it)
_DIGITS = len(str(AT_MOST))


def words(line: str) -> list[str]:
    """The words of one shell line (split once on blanks and operators)."""
    return [w for w in _SEPARATORS.split(line) if w]


def _is(word: str, name: str) -> bool:
    """`word` runs the program `name` (written bare or as a path)."""
    return word == name or word.endswith("/" + name)


def count(text: str | None, vcpu: int | None, every: int | None, *, zero_is_all: bool = False) -> int | None:
    """A written number of notebooks at once: `auto` is one per CPU (vcpu); ASCII digits are that number, except
    that 0 with `zero_is_all` (xargs) and anything above AT_MOST mean every notebook of the build (`every`, or
    AT_MOST when not known); anything else is not a count (None: the engine's default)."""
    if text == "auto":
        return vcpu
    if not text or not (text.isascii() and text.isdigit()):
        return None
    digits = text.lstrip("0")
    if len(digits) > _DIGITS or (digits and int(digits) > AT_MOST) or (not digits and zero_is_all):
        return min(every, AT_MOST) if every else AT_MOST
    return int(digits or "0")


def _countlike(text: str) -> bool:
    return text == "auto" or (text.isascii() and text.isdigit())


def _option(ws: list[str], start: int, short: str, long: str = "") -> tuple[int, str] | None:
    """(index, value) of the first `-j N` / `-jN` (short) or `--long N` / `--long=N` after ws[start] whose value
    is a count (ASCII digits or auto)."""
    for i in range(start + 1, len(ws)):
        w, value = ws[i], None
        if w in (short, long) and i + 1 < len(ws):
            i, value = i + 1, ws[i + 1]
        elif long and w.startswith(long + "="):
            value = w[len(long) + 1:]
        elif short and w.startswith(short) and len(w) > len(short) and not w.startswith("--"):
            value = w[len(short):]
        if value is not None and _countlike(value):
            return i, value
    return None


def _first(ws: list[str], name: str) -> int | None:
    return next((i for i, w in enumerate(ws) if _is(w, name)), None)


def _build(ws: list[str], names: tuple[str, ...]) -> int | None:
    """Index of `NAME build` (consecutive words) for the first of `names` found."""
    return next((i for i in range(len(ws) - 1) if ws[i + 1] == "build" and any(_is(ws[i], n) for n in names)),
                None)


def _shown(ws: list[str], start: int, end: int) -> str:
    """The command as read (its words start..end), as a code span whatever the words hold."""
    return code(" ".join(ws[start:end + 1]))


def _engine(name: str, now: int | None, where: str, shown: str, **kw) -> Engine:
    """An engine read at `where` (file:line) from the command `shown`: both kept apart, and joined for the reader."""
    return Engine(name, now, f"{where} {shown}", at=where, shown=shown, **kw)


def _line_engine(where: str, line: str, has_myst_yml: bool, vcpu: int | None, every: int | None):
    ws = words(line)
    at = _build(ws, ("myst",))
    if at is None and has_myst_yml:
        at = _build(ws, ("jb", "jupyter-book"))
    if at is not None:
        hit = _option(ws, -1, "", "--execute-parallel")
        now = count(hit[1], None, every) if hit else None
        if now is None:
            now = max(1, vcpu - 1) if vcpu else None
        return _engine(MYSTMD, now, where, code(line.strip()))
    at = _first(ws, "jcache")
    if at is not None and ("--executor=local-parallel" in ws[at:] or any(
            ws[i] == "--executor" and ws[i + 1] == "local-parallel" for i in range(at, len(ws) - 1))):
        return _engine(JB1, vcpu, where, code(line.strip()), per_cpu=True)
    at = _first(ws, "sphinx-build")
    hit = _option(ws, at, "-j") if at is not None else None
    if hit and at is not None:
        return _engine(JB1, count(hit[1], vcpu, every), where, _shown(ws, at, hit[0]), option="sphinx-build -j")
    at = _first(ws, "pytest")
    if at is not None:
        nbmake = next((i for i in range(at + 1, len(ws)) if ws[i].startswith("--nbmake")), None)
        hit = _option(ws, at, "-n") if nbmake is not None else None
        if hit and nbmake is not None:
            n = count(hit[1], vcpu, every)
            return _engine(NBCLIENT, 1 if n == 0 else n, where, _shown(ws, at, max(nbmake, hit[0])))
    at = _first(ws, "xargs")
    hit = _option(ws, at, "-P", "--max-procs") if at is not None else None
    if hit and at is not None and hit[1] != "auto":
        return _engine(NBCLIENT, count(hit[1], vcpu, every, zero_is_all=True), where, _shown(ws, at, hit[0]))
    return None


def engine_of(commands: list[tuple[str, str]], root: Path, vcpu: int | None,
              every: int | None = None) -> Engine | None:
    """The engine of a job from its (where, run text) commands; None when it runs no notebook build we know.
    `every`: how many notebooks the build has (what "as many at once as possible" comes to)."""
    has_myst_yml = (Path(root) / "myst.yml").is_file()
    for where, run in commands:
        for line in run.splitlines():
            engine = _line_engine(where, line, has_myst_yml, vcpu, every)
            if engine is not None:
                return engine
    for where, run in commands:
        for line in run.splitlines():
            ws = words(line)
            at = _build(ws, ("jb", "jupyter-book"))
            if at is not None:
                return _engine(JB1, 1, where, _shown(ws, at, len(ws) - 1))
    return None
