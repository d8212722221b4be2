"""The execution settings a lecture is built with, read once and with one set of rules: Jupyter Book's
`_config.yml` and, if present, `myst.yml`. Both audits use this reader: the lecture audit (which config a
lecture follows, its per-cell timeout) and the CI audit (the same settings with the lines a patch edits).

Jupyter Book 1 (`_config.yml`, `execute:` block): `execute_notebooks` (auto | force | cache | off),
`timeout` (per cell, seconds; Jupyter Book's default is 30 when the key is absent) and `exclude_patterns`.
For `myst.yml` (Jupyter Book 2 / mystmd) no per-cell timeout key is assumed: the first key named like
`timeout` is read with its path, else the file is noted as setting none. A lecture follows the nearest
`_config.yml` above it.

The timeout rule (`check_timeout`, also used for a notebook's own metadata): a positive number of seconds;
-1 (any negative) or null for no limit, and 0 likewise (nbclient, which runs the cells, treats 0 as no
limit); a string, a boolean, NaN, infinity or a list is refused with a message naming the file, line and
key, never read as a number (YAML's `true` is not 1 s). A refused setting is the config's `error`; the
other settings are still read.
"""

from __future__ import annotations

import fnmatch
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from jaxci.audit.reading.yamlread import Doc

JUPYTER_BOOK_DEFAULT_TIMEOUT = 30.0
SET, NONE, ABSENT, INVALID = "set", "none", "absent", "invalid"
MODE_DEFAULT = "auto"


@dataclass(frozen=True)
class Timeout:
    """A per-cell timeout setting read by the rule: state set | none (no limit) | absent | invalid."""

    state: str
    seconds: float | None = None  # when set
    problem: str = ""  # why it was refused (invalid), or a note on how it reads (0: no limit)


def check_timeout(value, where: str) -> Timeout:
    """The one rule for a per-cell timeout value; `where` names the file, line and key in messages."""
    if value is None:
        return Timeout(NONE)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return Timeout(INVALID, problem=f"{where} is {_show(value)}, not a number of seconds "
                                        "(a positive number, or -1 / null for no limit)")
    if value < 0:
        return Timeout(NONE)
    if value == 0:
        return Timeout(NONE, problem=f"{where} is 0: no per-cell limit (nbclient reads 0 as -1)")
    return Timeout(SET, float(value))


def _show(value) -> str:
    if isinstance(value, bool):
        return f"{str(value).lower()} (a boolean)"
    if isinstance(value, str):
        return f"{value[:40]!r} (text)"
    if isinstance(value, (int, float)):
        return str(value)
    return f"{str(value)[:40]!r} (a {type(value).__name__})"


@dataclass
class BookConfig:
    """One book config file's execution settings, each with its line (for findings and patches)."""

    root: str  # folder the config applies to
    source: str  # the file it came from
    rel: str = ""  # the file as findings cite it
    timeout: float | None = None  # per-cell seconds the build applies; None: no limit (or not known)
    timeout_state: str = ABSENT  # set | none | absent | invalid (see check_timeout)
    timeout_origin: str = ""
    timeout_path: tuple = ()  # key path of the timeout setting in the YAML
    timeout_line: int | None = None
    mode: str | None = None
    mode_line: int | None = None
    exclude: list[str] = field(default_factory=list)
    exclude_line: int | None = None
    allow_errors: bool = False  # execute.allow_errors: a cell's error is kept in its output, the build goes on
    notes: list[str] = field(default_factory=list)
    error: str | None = None  # every refused setting, "; "-joined
    doc: Doc | None = field(default=None, repr=False, compare=False)  # the parsed YAML with line marks

    def excluded(self, lecture: Path) -> bool:
        rel = lecture.resolve().relative_to(Path(self.root).resolve()).as_posix()
        return any(fnmatch.fnmatch(rel, pattern) for pattern in self.exclude)

    def where(self, line) -> str:
        return f"{self.rel}:{line}" if line else str(self.rel)

    def refuse(self, problem: str) -> None:
        self.error = f"{self.error}; {problem}" if self.error else problem

    def as_dict(self) -> dict:
        return {k: v for k, v in asdict(self).items() if k != "doc"}


