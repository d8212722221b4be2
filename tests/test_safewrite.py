"""jaxci.util.safewrite: the one writer of output paths refuses FIFOs, devices, folders and links without
blocking, bounds what it writes, replaces whole files atomically, appends for GitHub's files, and turns every
OSError into one line naming the path."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from jaxci.util import safewrite
from tests.test_safeio import _finishes


def test_fifo_device_socket_and_folder_are_refused_without_blocking(tmp_path):
    import socket

    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "null").symlink_to("/dev/null")
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(tmp_path / "sock"))
    cases = [(tmp_path / "fifo", "FIFO"), (tmp_path / "sock", "socket"), (tmp_path, "folder"),
             (tmp_path / "null", "symbolic link")]
    for path, what in cases:
        for append in (False, True):
            exc = _finishes(lambda path=path, append=append: safewrite.write_text(path, "x", append=append))
            assert isinstance(exc, safewrite.UnsafeWrite) and what in str(exc) and str(path) in str(exc), exc
    exc = _finishes(lambda: safewrite.write_text(tmp_path / "null", "x", links=True))
    assert "character device" in str(exc)
    assert os.path.exists(tmp_path / "fifo") and (tmp_path / "null").is_symlink()


def test_a_fifo_with_a_reader_is_refused_too(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        exc = _finishes(lambda: safewrite.write_text(fifo, "x", append=True))
        assert isinstance(exc, safewrite.UnsafeWrite) and "FIFO" in str(exc)
    finally:
        os.close(reader)


def test_a_link_is_written_only_where_allowed(tmp_path):
    (tmp_path / "out").mkdir()
    victim = tmp_path / "victim"
    victim.write_text("keep")
    (tmp_path / "out" / "page.html").symlink_to(victim)
    with pytest.raises(safewrite.UnsafeWrite, match="symbolic link"):
        safewrite.write_text(tmp_path / "out" / "page.html", "new")
    (tmp_path / "out" / "sub").symlink_to(tmp_path)
    with pytest.raises(safewrite.UnsafeWrite, match="leading out of"):
        safewrite.write_text(tmp_path / "out" / "sub" / "x", "new", within=tmp_path / "out")
    assert victim.read_text() == "keep" and not (tmp_path / "x").exists()


def test_whole_file_is_atomic_and_keeps_its_mode(tmp_path):
    path = tmp_path / "t.md"
    path.write_text("old")
    path.chmod(0o640)
    safewrite.write_text(path, "new")
    assert path.read_text() == "new" and (path.stat().st_mode & 0o777) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.md"]
    safewrite.write_text(path, "more\n", append=True)
    assert path.read_text() == "newmore\n"


def test_a_new_file_gets_the_mode_a_plain_new_file_gets(tmp_path):
    """The temporary file (mkstemp: 0600) is widened to 0666 less the umask, as open() would create it."""
    umask = os.umask(0o022)
    os.umask(umask)
    safewrite.write_text(tmp_path / "new.md", "x")
    (tmp_path / "plain.md").write_text("x")
    assert (tmp_path / "new.md").stat().st_mode & 0o777 == (tmp_path / "plain.md").stat().st_mode & 0o777 \
        == 0o666 & ~umask


def test_size_limit_and_missing_folder(tmp_path):
    with pytest.raises(safewrite.UnsafeWrite, match="over the limit of 10 bytes"):
        safewrite.write_text(tmp_path / "a", "x" * 11, limit=10)
    with pytest.raises(safewrite.UnsafeWrite, match="folder .* does not exist"):
        safewrite.write_text(tmp_path / "no" / "a", "x")
    assert not list(tmp_path.iterdir())


def test_enospc_and_efbig_become_one_line_naming_the_path(tmp_path):
    """/dev/full (ENOSPC) is refused as a device; a file-size limit (EFBIG) fails mid-write, leaving the old file
    and no temporary one: run in a child, where the limit cannot hurt the test process."""
    exc = _finishes(lambda: safewrite.write_text("/dev/full", "x", links=True))
    assert "character device" in str(exc)
    path = tmp_path / "big"
    path.write_text("old")
    code = ("import resource, signal, sys; from jaxci.util import safewrite as w\n"
            "signal.signal(signal.SIGXFSZ, signal.SIG_IGN); resource.setrlimit(resource.RLIMIT_FSIZE, (1000, 1000))\n"
            "for append in (False, True):\n"
            "    try: w.write_text(sys.argv[1], 'x' * 5000, append=append)\n"
            "    except w.UnsafeWrite as e: print(e)\n")
    out = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, timeout=60)
    lines = out.stdout.splitlines()
    assert len(lines) == 2 and all(f"{path}: cannot write it (File too large)" == line for line in lines), out
    assert path.read_text().startswith("old") and sorted(p.name for p in tmp_path.iterdir()) == ["big"]


def test_copy_is_streamed_bounded_and_leaves_nothing_on_failure(tmp_path):
    src, dst = tmp_path / "src", tmp_path / "dst"
    src.write_bytes(b"a" * 3000)
    assert safewrite.copy_file(src, dst, limit=3000) == 3000 and dst.read_bytes() == b"a" * 3000
    dst.unlink()
    with pytest.raises(safewrite.UnsafeFile, match="over the copy limit"):
        safewrite.copy_file(src, dst, limit=2000)
    (tmp_path / "link").symlink_to(src)
    with pytest.raises(safewrite.UnsafeFile, match="symbolic link"):
        safewrite.copy_file(tmp_path / "link", dst)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link", "src"]


def test_make_folder_refuses_links_on_the_way(tmp_path):
    (tmp_path / "top").mkdir()
    (tmp_path / "top" / "v").symlink_to(tmp_path)
    with pytest.raises(safewrite.UnsafeWrite, match="symbolic link"):
        safewrite.make_folder(tmp_path / "top" / "v" / "x", within=tmp_path / "top")
    assert safewrite.make_folder(tmp_path / "top" / "a" / "b", within=tmp_path / "top").is_dir()


def test_dev_null_named_as_itself_is_a_discard(tmp_path):
    """`--output /dev/null` keeps working (the user asks for nothing); a link to it is still refused."""
    assert safewrite.write_text(os.devnull, "x") == safewrite.Path(os.devnull)
    assert safewrite.write_text(os.devnull, "x", append=True) == safewrite.Path(os.devnull)
    (tmp_path / "null").symlink_to(os.devnull)
    with pytest.raises(safewrite.UnsafeWrite, match="symbolic link"):
        safewrite.write_text(tmp_path / "null", "x")
