"""asv publish writes the findings page itself, through the publisher plugin asv.conf.json names
(jaxci/commands/asv_findings.py), and the one edit of asv's pages left (the Findings link) goes through an HTML
parser, never a regular expression or a string replacement."""

from __future__ import annotations

import ast
import json
import shutil
from pathlib import Path

import pytest

from jaxci.commands import report as cli
from jaxci.machines.asvconf import read_conf
from jaxci.report.asvindex import GRID_NOTE_ID, LINK_ID, NOTICE_ID, Marks, link_from_asv_index
from tests import synth
from tests.asvutil import REPO, AsvSandbox

ASV_TEMPLATE = Path(__import__("asv").__file__).parent / "www"


def ids(page: Path) -> list[str]:
    """Every id in the page, as often as it occurs (a parser's reading, not a search of the text)."""
    found: list[str] = []

    class Ids(Marks):
        def handle_starttag(self, tag, attrs):
            found.extend(str(v) for k, v in attrs if k == "id" and v)

    Ids(page.read_text())
    return found


def test_the_conf_names_the_plugin_and_asv_finds_its_publisher(monkeypatch):
    """asv imports a "plugins" name with a leading "." from the current directory (the repository root) and
    collects every OutputPublisher subclass: the findings page is among them, after asv's own pages."""
    from asv import util
    from asv.plugin_manager import plugin_manager
    from asv.publishing import OutputPublisher

    from jaxci.commands.asv_findings import PLUGIN, FindingsPage

    assert read_conf(REPO / "asv.conf.json")["plugins"] == [PLUGIN]
    monkeypatch.chdir(REPO)
    plugin_manager.import_plugin(PLUGIN)
    publishers = sorted(util.iter_subclasses(OutputPublisher), key=lambda cls: cls.order)
    assert FindingsPage in publishers and publishers[-1] is FindingsPage


@pytest.mark.slow
def test_asv_publish_writes_the_findings_page_and_its_link(tmp_path):
    """Stock `asv publish` (the conf's copy, as scripts/bench.sh runs it) writes html/findings/, the navbar link
    and the error page's note; `jaxci report --html` after it still works and adds nothing twice."""
    box = AsvSandbox(tmp_path).write_conf()
    synth.gpu_set(tmp_path)
    proc = box.asv("publish")
    assert "no findings page" not in proc.stderr, proc.stderr
    assert (box.html / "findings" / "index.html").is_file() and (box.html / "findings" / "report.json").is_file()
    assert ids(box.html / "index.html").count(LINK_ID) == 1 and GRID_NOTE_ID in ids(box.html / "index.html")
    assert NOTICE_ID in ids(box.html / "error.html")
    pages = json.loads((box.html / "index.json").read_text())["pages"]
    assert "findings" in [name for name, *_ in pages]  # asv listed the publisher it ran
    assert cli.main([str(box.results), "--html", str(box.html)]) == 0  # the standalone command, after it
    assert ids(box.html / "index.html").count(LINK_ID) == 1 and ids(box.html / "error.html").count(NOTICE_ID) == 1


@pytest.mark.slow
def test_asv_publish_without_results_still_writes_asvs_pages(tmp_path):
    """No results yet (only benchmarks.json): the plugin says why on stderr, asv publish succeeds, asv's own
    pages are there and no findings page is."""
    box = AsvSandbox(tmp_path).write_conf()
    box.results.mkdir()
    shutil.copy(REPO / "results" / "benchmarks.json", box.results / "benchmarks.json")
    proc = box.asv("publish")
    assert "no findings page" in proc.stderr and "no asv result values" in proc.stderr, proc.stderr
    assert (box.html / "index.html").is_file() and (box.html / "index.json").is_file()
    assert not (box.html / "findings").exists() and LINK_ID not in ids(box.html / "index.html")


def test_the_link_goes_into_asvs_own_navbar(tmp_path):
    """On asv's real template pages: the link is the navbar list's first item, once; the error page's note
    follows <body>; the rest of each page is asv's, byte for byte."""
    for name in ("index.html", "error.html"):
        shutil.copy(ASV_TEMPLATE / name, tmp_path / name)
    assert link_from_asv_index(tmp_path) == "link added; error page explained"
    assert link_from_asv_index(tmp_path) == "link already present"
    for name in ("index.html", "error.html"):
        original, edited = (ASV_TEMPLATE / name).read_text(), (tmp_path / name).read_text()
        marks = Marks(original)
        at = marks.navbar_open if name == "index.html" else marks.body_open
        assert at is not None and edited.startswith(original[:at]) and edited.endswith(original[at:])
    assert ids(tmp_path / "index.html").count(LINK_ID) == 1
    assert (tmp_path / "index.html").read_text().index(LINK_ID) < (tmp_path / "index.html").read_text().index(
        "Benchmark grid")


def test_a_page_without_body_is_not_patched(tmp_path):
    (tmp_path / "index.html").write_text("not asv's page")
    assert link_from_asv_index(tmp_path).startswith("no link added")
    assert (tmp_path / "index.html").read_text() == "not asv's page"


EDITORS = ("jaxci/report/asvindex.py", "jaxci/commands/asv_findings.py", "jaxci/report/page.py",
           "jaxci/report/offline.py")


@pytest.mark.parametrize("module", EDITORS)
def test_no_regex_or_string_replacement_edits_asvs_pages(module):
    """The modules that touch asv's pages read and edit them with html.parser: no `re` in the two that edit them,
    no `.replace`/`.sub` call in them, and page.py (which renders our own page) names no tag of asv's."""
    tree = ast.parse((REPO / module).read_text())
    calls = {n.func.attr for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
             and not (isinstance(n.func.value, ast.Name) and n.func.value.id == "os")}   # os.replace moves a file
    imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    if module != "jaxci/report/page.py":  # page.py's regexes render our own markdown into our own page
        assert "re" not in imported and not calls & {"replace", "sub", "subn"}
    else:
        text = (REPO / module).read_text()
        assert "<body[" not in text and "navbar" not in text
