"""Checks shared by every command that takes text from a user, a workflow or the environment.

One home for them, so the workflow side (jaxci.workflows.inputs), the upgrade check, machine registration, the
install step, `jaxci env` and the audit refuse the same bad input the same way, and so no two of those
modules import each other for a helper. Each check returns the cleaned value or raises InputError with a
one-line message naming the input and the reason; the commands print it and exit 2. Pure Python.
"""

from __future__ import annotations

import math
import os
import re
from pathlib import Path
from typing import overload

from jaxci.catalogue import BACKENDS  # the pin sets of env_matrix/


class InputError(ValueError):
    """An input was refused; the message names the input and why, as one line whatever the value it quotes
    held (control characters escaped here, so no caller can print a refusal of several lines)."""

    def __str__(self) -> str:
        return _CONTROL.sub(lambda m: repr(m.group())[1:-1], super().__str__())


_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_FULL_SHA = re.compile(r"[0-9a-f]{40}")
_VERSION = re.compile(r"[0-9]+(\.[0-9]+){1,3}([a-z]+[0-9]*)?")
#: asv machine names become folders results/<name>/: one plain path component, which .gitignore rules match
_MACHINE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
#: JAX platform names the audit measures (jaxci.accel.ACCELERATORS and cpu); "gpu" is recorded as cuda, as before
PLATFORMS = {"cpu": "cpu", "cuda": "cuda", "rocm": "rocm", "tpu": "tpu", "gpu": "cuda"}


def one_line(text: object, limit: int = 300) -> str:
    """`text` shortened to one printable line (for messages that quote what a user typed)."""
    text = _CONTROL.sub(lambda m: repr(m.group())[1:-1], str(text))
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} characters)"


def inside(path: Path, folder: Path, *, or_above: bool = False) -> bool:
    """`path` is `folder` or below it (with `or_above`, also one of its parents): a destination that would
    write into (or over) a folder it must leave alone. A path no file can have (a NUL character, from a record
    or a built page) is inside nothing: refused by the caller as outside, never a ValueError traceback."""
    if "\0" in str(path) or "\0" in str(folder):
        return False
    path, folder = Path(path).resolve(), Path(folder).resolve()
    return path == folder or folder in path.parents or (or_above and path in folder.parents)


def quoted(text: object, limit: int = 80) -> str:
    """repr() of what a user typed, shortened: control characters escaped, so a message stays one line."""
    text = str(text)
    return repr(text) if len(text) <= limit else repr(text[:limit]) + f"... ({len(text)} characters)"


def plain(name: str, text: str | None) -> str:
    """The input stripped; refused if it holds a newline or any other control character."""
    text = text or ""
    bad = _CONTROL.search(text)
    if bad:
        raise InputError(f"input {name!r}: control character {bad.group()!r} at position {bad.start()} "
                         "(newlines and tabs are not separators; use commas or spaces)")
    return text.strip()


def full_sha(name: str, text: str | None) -> str:
    sha = plain(name, text)
    if not _FULL_SHA.fullmatch(sha):
        raise InputError(f"{name}: {quoted(sha, 80)} is not a full 40-character commit SHA")
    return sha


def jax_version(name: str, text: str | None) -> str:
    version = plain(name, text)
    if not _VERSION.fullmatch(version):
        raise InputError(f"{name}: {quoted(version, 80)} is not a JAX version like 0.10.2")
    return version


def machine_name(name: str, text: str | None) -> str:
    """An asv machine name that stays one folder inside results/: letters, digits, . _ -, at most 64,
    starting with a letter or digit (so no '..', no '/', no leading '-' or '.')."""
    value = text or ""
    if not _MACHINE.fullmatch(value):
        raise InputError(f"{name} {quoted(value, 80)}: a machine name is 1-64 letters, digits, '.', '_' or "
                         "'-', starting with a letter or digit (it becomes the folder results/<name>/)")
    return value


def number(name: str, value: float | None, *, low: float, high: float, unit: str = "",
           low_inclusive: bool = False) -> float:
    """A finite number in (low, high] (or [low, high]); nan, inf and out-of-range values are refused."""
    ok = (value is not None and math.isfinite(value) and (value >= low if low_inclusive else value > low)
          and value <= high)
    if value is None or not ok:
        bracket = "[" if low_inclusive else "("
        raise InputError(f"{name} {value!r}: must be a finite number in {bracket}{_fmt(low)}, {_fmt(high)}]"
                         + (f" {unit}" if unit else ""))
    return float(value)


