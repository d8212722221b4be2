"""Reading files that may be hostile: the one helper every reader of a user's, a capture's or a lecture's file
goes through.

A file is opened only if it is a regular file: a FIFO, a device (a link to /dev/zero), a socket or a folder is
refused before a byte is read, so nothing can block or stream forever. Links are followed unless the caller
says `links=False` (a capture folder: nothing in it may point elsewhere). Every read has a size limit, checked
on the open descriptor (fstat) and again while reading, so a file that grows meanwhile is cut off and refused.
JSON is parsed with its nesting bounded (DEPTH); YAML with PyYAML's safe loader whose composed document may
expand to at most YAML_NODES nodes once its aliases are followed (billion laughs) and may not refer to itself
(a recursive alias). Every refusal is an UnsafeFile naming the file and the cause, one line. Pure Python.
"""

from __future__ import annotations

import errno
import json
import os
import stat
from pathlib import Path

MIB = 1024 * 1024
#: default size limit of one file read as text (a lecture, a config, a workflow, a status file)
TEXT_LIMIT = 16 * MIB
#: default size limit of one JSON file (asv writes results files of a few hundred KiB)
JSON_LIMIT = 64 * MIB
#: the deepest nesting of lists and objects a JSON file may have (asv's files nest 4 deep)
DEPTH = 64
#: the most nodes a YAML document may expand to with its aliases followed (a large _config.yml has < 2,000)
YAML_NODES = 100_000


class UnsafeFile(ValueError):
    """A file was refused; str() is one line naming the file and the cause."""

    def __init__(self, path, reason: str):
        super().__init__(f"{path}: {reason}")
        self.path, self.reason = path, reason


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a folder"),
                       (stat.S_ISLNK, "a symbolic link")):
        if test(mode):
            return name
    return "not a regular file"


def _size(n: int) -> str:
    return f"{n / MIB:,.1f} MiB" if n >= MIB else f"{n:,} bytes"


def check_name(path: str | Path, *, links: bool = True) -> os.stat_result:
    """lstat/stat `path` and refuse anything but a regular file (and a link, unless `links`)."""
    try:
        st = os.stat(path) if links else os.lstat(path)
    except FileNotFoundError:
        raise UnsafeFile(path, "no such file") from None
    except OSError as exc:
        raise UnsafeFile(path, f"cannot read it ({exc.strerror or exc})") from None
    if not links and stat.S_ISLNK(st.st_mode):
        raise UnsafeFile(path, f"is a symbolic link (to {os.readlink(path)!r}); links are refused here")
    if not stat.S_ISREG(st.st_mode):
        raise UnsafeFile(path, f"is {_kind(st.st_mode)}, not a regular file")
    return st


def within(path: str | Path, top: str | Path) -> Path:
    """The real path of `path`, which must lie inside the real folder `top`: a link (anywhere on the way) that
    leads out of the folder the user named is refused. The one check of "links leaving the named folder"."""
    real, root = os.path.realpath(path), os.path.realpath(top)
    if real != root and not real.startswith(root.rstrip(os.sep) + os.sep):
        raise UnsafeFile(path, f"is a symbolic link leading out of {top} (to {real}); refused")
    return Path(real)


def check(path: str | Path, limit: int = JSON_LIMIT, *, links: bool = True) -> int:
    """Refuse `path` unless it is a regular file of at most `limit` bytes (without reading it); its size.
    For readers that hand the path on to a library (asv) after this check."""
    fd = _open(path, links)
    try:
        return _fstat_regular(path, fd, limit)
    finally:
        os.close(fd)


def _open(path, links: bool) -> int:
    if not links:
        check_name(path, links=False)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    if not links:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    try:
        return os.open(path, flags)   # O_NONBLOCK: opening a FIFO without a writer does not wait
    except FileNotFoundError:
        raise UnsafeFile(path, "no such file") from None
    except IsADirectoryError:
        raise UnsafeFile(path, "is a folder, not a regular file") from None
    except OSError as exc:
        if not links and exc.errno == errno.ELOOP:
            raise UnsafeFile(path, "is a symbolic link; links are refused here") from None
        raise UnsafeFile(path, f"cannot read it ({exc.strerror or exc})") from None


def _fstat_regular(path, fd: int, limit: int | None = None, what: str = "limit") -> int:
    """The size of the open file `fd`, refused unless it is a regular file of at most `limit` bytes."""
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        raise UnsafeFile(path, f"is {_kind(st.st_mode)}, not a regular file")
    if limit is not None and st.st_size > limit:
        raise UnsafeFile(path, f"{_size(st.st_size)}, over the {what} of {_size(limit)}")
    return st.st_size


