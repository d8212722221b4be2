"""Text that came from a file (a report, a cache record, a file name) written into another medium: a shell
block a maintainer pastes, the Markdown of a GitHub issue, a glob list a builder reads. Each medium has one
function here, so every writer quotes the same way (the writers of unified diffs use jaxci.util.patch).
Pure Python.
"""

from __future__ import annotations

import re
import shlex

from jaxci.util.validate import InputError, quoted

_CONTROL = re.compile(r"[\x00-\x1f\x7f\x85\u2028\u2029]")
_GLOB = re.compile(r"([*?\[])")
_TICKS = re.compile(r"`+")


def shell(text: object) -> str:
    """One shell word whatever `text` holds (a value pasted into a "Reproduce" block runs nothing)."""
    return shlex.quote(str(text))


def markdown(text: object) -> str:
    """`text` safe in GitHub Markdown: no @-mention pings anyone, no HTML comment or tag hides or forges part of
    the issue (`<` and `>` become entities, `@` becomes &#64;, which GitHub shows as @ but never links)."""
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("@", "&#64;")


def cell(text: object) -> str:
    """One Markdown table cell: markdown(), on one line, its `|` escaped (a value cannot add a column)."""
    return _CONTROL.sub(" ", markdown(text)).replace("|", "\\|")


def code(text: object, *, table: bool = False) -> str:
    """`text` as one inline code span whatever it holds: fenced by more backticks than its longest run of them (a
    backtick inside cannot close it early), on one line; in a table cell (`table`) its `|` escaped, since GFM
    splits a row into cells before it reads code spans."""
    body = _CONTROL.sub(" ", str(text))
    if table:
        body = body.replace("|", "\\|")
    fence = "`" * (max((len(run) for run in _TICKS.findall(body)), default=0) + 1)
    pad = " " if body[:1] in ("`", " ") or body[-1:] in ("`", " ") else ""
    return f"{fence}{pad}{body}{pad}{fence}"


def glob_literal(name: str, source: str = "name") -> str:
    """`name` as an fnmatch glob matching exactly that name (`*`, `?`, `[` written as `[*]`, `[?]`, `[[]`), for
    lists read one pattern a line (myst-nb's nb_execution_excludepatterns); a name holding a newline or another
    control character cannot be one line of such a list and is refused."""
    bad = _CONTROL.search(name)
    if bad:
        raise InputError(f"{source} {quoted(name, 80)}: cannot be written as a glob (control character "
                         f"{bad.group()!r}, one pattern a line)")
    return _GLOB.sub(r"[\1]", name)