def _fmt(x: float) -> str:
    return f"{int(x):,}" if float(x).is_integer() else f"{x:g}"


def backend(value: str | None, source: str = "JAXCI_BACKEND") -> str | None:
    """An explicit backend choice: one of BACKENDS, or None when unset or empty."""
    if not value:
        return None
    if value not in BACKENDS:
        raise InputError(f"{source}: unknown backend {quoted(value, 80)}; expected one of "
                         f"{', '.join(BACKENDS)} (or unset: cuda13 when a GPU is visible, tpu on a TPU, else cpu)")
    return value


def env_flag(variable: str, environ=None) -> bool:
    """A 0/1 switch read from the environment: unset, '' and '0' are off, '1' is on, anything else refused."""
    value = (os.environ if environ is None else environ).get(variable, "")
    if value not in ("", "0", "1"):
        raise InputError(f"{variable}={quoted(value, 40)}: expected 1 (on) or 0 (off)")
    return value == "1"


def platforms(name: str, text: str) -> list[str]:
    """Comma-separated JAX platforms to measure on, as the audit records them (gpu -> cuda)."""
    items = [p.strip() for p in plain(name, text).split(",") if p.strip()]
    unknown = [p for p in items if p not in PLATFORMS]
    if not items or unknown:
        raise InputError(f"{name} {quoted(text, 80)}: expected a comma-separated list of "
                         f"{', '.join(PLATFORMS)} (gpu is recorded as cuda)")
    return list(dict.fromkeys(PLATFORMS[p] for p in items))


def writable_file(name: str, path: Path) -> Path:
    """A file path a command will write or append to: not a folder, its folder must exist, and what is there
    is a regular file (not a FIFO, device or link: safewrite's rules, checked before any work is done)."""
    from jaxci.util import safewrite

    path = Path(path)
    if path.is_dir():
        raise InputError(f"{name} {path}: is a folder; give a file path")
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        raise InputError(f"{name} {path}: folder {parent} does not exist")
    try:
        safewrite.check_target(path)
    except safewrite.UnsafeWrite as exc:
        raise InputError(f"{name} {exc}") from None
    if not os.access(path if path.exists() else parent, os.W_OK):  # /dev/null: the file, not /dev
        raise InputError(f"{name} {path}: not writable")
    return path


def not_an_input(name: str, output: Path, inputs, what: str = "one of the inputs") -> None:
    """Refuse an output path that is a file the command reads (the same file, through any link or name): writing
    it would replace the input before, or while, it is read."""
    for source in inputs:
        if source is not None and _same_file(Path(output), Path(source)):
            raise InputError(f"{name} {output}: is {what} ({source}); the output may not replace what the "
                             f"command reads")


def folder_to_fill(name: str, path: Path) -> Path:
    """A folder a command will write files into, made now if it is missing (before any work is done): a path
    that is not a folder, a link that leads nowhere, or one that cannot be made or written is refused."""
    path = Path(path)
    if path.is_symlink() and not path.exists():
        raise InputError(f"{name} {path}: is a symbolic link to {os.readlink(path)!r}, which does not exist")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"{name} {path}: cannot make the folder ({exc.strerror or one_line(exc)})") from None
    if not path.is_dir():
        raise InputError(f"{name} {path}: not a folder")
    if not os.access(path, os.W_OK | os.X_OK):
        raise InputError(f"{name} {path}: not writable")
    return path


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)


#: what an index URL may use: a PEP 503 index over HTTP(S), or a local one (file:) in tests and mirrors
URL_SCHEMES = ("http", "https", "file")


