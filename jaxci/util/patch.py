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


def git_lines(text: str) -> list[str]:
    """`text` split after each "\\n", each line keeping it (str.splitlines also splits on \\f, \\x1c, U+2028,
    ..., which git does not); a last line without one stays without."""
    return re.findall(r"[^\n]*\n|[^\n]+\Z", text)


def file_diff(path: str, old: str | None, new: str, windows: list | None = None) -> str:
    """The `git apply`-able diff of one file from `old` (None: a new file) to `new` ('' if they are equal);
    a last line without a newline gets git's marker, so the file is reproduced exactly. `windows`, when the
    caller knows where the changes are: [(first old line, 0-based; old text there; new text there; the hunk's
    lines or None)], apart from each other by more than two contexts; each is written as its hunk, or diffed on
    its own (difflib's matching is quadratic in the lines
    between far-apart changes: a workflow of thousands of edited jobs would take minutes whole)."""
    path = diff_path(path)
    if old == new:
        return ""
    names = ("/dev/null" if old is None else f"a/{path}", f"b/{path}")
    if windows is None:
        lines = list(difflib.unified_diff(git_lines(old or ""), git_lines(new), *names, n=3))
    else:
        lines, shift = [f"--- {names[0]}\n", f"+++ {names[1]}\n"], 0
        for start, old_w, new_w, hunk in windows:
            if hunk and old_w != new_w:
                olds, news = sum(x[0] != "+" for x in hunk), sum(x[0] != "-" for x in hunk)
                lines += [f"@@ -{start + 1},{olds} +{start + 1 + shift},{news} @@\n", *hunk]
            else:
                lines += [_shifted(x, start, start + shift) for x in
                          list(difflib.unified_diff(git_lines(old_w), git_lines(new_w), n=3))[2:]]
            shift += len(git_lines(new_w)) - len(git_lines(old_w))
    body = [line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines]
    head = f"diff --git a/{path} b/{path}\n" + ("new file mode 100644\n" if old is None else "")
    return head + "".join(body)


_HUNK = re.compile(r"@@ -(\d+)(,\d+)? \+(\d+)(,\d+)? @@")


def _shifted(line: str, old: int, new: int) -> str:
    """A hunk header of a window moved to where the window lies in the file (its old and new first lines)."""
    m = _HUNK.match(line)
    if not m:
        return line
    return (f"@@ -{int(m.group(1)) + old}{m.group(2) or ''} +{int(m.group(3)) + new}{m.group(4) or ''} @@"
            + line[m.end():])
