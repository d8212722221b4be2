"""Unified diffs a maintainer applies with `git apply`: the one check of a path written into a diff header and
the one writer of a file's diff, used by every patch we write (`audit --emit-config`, `audit --ci-patch`).

git reads the header lines `diff --git a/P b/P`, `--- a/P`, `+++ b/P`, one per line, and quotes paths with
special characters in a C-like syntax; a name with a newline would start new header lines of its own (`old
mode`, `new mode`, another file), so a file name could make the patch change a file mode or a file that is not
a lecture. Such a path is refused, never written. Lines are split on "\\n" only (what git counts), so a form
feed or U+2028 in a file does not end a diff line early. Pure Python.
"""

from __future__ import annotations

import difflib
import re

from jaxci.util.validate import InputError, quoted

#: control characters (a newline starts a header line of its own), and the two characters git would quote
_UNSAFE = re.compile(r'[\x00-\x1f\x7f"\\]')
MAX_PATH = 1024


def diff_path(path: str) -> str:
    """`path` (relative, '/'-separated) if it can be written unquoted into a diff header; else InputError."""
    bad = _UNSAFE.search(path)
    parts = path.split("/")
    if bad:
        why = f"character {bad.group()!r} at position {bad.start()}"
    elif not path or path.startswith("/") or any(p in ("", ".", "..") for p in parts):
        why = "not a plain relative path (empty, absolute, or a '.', '..' or empty part)"
    elif len(path) > MAX_PATH:
        why = f"{len(path)} characters, at most {MAX_PATH}"
    elif path != path.strip() or any(p != p.strip() for p in parts):
        why = "a part begins or ends with white space"
    else:
        return path
    raise InputError(f"{quoted(path, 80)}: cannot be written into a patch ({why}); rename it, or edit it by hand")


def _lines(text: str) -> list[str]:
    """`text` split after each "\\n", each line keeping it (str.splitlines also splits on \\f, \\x1c, U+2028,
    ..., which git does not); a last line without one stays without."""
    return re.findall(r"[^\n]*\n|[^\n]+\Z", text)


def file_diff(path: str, old: str | None, new: str) -> str:
    """The `git apply`-able diff of one file from `old` (None: a new file) to `new` ('' if they are equal);
    a last line without a newline gets git's marker, so the file is reproduced exactly."""
    path = diff_path(path)
    if old == new:
        return ""
    body = []
    for line in difflib.unified_diff(_lines(old or ""), _lines(new), "/dev/null" if old is None else f"a/{path}",
                                     f"b/{path}", n=3):
        body.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    head = f"diff --git a/{path} b/{path}\n" + ("new file mode 100644\n" if old is None else "")
    return head + "".join(body)