def index_url(name: str, text: str | None) -> str:
    """A package index URL (pip --index-url), checked before pip sees it: one line of at most 2,000
    characters without spaces, an http/https URL with a host or a file: URL with a path."""
    from urllib.parse import urlsplit

    value = plain(name, text)
    try:
        parts = urlsplit(value)
        host = parts.hostname
    except ValueError as exc:
        raise InputError(f"{name} {quoted(value, 80)}: not a URL ({exc})") from None
    why = ("at most 2,000 characters" if len(value) > 2000 else "no spaces" if " " in value
           else f"scheme {', '.join(URL_SCHEMES)}" if parts.scheme not in URL_SCHEMES
           else "a host" if parts.scheme != "file" and not host else "a path" if not parts.path else "")
    if why:
        raise InputError(f"{name} {quoted(value, 80)}: expected a package index URL ({why}), "
                         "like https://pypi.org/simple")
    return value


# ---- regular expressions typed by users, matched by asv -----------------------------------------------

#: the longest benchmark name the cost bound assumes ("module.Class.method(params)"; ours are under 120)
NAME_LENGTH = 200
#: most backtracking paths a filter may have over one name of NAME_LENGTH characters: two '.*' (101^2)
#: pass, a third does not (101^3), nor fifteen 'x?' (2^15); a repeated group of alternatives never does
MAX_PATHS = 20_000


def backtracking_paths(regex: str, length: int = NAME_LENGTH) -> float:
    """An upper bound on the paths Python's backtracking matcher can try for `regex` from one start
    position in a name of `length` characters: alternatives add, a sequence multiplies, a repeat of a
    single path multiplies by how far it can reach, a repeat of several paths is exponential (inf).
    Read by a small parser of its own (the pattern already compiled, so it is well formed)."""
    return _alternatives(regex, 0, length)[0]


_REPEAT = re.compile(r"(\*|\+|\?|\{(\d*)(,?)(\d*)\})([?+]?)")


def _alternatives(regex: str, i: int, length: int) -> tuple[float, int]:
    """The cost of `a|b|...` from position i to the closing parenthesis (or the end): the branches add, except
    that branches of one distinct character each are one set (as the matcher compiles `(a|b)` to `[ab]`; `(a|a)`
    is not: it takes the shared `a` out and keeps two empty branches, two paths per repeat)."""
    total, seq, atoms, single, chars = 0.0, 1.0, 0, True, []
    while i < len(regex) and regex[i] != ")":
        if regex[i] == "|":
            total, seq, single, atoms, i = total + seq, 1.0, single and atoms == 1, 0, i + 1
            continue
        literal, start = regex[i] not in "(.", i
        inner, i = _atom(regex, i, length)
        chars.append(regex[start:i])
        repeat = _REPEAT.match(regex, i)
        if repeat:
            inner, i, literal = _repeated(inner, repeat, length), repeat.end(), False
        atoms, single = atoms + 1, single and literal
        seq = min(seq * inner, math.inf)
    if total and single and atoms == 1 and len(set(chars)) > 1:
        return 1.0, i
    return total + seq, i


def _atom(regex: str, i: int, length: int) -> tuple[float, int]:
    """One atom's cost (a group's alternatives, else 1) and the position after it."""
    if regex[i] == "(":
        j = i + 1
        if regex.startswith("?", j):  # (?:...), (?=...), (?P<name>...): the flags or name are not paths
            j = regex.index(">", j) + 1 if regex.startswith("?P<", j) else j + (2 if regex[j + 1] in ":=!" else 3)
        inner, j = _alternatives(regex, j, length)
        return inner, j + 1
    if regex[i] == "[":
        j = i + 2 if regex.startswith("[]", i) or regex.startswith("[^]", i) else i + 1
        while regex[j] != "]":
            j += 2 if regex[j] == "\\" else 1
        return 1.0, j + 1
    return 1.0, i + (2 if regex[i] == "\\" else 1)


