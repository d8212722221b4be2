"""Setup the model, prediction and report tests share: a runner model from a results folder, a made-up notebook
run, and a script under measure/ loaded as a module."""

from __future__ import annotations

import importlib.util
import sys

import pytest

from jaxci import REPO_ROOT
from jaxci.analysis.model import RunnerModel
from jaxci.audit.judging import family
from jaxci.audit.runner import NotebookRun
from jaxci.catalogue import load_catalogue
from jaxci.results.records import load_results
from tests.frozen import RESULTS

T4 = "g4dn.2xlarge"


def runner_model(results=RESULTS, published=(), lab=True, machines=None, fixed=None) -> RunnerModel:
    """The runner model of a results folder, given the published evidence (none: transfer-only), the catalogue
    with its lab machines unless `lab` is False, `machines` in place of the folder's own facts and a notebook's
    fixed costs."""
    rs = load_results(results)
    catalogue = load_catalogue(include_lab=lab)
    return RunnerModel.from_results(rs.latest(), machines or rs.machines, catalogue, published, fixed)


@pytest.fixture(scope="module")
def t4_family():
    """The audit's family model of g4dn.2xlarge (a T4) from the frozen results, transfer-only: a module's tests
    take it under their own name (`model = t4_family`)."""
    return family.from_results(RESULTS, T4)


def notebook(*cells, path="x.ipynb", **kw) -> NotebookRun:
    """A made-up CPU run of a notebook with these cells."""
    return NotebookRun(path, platform="cpu", cells=list(cells), **kw)


def script(name: str):
    """measure/<name>.py, loaded as a module (registered: its dataclasses look their module up)."""
    spec = importlib.util.spec_from_file_location(name, REPO_ROOT / "measure" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module
