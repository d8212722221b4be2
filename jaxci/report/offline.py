"""asv's published pages without public CDNs: the six libraries asv's index.html loads, vendored from npm.

asv 0.6.6's index.html loads jQuery 3.3.1, flot 0.8.3 (+ time, selection, categories), flot-orderbars 1.0.0,
stupidtable 1.0.1, blueimp-md5 2.19.0 and bootstrap 3.1.1 from code.jquery.com, cdnjs and jsdelivr. With
`jaxci report --html HTML --offline-assets CACHE` (CACHE: the npm packages unpacked by
scripts/fetch-asv-assets.sh), those files are copied to HTML/vendor/ and every CDN reference in HTML/*.html is
rewritten to the copy, so `asv preview` and the published folder work with no outside request. Nothing outside
the two folders is read or written: a link in CACHE is followed only while it stays in CACHE, HTML's pages,
vendor/ and MANIFEST.json are never written through a link leading out of HTML, each file is copied streamed
and bounded (ASSET_LIMIT), into a folder beside vendor/ that is moved into place only once every file is there.

What differs from the CDN: cdnjs serves minified flot builds, npm has the same 0.8.3 sources unminified; npm has no
stupidtable 1.0.1 (it is published as stupid-table-plugin, 1.1.3 the version used: the same plugin API). The CDN
tags' Subresource Integrity hashes name the CDN builds, so the rewritten tags drop them (and `crossorigin`, which a
file:// page would refuse); vendor/MANIFEST.json records each copied file's npm package and sha256 instead.
"""

from __future__ import annotations

import hashlib
import html
import json
import os
import shutil
import tempfile
from html.parser import HTMLParser
from pathlib import Path

from jaxci.util import safeio, safewrite

CDNJS = "https://cdnjs.cloudflare.com/ajax/libs/"
JSDELIVR = "https://cdn.jsdelivr.net/npm/"
# CDN URL -> (npm package@version as unpacked in the cache, file inside the package)
ASSETS = {
    "https://code.jquery.com/jquery-3.3.1.min.js": ("jquery@3.3.1", "dist/jquery.min.js"),
    CDNJS + "flot/0.8.3/jquery.flot.min.js": ("flot@0.8.3", "jquery.flot.js"),
    CDNJS + "flot/0.8.3/jquery.flot.time.min.js": ("flot@0.8.3", "jquery.flot.time.js"),
    CDNJS + "flot/0.8.3/jquery.flot.selection.min.js": ("flot@0.8.3", "jquery.flot.selection.js"),
    CDNJS + "flot/0.8.3/jquery.flot.categories.min.js": ("flot@0.8.3", "jquery.flot.categories.js"),
    JSDELIVR + "flot-orderbars@1.0.0/js/jquery.flot.orderBars.js": ("flot-orderbars@1.0.0",
                                                                    "js/jquery.flot.orderBars.js"),
    CDNJS + "stupidtable/1.0.1/stupidtable.min.js": ("stupid-table-plugin@1.1.3", "stupidtable.min.js"),
    CDNJS + "blueimp-md5/2.19.0/js/md5.min.js": ("blueimp-md5@2.19.0", "js/md5.min.js"),
    JSDELIVR + "bootstrap@3.1.1/dist/js/bootstrap.min.js": ("bootstrap@3.1.1", "dist/js/bootstrap.min.js"),
    JSDELIVR + "bootstrap@3.1.1/dist/css/bootstrap.min.css": ("bootstrap@3.1.1", "dist/css/bootstrap.min.css"),
}
EXTRA = {"bootstrap@3.1.1": ["dist/fonts"]}  # the css's glyphicons (../fonts/ from dist/css)
VENDOR = "vendor"
#: the largest single file vendored (bootstrap.min.css, the largest, is about 120 KB)
ASSET_LIMIT = 8 * 1024 * 1024
#: the most bytes and files vendored in all (the ten files and five fonts come to under 1 MB)
TOTAL_LIMIT = 32 * 1024 * 1024
MAX_FILES = 200
#: the largest asv page read to rewrite (asv's index.html is about 10 KB)
PAGE_LIMIT = 64 * 1024 * 1024
#: attributes dropped from a rewritten tag: they name the CDN's build of the file
_CDN_ONLY = frozenset({"integrity", "crossorigin", "referrerpolicy"})