def _repeated(inner: float, repeat: re.Match, length: int) -> float:
    sign, low_text, comma, high_text = repeat.group(1)[0], repeat.group(2), repeat.group(3), repeat.group(4)
    low = {"*": 0, "+": 1, "?": 0}.get(sign, int(low_text or 0))
    high = {"*": math.inf, "+": math.inf, "?": 1}.get(sign, math.inf if comma and not high_text
                                                      else int(high_text or low_text or 0))
    if high == 1:  # x? or x{1}: skip it or take it once
        return inner + (1 if low == 0 else 0)
    if inner <= 1:  # how far a repeat of one path reaches: half the name on average
        return max(min(high, length // 2) - low + 1, 1)
    return math.inf  # a repeat of several paths: every split of the name is tried


MAX_FILTER = 200
_FILTER_CHARS = re.compile(r"[A-Za-z0-9_.^$|()\[\]*+?,\\{}-]+")


@overload
def bench_filter(name: str, text: str | None) -> str: ...
@overload
def bench_filter(name: str, text: str | None, *, allow_empty: bool) -> str | None: ...
def bench_filter(name: str, text: str | None, *, allow_empty: bool = False) -> str | None:
    """The one check of a benchmark filter (asv --bench) for every command and workflow that takes one:
    one line of at most MAX_FILTER safe characters (letters, digits and _ . ^ $ | ( ) [ ] { } * + ? , - \\),
    no $( or ${, not an option, it compiles, and its backtracking stays bounded (asv matches it against every
    benchmark name). Empty gives None with `allow_empty`, else it is refused."""
    value = plain(name, text)
    if not value:
        if allow_empty:
            return None
        raise InputError(f"{name}: empty; omit it to select every benchmark")
    if len(value) > MAX_FILTER:
        raise InputError(f"{name}: {len(value)} characters, at most {MAX_FILTER}")
    if not _FILTER_CHARS.fullmatch(value):
        bad = sorted({c for c in value if not _FILTER_CHARS.fullmatch(c)})
        raise InputError(f"{name}: characters {''.join(bad)!r} not allowed in a benchmark filter "
                         "(letters, digits and _ . ^ $ | ( ) [ ] { } * + ? , - \\ only)")
    if "$(" in value or "${" in value:
        raise InputError(f"{name}: '$(' or '${{' is shell syntax, not a benchmark filter")
    if value.startswith("-"):
        raise InputError(f"{name}: must not start with '-' (it would read as an option)")
    return bounded_regex(name, value, "benchmark")


def bounded_regex(name: str, value: str, what: str = "step") -> str:
    """The one bound on a regular expression a user types (asv's --bench, capture's --only, the suite filters
    run-suites.sh takes): it compiles, and the paths Python's backtracking matcher can try on one name of
    NAME_LENGTH characters stay under MAX_PATHS, so no option runs a catastrophic pattern unbounded."""
    if len(value) > MAX_FILTER:
        raise InputError(f"{name}: {len(value)} characters, at most {MAX_FILTER}")
    try:
        re.compile(value)
        paths = backtracking_paths(value)
    except re.error as exc:
        raise InputError(f"{name}: {quoted(value, 80)} is not a valid regular expression: {exc}") from None
    except (RecursionError, OverflowError):
        raise InputError(f"{name}: {quoted(value, 80)} is nested or repeated too deeply "
                         f"to be a {what} filter") from None
    if paths > MAX_PATHS:
        raise InputError(f"{name}: {quoted(value, 80)} can backtrack through {paths:.3g} paths per "
                         f"{NAME_LENGTH}-character {what} name (at most {MAX_PATHS:,}): use at most two "
                         "'.*', and no '*' or '+' after a group (write [ab]* rather than (a|b)*)")
    return value


def integer(name: str, value: int | None, *, low: int, high: int, unit: str = "") -> int:
    """A whole number in [low, high]; a 400-digit one is refused by its length, never converted to a float."""
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        text = str(value)
        shown = text if len(text) <= 40 else f"(a {len(text)}-digit number)"
        raise InputError(f"{name} {shown}: must be a whole number in [{_fmt(low)}, {_fmt(high)}]"
                         + (f" ({unit})" if unit else ""))
    return value


#: the suite's scales (benchmarks/common.py SCALES): ci skips the large cases, full is what the site records
SCALES = ("ci", "full")


def scale(option: str | None, default: str = "ci", environ=None) -> str:
    """The scale of a run: `option` (--scale, already one of SCALES) when given, else JAXCI_SCALE checked,
    else `default`; one check for every command that starts asv, before anything is built or measured."""
    if option:
        return option
    value = (os.environ if environ is None else environ).get("JAXCI_SCALE", "")
    if value and value not in SCALES:
        raise InputError(f"JAXCI_SCALE={quoted(value, 40)}: expected {' or '.join(SCALES)} "
                         f"(or unset: {default})")
    return value or default
