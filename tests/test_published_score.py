"""`jaxci published-score`: every published figure scored by the runner model, transfer-only and leave-one-out,
as the table docs/runner-model.md quotes (once measure/predict_vs_published.py). Frozen results; no timing."""

from __future__ import annotations

import pytest

from jaxci import REPO_ROOT
from jaxci.commands import published_score
from jaxci.report import figure_score
from tests.frozen import RESULTS


def test_the_text_table_scores_both_models_and_names_its_results(capsys):
    assert published_score.main([str(RESULTS)]) == 0
    out = capsys.readouterr().out
    assert "| transfer-only | " in out and "| leave-one-out | " in out
    assert out.splitlines()[0].startswith("| case | family | device | published_s |")
    assert out.rstrip().endswith(f"results: {RESULTS})")


def test_the_summary_counts_every_figure_once_per_model():
    rows = figure_score.rows(RESULTS, REPO_ROOT / "docs" / "reference" / "published-figures.json")
    for col in ("transfer", "loo"):
        s = figure_score.summary(rows, col)
        assert s["figures"] == len(rows) and s["predicted"] <= s["points"] <= s["figures"]
        assert s["warm"] + s["first"] == s["predicted"] and s["bounds_inside"] <= s["bounds"]


@pytest.mark.parametrize("args, says", [
    (["{missing}"], "no such file or directory"),
    (["--figures", "{missing}"], "no such file or directory"),
    (["--set", "nosuchfamily.cpu_physical_cores=4"], "FAMILY.KEY=VALUE with a catalogue family"),
    (["--set", "ubuntu-latest.cpu_physical_cores=four"], "not a finite number above zero in ASCII digits"),
])
def test_a_bad_argument_is_one_line_and_exit_2(tmp_path, capsys, args, says):
    argv = [str(RESULTS)] + [a.replace("{missing}", str(tmp_path / "missing")) for a in args]
    if args[0] == "{missing}":
        argv = argv[1:]
    assert published_score.main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("jaxci published-score: ") and says in err and err.count("\n") == 1


def test_a_sensitivity_run_replaces_one_catalogue_figure_and_says_so():
    from jaxci.catalogue import load_catalogue

    cat = figure_score.overridden(load_catalogue(include_lab=True), ["ubuntu-latest.cpu_physical_cores=4"])
    fig = cat["ubuntu-latest"].figures["cpu_physical_cores"]
    assert fig.value == 4.0 and "sensitivity" in fig.source
