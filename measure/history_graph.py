"""Screenshot asv's own graph of one benchmark across the JAX release history (headless Debian Chromium).

    .venv/bin/python measure/history_graph.py --machine local-$(hostname) --out docs/history-fori.png
    .venv/bin/python measure/history_graph.py --machine ref-epyc-2c-ci --out docs/history-graph.png \
        --regressions-out docs/history-regressions.png

Publishes results/ with stock `asv publish` into a temporary html dir, serves it to Chromium with asv's CDN
scripts from the npm cache (tests/browser/fetch_cdn.sh; nothing else leaves the machine), opens the graph of
--bench at the given params with only --machine selected (asv's `machine=` URL state: asv has no setting for
a default machine) and saves a PNG; with --regressions-out also asv's Regressions page. Prints the points asv
plotted (release tag, value) and the regressions asv listed for the machine.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.test_report_browser import ARGS, CHROMIUM, Page  # noqa: E402  (one way to serve asv's site)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--machine", required=True)
    parser.add_argument("--bench", default="loops.ForiAccumulate.time_warm")
    parser.add_argument("--params", default="n=10000,dtype='float64',device='cpu'",
                        help="asv graph params as name=repr pairs")
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "history-fori.png")
    parser.add_argument("--regressions-out", type=Path, help="also screenshot asv's Regressions page here")
    parser.add_argument("--even", action="store_true", help="evenly spaced points (asv's x-axis-scale=even)")
    args = parser.parse_args()
    asv = str(Path(sys.executable).with_name("asv"))
    cache = Path(os.environ.get("JAXCI_CDN_CACHE", Path.home() / ".cache" / "jaxci-cdn"))
    subprocess.run(["bash", str(REPO / "tests" / "browser" / "fetch_cdn.sh"), str(cache)], check=True,
                   capture_output=True)
    with tempfile.TemporaryDirectory() as tmp:
        html = Path(tmp) / "html"
        subprocess.run([asv, "publish", "--html-dir", str(html)], cwd=REPO, check=True, capture_output=True)
        graphs = list((html / "graphs").rglob(f"{args.bench}.json"))
        mine = [g for g in graphs if f"machine-{args.machine}" in str(g)]
        for g in mine:
            print(f"{g.relative_to(html)}: {len(json.loads(g.read_text()))} points")
        listed = [r for r in json.loads((html / "regressions.json").read_text())["regressions"]
                  if f"machine-{args.machine}" in r[1]]
        print(f"asv's Regressions page lists {len(listed)} for {args.machine}: "
              + ", ".join(r[0] for r in listed[:20]))
        from playwright.sync_api import sync_playwright

        query = "&".join([f"machine={args.machine}", *(f"p-{kv}" for kv in args.params.split(",") if kv)]
                         + (["x-axis-scale=even"] if args.even else []))
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
            view = Page(browser, html, cache)
            view.page.set_viewport_size({"width": 1400, "height": 800})
            view.page.goto(f"http://asv.test/index.html#{args.bench}?{query}")
            view.page.wait_for_selector("#main-graph canvas, .flot-base", timeout=60_000)
            view.page.wait_for_timeout(1500)
            args.out.parent.mkdir(parents=True, exist_ok=True)
            view.page.screenshot(path=str(args.out))
            if args.regressions_out:
                view.page.goto("http://asv.test/index.html#regressions")
                view.page.wait_for_selector("#regressions-body table",
                                            timeout=60_000)
                view.page.wait_for_timeout(1500)
                args.regressions_out.parent.mkdir(parents=True, exist_ok=True)
                view.page.screenshot(path=str(args.regressions_out), full_page=False)
                print(f"wrote {args.regressions_out}")
            browser.close()
            if view.refused:
                print("refused outside requests: " + ", ".join(view.refused), file=sys.stderr)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
