"""The kalman, nuts and compile suites through stock asv at CI scale: the CI cases have numbers, the rest are
skipped (NaN), and the tracks that share one run per combination agree with each other."""

import math

import pytest

from tests.asvutil import result_values

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def results(ci_results):
    """The asv results of the session-wide CI-scale run (conftest.ci_run), which holds these suites; that nothing
    in it failed is test_suite_run's check."""
    return ci_results[0]


def test_ci_cases_measured_and_rest_skipped(results):
    kal = result_values(results, "kalman.KalmanGrad.time_warm")
    assert kal[("'sequential'", "11", "96", "'float64'", "'cpu'")] > 0
    assert math.isnan(kal[("'parallel'", "50", "1000", "'float64'", "'cpu'")])
    nuts = result_values(results, "nuts.Nuts.track_ess_per_s")
    ran = [v for v in nuts.values() if v is not None and not math.isnan(v)]
    assert len(ran) == 2 and all(v > 0 for v in ran)
    assert all(v is not None for v in nuts.values())  # skipped, never failed


def test_nuts_tracks_come_from_one_run(results):
    combo = ("'regression'", "'sequential'", "1", "20", "'float64'", "'cpu'")
    wall = result_values(results, "nuts.Nuts.track_wall_s")[combo]
    steps_s = result_values(results, "nuts.Nuts.track_leapfrog_steps_per_s")[combo]
    # steps of warmup and sampling (at least 20 + 20) over execution seconds (less than the wall)
    assert wall > 0 and steps_s * wall > 2 * 20


def test_warm_cache_run_hits(results):
    hits = result_values(results, "compile.PersistentCache.track_warm_cache_hits")[("'float32'", "'cpu'")]
    assert hits >= len([100, 500, 1000, 2000, 3000])
    series = result_values(results, "compile.JitSeries.track_first_call_s")
    assert all(series[(str(n), "'float32'", "'cpu'")] > 0 for n in (100, 500, 1000, 2000, 3000))