class AssetsMissing(ValueError):
    pass


def local_path(url: str) -> str:
    pkg, path = ASSETS[url]
    return f"{VENDOR}/{pkg}/{path}"


def check_cache(cache: Path) -> None:
    """Every file to vendor is in the cache, else AssetsMissing saying how to fill it."""
    missing = [f"{pkg}/package/{path}" for pkg, path in ASSETS.values()
               if not (cache / pkg / "package" / path).exists()]  # a FIFO or a link out: check_sources says
    if missing:
        raise AssetsMissing(f"{cache}: missing {', '.join(missing[:3])}{' …' if len(missing) > 3 else ''}: run "
                            f"`bash scripts/fetch-asv-assets.sh {cache}` (npm) first")


def _sources(cache: Path) -> list[tuple[str, Path]]:
    """(path under vendor/, real source file) of every file to vendor. A link in the cache is followed only
    while it stays inside the cache (a link to a private key or to /etc is refused, nothing copied)."""
    found = []
    for pkg, path in sorted(set(ASSETS.values())) + [(p, x) for p, xs in EXTRA.items() for x in xs]:
        src = safeio.within(cache / pkg / "package" / path, cache)
        if not src.is_dir():
            found.append((f"{pkg}/{path}", src))
            continue
        for folder, dirs, files in os.walk(src):  # links not followed: each entry is checked below
            for name in sorted(dirs + files):
                entry = Path(folder) / name
                real = safeio.within(entry, cache)
                if name in dirs and entry.is_symlink():
                    raise safeio.UnsafeFile(entry, "is a link to a folder; the vendored folders hold files only")
                if name in files:
                    found.append((f"{pkg}/{path}/{entry.relative_to(src).as_posix()}", real))
            if len(found) > MAX_FILES:
                raise safeio.UnsafeFile(src, f"more than {MAX_FILES} files to vendor")
    return found


def check_sources(cache: Path) -> None:
    """Every file to vendor is a regular file inside the cache, within ASSET_LIMIT (before anything is written).
    Raises UnsafeFile."""
    for _, src in _sources(cache):
        safeio.check(src, ASSET_LIMIT, links=False)


def _copy(cache: Path, stage: Path) -> dict:
    """Every source into the new folder `stage` (streamed, at most ASSET_LIMIT each, TOTAL_LIMIT in all);
    the manifest (path under html_dir -> npm package, sha256)."""
    manifest, total = {}, 0
    for rel, src in _sources(cache):
        dst = stage / rel
        safewrite.make_folder(dst.parent, within=stage)
        total += safewrite.copy_file(src, dst, limit=ASSET_LIMIT, within=stage)
        if total > TOTAL_LIMIT:
            raise safeio.UnsafeFile(cache, f"more than {TOTAL_LIMIT // safeio.MIB} MiB to vendor")
        digest = hashlib.sha256(safeio.read_bytes(dst, ASSET_LIMIT, links=False)).hexdigest()
        manifest[f"{VENDOR}/{rel}"] = {"npm": rel.split("/", 1)[0], "sha256": digest}
    return manifest


def _install(stage: Path, html_dir: Path) -> None:
    """Move the staged files into html_dir/vendor/ (a new folder is renamed into place; an existing one gets
    each file replaced, keeping files of its own)."""
    vendor_dir = html_dir / VENDOR
    if not vendor_dir.exists():
        os.rename(stage, vendor_dir)
        return
    for path in sorted(p for p in stage.rglob("*") if p.is_file() and not p.is_symlink()):
        dst = vendor_dir / path.relative_to(stage)
        safewrite.make_folder(dst.parent, within=html_dir)
        safewrite.check_target(dst, within=vendor_dir)
        os.replace(path, dst)


class _Loads(HTMLParser):
    """Every <script> and <link> start tag of a page: (start, end) character offsets, tag name and attributes, in
    page order (the standard library's parser: no regular expression reads asv's markup)."""

    def __init__(self, text: str):
        super().__init__(convert_charrefs=False)
        self._line_starts = [0] + [i + 1 for i, c in enumerate(text) if c == "\n"]
        self.tags: list[tuple[int, int, str, list[tuple[str, str | None]], bool]] = []
        self.feed(text)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in ("script", "link"):
            return
        line, column = self.getpos()
        start = self._line_starts[line - 1] + column
        raw = self.get_starttag_text() or ""
        self.tags.append((start, start + len(raw), tag, attrs, raw.endswith("/>")))

    handle_startendtag = handle_starttag


