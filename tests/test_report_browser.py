"""The findings page and asv's own index page in a real headless browser (Debian's chromium via playwright).

asv's index.html loads its scripts from public CDNs; here every CDN URL is answered from the npm packages of
the same versions (tests/browser/fetch_cdn.sh), and any other outside request is refused and fails the test.
Where an npm file is not byte-identical to the CDN's build (cdnjs minified flot, stupidtable 1.0.1 which npm
lacks), its Subresource Integrity attribute is removed from the served copy of index.html, and only there.
"""

from __future__ import annotations

import base64
import hashlib
import mimetypes
import os
import re
import subprocess
from pathlib import Path
from urllib.parse import unquote

import pytest

from jaxci.commands import report as cli
from jaxci.report.asvindex import LINK_ID
from jaxci.report.build import build
from jaxci.report.page import concurrency_grids, time_vs_size
from tests import synth
from tests.asvutil import REPO

pytestmark = [pytest.mark.browser, pytest.mark.slow]

CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--no-first-run"]
CDNJS = "https://cdnjs.cloudflare.com/ajax/libs/"
CDN_FILES = {  # URL prefix -> (npm package dir in the cache, path inside it)
    "https://code.jquery.com/jquery-3.3.1.min.js": ("jquery@3.3.1", "dist/jquery.min.js"),
    CDNJS + "flot/0.8.3/jquery.flot.min.js": ("flot@0.8.3", "jquery.flot.js"),
    CDNJS + "flot/0.8.3/jquery.flot.time.min.js": ("flot@0.8.3", "jquery.flot.time.js"),
    CDNJS + "flot/0.8.3/jquery.flot.selection.min.js": ("flot@0.8.3", "jquery.flot.selection.js"),
    CDNJS + "flot/0.8.3/jquery.flot.categories.min.js": ("flot@0.8.3", "jquery.flot.categories.js"),
    CDNJS + "stupidtable/1.0.1/stupidtable.min.js": ("stupid-table-plugin@1.1.3", "stupidtable.min.js"),
    CDNJS + "blueimp-md5/2.19.0/js/md5.min.js": ("blueimp-md5@2.19.0", "js/md5.min.js"),
}
JSDELIVR = re.compile(r"https://cdn\.jsdelivr\.net/npm/(?P<pkg>[^/]+@[^/]+)/(?P<path>[^?#]+)")