def read(path: Path, rel: str | None = None, top: Path | None = None) -> BookConfig:
    """Read one `_config.yml` or `myst.yml` (through yamlread: a regular file within safeio's limits, aliases
    bounded); a read, parse or setting problem becomes the config's error, never an exception. A link leading
    out of `top` (the folder the user named) is not read."""
    from jaxci.audit.reading.yamlread import load  # the CI package imports this module: load lazily
    from jaxci.util import safeio

    path = Path(path)
    rel = str(path) if rel is None else rel
    config = BookConfig(root=str(path.parent), source=str(path), rel=rel)
    if top is not None:
        try:
            safeio.within(path, top)
        except safeio.UnsafeFile as exc:
            config.error = f"{rel}: cannot read: {exc.reason}"
            return config
    config.doc = doc = load(path, rel)
    if doc.error or not isinstance(doc.data, dict):
        # one wording for every way the file cannot be used: "<file>[:line]: cannot read: <why>"
        config.error = (doc.error if "cannot read" in (doc.error or "")
                        else doc.error.replace(": not valid YAML", ": cannot read: not valid YAML", 1) if doc.error
                        else f"{rel}: cannot read: not a YAML mapping")
        return config
    if path.name == "myst.yml":
        _read_myst(config, doc)
    else:
        _read_jupyter_book(config, doc)
    return config


def _read_jupyter_book(config: BookConfig, doc) -> None:
    execute = doc.data.get("execute")
    if execute is None:
        execute = {}
    elif not isinstance(execute, dict):
        config.refuse(f"{doc.where('execute')}: 'execute' is not a mapping")
        return
    config.mode = execute.get("execute_notebooks", MODE_DEFAULT)
    config.mode_line = doc.line("execute", "execute_notebooks")
    if "timeout" in execute:
        _set_timeout(config, doc, ("execute", "timeout"), execute["timeout"])
    else:
        config.timeout, config.timeout_origin = JUPYTER_BOOK_DEFAULT_TIMEOUT, "Jupyter Book default (30 s)"
    patterns = execute.get("exclude_patterns") or []
    config.exclude_line = doc.line("execute", "exclude_patterns")
    if isinstance(patterns, str):
        patterns = [patterns]
    if isinstance(patterns, list):
        config.exclude = [str(p) for p in patterns]
    else:
        config.refuse(f"{config.where(config.exclude_line)}: execute.exclude_patterns is {str(patterns)[:40]!r}, "
                      "not a list of patterns")
    allow = execute.get("allow_errors", False)
    if isinstance(allow, bool):
        config.allow_errors = allow
    else:
        config.refuse(f"{doc.where('execute', 'allow_errors')}: execute.allow_errors is {str(allow)[:40]!r}, "
                      "not true or false")
    if config.mode == "off":
        config.notes.append(f"{Path(config.source).name}: execute_notebooks is off: lectures are not executed "
                            "in the build")


def _set_timeout(config: BookConfig, doc, key_path: tuple, value) -> None:
    config.timeout_path, config.timeout_line = key_path, doc.line(*key_path)
    rule = check_timeout(value, f"{config.where(config.timeout_line)}: {'.'.join(map(str, key_path))}")
    config.timeout_state = rule.state
    if rule.state == INVALID:
        config.refuse(rule.problem)
        return
    if rule.problem:
        config.notes.append(rule.problem)
    config.timeout = rule.seconds
    config.timeout_origin = f"{Path(config.source).name} {'.'.join(map(str, key_path))}"


def _timeout_keys(data, prefix=()):
    """Key paths named like `timeout` holding a scalar, in file order."""
    if isinstance(data, dict):
        for key, value in data.items():
            if "timeout" in str(key).lower() and not isinstance(value, (dict, list)):
                yield prefix + (key,), value
            yield from _timeout_keys(value, prefix + (key,))


def _read_myst(config: BookConfig, doc) -> None:
    found = next(_timeout_keys(doc.data), None)
    if found is None:
        config.notes.append(f"{Path(config.source).name}: sets no execution timeout")
        return
    _set_timeout(config, doc, *found)


def read_jupyter_book(path: Path) -> BookConfig:
    return read(path)


def read_myst(path: Path) -> BookConfig:
    return read(path)


def find_configs(root: Path) -> list[BookConfig]:
    """Every _config.yml and myst.yml under root (build, hidden and node_modules folders pruned), and,
    when root is inside a book, those in the folders above it up to the repository top."""
    import os

    names = ("_config.yml", "myst.yml")
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith((".", "_build")) and d != "node_modules")
        found += [read(Path(dirpath) / name, (Path(dirpath) / name).relative_to(root).as_posix(), top=root)
                  for name in sorted(names) if name in filenames]
    for parent in Path(root).resolve().parents:
        found += [read(parent / name) for name in names if (parent / name).is_file()]
        if (parent / ".git").exists():
            break
    return found


def config_for(lecture: Path, configs: list[BookConfig]) -> BookConfig | None:
    """The nearest config above the lecture; _config.yml wins over myst.yml in the same folder."""
    best = None
    for config in configs:
        root = Path(config.root).resolve()
        try:
            lecture.resolve().relative_to(root)
        except ValueError:
            continue
        depth = len(root.parts)
        if best is None or depth > best[0] or (depth == best[0] and config.source.endswith("_config.yml")
                                               and not best[1].source.endswith("_config.yml")):
            best = (depth, config)
    return best[1] if best else None
