"""Host work split by kind in the lecture's kernel (jaxci.audit.runner.host_kinds; issue 81 item 1): a pure-Python
cell's CPU goes to `python_s`, a NumPy cell that releases the GIL to `native_s`, a sleeping cell's to neither; the
two always share the main thread's CPU (`busy_s`); a run record with another kind is refused. The shares are
checked with wide margins (the sampler weighs 10 ms intervals), never a timing."""

from __future__ import annotations

import nbformat
import pytest

from jaxci.audit.reading import runrecord
from jaxci.audit.runner import host_kinds
from jaxci.audit.runner.kernel import run_notebook

CELLS = [
    "total = 0\nfor i in range(4_000_000):\n    total += i % 7",                    # the interpreter
    "import numpy as np\na = np.random.default_rng(0).random(8_000_000)\n"
    "for _ in range(4):\n    b = np.sort(a)",                                          # native, GIL released
    "import time\ntime.sleep(0.5)",                                                   # neither
]


@pytest.mark.slow
def test_each_cell_s_cpu_goes_to_its_kind(tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(c) for c in CELLS]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    path = tmp_path / "kinds.ipynb"
    nbformat.write(nb, path)
    run = run_notebook(str(path), timeout=300)
    assert run.status == "ok", run.error
    python, numpy, sleep = run.cells
    for cell in run.cells:
        kinds = cell.host_kinds
        assert set(kinds) == set(runrecord.HOST_KINDS)
        assert kinds["python_s"] + kinds["native_s"] == pytest.approx(cell.busy_s, abs=1e-6)
        runrecord.cell("cell", cell.as_dict())  # the record's reader takes it
    assert python.host_kinds["python_s"] >= 0.6 * python.busy_s
    assert numpy.host_kinds["native_s"] >= 0.6 * numpy.busy_s
    assert sleep.host_kinds["python_s"] + sleep.host_kinds["native_s"] <= 0.05


def test_an_interval_is_the_interpreter_s_when_the_gil_came_after_one_switch_interval():
    kinds = host_kinds.HostKinds()
    switch = 0.005
    import sys

    before = sys.getswitchinterval()
    sys.setswitchinterval(switch)
    try:
        assert kinds._kind(0.0) == "native"          # GIL free: native code that released it
        assert kinds._kind(0.0052) == "python"       # asked for, given up after one interval
        assert kinds._kind(0.050) == "native"        # held past it: native code holding the GIL
    finally:
        sys.setswitchinterval(before)


def test_without_the_thread_clock_nothing_is_said():
    kinds = host_kinds.HostKinds()
    kinds.clock = None
    assert kinds.split(1.0) == {}


@pytest.mark.parametrize(("kinds", "said"), [
    ({"python_s": 1.0, "gpu_s": 2.0}, "unknown kind 'gpu_s'"),
    ({"python_s": -1.0}, "cells[0].host_kinds.python_s"),
    ([1, 2], "cells[0].host_kinds"),
])
def test_a_record_with_other_kinds_is_refused(kinds, said):
    with pytest.raises(runrecord.RecordError, match=said.replace("[", r"\[").replace("]", r"\]")):
        runrecord.cell("cells[0]", {"index": 0, "wall_s": 1.0, "host_kinds": kinds})


def test_the_factors_are_the_published_ratios_where_both_runners_published():
    """g4dn.2xlarge over ubuntu-latest: the pure-Python probes (0.881 s, 0.599 s) and the NumPy 3,000-square
    matmuls (0.224 s, 0.642 s) published in incidents.md; the reference over itself is 1."""
    import subprocess
    import sys

    from jaxci import REPO_ROOT
    from jaxci.analysis import host_kind_factors as hk
    from jaxci.catalogue import load_catalogue
    from jaxci.commands.predict import runner_model
    from jaxci.results.records import load_results
    from tests.committed import committed

    catalogue = load_catalogue(include_lab=True)
    results = committed()   # what git holds: a local run's folder never moves the factors
    model = runner_model(load_results(results), catalogue, str(results), [])
    python, native, threads = hk.factors(model, "g4dn.2xlarge")
    assert python.value.mid == pytest.approx(0.881 / 0.599, rel=1e-3)
    assert threads.value.mid == pytest.approx(0.224 / 0.642, rel=1e-2)
    assert native.value.low <= 1.14 and native.value.high >= 1.31  # widened to the published lecture ratio
    assert all(f.value.mid == 1.0 for f in hk.factors(model, "ubuntu-latest"))
    out = subprocess.run([sys.executable, "-m", "jaxci", "host-kinds", "--results", str(results)],
                         capture_output=True, text=True, check=True, cwd=REPO_ROOT).stdout
    doc = (REPO_ROOT / "docs" / "host-kinds.md").read_text()
    assert doc.endswith(out) and out.count("\n| ") == len([e for e in catalogue.values() if not e.is_lab])
