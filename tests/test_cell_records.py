"""The records the hooks write and the judging reads (cell_records): one class each on both sides of the kernel
boundary, and a run saved before them (positional loop lists, the "counted" mark) still reads the same."""

import json
import subprocess
import sys

import pytest

from jaxci.audit.reading import runrecord
from jaxci.audit.reading.cell_records import COUNTED, EagerSize, EagerWork, JitCall, SamplerRun, TracedLoop
from jaxci.audit.runner import kernel
from jaxci.audit.runner.outcome import CellTiming, NotebookRun

LEGACY_CELL = {"index": 2, "first_line": "out = f(x)", "wall_s": 1.5, "client_s": 1.6, "compile_s": 0.2,
               "loops": [["lax.scan", 100, 1, 2, ""], ["lax.while_loop", None, 3, 1, "f"]],
               "calls": [{"name": "f", "calls": 4, "wall_s": 0.3, "first_s": 0.25, "compile_s": 0.2, "bytes": 48.0,
                          "loops": [["lax.while_loop", 6.5, 3, "counted"],
                                    ["lax.fori_loop", None, 1, "not counted: its trace could not be read back"]]}],
               "eager": {"ops": 5, "s": 0.1, "sizes": [[8, 2, "int32"], [4096, 3, "float32"]]},
               "samplers": [{"what": "numpyro.MCMC.run", "s": 3.0, "chains": 2, "chain_method": "vectorized",
                             "leapfrog": 90, "leapfrog_iterations": 20, "leapfrog_lockstep": 50}]}


def test_a_run_saved_with_positional_loops_reads_as_records():
    run = NotebookRun.from_dict({"path": "a.md", "cells": [LEGACY_CELL]})
    (cell,) = run.cells
    assert cell.loops == [TracedLoop("lax.scan", 100, 1, times=2), TracedLoop("lax.while_loop", None, 3, within="f")]
    assert [loop.top_level for loop in cell.loops] == [True, False]
    (call,) = cell.calls
    assert (call.name, call.calls, call.bytes, call.warm_s) == ("f", 4, 48.0, None)
    counted, unknown = call.loops
    assert counted == TracedLoop("lax.while_loop", 6.5, 3, count=COUNTED) and counted.counted
    assert not unknown.counted and unknown.trips is None and unknown.count.startswith("not counted")
    assert cell.eager == EagerWork(5, 0.1, [EagerSize(8, 2, "int32"), EagerSize(4096, 3, "float32")])
    assert cell.eager.biggest == EagerSize(4096, 3, "float32")
    assert cell.samplers == [SamplerRun("numpyro.MCMC.run", 3.0, chains=2, chain_method="vectorized", leapfrog=90,
                                        leapfrog_iterations=20, leapfrog_lockstep=50)]
    assert cell.samplers[0].vectorized and cell.samplers[0].samples is None


def test_a_saved_run_reads_back_to_equal_records():
    run = NotebookRun.from_dict({"path": "a.md", "cells": [LEGACY_CELL]})
    saved = json.loads(json.dumps(run.as_dict()))
    assert saved["cells"][0]["loops"][0] == {"kind": "lax.scan", "trips": 100, "carry": 1, "times": 2, "within": "",
                                             "count": None}
    assert saved["cells"][0]["eager"]["sizes"][1] == {"largest": 4096, "ops": 3, "dtype": "float32"}
    assert NotebookRun.from_dict(saved).cells == run.cells


def test_a_cells_entry_shares_its_signatures_loops():
    """A count after the cell reaches every entry of the signature: the entry holds the description's loops."""
    described = JitCall(name="f", loops=[TracedLoop("lax.while_loop", None, 2)], first_s=1.0)
    entry = described.opened()
    assert (entry.calls, entry.wall_s, entry.first_s) == (0, 0.0, None)
    described.loops[0].trips, described.loops[0].count = 4.0, COUNTED
    assert entry.loops is described.loops and entry.loops[0].counted


def test_the_kernel_records_are_read_into_the_cell():
    timing = CellTiming(0, "x", 0.0, 0.0)
    kernel._merge(timing, [{"wall": 1.0, "compile": 0.1, "trace": 0.0, "lower": 0.0, "backend": 0.1,
                            "compilations": 1, "cache_hits": 0, "cache_misses": 1,
                            "loops": [{"kind": "lax.scan", "trips": 9, "carry": 1, "times": 1, "within": ""}],
                            "calls": [{"name": "g", "calls": 2, "wall_s": 0.5, "loops": []}],
                            "eager": {"ops": 1, "s": 0.01, "sizes": [{"largest": 3, "ops": 1, "dtype": "float32"}]}}])
    assert timing.loops == [TracedLoop("lax.scan", 9, 1)] and timing.calls == [JitCall(name="g", calls=2, wall_s=0.5)]
    assert timing.eager == EagerWork(1, 0.01, [EagerSize(3, 1, "float32")])


@pytest.mark.parametrize("loop, field", [({"trips": 3, "carry": 1}, "no kind"),
                                         ({"kind": "lax.scan", "trips": -1, "carry": 1}, ".trips"),
                                         ({"kind": "lax.scan", "trips": 1, "carry": "many"}, ".carry")])
def test_a_bad_loop_record_is_refused_naming_the_field(loop, field):
    with pytest.raises(runrecord.RecordError, match=field.replace(".", r"\.")):
        runrecord.loop("cells[0].loops[0]", loop)


@pytest.mark.parametrize("size, field", [({"largest": -1, "ops": 1}, ".largest"), ([4, "x", "float32"], r"\[1\]"),
                                         ({"largest": 4, "ops": 1, "dtype": "a\nb"}, ".dtype")])
def test_a_bad_eager_size_class_is_refused_naming_the_field(size, field):
    with pytest.raises(runrecord.RecordError, match=field.replace(".", r"\.")):
        runrecord.eager("cells[0].eager", {"ops": 1, "s": 0.0, "sizes": [size]})


def test_the_kernel_side_code_runs_where_jaxci_cannot_be_imported():
    """The kernel gets the records and the hooks as source, their jaxci imports left out: set up in a Python where
    importing jaxci fails, a cell's record is still taken."""
    probe = ("import sys, json\nsys.modules['jaxci'] = None\n"
             "class Events:\n    def register(self, *a): pass\n"
             "class Shell:\n    user_ns = {}\n    events = Events()\n"
             "ns = {'get_ipython': Shell}\nexec(sys.stdin.read(), ns)\n"
             "kernel = sys.modules['_jaxci_kernel']\n"
             "kernel.STATE['clock'] = type('C', (), {'snapshot': lambda s: {}})()\n"
             "kernel.pre(); kernel.post()\nprint(json.loads(kernel.take())[0]['ok'])")
    proc = subprocess.run([sys.executable, "-c", probe], input=kernel._kernel_setup_code(), capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0 and proc.stdout.strip() == "True", proc.stderr[-2000:]
