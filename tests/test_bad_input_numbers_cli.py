"""Numbers and names given on the command line of the scoring and costing commands (issue 83): a figure of 0, a
negative or non-ASCII number, a key no entry has, a family whose name holds a dot, a folder that holds no results,
an unknown family. Each is one line and exit 2, or read as meant."""

from __future__ import annotations

import pytest

from jaxci.catalogue import load_catalogue
from jaxci.commands import crossover_stability, jobcost, published_score
from jaxci.report.figure_score import overridden


@pytest.mark.parametrize("item, said", [
    ("ubuntu-latest.cpu_physical_cores=0", "finite number above zero"),
    ("ubuntu-latest.cpu_physical_cores=-5", "finite number above zero"),
    ("ubuntu-latest.cpu_physical_cores=\u0662", "ASCII digits"),
    ("ubuntu-latest.cpu_physical_corez=4", "has no figure 'cpu_physical_corez'"),
    ("nosuch.cpu_physical_cores=4", "FAMILY.KEY=VALUE with a catalogue family")])
def test_a_sensitivity_figure_is_checked(item, said):
    with pytest.raises(ValueError, match=said):
        overridden(load_catalogue(include_lab=True), [item])


def test_a_family_with_a_dot_in_its_name_can_be_set():
    cat = load_catalogue(include_lab=True)
    key = next(iter(cat["g4dn.2xlarge"].figures))
    assert overridden(cat, [f"g4dn.2xlarge.{key}=16000"])["g4dn.2xlarge"].figures[key].value == 16000.0


@pytest.mark.parametrize("argv, said", [(["c7i.2xlarge=nan"], "minutes from 0 to 7,200"),
                                        (["c7i.2xlarge=\u0662"], "ASCII digits"),
                                        (["c7i.2xlarge=10", "--overhead-minutes", "-50"], "minutes from 0")])
def test_job_minutes_are_checked(argv, said, capsys):
    try:
        code = jobcost.main(argv)
    except SystemExit as exc:
        code = exc.code
    err = capsys.readouterr().err
    assert code == 2 and said in err and err.count("\n") == 1, err


def test_published_score_refuses_a_folder_without_results(tmp_path, capsys):
    assert published_score.main([str(tmp_path)]) == 2
    assert "not an asv results directory" in capsys.readouterr().err


def test_crossover_stability_refuses_an_unknown_family(capsys):
    assert crossover_stability.main(["--families", "c7i.2xlarge,nosuch"]) == 2
    err = capsys.readouterr().err
    assert "'nosuch' is not a catalogue runner family" in err and err.count("\n") == 1
