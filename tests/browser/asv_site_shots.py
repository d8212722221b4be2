"""asv's own site as a fresh clone publishes it: the reference machine's graph and the Regressions page.

usage: .venv/bin/python tests/browser/asv_site_shots.py HTML_DIR [--out docs]

HTML_DIR is what `asv publish --html-dir HTML_DIR` wrote in a `git clone --single-branch --no-tags` of main after
`jaxci history --restore-refs` (docs/history.md). The site reads its JSON over HTTP, so it is served on
localhost; headless Debian chromium at 1280x900 (outside requests refused) saves docs/history-clone-graph.png and
docs/history-clone-regressions.png.
"""

from __future__ import annotations

import argparse
import functools
import http.server
import threading
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--no-first-run"]
GRAPH = "#loops.ForiAccumulate.time_warm?machine=ref-epyc-2c-ci&p-n=10000&p-dtype='float64'"
SHOTS = {"history-clone-graph.png": GRAPH, "history-clone-regressions.png": "#regressions"}


def main(argv=None) -> int:
    from playwright.sync_api import sync_playwright

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("html", type=Path)
    ap.add_argument("--out", type=Path, default=REPO / "docs")
    args = ap.parse_args(argv)
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(args.html))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}/index.html"
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.route("**/*", lambda route: route.continue_() if route.request.url.startswith(base.rsplit("/", 1)[0])
                       else route.abort())
            for name, fragment in SHOTS.items():
                page.goto(base + fragment)
                page.wait_for_timeout(2500)   # asv draws its graphs after its JSON arrives
                page.screenshot(path=str(args.out / name))
                print(f"wrote {args.out / name}")
            browser.close()
    finally:
        server.shutdown()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
