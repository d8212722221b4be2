"""Files put into a results folder as one transaction (the import's last step): staged in a folder inside the
target (`.jaxci-import-*`), then moved into place file by file with SIGINT and SIGTERM held off; on any failure,
what was there is put back and the error raised. `STATE["committed"]` says whether the import got as far as
writing (the command's interrupt message).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from jaxci.results.asvfiles import save_file
from jaxci.util import signals

STAGING_PREFIX = ".jaxci-import-"
STATE = {"committed": False}


def commit(staging: Path, target: Path, files: dict[str, bytes | dict]) -> list[str]:
    """Move the staged files into place; on any failure put back what was there and re-raise."""
    new = staging / "new"
    for rel, data in files.items():
        (new / rel).parent.mkdir(parents=True, exist_ok=True)
        if isinstance(data, dict):
            save_file(new / rel, data)
        else:
            (new / rel).write_bytes(data)
    with signals.held():
        _place(staging, target, files)
    return [str(target / rel) for rel in files]


def _place(staging: Path, target: Path, files: dict) -> None:
    """The staged files into place, or, on any failure, what was there put back (and the error raised)."""
    new, old = staging / "new", staging / "old"
    created_dirs, moved, placed = [], [], []
    try:
        for rel in files:
            dest = target / rel
            if not dest.parent.is_dir():
                dest.parent.mkdir()
                created_dirs.append(dest.parent)
            if not os.access(dest.parent, os.W_OK):
                raise PermissionError(f"{dest.parent}: not writable")
        for rel in files:
            dest = target / rel
            if dest.exists():
                (old / rel).parent.mkdir(parents=True, exist_ok=True)
                try:
                    os.link(dest, old / rel)   # a second name for what is there, so it can be put back
                except OSError:
                    shutil.copy2(dest, old / rel)
                moved.append(rel)
            os.replace(new / rel, dest)
            placed.append(rel)
        STATE["committed"] = True
    except BaseException:
        for rel in reversed(placed):
            if rel in moved:
                os.replace(old / rel, target / rel)
            else:
                (target / rel).unlink(missing_ok=True)
        for folder in reversed(created_dirs):
            shutil.rmtree(folder, ignore_errors=True)
        raise
