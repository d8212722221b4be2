"""Writing files the user named: the one helper every writer of an output path goes through, as safeio is for
every reader.

Only a regular file (or a name not yet taken) is written: a FIFO, a device (`/dev/full`, a link to `/dev/null`),
a socket or a folder is refused before a byte is written, and nothing is opened in a way that can block (a FIFO
is opened O_NONBLOCK, so one without a reader fails at once and one with a reader is seen and refused). A link
at the named path is refused unless the caller allows links; with `within`, the file's real folder must lie
inside that folder, so no link on the way leads the write elsewhere. Each write has a size limit. A whole-file
write is atomic: a temporary file in the same folder, then os.replace, so a reader never sees half a file and a
failed write leaves the old one. Append mode (GitHub's $GITHUB_OUTPUT, $GITHUB_ENV and $GITHUB_STEP_SUMMARY) adds
to the file in place. Every OSError (ENOSPC, EFBIG under a file-size limit, EACCES, ...) becomes an UnsafeWrite
naming the path, one line. The one device accepted is /dev/null named as itself (not through a link): what
is written to it is dropped, as a user who names it asks. Pure Python.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile
from pathlib import Path

from jaxci.util import safeio
from jaxci.util.safeio import MIB, UnsafeFile, _kind, _size

#: default size limit of one file written (a report page, a table, a patch)
WRITE_LIMIT = 64 * MIB
#: default size limit of one copied file (a vendored asset)
COPY_LIMIT = 64 * MIB
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
#: the process umask, read once (os.umask can only be read by setting it): the mode new files are given
_UMASK = os.umask(0o022)
os.umask(_UMASK)


class UnsafeWrite(UnsafeFile):
    """A write was refused or failed; str() is one line naming the path and the cause."""


def _reason(exc: OSError) -> str:
    return exc.strerror or str(exc).splitlines()[0]


def check_target(path: str | Path, *, links: bool = False, within: str | Path | None = None,
                 option: str = "") -> Path:
    """Refuse `path` as an output unless its folder exists and it is absent or a regular file (not a link,
    unless `links`; inside `within`'s real folder, if given). For commands that check an output before working;
    `option` heads the message, as in write_text."""
    path = Path(path)
    with _named(option):
        if str(path) == os.devnull:
            return path
        folder = path.parent
        if not folder.is_dir():
            raise UnsafeWrite(path, f"folder {folder} does not exist" if not folder.exists()
                              else f"{folder} is not a folder")
        if within is not None:
            try:
                safeio.within(path.parent, within)
            except UnsafeFile as exc:
                raise UnsafeWrite(path, f"its folder {exc.reason}") from None
        try:
            st = os.stat(path) if links else os.lstat(path)
        except FileNotFoundError:
            return path
        except OSError as exc:
            raise UnsafeWrite(path, f"cannot write it ({_reason(exc)})") from None
        if stat.S_ISLNK(st.st_mode):
            raise UnsafeWrite(path, f"is a symbolic link (to {os.readlink(path)!r}); links are refused here")
        if not stat.S_ISREG(st.st_mode):
            raise UnsafeWrite(path, f"is {_kind(st.st_mode)}, not a regular file")
    return path


@contextlib.contextmanager
def _named(option: str):
    """A refusal's message headed by `option` (e.g. "--output"), so it names what the user typed."""
    try:
        yield
    except UnsafeWrite as exc:
        if not option:
            raise
        raise UnsafeWrite(f"{option} {exc.path}", exc.reason) from None


def write_text(path: str | Path, text: str, *, append: bool = False, limit: int = WRITE_LIMIT,
               links: bool = False, within: str | Path | None = None, option: str = "") -> Path:
    """Write `text` (UTF-8) to the regular file `path`: atomically, or appended (`append`); see the module.
    `option` (e.g. "--output") heads the message of a refusal, so it names what the user typed."""
    return write_bytes(path, text.encode("utf-8"), append=append, limit=limit, links=links, within=within,
                       option=option)


def write_bytes(path: str | Path, data: bytes, *, append: bool = False, limit: int = WRITE_LIMIT,
                links: bool = False, within: str | Path | None = None, option: str = "") -> Path:
    """Write `data` to the regular file `path`: atomically, or appended (`append`); see write_text."""
    with _named(option):
        path = check_target(path, links=links, within=within)
        if str(path) == os.devnull:
            return path
        if len(data) > limit:
            raise UnsafeWrite(path, f"{_size(len(data))} to write, over the limit of {_size(limit)}")
        if append:
            _append(path, data, links)
        else:
            _replace(path, [data], links)
    return path


def _append(path: Path, data: bytes, links: bool) -> None:
    """Append to `path`, opened without blocking, once it is seen to be a regular file."""
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | _NONBLOCK | _CLOEXEC | (0 if links else _NOFOLLOW)
    try:
        fd = os.open(path, flags, 0o666)
    except OSError as exc:
        if exc.errno == errno.ENXIO:
            raise UnsafeWrite(path, "is a FIFO (named pipe), not a regular file") from None
        if exc.errno == errno.ELOOP and not links:
            raise UnsafeWrite(path, "is a symbolic link; links are refused here") from None
        raise UnsafeWrite(path, f"cannot write it ({_reason(exc)})") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise UnsafeWrite(path, f"is {_kind(st.st_mode)}, not a regular file")
        _write_all(path, fd, data)
    finally:
        os.close(fd)


def _write_all(path: Path, fd: int, data: bytes) -> None:
    view = memoryview(data)
    try:
        while view:
            view = view[os.write(fd, view):]
    except OSError as exc:
        raise UnsafeWrite(path, f"cannot write it ({_reason(exc)})") from None


def _temp(path: Path) -> tuple[Path, int]:
    """A new file beside `path` (tempfile.mkstemp: O_EXCL and O_NOFOLLOW, never an existing file or a link's
    target), with the mode a plain new file gets (mkstemp's 0600 widened to 0666 less the umask)."""
    try:
        fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as exc:
        raise UnsafeWrite(path, f"cannot write in its folder ({_reason(exc)})") from None
    os.chmod(fd, 0o666 & ~_UMASK)
    return Path(name), fd


def _replace(path: Path, chunks, links: bool) -> None:
    """Write `chunks` to a temporary file beside `path`, then put it in place; on any failure remove it."""
    tmp, fd = _temp(path)
    try:
        try:
            with contextlib.suppress(OSError):
                os.chmod(fd, stat.S_IMODE(os.stat(path).st_mode))
            for chunk in chunks:
                _write_all(path, fd, chunk)
        finally:
            os.close(fd)
        try:
            os.replace(tmp, os.path.realpath(path) if links else path)
        except OSError as exc:
            raise UnsafeWrite(path, f"cannot write it ({_reason(exc)})") from None
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def copy_file(src: str | Path, dst: str | Path, *, limit: int = COPY_LIMIT,
              within: str | Path | None = None) -> int:
    """Copy the regular file `src` (not a link) to `dst`, streamed in 1 MiB chunks and atomically, at most
    `limit` bytes; the bytes copied. A refused or failed copy leaves nothing at `dst`."""
    src, dst = Path(src), check_target(dst, within=within)
    fd = safeio._open(src, False)
    try:
        safeio._fstat_regular(src, fd, limit, "copy limit")
        copied = [0]

        def chunks():
            while True:
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    return
                copied[0] += len(chunk)
                if copied[0] > limit:
                    raise UnsafeFile(src, f"grew past the copy limit of {_size(limit)} while it was copied")
                yield chunk

        _replace(dst, chunks(), False)
        return copied[0]
    finally:
        os.close(fd)


def make_folder(path: str | Path, *, within: str | Path) -> Path:
    """Create the folder `path` (and its parents) inside `within`, refusing any link on the way."""
    path, top = Path(path), Path(within)
    rel = path.relative_to(top)
    here = top
    for part in rel.parts:
        here = here / part
        try:
            st = os.lstat(here)
        except FileNotFoundError:
            try:
                os.mkdir(here)
            except OSError as exc:
                raise UnsafeWrite(here, f"cannot create the folder ({_reason(exc)})") from None
            continue
        if stat.S_ISLNK(st.st_mode):
            raise UnsafeWrite(here, f"is a symbolic link (to {os.readlink(here)!r}); links are refused here")
        if not stat.S_ISDIR(st.st_mode):
            raise UnsafeWrite(here, f"is {_kind(st.st_mode)}, not a folder")
    return path


def write_files(folder: str | Path, files: dict[str, str], *, option: str = "") -> list[Path]:
    """Several files written as one output into `folder`: every target checked (check_target) before the first
    is written, so a link or a folder at the last name refuses the whole output with nothing written; then each
    replaced atomically. The paths written."""
    targets = {check_target(Path(folder) / name, option=option): text for name, text in files.items()}
    return [write_text(path, text, option=option) for path, text in targets.items()]
