"""The decision sheets' first screen per family, as docs shows it (docs/findings-<family>-first-screen.png).

usage: .venv/bin/python tests/browser/screenshots.py [RESULTS_DIR] [--audit FILE] [--out docs]
       .venv/bin/python tests/browser/screenshots.py --report [--out docs/report]
       .venv/bin/python tests/browser/screenshots.py --evidence "lab: TPU v5e (machine" --name tpu-findings.png

For g4dn.2xlarge and c7i.2xlarge: `jaxci report RESULTS --family F --html TMP`, then the page in headless
Debian chromium at 1280x900 (every outside request refused, as in test_report_browser.py), the viewport saved.
--report: the maintainers' report as the site shows it (findings/report.html, from RESULTS and the committed
audits), its first screen saved as first-screen.png.
--evidence TEXT: the findings page from RESULTS scrolled to the first element holding TEXT (a machine's rows in
the evidence tables), saved as docs/NAME.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

SHOTS = {"g4dn.2xlarge": "findings-g4dn-first-screen.png", "c7i.2xlarge": "findings-c7i-first-screen.png"}
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--no-first-run"]


def main(argv=None) -> int:
    from playwright.sync_api import sync_playwright

    from jaxci.commands import report as cli

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results", nargs="?", default=str(REPO / "results"))
    ap.add_argument("--audit")
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--report", action="store_true")
    ap.add_argument("--evidence", metavar="TEXT")
    ap.add_argument("--name", default="evidence.png")
    args = ap.parse_args(argv)
    if args.report:
        return report_shot(Path(args.results), args.out or REPO / "docs" / "report")
    if args.evidence:
        return evidence_shot(Path(args.results), (args.out or REPO / "docs") / args.name, args.evidence)
    args.out = args.out or REPO / "docs"
    with tempfile.TemporaryDirectory(prefix="findings-shots-") as tmp, sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
        for family, name in SHOTS.items():
            html = Path(tmp) / family
            extra = ["--audit", args.audit] if args.audit else []
            if cli.main([args.results, "--html", str(html), "--family", family, "--no-progress", "--format", "json",
                         *extra]) != 0:
                return 1
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.route("**/*", lambda r: r.continue_() if r.request.url.startswith("file://") else r.abort())
            page.goto((html / "findings" / "index.html").as_uri())
            page.wait_for_load_state("load")
            page.screenshot(path=str(args.out / name))
            print(f"wrote {args.out / name}", file=sys.stderr)
        browser.close()
    return 0


def report_shot(results: Path, out: Path) -> int:
    from playwright.sync_api import sync_playwright

    from jaxci.report import committed_audits as audits
    from jaxci.report import maintainers
    from jaxci.report.build import build

    committed, problems = audits.load(audits.beside(results))
    for line in problems:
        print(f"left out: {line}", file=sys.stderr)
    report = build(results, audits=committed)
    with tempfile.TemporaryDirectory(prefix="report-shot-") as tmp, sync_playwright() as p:
        page_file = Path(tmp) / "report.html"
        page_file.write_text(maintainers.site_html(report, maintainers.families(report)))
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.route("**/*", lambda r: r.continue_() if r.request.url.startswith("file://") else r.abort())
        page.goto(page_file.as_uri())
        page.wait_for_load_state("load")
        page.screenshot(path=str(out / "first-screen.png"))
        browser.close()
    print(f"wrote {out / 'first-screen.png'}", file=sys.stderr)
    return 0



def evidence_shot(results: Path, out: Path, text: str) -> int:
    """The findings page rendered from `results` (no asv site needed), scrolled to the first element holding
    `text`, its viewport saved at `out`."""
    from playwright.sync_api import sync_playwright

    from jaxci.commands.report import _build, _parser
    from jaxci.report.build import to_json
    from jaxci.report.findings import findings_md, guidance_md
    from jaxci.report.page import write_page

    with tempfile.TemporaryDirectory(prefix="evidence-shot-") as tmp, sync_playwright() as p:
        html = Path(tmp)
        report = _build(_parser().parse_args([str(results), "--html", str(html)]), results)
        write_page(report, html, findings_md(report), guidance_md(report), to_json(report), "")
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.route("**/*", lambda r: r.continue_() if r.request.url.startswith("file://") else r.abort())
        page.goto((html / "findings" / "index.html").as_uri())
        page.wait_for_load_state("load")
        page.get_by_text(text, exact=False).first.scroll_into_view_if_needed()
        page.evaluate("window.scrollBy(0, -120)")
        page.screenshot(path=str(out))
        browser.close()
    print(f"wrote {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
