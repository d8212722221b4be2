"""The whole build's band for a predicted lecture is at least the model's held-out error (jaxci.policy.model_error),
and that error is the committed development-set record's: a change of the record (a model change re-scored) fails
here until the policy's figures follow."""

import json

from jaxci import REPO_ROOT
from jaxci.analysis import devsets as D
from jaxci.analysis import devsets_score as S
from jaxci.policy import model_error

RECORD = REPO_ROOT / "docs" / "reference" / "dev-sets-all.json"


def test_the_policy_error_band_is_the_records_held_out_figure():
    sets = D.from_record(D.parse_record(json.loads(RECORD.read_text())))
    low, high, n = S.error_band(sets)
    assert (model_error.RATIO_LOW, model_error.RATIO_HIGH) == (round(low, 2), round(high, 2))
    assert n == sum(len(one.lectures) for one in sets)


def test_a_predicted_lecture_is_widened_to_the_error_and_never_narrowed():
    mid, low, high = model_error.widened((100.0, 99.0, 101.0))
    assert (mid, round(low, 1), round(high, 1)) == (100.0, round(100 / model_error.RATIO_HIGH, 1),
                                                    round(100 / model_error.RATIO_LOW, 1))
    assert model_error.widened((100.0, 10.0, 1000.0)) == (100.0, 10.0, 1000.0)
    assert model_error.widened(None) is None   # not predicted on that side: the lecture stays unpriced


def test_the_quantiles_weigh_published_seconds():
    one = S.SetScore("f", "", 100.0, [S.Lecture("a", 90.0, 45.0, None, None, {"cross-set": 0.5}),
                                       S.Lecture("b", 10.0, 30.0, None, None, {"cross-set": 3.0})])
    assert S.error_band([one]) == (0.5, 0.5, 2)   # the long lecture holds 90% of the seconds at both ends
    assert S.error_band([one], tail=0.05)[1] == 3.0
