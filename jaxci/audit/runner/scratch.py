"""The scratch copy of a lecture's folder the kernel runs in, so what a lecture writes never lands in the repository.
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from pathlib import Path

#: the most a lecture's folder may hold to be copied as the kernel's scratch working directory
SCRATCH_LIMIT = 256 * 1024 * 1024


_SKIP_COPY = {"_build", "node_modules", "__pycache__"}


def scratch_copy(folder: Path) -> tuple[str, str, list[str]]:
    """A scratch copy of the lecture's folder (hidden and build folders left out), so the lecture reads its data
    files by their relative paths and what it writes there lands in the copy, removed after the run. No link
    is kept as a link (a write through one would land on its target): a link to a file inside the folder is
    copied as that file's content, a link to a folder inside it points at that folder's copy, a link leading
    out of the folder (or dangling) is left out with a note; FIFOs, sockets and devices are left out too. A
    folder over SCRATCH_LIMIT is not copied: the kernel starts in an empty scratch folder.
    Returns (scratch root to remove, working directory, notes)."""
    root = tempfile.mkdtemp(prefix="jaxci-lecture-")
    top = Path(os.path.realpath(folder))
    plan, notes = _scratch_plan(top)
    work = Path(root) / (folder.name or "work")
    if plan is None:
        work = Path(root) / "work"
        os.mkdir(work)
        return root, str(work), [f"lecture folder over {SCRATCH_LIMIT // (1024 * 1024)} MiB: the kernel starts "
                                 "in an empty scratch folder"]
    os.mkdir(work)
    for rel, kind, source in plan:
        dst = work / rel
        try:
            if kind == "dir":
                dst.mkdir(exist_ok=True)
            elif kind == "file":
                shutil.copyfile(source, dst, follow_symlinks=False)
            else:  # a link to a folder inside: to that folder's copy, relative, so it stays in the copy
                os.symlink(os.path.relpath(work / source, dst.parent), dst)
        except OSError as exc:
            notes.append(f"{rel}: not copied to the scratch folder ({exc.strerror or exc})")
    return root, str(work), notes


def _scratch_plan(top: Path):
    """What scratch_copy copies, in order: (path relative to top, "dir" | "file" | "dirlink", source) where a
    file's source is the real file to copy and a dirlink's its folder relative to top; and the notes of what
    is left out. None for the plan when the files come to more than SCRATCH_LIMIT."""
    plan: list[tuple[Path, str, Path | None]] = []
    notes: list[str] = []
    total = 0
    for dirpath, dirnames, filenames in os.walk(top):
        here = Path(dirpath)
        keep = []
        for name in sorted(dirnames):
            if name.startswith(".") or name in _SKIP_COPY:
                continue
            if (here / name).is_symlink():
                filenames.append(name)  # a link to a folder: resolved below, never walked through
                continue
            keep.append(name)
            plan.append(((here / name).relative_to(top), "dir", None))
        dirnames[:] = keep
        for name in sorted(filenames):
            if name.startswith("."):
                continue
            entry = here / name
            rel = entry.relative_to(top)
            real = Path(os.path.realpath(entry))
            if entry.is_symlink() and real != top and top not in real.parents:
                notes.append(f"{rel}: a link leading out of the lecture folder (to a file named {real.name!r} "
                             "outside it): left out of the scratch copy, so the lecture cannot write through it")
                continue
            try:
                st = os.stat(real)
            except OSError:
                notes.append(f"{rel}: a dangling link: left out of the scratch copy")
                continue
            if stat.S_ISDIR(st.st_mode):
                plan.append((rel, "dirlink", real.relative_to(top)))
            elif stat.S_ISREG(st.st_mode):
                plan.append((rel, "file", real))
                total += st.st_size
                if total > SCRATCH_LIMIT:
                    return None, notes
            elif entry.is_symlink():
                notes.append(f"{rel}: a link to a special file: left out of the scratch copy")
    return plan, notes
