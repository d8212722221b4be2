"""The runner model's inputs are chosen, not whatever lies in the results folder (issue 85): the committed captures
and full-scale catalogue runs, unless a local machine is named. A quick local run (what the README's first command
leaves in results/local-<host>/) is shown as measured and moves no family's prediction."""

from __future__ import annotations

import json
import math
import shutil

import pytest

from jaxci import REPO_ROOT
from jaxci.analysis.model import INPUT_KINDS, RunnerModel, input_machines
from jaxci.catalogue import load_catalogue
from jaxci.commands import predict as predict_cmd
from jaxci.commands import report as report_cmd
from jaxci.evidence.inputs import reference
from jaxci.report.build import build
from jaxci.report.findings import model_inputs_md
from jaxci.results.records import load_results
from tests.committed import committed
from tests.synth import SynthResults

LOCAL = "local-laptop"
ASKED = [(family, kernel, n, dtype, device)
         for family in ("g4dn.2xlarge", "c7i.2xlarge", "ubuntu-latest")
         for kernel, n, dtype, device in (("dispatch", None, "float64", "cpu"), ("scan", 1000, "float64", "cpu"),
                                          ("matmul", 256, "float32", "cpu"), ("pure_python", None, "float64", "cpu"),
                                          ("scan", 1000, "float64", "gpu"))
         if device == "cpu" or family == "g4dn.2xlarge"]


@pytest.fixture(scope="module")
def with_local_run(tmp_path_factory):
    """The committed results plus a local quick run, 1,000x slower than anything measured: were it an input, every
    CPU prediction would move."""
    root = tmp_path_factory.mktemp("model-inputs")
    results = root / "results"
    shutil.copytree(committed(), results)
    meta = json.loads((results / "benchmarks.json").read_text())
    synth = SynthResults(root / "synth")
    synth.machine(LOCAL, kind="local", cores="2")
    for bench, value in (("dispatch.TinyOp.time_warm", lambda dtype, device: 1.0 if device == "cpu" else math.nan),
                         ("loops.Scan.time_warm",
                          lambda n, unroll, dtype, device: 1e-3 * n if device == "cpu" else math.nan)):
        names, params = meta[bench]["param_names"], [[eval(v) for v in axis] for axis in meta[bench]["params"]]
        synth.add(LOCAL, bench, names, params, value, version=meta[bench]["version"])
    for suite in ("dispatch", "loops"):
        synth.add(LOCAL, f"{suite}.track_scale", [], [], lambda: 0.0, unit="scale (0 = ci, 1 = full)",
                  version=meta[f"{suite}.track_scale"]["version"])
    shutil.copytree(synth.save() / LOCAL, results / LOCAL)
    return results


def _model(results, named=()):
    rs = load_results(results)
    return RunnerModel.from_results(rs.latest(), rs.machines, load_catalogue(include_lab=True), reference(),
                                    named=named)


def _answers(model) -> list:
    return [(p.seconds, p.low, p.high, p.reason) for p in (model.predict(*ask) for ask in ASKED)]


def test_a_local_run_moves_no_prediction_unless_named(with_local_run):
    alone, beside = _model(committed()), _model(with_local_run)
    assert LOCAL in load_results(with_local_run).machines and LOCAL not in beside.inputs
    assert _answers(beside) == _answers(alone)
    named = _model(with_local_run, named=(LOCAL,))
    assert LOCAL in named.inputs and _answers(named) != _answers(alone)  # named, it is read: the test can fail


def test_the_inputs_are_the_committed_kinds(with_local_run):
    rs = load_results(with_local_run)
    inputs = input_machines(rs.machines)
    assert LOCAL not in inputs
    assert set(inputs) == {m for m, f in rs.machines.items() if f.get("jaxci_kind") in INPUT_KINDS}
    assert input_machines(rs.machines, named=(LOCAL,)) == tuple(sorted((*inputs, LOCAL)))


def test_a_ci_scale_run_of_a_family_is_no_input_unless_named(tmp_path):
    """A catalogue family's quick run (JAXCI_MACHINE=c7i.2xlarge bash scripts/bench.sh) is measured, not a model
    input: a family's prediction rests on full-scale runs."""
    synth = SynthResults(tmp_path)
    synth.machine("c7i.2xlarge", cores="8")
    synth.add("c7i.2xlarge", "dispatch.TinyOp.time_warm", ["dtype", "device"], [["float32"], ["cpu"]],
              lambda dtype, device: 1e-5)
    synth.record_scale("c7i.2xlarge", "ci")
    rs = load_results(synth.save())
    cat = load_catalogue(include_lab=True)
    assert not RunnerModel.from_results(rs.latest(), rs.machines, cat).records
    assert RunnerModel.from_results(rs.latest(), rs.machines, cat, named=("c7i.2xlarge",)).records


def test_the_report_says_which_machines_it_read(with_local_run):
    report = build(with_local_run)
    text = model_inputs_md(report)
    assert f"`{LOCAL}` (a local or CI-scale run" in text and "--model-input" in text
    for machine in report.model.inputs:
        assert f"`{machine}`" in text.split("Shown as measured")[0]


def test_report_pages_are_the_same_with_and_without_a_local_run(with_local_run, tmp_path, capsys):
    """The committed report's pages (docs/report) and its JSON answers do not move with a local run beside them."""
    pages = {}
    for name, results in (("alone", committed()), ("beside", with_local_run)):
        out = tmp_path / name
        out.mkdir()
        assert report_cmd.main([str(results), "--no-progress", "--maintainers", str(out / "maint"),
                                "--audits", str(REPO_ROOT / "audits"), "--format", "summary"]) == 0
        pages[name] = {p.name: p.read_text() for p in sorted((out / "maint").iterdir())}
    capsys.readouterr()
    assert pages["alone"] == pages["beside"]


def test_model_input_names_a_machine_that_is_there(with_local_run, capsys):
    assert report_cmd.main([str(with_local_run), "--no-progress", "--model-input", "local-nosuch"]) == 2
    assert "no results/local-nosuch/machine.json" in capsys.readouterr().err
    assert predict_cmd.main(["--family", "c7i.2xlarge", "--kernel", "dispatch", "--device", "cpu", "--results",
                             str(with_local_run), "--model-input", "nosuch"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--model-input 'nosuch': no such machine" in err
    assert predict_cmd.main(["--family", "c7i.2xlarge", "--kernel", "dispatch", "--device", "cpu", "--results",
                             str(with_local_run), "--model-input", LOCAL, "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["seconds"] > 0
