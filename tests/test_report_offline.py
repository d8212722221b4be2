"""asv's pages offline (jaxci/report/offline.py): every CDN tag of asv's own index.html is rewritten to a
vendored copy, and `jaxci report --offline-assets` refuses a cache that lacks a file, saying how to fill it.
The browser check (the graph page draws with every outside request refused) is in test_report_browser.py."""

import re
from pathlib import Path

import asv

from jaxci.commands import report as cli
from jaxci.report import offline

ASV_INDEX = Path(asv.__file__).parent / "www" / "index.html"


def test_every_cdn_tag_of_asvs_index_is_rewritten():
    text = ASV_INDEX.read_text(encoding="utf-8")
    loads = re.findall(r'<(?:script|link)\b[^>]*(?:src|href)="(https://[^"]+)"', text)
    assert sorted(loads) == sorted(offline.ASSETS)  # the six libraries (ten files) this asv version names
    out, count = offline.rewrite(text)
    assert count == len(offline.ASSETS)
    assert not re.findall(r'<(?:script|link)\b[^>]*(?:src|href)="https?://', out)
    assert "integrity=" not in out and 'src="vendor/jquery@3.3.1/dist/jquery.min.js"' in out
    assert offline.rewrite(out) == (out, 0)  # running again changes nothing


def test_missing_cache_is_refused_before_reading(tmp_path, capsys):
    rc = cli.main([str(tmp_path / "results"), "--html", str(tmp_path / "html"), "--offline-assets",
                   str(tmp_path / "empty")])
    assert rc == 2 and "scripts/fetch-asv-assets.sh" in capsys.readouterr().err
    rc = cli.main([str(tmp_path / "results"), "--offline-assets", str(tmp_path / "empty")])
    assert rc == 2 and "needs --html" in capsys.readouterr().err
