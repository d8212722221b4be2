"""Whether a release regression is undone today, against the release before it: the first screen's column reads
the newest release's time, so a partial recovery is never reported as the whole slowdown."""

from jaxci.analysis.releases import ReleaseStep


def _step(t_last, undone_in=None, kind="regression"):
    return ReleaseStep("m", "loops.ForiAccumulate", (), "0.4.31", "0.4.33", 18e-6, 4.7e-3, kind, undone_in, "0.12.0.1",
                       t_last)


def test_a_partial_recovery_says_partly_with_todays_ratio():
    assert _step(84e-6).undone_text(1.3) == "partly: x4.67 at 0.12.0.1 (x261 at 0.4.33)"


def test_a_regression_still_at_its_peak_says_no_with_todays_ratio():
    assert _step(4.5e-3).undone_text(1.3) == "no: x250 at 0.12.0.1"


def test_an_undone_regression_and_an_improvement_say_so():
    assert _step(18e-6, undone_in="0.11.2").undone_text(1.3) == "yes, in 0.11.2"
    assert _step(1e-6, kind="improvement").undone_text(1.3) == "improvement"
    assert _step(None).undone_text(1.3) == "no (still at 0.12.0.1)"  # no time recorded at the newest release
