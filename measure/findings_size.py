"""How long the findings page is and how much of it repeats itself ("less, once").

usage: .venv/bin/python measure/findings_size.py [RESULTS_DIR] [--family F ...] [--audit FILE] [--top 10]

Builds the findings page for RESULTS_DIR (default: the committed results/) into a temporary folder, opens it in
headless Debian chromium (playwright, /usr/bin/chromium, 1280x900, every outside request refused) and prints the
document height in px, the page's text length and the count of repeated sentences in the page's text
(jaxci.report.text.repeats: sentence occurrences that repeat an earlier one, 40 characters or more), with the
most repeated ones.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--no-first-run"]


def page_text_and_height(index: Path) -> tuple[str, int]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.route("**/*", lambda r: r.continue_() if r.request.url.startswith("file://") else r.abort())
        page.goto(index.as_uri())
        page.wait_for_load_state("load")
        height = page.evaluate("document.documentElement.scrollHeight")
        text = page.inner_text("body")
        browser.close()
    return text, height


def main(argv=None) -> int:
    from jaxci.commands import report as cli
    from jaxci.report.text import repeated_sentences, repeats

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results", nargs="?", default=str(REPO / "results"))
    ap.add_argument("--family", action="append", default=[])
    ap.add_argument("--audit")
    ap.add_argument("--top", type=int, default=10, help="show this many of the most repeated sentences")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="findings-size-") as tmp:
        html = Path(tmp) / "html"
        extra = [x for f in args.family for x in ("--family", f)] + (["--audit", args.audit] if args.audit else [])
        if cli.main([args.results, "--html", str(html), "--no-progress", "--format", "json", *extra]) != 0:
            return 1
        text, height = page_text_and_height(html / "findings" / "index.html")
    rep = repeated_sentences(text)
    print(f"\nfindings page for {args.results}: document height {height:,} px ({height / 900:.1f} screens of 900 px), "
          f"{len(text):,} characters of text, {repeats(text)} repeated sentence occurrences "
          f"({len(rep)} distinct sentences said more than once)")
    for sentence, n in sorted(rep.items(), key=lambda kv: -kv[1])[:args.top]:
        print(f"  {n}x  {sentence[:150]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
