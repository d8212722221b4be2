"""The job time/cost model: the whole job is billed (overhead + suite), EC2's 60 s minimum, GitHub's whole
minutes; an unmeasured suite gives no dollars; timeouts follow (overhead + suite x runs) x margin."""

import math

import pytest

from jaxci.catalogue import CatalogueError, Figure, Machine, catalogue_defaults, load_catalogue
from jaxci.policy.jobcost import job_cost, planned_suite_minutes, timeout_minutes
from tests.suiteutil import python

DEFAULTS = {
    "job_overhead_minutes": Figure(6, source="test"),
    "billing_minimum_seconds": Figure(60, source="test"),
    "timeout_margin": Figure(1.5, source="test"),
    "suite_minutes_unmeasured": Figure(60, source="test ceiling"),
    "github_billing_increment_seconds": Figure(60, source="test"),
}


def machine(runner="runs-on", price=0.752, suite=None):
    figures = {"price_per_hour": Figure(price, source="test")}
    figures["suite_minutes"] = Figure(suite, source="measured") if suite else Figure(None, reason="not measured")
    return Machine("g4dn.2xlarge", "test", runner, "img", "cuda13", "exploratory", True, figures)


def test_cost_counts_the_whole_job():
    cost = job_cost(machine(), DEFAULTS, suite_minutes=30)
    assert cost.job_minutes == 36
    assert cost.billed_seconds == 36 * 60
    assert cost.dollars == pytest.approx(36 / 60 * 0.752)


def test_ec2_bills_at_least_the_minimum():
    cost = job_cost(machine(), DEFAULTS, suite_minutes=0.1, overhead_minutes=0.2)
    assert cost.billed_seconds == 60
    assert cost.dollars == pytest.approx(60 / 3600 * 0.752)


def test_github_rounds_up_to_whole_minutes():
    cost = job_cost(machine(runner="github", price=0.72), DEFAULTS, suite_minutes=10.25, overhead_minutes=1)
    assert cost.billed_seconds == 12 * 60  # 11.25 min -> 12 min
    assert cost.dollars == pytest.approx(12 / 60 * 0.72)


def test_unmeasured_suite_gives_no_dollars():
    cost = job_cost(machine(), DEFAULTS, suite_minutes=None)
    assert cost.dollars is None and cost.suite_source == "not measured"


def test_runs_multiply_the_suite_not_the_overhead():
    assert job_cost(machine(), DEFAULTS, 30, runs=2).job_minutes == 66


def test_timeout_uses_the_family_figure_when_measured():
    assert timeout_minutes(machine(suite=20), DEFAULTS) == math.ceil((6 + 20) * 1.5)
    assert timeout_minutes(machine(suite=20), DEFAULTS, runs=3) == math.ceil((6 + 60) * 1.5)
    assert planned_suite_minutes(machine(suite=20), DEFAULTS)[0] == 20


def test_timeout_falls_back_to_the_planning_ceiling():
    minutes, source = planned_suite_minutes(machine(), DEFAULTS)
    assert minutes == 60 and "suite_minutes_unmeasured" in source
    assert timeout_minutes(machine(), DEFAULTS) == math.ceil(66 * 1.5)


def test_missing_default_is_a_clear_error():
    with pytest.raises(CatalogueError, match="timeout_margin"):
        timeout_minutes(machine(), {k: v for k, v in DEFAULTS.items() if k != "timeout_margin"})


def test_real_catalogue_has_what_the_model_needs():
    defaults = catalogue_defaults()
    for m in load_catalogue().values():
        assert timeout_minutes(m, defaults) > 0
        assert job_cost(m, defaults, 10).dollars is not None  # every family has a sourced price


def test_cost_table_command():
    """`python -m jaxci.commands.jobcost FAMILY=MINUTES`: a row per measured family; bad input exits 2."""
    def run(*args):
        return python("-m", "jaxci.commands.jobcost", *args, cwd=None, timeout=60)

    proc = run("g4dn.2xlarge=30", "--overhead-minutes", "4")
    assert proc.returncode == 0, proc.stderr
    rows = [line for line in proc.stdout.splitlines() if line.startswith("| g4dn")]
    assert len(rows) == 1 and "| 30.0 | 4.0 | 34.0 | 2040 |" in rows[0]
    assert "overhead: measured, as given" in proc.stdout
    proc = run()
    assert proc.returncode == 0 and proc.stdout.count("not measured") >= len(load_catalogue())
    for bad, message in [("nope=3", "unknown family 'nope'"), ("g4dn.2xlarge=x", "expected a number in ASCII digits")]:
        proc = run(bad)
        assert proc.returncode == 2 and message in proc.stderr and "Traceback" not in proc.stderr
