"""Text that came from a file (a report, a cache record, a file name) written into another medium: a shell
block a maintainer pastes, the Markdown of a GitHub issue or step summary, a glob list a builder reads, a log line
a GitHub runner reads. Each medium has one function here, so every writer quotes the same way (the writers of
unified diffs use jaxci.util.patch):

- `line`: one printable line (terminal escape sequences dropped, every other control or invisible format
  character shown as its escape), the base of every other medium;
- `markdown` / `cell` / `code` / `prose`: GitHub Markdown (no HTML comment, tag or @-mention from a value);
- `log`: a line of a step's output, which the templates also append to $GITHUB_STEP_SUMMARY: Markdown-safe and
  never a workflow command (`::name::`, `##[name]`);
- `glob_literal`: one pattern a line, matching exactly one name, also safe as a log line.
Pure Python.
"""

from __future__ import annotations

import re
import shlex

from jaxci.util.validate import InputError, quoted

_CONTROL = re.compile(r"[\x00-\x1f\x7f\x85\u2028\u2029]")
#: what `line` shows as an escape: C0, DEL, C1, line/paragraph separators, bidirectional and zero-width
#: formatting characters and the byte-order mark (text that reads differently from what it holds)
_INVISIBLE = re.compile(r"[\x00-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]")
#: a terminal escape sequence (CSI: colours, clearing the screen, moving the cursor; OSC: titles, links)
_ESCAPE = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]{0,1000}(?:\x07|\x1b\\)?")
#: characters a glob writes as a one-character class: the glob's own, and what a runner or Markdown would read
#: (a line starting `::`, `##[`, an HTML comment or tag, an entity, an @-mention, a code span)
_GLOB = re.compile(r"([*?\[:#<>&@`|])")
_TICKS = re.compile(r"`+")
_COMMAND = re.compile(r"^(\s*):")


def _escape(char: str) -> str:
    text = repr(char)[1:-1]
    return text if text != char else f"\\u{ord(char):04x}"


def line(text: object, limit: int | None = None) -> str:
    """`text` as one printable line: terminal escape sequences dropped; newlines, tabs, bells, backspaces,
    bidirectional overrides, zero-width characters and the BOM shown as escapes (`\\n`, `\\x07`, `\\u202e`);
    shortened to `limit` characters when given."""
    out = _INVISIBLE.sub(lambda m: _escape(m.group()), _ESCAPE.sub("", str(text)))
    return out if limit is None or len(out) <= limit else out[:limit] + f"... ({len(out):,} characters)"


def log(text: object, limit: int | None = None) -> str:
    """`text` for a line of a step's output that is also appended to the step summary (templates/fail-once-*.yml
    pipe it to `tee -a $GITHUB_STEP_SUMMARY`): one line (`line`), Markdown-safe (`markdown`), and never a
    workflow command: a leading `:` (the runner trims blanks, then reads `::name::`) becomes `&#58;`, and `##[`
    (read anywhere in a line) becomes `##&#91;`."""
    out = markdown(line(text, limit)).replace("##[", "##&#91;")
    return _COMMAND.sub(r"\1&#58;", out)


def prose(text: object) -> str:
    """`text` as Markdown prose of one line: `line`, then `markdown` outside its code spans (a name already in a
    code span keeps its characters; `<`, `>`, `&` and `@` elsewhere become entities), so no value can open an
    HTML comment or tag or mention anyone, whatever backticks it holds."""
    text, out, i = line(text), [], 0
    while i < len(text):
        tick = text.find("`", i)
        if tick < 0:
            out.append(_outside(text[i:]))
            break
        out.append(_outside(text[i:tick]))
        run = len(text[tick:]) - len(text[tick:].lstrip("`"))
        close = _closing(text, tick + run, run)
        if close < 0:
            out.append(text[tick:tick + run])
            i = tick + run
            continue
        out.append(text[tick:close + run])
        i = close + run
    return _COMMAND.sub(r"\1&#58;", "".join(out))


#: an `@` that could start a mention: at the start or after a character that is not part of a name (GitHub
#: links `@name` only there; `repository@commit` is no mention and stays as written)
_MENTION = re.compile(r"(?<![A-Za-z0-9._-])@")


def _outside(text: str) -> str:
    """Prose outside code spans: `&`, `<`, `>` as entities, an `@` that could start a mention as `&#64;`, and a
    backslash as an entity (so `\\`` cannot stop a backtick from opening the span this scan sees)."""
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\\", "&#92;")
    return _MENTION.sub("&#64;", text)


def _closing(text: str, start: int, run: int) -> int:
    """Where a run of exactly `run` backticks starts at or after `start` (a code span's end), or -1."""
    i = start
    while True:
        i = text.find("`" * run, i)
        if i < 0:
            return -1
        end = i + run
        if (i == 0 or text[i - 1] != "`") and (end >= len(text) or text[end] != "`"):
            return i
        i = end + len(text[end:]) - len(text[end:].lstrip("`"))


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


def fenced(text: object, info: str = "") -> list[str]:
    """`text` as a fenced code block's lines: a fence of more backticks than any run inside (at least three), so
    no line of it can close the block early."""
    body = str(text)
    fence = "`" * max(3, max((len(run) for run in _TICKS.findall(body)), default=0) + 1)
    return [fence + info, *body.split("\n"), fence]


def glob_literal(name: str, source: str = "name") -> str:
    """`name` as an fnmatch glob matching exactly that name (`*`, `?`, `[` written as `[*]`, `[?]`, `[[]`), for
    lists read one pattern a line (myst-nb's nb_execution_excludepatterns); a name holding a newline or another
    control character cannot be one line of such a list and is refused. The characters a runner or Markdown
    reads (`:`, `#`, `<`, `>`, `&`, `@`, a backtick, `|`) are written as one-character classes too, so the list
    printed to a step's log and summary is neither a workflow command nor HTML, and still matches the name."""
    bad = _CONTROL.search(name)
    if bad:
        raise InputError(f"{source} {quoted(name, 80)}: cannot be written as a glob (control character "
                         f"{bad.group()!r}, one pattern a line)")
    return _GLOB.sub(r"[\1]", name)
