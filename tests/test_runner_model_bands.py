"""Bands that mean something: the leave-one-out band widened by its term's residuals (leave-two-out, both ways,
the term else its class) and the crossover-stability comparison of decision sizes. Synthetic rows only: no
timing is asserted."""

from __future__ import annotations

import math

import pytest

from jaxci.evidence.published import PublishedFigure
from jaxci.report import crossover_stability, figure_score


def _row(pvp, f, pred, low, high):
    return {"case": f.case, "family": f.family, "device": f.device, "published_s": f.published_s,
            "kind": "point", "term": pvp.term(f), "goal": pvp.goal(f), "resolution_s": f.resolution_s,
            "loo": {"predicted_s": pred, "low_s": low, "high_s": high}}


def test_residual_band_is_leave_two_out_both_ways_and_falls_back_to_the_class():
    pvp = figure_score
    small = PublishedFigure("1000 matmul, compiled", "ubuntu-latest", "cpu", 0.011, "matmul", 1000, resolution_s=5e-4)
    big = PublishedFigure("3000 matmul, compiled", "ubuntu-latest", "cpu", 0.276, "matmul", 3000, resolution_s=5e-4)
    numpy = PublishedFigure("NumPy 3000 matmul", "ubuntu-latest", "cpu", 0.642, "numpy_matmul", 3000, resolution_s=5e-4)
    figs = [small, big, numpy]
    out = [_row(pvp, small, 0.0102, 0.0102, 0.0102), _row(pvp, big, 0.297, 0.29, 0.30),
           _row(pvp, numpy, 0.269, 0.2, 0.3)]
    asked = []

    def leave_out(g, *without):
        # the other figure predicted without its own inputs and the scored figure's: 0.5x its published value
        asked.append((g.case, tuple(x.case for x in without)))
        return {"predicted_s": g.published_s * 0.5}

    for f, r in zip(figs, out):
        pvp._residual_band(f, r, figs, out, leave_out)
    assert (big.case, (small.case,)) in asked and (small.case, (big.case,)) in asked   # leave-two-out
    c = out[0]["loo"]
    assert c["residuals_from"] == "term" and [x["r"] for x in c["residuals"]] == [2.0]
    assert c["band_low_s"] == pytest.approx(0.0102 / 2) and c["band_high_s"] == pytest.approx(0.0102 * 2)
    n = out[2]["loo"]   # NumPy: no other figure of its term, so its class (the runner's CPU throughput)
    assert n["residuals_from"] == "class" and len(n["residuals"]) == 2
    assert n["in_resid_band"] is False          # 0.642 stays outside 0.269 x 2: a wider band is not asserted


def test_crossover_stability_compares_decision_sizes():
    cs = crossover_stability
    assert cs.spread([1000.0, 1000.0, 1245.0]) == pytest.approx(1.245)
    assert cs.spread([math.inf, math.inf]) is None            # "none" everywhere: the sets agree
    assert cs.spread([math.inf, 1000.0]) == math.inf          # "none" against a size: the decision changed
    assert cs.spread([None, 2000.0]) is None                  # one set only: nothing to compare
