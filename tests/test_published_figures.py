"""The published figures are data (docs/reference/published-figures.json): one loader, a version it refuses
to guess at, each figure with its source, and the runner model's inputs exactly those it took when they were read
out of the documents' sentences (the fixture was written from that parser before it was removed)."""

from __future__ import annotations

import json
import math
from dataclasses import asdict
from pathlib import Path

import pytest

from jaxci.evidence import published
from jaxci.evidence.inputs import reference

REPO = Path(__file__).resolve().parent.parent
REF = REPO / "docs" / "reference"
BEFORE = Path(__file__).parent / "fixtures" / "published_figures" / "inputs-before-72.json"


def _evidence(e) -> dict:
    return {"where": e.where, "device": e.device, "term": e.term, "value": [e.value.mid, e.value.low, e.value.high],
            "source": e.source, "key": e.key, "dtype": e.dtype, "n": e.n, "figures": sorted(e.figures),
            "kind": e.kind}


def _figure(f) -> dict:
    d = {k: v for k, v in asdict(f).items() if k not in ("source", "runner")}   # runner: added since (a label)
    return {**d, "published_s": None if math.isnan(f.published_s) else f.published_s}


def _spread(e: dict) -> bool:
    """A host probe whose band spread over every source since 2026-12-07, or the published ratio behind it."""
    return e["term"] == "host_ratio" or (e["term"] == "host_python" and "over every source" in e["source"])


def test_the_model_takes_the_inputs_it_took_from_the_documents():
    """Every figure and every input (with its source and band, the derived host probes too) as before, but the host
    probes whose bands now span every source (jaxci.analysis.host_speed.spread): their middles are as before."""
    before = json.loads(BEFORE.read_text())
    assert [_figure(f) for f in published.read().incidents] == before["figures"]
    now = [_evidence(e) for e in reference()]
    assert [e for e in now if not _spread(e)] == [e for e in before["inputs"]
                                                  if not any(_spread(n) and _same_probe(n, e) for n in now)]
    for n in filter(_spread, now):
        if n["term"] == "host_python":
            (old,) = [e for e in before["inputs"] if _same_probe(n, e)]
            assert n["value"][0] == old["value"][0] and n["value"][1] <= old["value"][1] <= old["value"][2] <= \
                n["value"][2] and n["source"].split(";")[0] == old["source"].split(";")[0]


def _same_probe(a: dict, b: dict) -> bool:
    return a["term"] == b["term"] == "host_python" and a["where"] == b["where"]


def test_every_figure_names_a_source_its_document_tells():
    """Each figure's source is a section of a reference document that links to the data file."""
    figs = published.read()
    for f in figs.incidents:
        src = figs.sources[f.source]
        text = (REF / src.document).read_text()
        assert f"## {src.section}" in text and src.cited
    assert all(r.source and r.what for r in figs.rates)
    for name in {s.document for s in figs.sources.values()} | {figs.rates_document}:
        assert "published-figures.json" in (REF / name).read_text(), name


def test_each_printed_figure_is_the_one_its_document_prints():
    """The documents print the data's values (a change to one is a change to both): each incident figure's value,
    as printed, is in its section."""
    figs = published.read()
    for f in figs.incidents:
        if math.isnan(f.published_s) or f.case.startswith("NUTS lecture"):   # a ratio; "14 min 52 s"
            continue
        src = figs.sources[f.source]
        section = (REF / src.document).read_text().split(f"## {src.section}", 1)[1].split("\n## ", 1)[0]
        value = published.printed(f)
        shown = {value, f"{f.published_s:,g}", f"{f.published_s * 1e6:g} microseconds"}
        assert any(v in section for v in shown), (f.case, value)


def _write(tmp_path, change) -> Path:
    doc = json.loads((REF / "published-figures.json").read_text())
    change(doc)
    path = tmp_path / "figures.json"
    path.write_text(json.dumps(doc))
    return path


def test_another_version_is_refused_with_the_command_that_restores_it(tmp_path):
    path = _write(tmp_path, lambda d: d.update(version=2))
    with pytest.raises(published.FiguresError) as err:
        published.read(path)
    assert "version 2" in str(err.value) and published.RESTORE in str(err.value)
    with pytest.raises(published.FiguresError, match="not a jaxci-published-figures file"):
        published.read(_write(tmp_path, lambda d: d.update(format="other")))


@pytest.mark.parametrize("change, why", [
    (lambda d: d["incidents"][0].update(published_s=-1), "not a finite, non-negative number"),
    (lambda d: d["incidents"][0].update(source="nowhere"), "not among the file's sources"),
    (lambda d: d["incidents"][0].update(device="tpu"), "unknown"),
    (lambda d: d["incidents"][0].update(typo=1), "unknown field 'typo'"),
    (lambda d: d["rates"][0].update(unit="PFLOP/s"), "unit 'PFLOP/s'"),
    (lambda d: d["rates"][0].update(value=[1, 2, 3]), "not one number or a range of two"),
    (lambda d: d.pop("rates"), "rates"),
    (lambda d: d["host_ratios"][0].update(ratio=[1.3, 1.1]), "not a positive range, low first"),
    (lambda d: d["host_ratios"][0].update(over="g4dn.2xlarge"), "two families and a range of two numbers"),
    (lambda d: d["host_ratios"][0].pop("source"), "source"),
])
def test_a_bad_figure_is_one_line_naming_the_file(tmp_path, change, why):
    path = _write(tmp_path, change)
    with pytest.raises(published.FiguresError) as err:
        published.read(path)
    assert str(path) in str(err.value) and why in str(err.value) and "\n" not in str(err.value)


def test_no_module_opens_a_reference_page():
    """The pages tell the story; jaxci reads the data. No module joins a reference page's name into a path or
    hands it to Path() or open() (a citation inside a label is no path), so no sentence can silently stop being
    an input."""
    import ast

    pages = {p.name for p in REF.glob("*.md")} - {"README.md"}

    def named(node) -> bool:
        return isinstance(node, ast.Constant) and isinstance(node.value, str) and Path(node.value).name in pages

    found = []
    for path in sorted((REPO / "jaxci").rglob("*.py")):
        for n in ast.walk(ast.parse(path.read_text())):
            if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Div) and (named(n.left) or named(n.right)):
                found.append((path.name, n.lineno))
            elif isinstance(n, ast.Call) and any(named(a) for a in n.args):
                found.append((path.name, n.lineno))
    assert not found
