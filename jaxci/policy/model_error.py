"""How far a lecture's predicted seconds lie from what a build publishes, where the model was not fitted: the band
the whole build (jaxci.policy.wholebuild) gives each lecture it prices from a prediction.

The figures are the development sets' held-out error (docs/reference/dev-sets-all.json, `jaxci devsets --table`:
"the model's error band"): over the 204 scored lectures of lecture-python.myst on g4dn.2xlarge and
lecture-python-advanced.myst on ubuntu-latest, cross-set, the predicted / published ratios between which the middle
80% of their published seconds lie (2026-12-07). A prediction's own band is the spread of its inputs (the run's
cells, the rates it used); on its own it said a build after the patch was 94.6-94.9 min while the model's check
on the same build was 0.86x. A lecture predicted at s seconds is given at least s / RATIO_HIGH .. s / RATIO_LOW.
tests/test_model_error.py holds the figures to the record.
"""

from __future__ import annotations

#: predicted / published at the 10th and 90th percentile of the development sets' published seconds, cross-set
RATIO_LOW, RATIO_HIGH = 0.53, 1.59


def widened(seconds: tuple[float, float, float] | None) -> tuple[float, float, float] | None:
    """(mid, low, high) of a predicted lecture with its band at least the model's held-out error (None: none)."""
    if seconds is None:
        return None
    mid, low, high = seconds
    return mid, min(low, mid / RATIO_HIGH), max(high, mid / RATIO_LOW)
