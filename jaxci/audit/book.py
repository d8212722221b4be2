"""The execution settings a lecture is built with: Jupyter Book's `_config.yml` and, if present, `myst.yml`.

Jupyter Book 1 (`_config.yml`, `execute:` block): `execute_notebooks` (auto | force | cache | off) and
`timeout` (per cell, seconds; -1 or null for none; Jupyter Book's default is 30 when the key is absent) and
`exclude_patterns`. For `myst.yml` (Jupyter Book 2 / mystmd) no per-cell timeout key is assumed: any key
named like `timeout` is reported with its path, else the file is noted as setting none. A lecture follows
the nearest `_config.yml` above it.
"""

from __future__ import annotations

import fnmatch
from dataclasses import asdict, dataclass, field
from pathlib import Path

from jaxci.util import safeio

JUPYTER_BOOK_DEFAULT_TIMEOUT = 30.0


@dataclass
class BookConfig:
    root: str  # folder the config applies to
    source: str  # the file it came from
    timeout: float | None = None  # per-cell seconds; None: no limit
    timeout_origin: str = ""
    mode: str | None = None
    exclude: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    error: str | None = None

    def excluded(self, lecture: Path) -> bool:
        rel = lecture.resolve().relative_to(Path(self.root).resolve()).as_posix()
        return any(fnmatch.fnmatch(rel, pattern) for pattern in self.exclude)

    def as_dict(self) -> dict:
        return asdict(self)


def _load(path: Path):
    """The YAML of a book config through safeio: a regular file within its size limit, aliases bounded."""
    try:
        return safeio.load_yaml(path) or {}, None
    except safeio.UnsafeFile as exc:
        return None, f"{path}: cannot read: {' '.join(exc.reason.split())[:200]}"


def read_jupyter_book(path: Path) -> BookConfig:
    config = BookConfig(root=str(path.parent), source=str(path))
    data, error = _load(path)
    if error or not isinstance(data, dict):
        config.error = error or f"{path}: not a YAML mapping"
        return config
    execute = data.get("execute") or {}
    if not isinstance(execute, dict):
        config.error = f"{path}: 'execute' is not a mapping"
        return config
    config.mode = execute.get("execute_notebooks", "auto")
    if "timeout" in execute:
        value = execute["timeout"]
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))
                                  or value != value):
            config.error = f"{path}: execute.timeout is {str(value)[:40]!r}, not a number of seconds (or -1/null)"
            return config
        config.timeout = None if value is None or value < 0 else float(value)
        config.timeout_origin = f"{path.name} execute.timeout"
    else:
        config.timeout, config.timeout_origin = JUPYTER_BOOK_DEFAULT_TIMEOUT, "Jupyter Book default (30 s)"
    patterns = execute.get("exclude_patterns") or []
    if isinstance(patterns, str):
        patterns = [patterns]
    if not isinstance(patterns, list):
        config.error = f"{path}: execute.exclude_patterns is {str(patterns)[:40]!r}, not a list of patterns"
        return config
    config.exclude = [str(p) for p in patterns]
    if config.mode == "off":
        config.notes.append(f"{path.name}: execute_notebooks is off: lectures are not executed in the build")
    return config


def _timeout_keys(data, prefix=""):
    if isinstance(data, dict):
        for key, value in data.items():
            where = f"{prefix}.{key}" if prefix else str(key)
            if "timeout" in str(key).lower() and isinstance(value, (int, float)) and not isinstance(value, bool):
                yield where, value
            yield from _timeout_keys(value, where)


def read_myst(path: Path) -> BookConfig:
    config = BookConfig(root=str(path.parent), source=str(path))
    data, error = _load(path)
    if error or not isinstance(data, dict):
        config.error = error or f"{path}: not a YAML mapping"
        return config
    found = list(_timeout_keys(data))
    if found:
        where, value = found[0]
        config.timeout = None if value < 0 or value != value else float(value)
        config.timeout_origin = f"{path.name} {where}"
    else:
        config.notes.append(f"{path.name}: sets no execution timeout")
    return config


def find_configs(root: Path) -> list[BookConfig]:
    """Every _config.yml and myst.yml under root (build, hidden and node_modules folders pruned), and,
    when root is inside a book, those in the folders above it up to the repository top."""
    import os

    readers = {"_config.yml": read_jupyter_book, "myst.yml": read_myst}
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith((".", "_build")) and d != "node_modules")
        found += [readers[name](Path(dirpath) / name) for name in sorted(readers) if name in filenames]
    for parent in Path(root).resolve().parents:
        found += [reader(parent / name) for name, reader in readers.items() if (parent / name).is_file()]
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
