"""The build settings a CI audit needs beyond the workflows: the book config and the environment file.

Book config: Jupyter Book 1 `_config.yml` (`execute.execute_notebooks`, `execute.timeout`,
`execute.exclude_patterns`) or a `myst.yml` (any numeric key named like `timeout` under it), each with its
line. Environment: conda `environment.yml` (conda entries `name=ver`, pip entries `name==ver`) and pip
`requirements*.txt`: the Python version and the jax / jaxlib / numpyro entries with their lines.
A package is pinned when it names one exact version (`==x` for pip, `=x` or `==x` for conda).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from jaxci.audit.ci.yamlread import Doc, load
from jaxci.util import safeio

WATCHED = ("jax", "jaxlib", "numpyro")
_REQ = re.compile(r"^\s*(?P<name>[A-Za-z0-9_.-]+)(?P<extras>\[[^\]]*\])?\s*(?P<spec>[^#;]*)")


@dataclass
class BookSettings:
    file: str | None = None
    doc: Doc | None = field(default=None, repr=False)
    mode: str | None = None
    mode_line: int | None = None
    timeout: float | None = None          # per-cell seconds; None: no limit or not set (see timeout_state)
    timeout_state: str = "absent"         # set | none (-1/null) | absent
    timeout_line: int | None = None
    timeout_path: tuple = ()
    exclude: list = field(default_factory=list)
    exclude_line: int | None = None
    error: str | None = None

    def where(self, line) -> str:
        return f"{self.file}:{line}" if line else str(self.file)


def _timeout_paths(data, path=()):
    if isinstance(data, dict):
        for key, value in data.items():
            if "timeout" in str(key).lower() and isinstance(value, (int, float)) and not isinstance(value, bool):
                yield path + (key,), value
            yield from _timeout_paths(value, path + (key,))


def read_book(root: Path) -> BookSettings:
    """The top-level book config of the repository (`_config.yml`, else `myst.yml`, else under book/ or
    lectures/): the one a `jb build` / `myst build` of the repository reads first."""
    candidates = [Path(root) / d / n for d in ("", "lectures", "book", "docs") for n in ("_config.yml", "myst.yml")]
    path = next((p for p in candidates if p.is_file()), None)
    if path is None:
        return BookSettings()
    rel = path.relative_to(root).as_posix()
    doc = load(path, rel)
    out = BookSettings(file=rel, doc=doc)
    if doc.error or not isinstance(doc.data, dict):
        out.error = doc.error or f"{rel}: not a YAML mapping"
        return out
    if path.name == "_config.yml":
        execute = doc.data.get("execute")
        if isinstance(execute, dict):
            out.mode, out.mode_line = execute.get("execute_notebooks", "auto"), doc.line("execute", "execute_notebooks")
            if "timeout" in execute:
                value = execute["timeout"]
                out.timeout_path, out.timeout_line = ("execute", "timeout"), doc.line("execute", "timeout")
                if value is None or (isinstance(value, (int, float)) and value < 0):
                    out.timeout_state = "none"
                elif isinstance(value, (int, float)) and not isinstance(value, bool):
                    out.timeout, out.timeout_state = float(value), "set"
                else:
                    out.error = f"{rel}:{out.timeout_line}: execute.timeout is not a number: {value!r}"
            patterns = execute.get("exclude_patterns") or []
            out.exclude_line = doc.line("execute", "exclude_patterns")
            if isinstance(patterns, list):
                out.exclude = [str(p) for p in patterns]
            elif isinstance(patterns, str):
                out.exclude = [patterns]
            else:
                out.error = f"{rel}:{out.exclude_line}: execute.exclude_patterns is not a list: {patterns!r}"
    else:
        found = list(_timeout_paths(doc.data))
        if found:
            out.timeout_path, value = found[0]
            out.timeout_line = doc.line(*out.timeout_path)
            out.timeout, out.timeout_state = (None, "none") if value < 0 else (float(value), "set")
    return out


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