def _loaded(attrs) -> str | None:
    """The URL a <script src> or <link href> loads."""
    return next((v for k, v in attrs if k in ("src", "href") and v), None)


def _tag(name: str, attrs, closed: bool) -> str:
    parts = [name] + [k if v is None else f'{k}="{html.escape(v, quote=True)}"' for k, v in attrs]
    return "<" + " ".join(parts) + (" />" if closed else ">")


def rewrite(page: str, prefix: str = "") -> tuple[str, int]:
    """Every <script src>/<link href> naming a CDN file of ASSETS points at its vendored copy (integrity and
    crossorigin dropped: they name the CDN build). Returns the page and how many tags changed."""
    edits = []
    for start, end, name, attrs, closed in _Loads(page).tags:
        url = _loaded(attrs)
        if url not in ASSETS:
            continue
        kept = [(k, f"{prefix}{local_path(url)}" if k in ("src", "href") and v == url else v) for k, v in attrs
                if k not in _CDN_ONLY]
        edits.append((start, end, _tag(name, kept, closed)))
    for start, end, text in reversed(edits):
        page = page[:start] + text + page[end:]
    return page, len(edits)


def check_target(html_dir: Path) -> None:
    """html_dir/vendor and its MANIFEST.json, if present, are a real folder and file inside html_dir (not links
    leading elsewhere, which would be written through). Raises UnsafeFile."""
    vendor_dir = html_dir / VENDOR
    if vendor_dir.is_symlink() or (vendor_dir.exists() and not vendor_dir.is_dir()):
        raise safeio.UnsafeFile(vendor_dir, "is a symbolic link or a file; the report writes the folder vendor/ "
                                            "there")
    if vendor_dir.exists():
        safewrite.check_target(vendor_dir / "MANIFEST.json", within=html_dir)
    for page in html_dir.glob("*.html"):
        safeio.within(page, html_dir)


def _pages(html_dir: Path) -> list[tuple[Path, str, int]]:
    """asv's pages (html_dir/*.html, read through safeio; a link is followed only inside html_dir), each with
    its rewritten text and how many tags changed."""
    pages = []
    for page in sorted(html_dir.glob("*.html")):
        real = safeio.within(page, html_dir)
        text, count = rewrite(safeio.read_text(real, PAGE_LIMIT, links=False))
        pages.append((real, text, count))
    return pages


def vendor(html_dir: Path, cache: Path) -> str:
    """Copy the libraries into html_dir/vendor/ and point asv's pages at them. Returns what was done. Every
    page is read and every asset copied (to a folder beside vendor/) before anything is put in place, so a
    refusal (UnsafeFile) or a failed write leaves html_dir as it was."""
    cache, html_dir = Path(cache), Path(html_dir)
    check_cache(cache)
    check_target(html_dir)
    pages = _pages(html_dir)
    stage = Path(tempfile.mkdtemp(prefix=".vendor-", dir=html_dir))
    try:
        os.chmod(stage, 0o777 & ~_umask())
        manifest = _copy(cache, stage)
        safewrite.write_text(stage / "MANIFEST.json", json.dumps(manifest, indent=1, sort_keys=True) + "\n",
                             within=stage)
        _install(stage, html_dir)
    finally:
        shutil.rmtree(stage, ignore_errors=True)
    changed = []
    for real, text, count in pages:
        if count:
            safewrite.write_text(real, text, within=html_dir)
            changed.append(f"{real.name} ({count} tags)")
    outside = sorted({u for _, text, _ in pages for *_, attrs, _ in _Loads(text).tags
                      if (u := _loaded(attrs)) and u.startswith(("http://", "https://"))})  # loads, not <a> links
    left = f"; still loaded from outside: {', '.join(outside)}" if outside else ""
    return (f"vendored {len(manifest)} files into {html_dir / VENDOR}; rewrote "
            + (", ".join(changed) or "nothing (already local)") + left)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
