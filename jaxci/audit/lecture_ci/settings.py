"""The build settings a CI audit needs beyond the workflows: the book config and the environment file.

Book config: the repository's top-level `_config.yml` or `myst.yml`, read by `jaxci.audit.reading.book` (the one
reader and rule set the lecture audit uses too) and shown here with the lines a patch edits.
Environment: conda `environment.yml` (conda entries `name=ver`, pip entries `name==ver`) and pip
`requirements*.txt`: the Python version and the jax / jaxlib / numpyro entries with their lines.
A package is pinned when it names one exact version (`==x` for pip, `=x` or `==x` for conda).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from jaxci.audit.reading import book
from jaxci.audit.reading.yamlread import Doc, load
from jaxci.util import safeio

WATCHED = ("jax", "jaxlib", "numpyro")
_REQ = re.compile(r"^\s*(?P<name>[A-Za-z0-9_.-]+)(?P<extras>\[[^\]]*\])?\s*(?P<spec>[^#;]*)")


@dataclass
class BookSettings:
    """The CI audit's view of the book config that `book.read` parsed (no parsing or rules here): `timeout`
    is the configured value only (None unless timeout_state is "set"), lines for findings and patches."""

    file: str | None = None
    doc: Doc | None = field(default=None, repr=False)
    mode: str | None = None
    mode_line: int | None = None
    timeout: float | None = None          # per-cell seconds; None: no limit or not set (see timeout_state)
    timeout_state: str = "absent"         # set | none (-1/null/0) | absent | invalid (the error says why)
    timeout_line: int | None = None
    timeout_path: tuple = ()
    exclude: list = field(default_factory=list)
    exclude_line: int | None = None
    error: str | None = None

    def where(self, line) -> str:
        return f"{self.file}:{line}" if line else str(self.file)


def read_book(root: Path) -> BookSettings:
    """The top-level book config of the repository (`_config.yml`, else `myst.yml`, else under book/ or
    lectures/): the one a `jb build` / `myst build` of the repository reads first."""
    candidates = [Path(root) / d / n for d in ("", "lectures", "book", "docs") for n in ("_config.yml", "myst.yml")]
    path = next((p for p in candidates if p.is_file()), None)
    if path is None:
        return BookSettings()
    c = book.read(path, path.relative_to(root).as_posix())
    return BookSettings(file=c.rel, doc=c.doc, mode=c.mode, mode_line=c.mode_line,
                        timeout=c.timeout if c.timeout_state == book.SET else None, timeout_state=c.timeout_state,
                        timeout_line=c.timeout_line, timeout_path=c.timeout_path, exclude=c.exclude,
                        exclude_line=c.exclude_line, error=c.error)


@dataclass
class Requirement:
    name: str
    spec: str            # what follows the name, e.g. "==0.12.0", ">=0.4", "" (unpinned)
    file: str
    line: int
    manager: str         # pip | conda
    version: str | None  # the exact version when pinned
    text: str = ""       # the entry as written (what an edit replaces)

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}"


@dataclass
class EnvSettings:
    files: list = field(default_factory=list)
    python: str | None = None
    python_where: str | None = None
    packages: dict = field(default_factory=dict)   # name -> Requirement (first seen)
    errors: list = field(default_factory=list)


def _requirement(text: str, file: str, line: int, manager: str) -> Requirement | None:
    m = _REQ.match(text)
    if not m:
        return None
    name, spec = m["name"].lower(), m["spec"].strip().replace(" ", "")
    if manager == "conda" and "::" in text:
        return _requirement(text.split("::", 1)[1], file, line, manager)
    exact = re.fullmatch(r"==?([0-9][A-Za-z0-9.+-]*)", spec) if manager == "conda" else \
        re.fullmatch(r"===?([0-9][A-Za-z0-9.+-]*)", spec)
    return Requirement(name, spec, file, line, manager, exact.group(1) if exact else None,
                       text.split("#", 1)[0].split(";", 1)[0].strip())


def _note(env: EnvSettings, req: Requirement | None) -> None:
    if req is None:
        return
    if req.name == "python" and env.python is None:
        env.python, env.python_where = req.spec.lstrip("=") or "(unpinned)", req.where
    elif req.name in WATCHED:
        env.packages.setdefault(req.name, req)


def read_env(root: Path) -> EnvSettings:
    env = EnvSettings()
    root = Path(root)
    for name in ("environment.yml", "environment.yaml", "lectures/environment.yml"):
        path = root / name
        if not path.is_file():
            continue
        doc = load(path, name)
        env.files.append(name)
        if doc.error or not isinstance(doc.data, dict):
            env.errors.append(doc.error or f"{name}: not a YAML mapping")
            continue
        deps = doc.data.get("dependencies") or []
        for i, dep in enumerate(deps if isinstance(deps, list) else []):
            if isinstance(dep, str):
                _note(env, _requirement(dep, name, doc.line("dependencies", i) or 0, "conda"))
            elif isinstance(dep, dict) and isinstance(dep.get("pip"), list):
                for j, item in enumerate(dep["pip"]):
                    if isinstance(item, str):
                        _note(env, _requirement(item, name, doc.line("dependencies", i, "pip", j) or 0, "pip"))
    for path in sorted(root.glob("requirements*.txt")):
        rel = path.relative_to(root).as_posix()
        try:
            lines = safeio.read_text(path).splitlines()
        except safeio.UnsafeFile as exc:
            env.errors.append(f"{rel}: cannot read: {exc.reason}")
            continue
        env.files.append(rel)
        for n, text in enumerate(lines, 1):
            if text.strip() and not text.lstrip().startswith(("#", "-")):
                _note(env, _requirement(text, rel, n, "pip"))
    return env
