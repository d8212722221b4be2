"""The Findings link in asv's own pages: its index.html navbar and its error.html, edited through an HTML parser.

asv 0.6 offers no extension point for its navbar: the entries of index.html are static markup in its template
(asv/www/index.html), and the "pages" list `asv publish` writes into index.json (name, button label and
description of each OutputPublisher) is read by none of its scripts; a page of its own app needs a script that
index.html loads, which again is static. So the one edit left is an insertion into the two pages asv copied:
the standard library's html.parser finds where (the end of the navbar list's start tag, of <body>, the start of
</body>) and which ids are already there; the text is spliced at those offsets. No regular expression and no
string replacement reads or edits asv's markup.
"""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path

from jaxci.util import safeio, safewrite

LINK_ID = "jaxci-findings-link"
NOTICE_ID = "jaxci-offline-note"
GRID_NOTE_ID = "jaxci-grid-note"
#: the largest asv page read to add the link (asv's index.html is about 10 KB)
PAGE_LIMIT = 64 * 1024 * 1024
#: the classes of asv's navbar list (asv/www/index.html: <ul class="nav navbar-nav navbar-left">)
NAVBAR = frozenset({"nav", "navbar-nav", "navbar-left"})

LINK = (f'<li><p class="navbar-text"><a id="{LINK_ID}" class="navbar-link" href="findings/index.html">'
        f'Findings</a></p></li>')
FALLBACK_LINK = f'<p><a id="{LINK_ID}" href="findings/index.html">Findings</a></p>'
GRID_NOTE = (f'<div id="{GRID_NOTE_ID}" style="position:fixed;right:10px;bottom:10px;max-width:380px;z-index:2000;'
             'background:#fffbe6;border:1px solid #d9c77a;padding:6px 24px 6px 8px;font:13px sans-serif">'
             "One commit in these results: each grid thumbnail holds one point per line, so it looks empty "
             "(asv draws history across "
             "commits). Open a benchmark and pick a param such as <b>n</b> as the x-axis, or read the "
             '<a href="findings/index.html">Findings</a>.'
             '<a href="#" title="close" style="position:absolute;right:6px;top:2px" '
             "onclick=\"this.parentNode.style.display='none';return false\">×</a></div>")
OFFLINE_NOTE = (f'<div id="{NOTICE_ID}" style="border:2px solid #c60;padding:.8em;margin:1em 0;font-family:sans-serif">'
                "<p><b>Why this page:</b> asv's pages load jQuery, flot, bootstrap and three small libraries "
                "from public CDNs "
                "(code.jquery.com, cdnjs.cloudflare.com, cdn.jsdelivr.net). This browser could not load them: "
                "it is offline, "
                "or third-party scripts are blocked. The published GitHub Pages site "
                "and <code>asv preview</code> work wherever the browser reaches those CDNs.</p>"
                '<p><b>No network needed:</b> '
                '<a id="jaxci-error-findings" href="findings/index.html">the findings page</a> '
                "(answers, figures, evidence) and <a href=\"findings/findings.md\">findings.md</a>.</p></div>")


class Marks(HTMLParser):
    """Where in a page the edits go (character offsets into its text), found by parsing it: the end of the
    first <body> start tag, of the first <ul> with asv's navbar classes, the start of the last </body>, and the
    ids of every element."""

    def __init__(self, text: str):
        super().__init__(convert_charrefs=True)
        self._line_starts = [0] + [i + 1 for i, c in enumerate(text) if c == "\n"]  # the parser counts "\n" only
        self.ids: set[str] = set()
        self.body_open: int | None = None
        self.navbar_open: int | None = None
        self.body_close: int | None = None
        self.feed(text)
        self.close()

    def _here(self) -> int:
        line, column = self.getpos()
        return self._line_starts[line - 1] + column

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if found.get("id"):
            self.ids.add(str(found["id"]))
        end = self._here() + len(self.get_starttag_text() or "")
        if tag == "body" and self.body_open is None:
            self.body_open = end
        if tag == "ul" and self.navbar_open is None and NAVBAR <= set((found.get("class") or "").split()):
            self.navbar_open = end

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)

    def handle_endtag(self, tag: str) -> None:
        if tag == "body":
            self.body_close = self._here()


def splice(text: str, inserts: list[tuple[int, str]]) -> str:
    """text with each (offset, markup) inserted at its offset (offsets into the original text)."""
    for at, markup in sorted(inserts, key=lambda item: item[0], reverse=True):
        text = text[:at] + markup + text[at:]
    return text


def _read(page: Path, html_dir: Path) -> str:
    return safeio.read_text(safeio.within(page, html_dir), PAGE_LIMIT, links=False)


def _link_index(html_dir: Path, one_commit: bool) -> str:
    """The Findings link in the navbar (else first in <body>) and, for one commit, the grid note before </body>."""
    index = html_dir / "index.html"
    text = _read(index, html_dir)
    marks = Marks(text)
    if LINK_ID in marks.ids:
        return "link already present"
    if marks.navbar_open is not None:
        inserts = [(marks.navbar_open, LINK)]
    elif marks.body_open is not None:
        inserts = [(marks.body_open, FALLBACK_LINK)]
    else:
        return f"no link added: {index} has no <body> (not asv's page; run `asv publish` again)"
    if one_commit and marks.body_close is not None:  # a corner note: the navbar keeps its one line
        inserts.append((marks.body_close, GRID_NOTE))
    safewrite.write_text(safeio.within(index, html_dir), splice(text, inserts), within=html_dir)
    return "link added"


def _explain_error_page(html_dir: Path) -> str | None:
    """asv's error.html (where index.html sends a browser whose CDN scripts cannot load): why, and the link."""
    error = html_dir / "error.html"
    if not error.is_file():
        return None
    text = _read(error, html_dir)
    marks = Marks(text)
    if NOTICE_ID in marks.ids or marks.body_open is None:
        return None
    safewrite.write_text(safeio.within(error, html_dir), splice(text, [(marks.body_open, OFFLINE_NOTE)]),
                         within=html_dir)
    return "error page explained"


def link_from_asv_index(html_dir: Path, report=None) -> str:
    """Add a link to findings/ into asv's index.html (once), a note on the summary grid when the results hold one
    commit, and a link plus an explanation in asv's error.html. Returns what happened (asv publish rewrites these
    files: run after it, or as its publisher, jaxci/commands/asv_findings.py)."""
    html_dir = Path(html_dir)
    index = html_dir / "index.html"
    if not index.is_file():
        return f"{index} not found: run `asv publish` first, then `jaxci report` again to link the page"
    one_commit = report is not None and len({r.commit for r in report.records}) == 1
    done = [_link_index(html_dir, one_commit), _explain_error_page(html_dir)]
    return "; ".join(d for d in done if d)
