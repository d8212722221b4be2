"""asv's published pages without public CDNs: the six libraries asv's index.html loads, vendored from npm.

asv 0.6.6's index.html loads jQuery 3.3.1, flot 0.8.3 (+ time, selection, categories), flot-orderbars 1.0.0,
stupidtable 1.0.1, blueimp-md5 2.19.0 and bootstrap 3.1.1 from code.jquery.com, cdnjs and jsdelivr. With
`jaxci report --html HTML --offline-assets CACHE` (CACHE: the npm packages unpacked by
scripts/fetch-asv-assets.sh), those files are copied to HTML/vendor/ and every CDN reference in HTML/*.html is
rewritten to the copy, so `asv preview` and the published folder work with no outside request.

What differs from the CDN: cdnjs serves minified flot builds, npm has the same 0.8.3 sources unminified; npm has no
stupidtable 1.0.1 (it is published as stupid-table-plugin, 1.1.3 the version used: the same plugin API). The CDN
tags' Subresource Integrity hashes name the CDN builds, so the rewritten tags drop them (and `crossorigin`, which a
file:// page would refuse); vendor/MANIFEST.json records each copied file's npm package and sha256 instead.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from pathlib import Path

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
_TAG = re.compile(r"<(script|link)\b[^>]*>")


class AssetsMissing(ValueError):
    pass


def local_path(url: str) -> str:
    pkg, path = ASSETS[url]
    return f"{VENDOR}/{pkg}/{path}"


def check_cache(cache: Path) -> None:
    """Every file to vendor is in the cache, else AssetsMissing saying how to fill it."""
    missing = [f"{pkg}/package/{path}" for pkg, path in ASSETS.values()
               if not (cache / pkg / "package" / path).is_file()]
    if missing:
        raise AssetsMissing(f"{cache}: missing {', '.join(missing[:3])}{' …' if len(missing) > 3 else ''}: run "
                            f"`bash scripts/fetch-asv-assets.sh {cache}` (npm) first")


def _copy(cache: Path, html_dir: Path) -> dict:
    manifest = {}
    for pkg, path in sorted(set(ASSETS.values())) + [(p, x) for p, xs in EXTRA.items() for x in xs]:
        src, dst = cache / pkg / "package" / path, html_dir / VENDOR / pkg / path
        if src.is_dir():
            shutil.copytree(src, dst, dirs_exist_ok=True)
            files = sorted(f for f in dst.rglob("*") if f.is_file())
        else:
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, dst)
            files = [dst]
        for f in files:
            manifest[f.relative_to(html_dir).as_posix()] = {"npm": pkg, "sha256": hashlib.sha256(f.read_bytes())
                                                            .hexdigest()}
    return manifest


def rewrite(html: str, prefix: str = "") -> tuple[str, int]:
    """Every <script src>/<link href> naming a CDN file of ASSETS points at its vendored copy (integrity and
    crossorigin dropped: they name the CDN build). Returns the page and how many tags changed."""
    count = 0

    def fix(m):
        nonlocal count
        tag = m[0]
        url = next((u for u in ASSETS if f'"{u}"' in tag), None)
        if url is None:
            return tag
        count += 1
        tag = tag.replace(f'"{url}"', f'"{prefix}{local_path(url)}"')
        return re.sub(r'\s(?:integrity|crossorigin|referrerpolicy)="[^"]*"', "", tag)

    return _TAG.sub(fix, html), count


def vendor(html_dir: Path, cache: Path) -> str:
    """Copy the libraries into html_dir/vendor/ and point asv's pages at them. Returns what was done."""
    cache, html_dir = Path(cache), Path(html_dir)
    check_cache(cache)
    manifest = _copy(cache, html_dir)
    (html_dir / VENDOR / "MANIFEST.json").write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    changed = []
    for page in sorted(html_dir.glob("*.html")):
        text, count = rewrite(page.read_text(encoding="utf-8"))
        if count:
            page.write_text(text, encoding="utf-8")
            changed.append(f"{page.name} ({count} tags)")
    outside = sorted({u for p in html_dir.glob("*.html") for tag in _TAG.finditer(p.read_text(encoding="utf-8"))
                      for u in re.findall(r'(?:src|href)="(https?://[^"]+)"', tag[0])})  # loads, not <a> links
    left = f"; still loaded from outside: {', '.join(outside)}" if outside else ""
    return (f"vendored {len(manifest)} files into {html_dir / VENDOR}; rewrote "
            + (", ".join(changed) or "nothing (already local)") + left)
