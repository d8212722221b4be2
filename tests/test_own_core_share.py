"""A run that waited for a core (issue 81 item 3): beside a CPU-bound process a cell's wall time grows by the main
thread's wait on a run queue (schedstat run_delay), which the hooks record as `wait_s`; the host factor takes the
run's share of time on a core, so the prediction is the one of an idle host. No timing is asserted: made-up runs."""

from __future__ import annotations

import pytest

from jaxci.audit.judging import host
from jaxci.audit.runner import hooks
from jaxci.audit.runner.outcome import CellTiming, NotebookRun


def _run(*cells: tuple[float, float | None]) -> NotebookRun:
    return NotebookRun("a.md", cells=[CellTiming(i, "", wall, wall, wait_s=wait) for i, (wall, wait) in
                                      enumerate(cells)])


def test_the_share_of_time_on_a_core():
    assert _run((10.0, 2.0), (10.0, 3.0)).own_core_share == pytest.approx(0.75)
    assert _run((10.0, None)).own_core_share is None        # recorded before, or no schedstat: unchanged
    assert _run((10.0, 0.0), (5.0, None)).own_core_share == 1.0
    assert _run((1.0, 1.0)).own_core_share == 0.05          # bounded: never a zero factor


def test_the_host_factor_of_a_run_that_waited():
    h = host.HostFactor(2.0, 1.5, 2.5, host.MEASURED, "h = published / here")
    assert host.with_own_core(h, None) is h and host.with_own_core(h, 0.995) is h
    moved = host.with_own_core(h, 0.8)
    assert (moved.value, moved.low, moved.high) == pytest.approx((1.6, 1.2, 2.0))
    assert "had a core for 80%" in moved.source and moved.label == h.label


def test_run_delay_reads_this_thread_s_wait():
    """Where the kernel keeps schedstat, the wait is a number of seconds that never goes back (it is a counter)."""
    first = hooks.run_delay()
    if first is None:
        pytest.skip("no /proc/thread-self/schedstat here: cells record no wait, and nothing is moved")
    sum(range(200_000))
    assert 0.0 <= first <= hooks.run_delay()
