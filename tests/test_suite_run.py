"""The CI-scale asv run: every suite runs on this interpreter, gpu combinations are n/a on a CPU machine,
nothing fails, results are saved where asv's API reads them, and asv publish builds the site."""

import json
import math

import pytest

from jaxci.accel import accelerator_platform
from jaxci.nvml import gpu_present
from tests.asvutil import failed_benchmarks, result_values

pytestmark = pytest.mark.slow


def test_asv_check_passes(ci_run):
    box, _, _ = ci_run
    proc = box.asv("check", "-E", "existing")
    assert "Traceback" not in proc.stdout + proc.stderr


def test_no_benchmark_failed(ci_run):
    _, _, log = ci_run
    assert failed_benchmarks(log) == [], log[-6000:]


def test_results_saved_for_every_suite(ci_results):
    results = ci_results[0]
    suites = {name.split(".")[0] for name in results.get_all_result_keys()}
    assert {"dense", "elementwise", "loops", "dispatch"} <= suites


@pytest.mark.skipif(gpu_present() or accelerator_platform() is not None, reason="this machine has an accelerator")
def test_gpu_combinations_are_skipped_not_failed(ci_results):
    """asv stores a skipped combination as NaN and a failed one as None: gpu and tpu alike on a CPU machine."""
    results = ci_results[0]
    checked = 0
    for key in results.get_all_result_keys():
        for combo, value in result_values(results, key).items():
            if "'gpu'" in combo or "'tpu'" in combo:
                checked += 1
                assert value is not None and math.isnan(value), f"{key}{combo}: {value!r} (expected skipped)"
    assert checked > 0


def test_ci_scale_ran_small_cases(ci_results):
    values = result_values(ci_results[0], "dense.Dense.time_warm")
    assert values[("'matmul'", "64", "'float64'", "'cpu'")] > 0
    assert math.isnan(values[("'matmul'", "4096", "'float64'", "'cpu'")])  # large: skipped at CI scale


def test_every_suite_recorded_its_scale(ci_results):
    """The run records JAXCI_SCALE per suite (track_scale: 0 = ci), read back by jaxci."""
    results = ci_results[0]
    suites = {name.split(".")[0] for name in results.get_all_result_keys()}
    assert {s: results.get_result_value(f"{s}.track_scale", []) for s in suites} == {s: [0.0] for s in suites}


def test_publish_plots_the_stored_values(ci_run, ci_results):
    """The published graph of dense.Dense.time_warm holds exactly the medians asv stored for this run
    (n/a combinations as gaps), not merely a file."""
    box, machine, _ = ci_run
    results = ci_results[0]
    box.asv("publish")
    stored = sorted(v for v in result_values(results, "dense.Dense.time_warm").values()
                    if v is not None and not math.isnan(v))
    (graph,) = [p for p in (box.html / "graphs").rglob("dense.Dense.time_warm.json") if f"machine-{machine}" in str(p)]
    ((_, published),) = json.loads(graph.read_text())
    shown = sorted(v for v in published if v is not None and not (isinstance(v, float) and math.isnan(v)))
    assert stored and shown == pytest.approx(stored)
