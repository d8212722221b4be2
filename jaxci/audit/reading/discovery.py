"""Which files under a folder are lectures, and each one's static scan (links leading out are never read).
"""

from __future__ import annotations

import os
from pathlib import Path

from jaxci.audit.reading.notebook import NOTEBOOK_LIMIT, NotebookReadError, read_notebook
from jaxci.audit.reading.static import LectureScan, is_lecture, scan_notebook
from jaxci.util import safeio

SKIP_DIRS = {"_build", "node_modules", ".ipynb_checkpoints", "__pycache__", "site-packages"}


#: the largest lecture read: the notebook reader's own bound (a lecture with its outputs is rarely over 5 MiB)
LECTURE_LIMIT = NOTEBOOK_LIMIT


def find_lectures(root: Path) -> list[Path]:
    """Every .ipynb and every MyST-notebook .md under root, sorted; root may be one file. A lecture that is a
    link leading out of root is listed unread (scan_file reports it unreadable): nothing outside is read."""
    if root.is_file():
        return [root]
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d not in SKIP_DIRS)
        for name in sorted(filenames):
            path = Path(dirpath) / name
            if path.suffix == ".ipynb" or (path.suffix == ".md" and outside(path, root)):
                found.append(path)
            elif path.suffix == ".md":
                try:
                    text = safeio.read_bytes(path, LECTURE_LIMIT).decode("utf-8")
                except (UnicodeDecodeError, safeio.UnsafeFile):
                    found.append(path)  # cannot tell (a FIFO, too large, not UTF-8): report it as unreadable
                    continue
                if is_lecture(path, text):
                    found.append(path)
    return sorted(found)


def outside(path: Path, root: Path) -> str | None:
    """Why `path` is not read: a link leading out of the folder the user named (None: it stays inside)."""
    try:
        safeio.within(path, root)
    except safeio.UnsafeFile as exc:
        return exc.reason
    return None


def scan_file(path: Path, rel: str, root: Path | None = None) -> LectureScan:
    """The lecture's static scan; unreadable (never read) when it is a link leading out of `root`."""

    refused = outside(path, root) if root is not None else None
    if refused:
        return LectureScan(rel, status="unreadable", errors=[f"{path}: cannot read: {refused}"])
    try:
        nb = read_notebook(path)
    except NotebookReadError as exc:
        return LectureScan(rel, status="unreadable", errors=[str(exc)])
    return scan_notebook(nb, rel, root)