@pytest.fixture(scope="module")
def cdn_cache():
    cache = Path(os.environ.get("JAXCI_CDN_CACHE", Path.home() / ".cache" / "jaxci-cdn"))
    proc = subprocess.run(["bash", str(REPO / "tests" / "browser" / "fetch_cdn.sh"), str(cache)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"fetching asv's CDN packages from npm failed:\n{proc.stderr[-2000:]}"
    return cache


@pytest.fixture(scope="module")
def browser():
    if not CHROMIUM.exists():
        pytest.skip("Debian's chromium is not installed (apt-get install -y chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        yield b
        b.close()


def cdn_file(url: str, cache: Path) -> Path | None:
    for prefix, (pkg, path) in CDN_FILES.items():
        if url.split("?")[0] == prefix:
            return cache / pkg / "package" / path
    m = JSDELIVR.match(url)
    return cache / m["pkg"] / "package" / m["path"] if m else None


def without_mismatched_integrity(html: str, cache: Path) -> tuple[str, list[str]]:
    removed = []

    def fix(m):
        tag, url, sri = m[0], m["url"], m["sri"]
        path = cdn_file(url, cache)
        algo, _, want = sri.partition("-")
        if path is not None and path.is_file():
            got = base64.b64encode(hashlib.new(algo, path.read_bytes()).digest()).decode()
            if got == want:
                return tag
        removed.append(url)
        return tag.replace(f'integrity="{sri}"', "")

    pattern = r'<(?:script|link)[^>]*(?:src|href)="(?P<url>https://[^"]+)"[^>]*integrity="(?P<sri>[^"]+)"[^>]*>'
    return re.sub(pattern, fix, html), removed


class Page:
    """A browser page that serves `site` at http://asv.test/, the CDNs from the npm cache, and refuses the rest."""

    def __init__(self, browser, site: Path, cache: Path | None = None):
        self.page = browser.new_page(viewport=VIEWPORT)
        self.errors, self.refused, self.sri_removed = [], [], []
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.route("**/*", lambda route: self._serve(route, site, cache))

    def _serve(self, route, site, cache):
        url = route.request.url
        if url.startswith("http://asv.test/"):
            path = site / unquote(url.removeprefix("http://asv.test/").split("?")[0].split("#")[0])
            if path.is_dir():
                path = path / "index.html"
            if not path.is_file():
                return route.fulfill(status=404, body="not found")
            body = path.read_bytes()
            if path == site / "index.html" and cache is not None:
                text, removed = without_mismatched_integrity(body.decode(), cache)
                self.sri_removed += removed
                body = text.encode()
            return route.fulfill(status=200, body=body, content_type=mimetypes.guess_type(path.name)[0] or "text/plain")
        path = cdn_file(url, cache) if cache is not None else None
        if path is not None and path.is_file():
            return route.fulfill(status=200, body=path.read_bytes(), headers={"Access-Control-Allow-Origin": "*"},
                                 content_type=mimetypes.guess_type(path.name)[0] or "application/octet-stream")
        self.refused.append(url)
        return route.abort()


VIEWPORT = {"width": 1280, "height": 900}
# every <text> of a figure inside its <svg>'s box, and no text under 11 px (computed size, after scaling)
CLIPPED_JS = """svg => {
  const r = svg.getBoundingClientRect(), bad = [], scale = r.width / svg.viewBox.baseVal.width;
  for (const t of svg.querySelectorAll('text')) {
    const b = t.getBoundingClientRect();
    if (!b.width) continue;
    if (b.left < r.left - 1 || b.right > r.right + 1 || b.top < r.top - 1 || b.bottom > r.bottom + 1)
      bad.push('clipped: ' + t.textContent);
    if (parseFloat(getComputedStyle(t).fontSize) * scale < 11) bad.push('too small: ' + t.textContent);
  }
  return bad;
}"""


def check_findings_page(page, expected_figures: int) -> None:
    figures = page.locator("figure.jaxci-figure")
    assert figures.count() == expected_figures
    for i in range(expected_figures):
        svg = figures.nth(i).locator("svg")
        assert svg.count() == 1
        box = svg.bounding_box()
        assert svg.is_visible() and box and box["width"] > 100 and box["height"] > 50, f"figure {i} not shown"
        bad = svg.evaluate(CLIPPED_JS)
        assert bad == [], f"figure {i} ({figures.nth(i).get_attribute('id')}): {bad}"
    check_answers_first(page)


def check_answers_first(page) -> None:
    """The first machine's whole answer sheet (seven rows) is in the first screen, before any figure."""
    page.evaluate("window.scrollTo(0, 0)")
    assert page.locator("#answers table.answers").count() > 0, "no answer sheet on the page"
    sheet = page.locator("#answers table.answers").first
    box = sheet.bounding_box()
    assert box and box["y"] >= 0 and box["y"] + box["height"] <= VIEWPORT["height"], \
        f"answer sheet not in the first screen: {box}"
    assert sheet.locator("tr").count() == 8  # header + the seven questions
    first_figure = page.locator("figure.jaxci-figure").first.bounding_box()
    assert first_figure["y"] > box["y"] + box["height"]


def expected(report) -> int:
    """Figures drawn: one per sized kernel and concurrency grid, the FP64 and suite-cost panels only when they hold
    a bar (an empty panel is not drawn)."""
    from jaxci.report.page import cost_bars, fp64_bars

    return (len(time_vs_size(report)) + len(concurrency_grids(report)) + (fp64_bars(report) is not None)
            + (cost_bars(report) is not None))


def test_findings_page_with_gpu_results(browser, tmp_path):
    results = synth.gpu_set(tmp_path)
    html = tmp_path / "html"
    assert cli.main([str(results), "--html", str(html)]) == 0
    view = Page(browser, html)
    view.page.goto("http://asv.test/findings/index.html")
    view.page.wait_for_load_state("load")
    check_findings_page(view.page, expected(build(results)))
    assert view.page.locator("#figures-size g.crossing").count() >= 2  # same-machine and cross-machine crossings
    assert view.page.locator("#figures-fp64 rect.bar").count() >= 2
    assert view.page.locator("#figures-concurrency rect.cell").count() == 6
    assert view.page.locator("#figures-cost rect.bar").count() >= 2
    assert view.errors == [] and view.refused == []
    view.page.screenshot(path=str(tmp_path / "findings.png"), full_page=True)


@pytest.fixture(scope="module")
def synth_site(tmp_path_factory):
    """asv publish + jaxci report on the synthetic two-family set (one commit)."""
    from tests.asvutil import AsvSandbox

    root = tmp_path_factory.mktemp("site")
    box = AsvSandbox(root).write_conf()
    synth.gpu_set(root)
    box.asv("publish")
    assert cli.main([str(box.results), "--html", str(box.html)]) == 0
    return box


def test_asv_index_with_cdn_keeps_working_with_our_notes(synth_site, browser, cdn_cache):
    """With the CDNs answered, asv's grid still draws beside the Findings link and the one-commit note."""
    view = Page(browser, synth_site.html, cdn_cache)
    view.page.goto("http://asv.test/index.html")
    view.page.wait_for_selector(".benchmark-container", timeout=30_000)
    assert view.page.url == "http://asv.test/index.html"
    assert view.page.locator("#jaxci-grid-note").is_visible()
    view.page.click(f"#{LINK_ID}")
    view.page.wait_for_url("**/findings/index.html")
    check_answers_first(view.page)
    assert view.errors == [] and view.refused == [], (view.errors, view.refused)


def test_offline_asv_site_explains_and_links_the_findings(synth_site, browser):
    """Without the CDNs (every outside request refused), asv's index sends the browser to error.html; that page
    says why and links the findings page, which works with no network."""
    view = Page(browser, synth_site.html)  # no CDN cache: every CDN request is refused
    view.page.goto("http://asv.test/index.html")
    view.page.wait_for_url("**/error.html", timeout=30_000)
    assert "CDN" in view.page.inner_text("body")
    view.page.click("#jaxci-error-findings")
    view.page.wait_for_url("**/findings/index.html")
    check_answers_first(view.page)


def test_asv_index_and_findings_page_on_ci_results(ci_run, browser, cdn_cache, tmp_path):
    box, _, _ = ci_run
    box.asv("publish")
    assert cli.main([str(box.results), "--html", str(box.html)]) == 0
    view = Page(browser, box.html, cdn_cache)
    view.page.goto("http://asv.test/index.html")
    view.page.wait_for_selector(".benchmark-container", timeout=30_000)  # asv's JS ran and drew its grid
    assert view.page.url == "http://asv.test/index.html"  # not redirected to asv's error.html
    link = view.page.locator(f"#{LINK_ID}")
    assert link.count() == 1
    link.click()
    view.page.wait_for_url("**/findings/index.html")
    check_findings_page(view.page, expected(build(box.results)))
    assert view.errors == [], view.errors
    assert view.refused == [], f"outside requests refused: {view.refused}"
    assert set(view.sri_removed) <= set(CDN_FILES), view.sri_removed  # only the known non-identical builds


def test_offline_assets_asv_graph_draws_with_every_outside_request_refused(synth_site, browser, cdn_cache, tmp_path):
    """`jaxci report --html --offline-assets`: asv's own pages load the vendored libraries; with every outside
    request refused (no CDN answered), the index draws its grid and a benchmark's graph page draws its plot."""
    import shutil

    html = tmp_path / "html"
    shutil.copytree(synth_site.html, html)
    assert cli.main([str(synth_site.results), "--html", str(html), "--offline-assets", str(cdn_cache),
                     "--no-progress"]) == 0
    view = Page(browser, html)  # no CDN cache: any request outside http://asv.test/ is refused
    view.page.goto("http://asv.test/index.html")
    view.page.wait_for_selector(".benchmark-container", timeout=30_000)
    assert view.page.url == "http://asv.test/index.html"  # not sent to error.html
    view.page.goto("http://asv.test/index.html#dense.Dense.time_warm")
    view.page.wait_for_selector("#main-graph canvas.flot-base", timeout=30_000)  # flot drew the graph
    box = view.page.locator("#main-graph canvas.flot-base").bounding_box()
    assert box and box["width"] > 200 and box["height"] > 100
    assert view.refused == [] and view.errors == [], (view.refused, view.errors)
    view.page.screenshot(path=str(tmp_path / "asv-graph-offline.png"))