def read_bytes(path: str | Path, limit: int = TEXT_LIMIT, *, links: bool = True) -> bytes:
    """The contents of a regular file of at most `limit` bytes."""
    fd = _open(path, links)
    try:
        _fstat_regular(path, fd, limit)
        chunks, total = [], 0
        while chunk := os.read(fd, min(limit + 1 - total, 1 << 20) or 1):
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:
                raise UnsafeFile(path, f"grew past the limit of {_size(limit)} while it was read")
        return b"".join(chunks)
    finally:
        os.close(fd)


def read_tail(path: str | Path, size: int) -> bytes:
    """The last `size` bytes of a regular file of any length (a log read for its last lines, never whole)."""
    fd = _open(path, True)
    try:
        total = _fstat_regular(path, fd)
        os.lseek(fd, max(0, total - size), os.SEEK_SET)
        chunks, got = [], 0
        while got < size and (chunk := os.read(fd, min(size - got, 1 << 20))):
            chunks.append(chunk)
            got += len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def read_text(path: str | Path, limit: int = TEXT_LIMIT, *, links: bool = True) -> str:
    """A regular file's text (UTF-8), at most `limit` bytes."""
    data = read_bytes(path, limit, links=links)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UnsafeFile(path, f"not UTF-8 text (byte {exc.start})") from None


def depth(value, bound: int = DEPTH) -> int:
    """How deep lists and dicts nest in `value` (0 for a scalar), counted without recursion; stops past bound."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, (list, tuple, dict)):
            deepest = max(deepest, level)
            if deepest > bound:
                return deepest
            stack.extend((v, level + 1) for v in (item.values() if isinstance(item, dict) else item))
    return deepest


def parse_json(text: str, source: str | Path = "JSON", max_depth: int = DEPTH):
    """`text` as JSON with nesting bounded; ValueError-free: raises UnsafeFile naming `source`."""
    try:
        value = json.loads(text)
    except RecursionError:
        raise UnsafeFile(source, f"JSON nested deeper than Python can parse (the limit is {max_depth})") from None
    except ValueError as exc:
        raise UnsafeFile(source, f"not valid JSON ({exc})") from None
    if depth(value, max_depth) > max_depth:
        raise UnsafeFile(source, f"JSON nested more than {max_depth} deep")
    return value


def load_json(path: str | Path, limit: int = JSON_LIMIT, *, links: bool = True, max_depth: int = DEPTH):
    """A regular JSON file of at most `limit` bytes, nested at most `max_depth` deep."""
    return parse_json(read_text(path, limit, links=links), path, max_depth)


def _expanded_size(root, max_nodes: int, source) -> int:
    """Nodes of the document with every alias expanded (memoised per node, so it costs one pass)."""
    import yaml

    sizes: dict[int, int] = {}
    busy: set[int] = set()
    stack = [(root, False)]
    while stack:
        node, done = stack.pop()
        key = id(node)
        if done:
            busy.discard(key)
            children = _children(node, yaml)
            sizes[key] = 1 + sum(sizes[id(c)] for c in children)
            if sizes[key] > max_nodes:
                raise UnsafeFile(source, f"YAML expands to more than {max_nodes:,} nodes once its aliases are "
                                         "followed (an alias bomb?)")
            continue
        if key in sizes:
            continue
        if key in busy:
            raise UnsafeFile(source, "YAML alias refers to a node that contains it (a recursive alias)")
        busy.add(key)
        stack.append((node, True))
        for child in _children(node, yaml):
            if id(child) in busy:
                raise UnsafeFile(source, "YAML alias refers to a node that contains it (a recursive alias)")
            if id(child) not in sizes:
                stack.append((child, False))
    return sizes[id(root)]


def check_yaml_node(node, source, max_nodes: int = YAML_NODES) -> int:
    """Refuse a composed YAML node tree that expands past max_nodes or refers to itself; its expanded size."""
    return 0 if node is None else _expanded_size(node, max_nodes, source)


def _children(node, yaml) -> list:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    return []


def unconstructed(exc: ValueError) -> str:
    """Why a YAML value could not be built (an integer of 5,000 digits past Python's 4,300, a date of month 13):
    one line, for every YAML reader."""
    return f"a YAML value cannot be read ({str(exc).split(';')[0][:200]})"
