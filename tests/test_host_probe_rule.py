"""The host probe's rule (issue 81 item 3): the fastest repeat in this thread's CPU time, banded to the median, and
not trusted (no seconds, the reason and the way on said) when the CPU times themselves spread. No timing is asserted:
the rule is fed made-up repeats."""

from __future__ import annotations

from jaxci.audit.judging import host
from jaxci.audit.runner import host_probe
from jaxci.evidence.inputs import reference


def test_a_busy_wall_clock_does_not_move_the_probe():
    """Waiting for a core shows in wall time only: the same CPU times give the same probe."""
    cpu = [0.101, 0.100, 0.103, 0.102, 0.100, 0.104, 0.101, 0.102, 0.100]
    quiet = host_probe.judged(cpu, [c * 1.01 for c in cpu], 1_000_000)
    busy = host_probe.judged(cpu, [c * 2.5 for c in cpu], 1_000_000)
    assert quiet.seconds == busy.seconds == 0.100 and quiet.low == 0.100 and quiet.high == 0.101
    assert "fastest of 9" in busy.text and "wall 0.25..0.26 s" in busy.text


def test_a_probe_whose_cpu_times_spread_is_not_trusted_and_moves_nothing():
    spread = host_probe.judged([0.10, 0.10, 0.10, 0.14, 0.15, 0.15, 0.16, 0.17, 0.20], [0.2] * 9, 1_000_000)
    assert spread.seconds is None and spread.text.startswith("not trusted")
    assert "x1.50" in spread.text and "--host-probe" in spread.text
    factor = host.factor("g4dn.2xlarge", reference(), spread)
    assert factor.value == 1.0 and factor.label == host.NOT_MEASURED and "not trusted" in factor.source


def test_a_clock_that_reads_zero_measures_nothing():
    assert host_probe.judged([0.0] * 9, [0.1] * 9, 1_000_000).seconds is None


def test_the_probe_runs_here_and_says_how_it_was_taken():
    got = host_probe.probe(n=10_000, repeat=5)
    assert got.n == 10_000 and ("fastest of 5" in got.text or got.text.startswith("not trusted"))
