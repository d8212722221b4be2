"""jaxci.util.safeio: special files are refused before a byte is read, sizes and nesting are bounded, YAML alias
bombs and recursive aliases are refused."""

from __future__ import annotations

import os
import threading

import pytest

from jaxci.util import safeio, safeyaml
from tests.test_bad_input import LAUGHS


def _finishes(fn, seconds=10.0):
    box = {}
    thread = threading.Thread(target=lambda: box.setdefault("r", _catch(fn)), daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), "hung"
    return box["r"]


def _catch(fn):
    try:
        return fn()
    except safeio.UnsafeFile as exc:
        return exc


def test_fifo_device_and_folder_are_refused_without_blocking(tmp_path):
    os.mkfifo(tmp_path / "f.json")
    (tmp_path / "zero.json").symlink_to("/dev/zero")
    for path, what in ((tmp_path / "f.json", "FIFO"), (tmp_path / "zero.json", "character device"),
                       (tmp_path, "folder")):
        for reader in (safeio.read_bytes, safeio.load_json, safeyaml.load, safeio.check):
            exc = _finishes(lambda reader=reader, path=path: reader(path))
            assert isinstance(exc, safeio.UnsafeFile) and what in str(exc) and str(path) in str(exc)


def test_links_refused_where_asked(tmp_path):
    (tmp_path / "a").write_text("x")
    (tmp_path / "l").symlink_to(tmp_path / "a")
    assert safeio.read_text(tmp_path / "l") == "x"
    with pytest.raises(safeio.UnsafeFile, match="symbolic link"):
        safeio.read_text(tmp_path / "l", links=False)


def test_size_limit(tmp_path):
    (tmp_path / "big").write_bytes(b"x" * 2000)
    with pytest.raises(safeio.UnsafeFile, match="over the limit of 1,000 bytes"):
        safeio.read_bytes(tmp_path / "big", 1000)
    assert len(safeio.read_bytes(tmp_path / "big", 2000)) == 2000


def test_json_depth():
    assert safeio.parse_json("[[1]]", "x", max_depth=2) == [[1]]
    with pytest.raises(safeio.UnsafeFile, match="nested more than 2 deep"):
        safeio.parse_json("[[[1]]]", "x", max_depth=2)
    with pytest.raises(safeio.UnsafeFile, match="nested deeper than Python can parse"):
        safeio.parse_json("[" * 100_000 + "]" * 100_000, "x")


def test_yaml_bomb_and_recursion_refused_plain_yaml_read():
    assert safeyaml.parse("a: [1, {b: 2}]\nc: &x 1\nd: *x\n") == {"a": [1, {"b": 2}], "c": 1, "d": 1}
    exc = _finishes(lambda: safeyaml.parse(LAUGHS, "b.yml"))
    assert isinstance(exc, safeio.UnsafeFile) and "more than 100,000 nodes" in str(exc)
    with pytest.raises(safeio.UnsafeFile, match="recursive alias"):
        safeyaml.parse("a: &a [*a]\n", "r.yml")
    with pytest.raises(safeio.UnsafeFile, match="not valid YAML at line 2"):
        safeyaml.parse("a: [\n", "s.yml")
