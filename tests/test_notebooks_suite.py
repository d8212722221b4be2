"""The notebooks suite at CI scale through stock asv: gpu is n/a here, numbers are recorded."""

import math

import pytest

from jaxci.nvml import gpu_present
from tests.asvutil import result_values

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def results(ci_results):
    """The asv results of the session-wide CI-scale run (conftest.ci_run), which holds the notebooks suite; that
    nothing in it failed is test_suite_run's check."""
    return ci_results[0]


def test_split_recorded_for_every_fixture_notebook(results):
    compile_s = result_values(results, "notebooks.NotebookSplit.track_compile_s")
    run_s = result_values(results, "notebooks.NotebookSplit.track_run_s")
    for name in ("'elementwise_f64'", "'grid_scan'", "'nuts_f64'", "'fresh_compiles'"):
        assert compile_s[(name, "'cpu'")] > 0, name
        assert run_s[(name, "'cpu'")] > 0, name
        if not gpu_present():
            assert math.isnan(compile_s[(name, "'gpu'")])


def test_whole_notebook_timed_and_nuts_skipped_at_ci(results):
    whole = result_values(results, "notebooks.Notebook.time_notebook")
    assert whole[("'grid_scan'", "'cpu'")] > 0
    assert math.isnan(whole[("'nuts_f64'", "'cpu'")])


def test_kernel_path_and_empty_external_slots(results):
    first = result_values(results, "notebooks.KernelPath.track_first_s")
    assert first[("'bare'", "'cpu'")] > 0 and first[("'kernel'", "'cpu'")] > 0
    external = result_values(results, "notebooks.External.time_notebook")
    assert all(math.isnan(v) for v in external.values())  # JAXCI_NOTEBOOK_DIR unset: skipped, not failed


def test_external_slots_map_sorted_lectures(tmp_path, monkeypatch):
    from benchmarks import notebooks

    header = "---\nkernelspec:\n  name: python3\n  display_name: Python 3\n---\n\n"
    (tmp_path / "b.md").write_text(header + "```{code-cell} ipython3\nimport jax\n"
                                   "y = jax.jit(lambda v: v * 2)(3.0)\n```\n")
    (tmp_path / "a.md").write_text(header + "```{code-cell} ipython3\nx = 1\n```\n")
    (tmp_path / "notes.md").write_text("# not a lecture\n")
    monkeypatch.setenv(notebooks.EXTERNAL_ENV, str(tmp_path))
    case = notebooks.External()
    case.setup("lecture-1", "cpu")
    assert case.file.name == "b.md"
    with pytest.raises(NotImplementedError):
        case.setup("lecture-2", "cpu")
    cache = notebooks.ExternalSplit().setup_cache()
    assert set(cache) >= {("lecture-0", "cpu"), ("lecture-1", "cpu")}
    assert cache[("lecture-1", "cpu")]["compile_s"] > 0 and cache[("lecture-0", "cpu")]["compile_s"] == 0
