"""measure/published_builds.py: the Execution Statistics parser, the refusal of rows that are not times
(timeout-capped, failed, not a number), the snapshot read (folder and git commit), the lecture choice, the
comparison's arithmetic on a made-up audit record and the table's layout. Never a timing."""

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.modelutil import script

FIX = Path(__file__).resolve().parent / "fixtures" / "published_builds"
pb = script("published_builds")


def _rows(cap=7200):
    return {r.document: r for r in pb.parse_status((FIX / "status.ipynb").read_text(encoding="utf-8"), cap)}


def test_parser_reads_the_table_after_the_links_on_the_header_line():
    rows = _rows()
    assert list(rows) == ["alpha", "beta", "capped", "broken", "odd"]
    assert rows["alpha"].seconds == 12.5 and rows["alpha"].method == "cache" and not rows["alpha"].refused
    assert rows["beta"].modified == "2026-01-02 03:05"


def test_a_run_at_the_cell_timeout_is_refused_even_with_a_success_mark():
    rows = _rows()
    assert rows["capped"].status == "✅" and "cell timeout" in rows["capped"].refused
    # another series' cap: the same row is a time there
    assert not _rows(cap=600)["capped"].refused


def test_failed_and_non_numeric_rows_are_refused():
    rows = _rows()
    assert "not a completed run" in rows["broken"].refused
    assert rows["odd"].seconds is None and "not a finite, non-negative number" in rows["odd"].refused


def test_no_table_is_a_clear_error():
    text = json.dumps({"cells": [{"cell_type": "markdown", "source": "# nothing here"}]})
    with pytest.raises(pb.InputError, match="no Execution Statistics table"):
        pb.parse_status(text, 7200)
    with pytest.raises(pb.InputError, match="not JSON"):
        pb.parse_status("{", 7200)


def test_jax_lectures_are_chosen_by_their_code_not_their_prose():
    assert pb.uses_jax((FIX / "alpha.ipynb").read_text(encoding="utf-8"))
    assert not pb.uses_jax((FIX / "beta.ipynb").read_text(encoding="utf-8"))


def test_layout_from_a_git_commit_writes_only_the_chosen_notebooks(tmp_path):
    src = tmp_path / "snap"
    shutil.copytree(FIX, src)
    git = ["git", "-C", str(src), "-c", "user.email=t@t", "-c", "user.name=t"]
    subprocess.run(git[:3] + ["init", "-q"], check=True)
    subprocess.run(git + ["add", "."], check=True)
    subprocess.run(git + ["commit", "-qm", "fixture"], check=True)
    (src / "alpha.ipynb").write_text("changed after the commit", encoding="utf-8")
    commit = subprocess.run(git[:3] + ["rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    assert pb.notebooks(src, commit) == ["alpha", "beta"]
    pb.layout(src, commit, ["alpha"], tmp_path / "out")
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["alpha.ipynb"]
    assert pb.uses_jax((tmp_path / "out" / "alpha.ipynb").read_text(encoding="utf-8"))  # the commit's text
    with pytest.raises(pb.InputError):
        pb.read_file(src, commit, "missing.ipynb")


def _main(*args):
    """measure/published_builds.py's exit status for g4dn.2xlarge against the fixture snapshot."""
    return pb.main([str(FIX), "--machine", "g4dn.2xlarge", *args])


def _saved(path, audit):
    path.write_text(json.dumps(audit), encoding="utf-8")
    return str(path)


def _meta(**kw):
    return {"snapshot": "snap", "commit": "abc", "family": "g4dn.2xlarge", "gpu": True, "load_before": 1.0,
            "load_after": 1.0, **kw}


def _render(records, **meta):
    return pb.render(records, pb.summed(records), _meta(**meta))


def _audit(family):
    pred = {"cpu_s": 9.0, "cpu_low_s": 8.0, "cpu_high_s": 10.0, "gpu_s": 25.0, "gpu_low_s": 20.0, "gpu_high_s": 30.0,
            "parts": {"cpu": {"host": 9.0}, "gpu": {"compile": 15.0, "calls": 5.0, "host": 5.0}}, "missing": []}
    return {"lectures": [{"path": "alpha.ipynb", "status": "ok", "predicted": {family: pred}, "runs": {}},
                         {"path": "beta.ipynb", "status": "ok", "predicted": {}, "runs": {}}]}


def test_compare_takes_the_side_of_the_family_that_published():
    rows = list(_rows().values())
    gpu = pb.compare(rows, _audit("g4dn.2xlarge"), "g4dn.2xlarge", gpu=True)
    assert gpu[0]["predicted_s"] == 25.0 and gpu[0]["ratio"] == 2.0 and gpu[0]["dominant"] == "compile 60%, calls 20%"
    assert gpu[1]["predicted_s"] is None and gpu[1]["ratio"] is None  # no prediction: never a made-up figure
    cpu = pb.compare(rows, _audit("ubuntu-latest"), "ubuntu-latest", gpu=False)
    assert cpu[0]["predicted_s"] == 9.0 and cpu[0]["low_s"] == 8.0
    total = pb.summed(gpu)
    assert total["lectures"] == 1 and total["published_s"] == 12.5 and total["within_2x"] == 1


def test_the_table_says_not_measured_and_the_load():
    rows = list(_rows().values())
    records = pb.compare(rows, _audit("g4dn.2xlarge"), "g4dn.2xlarge", gpu=True)
    text = _render(records, load_after=2.0)
    assert "| lecture | published s | predicted s | band | ratio | dominant terms | measured here s | note |" in text
    assert "measured parts moved to the family's host: not applied" in text
    assert "| beta | 3.2 | not measured |" in text and "load average (1 min) before 1.00, after 2.00" in text
    assert "summed over 1 lectures with both" in text


def test_bad_input_exits_2_with_one_line(capsys, tmp_path):
    assert pb.main([str(tmp_path / "nowhere"), "--machine", "g4dn.2xlarge"]) == 2
    assert pb.main([str(FIX), "--machine", "no-such-family"]) == 2
    assert _main("--lectures", "alpha,gamma") == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 3 and "gamma" in err[2] and "unknown family" in err[1]


def test_from_audit_compares_without_running(capsys, tmp_path):
    saved = _saved(tmp_path / "audit.json", _audit("g4dn.2xlarge"))
    assert _main("--from-audit", saved, "--format", "json", "--no-host-scale") == 0
    out = json.loads(capsys.readouterr().out)
    assert out["summed"]["ratio"] == 2.0 and [r["document"] for r in out["meta"]["refused"]] == ["capped", "broken",
                                                                                                 "odd"]


def test_the_build_is_also_summed_over_the_lectures_that_use_jax(capsys, tmp_path):
    """The issue's goals are over the JAX lectures: beta (no JAX in its code) is left out of that sum."""
    audit = _audit("g4dn.2xlarge")
    audit["lectures"][1]["predicted"] = audit["lectures"][0]["predicted"]
    saved = _saved(tmp_path / "audit.json", audit)
    assert _main("--from-audit", saved, "--format", "json", "--no-host-scale") == 0
    out = json.loads(capsys.readouterr().out)
    assert out["summed"]["lectures"] == 2 and out["summed_jax"]["lectures"] == 1
    assert out["summed_jax"]["published_s"] == 12.5  # alpha's published time alone
    assert _main("--from-audit", saved, "--no-host-scale") == 0
    text = capsys.readouterr().out
    assert "over the 1 lectures that use JAX: published 12.5 s" in text
    assert "the same over the 1 lectures that use JAX: published 12.5 s" in text  # the leave-one-out sum too


def test_saved_audits_are_joined_a_later_run_of_a_lecture_replacing_the_earlier(capsys, tmp_path):
    first = _saved(tmp_path / "batch1.json", _audit("g4dn.2xlarge"))
    rerun = _audit("g4dn.2xlarge")
    rerun["lectures"] = [lec for lec in rerun["lectures"] if Path(lec["path"]).stem == "alpha"]
    rerun["lectures"][0]["predicted"]["g4dn.2xlarge"]["gpu_s"] *= 2
    again = _saved(tmp_path / "rerun.json", rerun)
    assert _main("--from-audit", first, "--from-audit", again, "--format", "json", "--no-host-scale") == 0
    out = {r["lecture"]: r for r in json.loads(capsys.readouterr().out)["lectures"]}
    assert set(out) == {Path(lec["path"]).stem for lec in _audit("g4dn.2xlarge")["lectures"]}  # none lost
    alone = pb.compare([], _audit("g4dn.2xlarge"), "g4dn.2xlarge", True)
    assert out["alpha"]["predicted_s"] == 2 * next(r["predicted_s"] for r in alone if r["lecture"] == "alpha")


def test_a_broken_saved_audit_is_named_and_repredict_takes_one(capsys, tmp_path):
    good = _saved(tmp_path / "good.json", _audit("g4dn.2xlarge"))
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    assert _main("--from-audit", good, "--from-audit", str(bad), "--no-host-scale") == 2
    assert "bad.json: not an audit JSON" in capsys.readouterr().err
    assert _main("--from-audit", good, "--from-audit", good, "--repredict", str(tmp_path)) == 2
    assert "--repredict takes one --from-audit" in capsys.readouterr().err


def test_save_audit_puts_each_lectures_published_time_into_its_record(capsys, tmp_path):
    """Row 6 of the decision sheets sets the predicted build beside the published one: the saved audit carries each
    lecture's published run time for the family that published it (refused rows give none)."""
    out = tmp_path / "with-published.json"
    audit = _audit("g4dn.2xlarge")
    audit["lectures"].append({"path": "capped.ipynb", "status": "ok", "predicted": {}, "runs": {}})
    saved = _saved(tmp_path / "audit.json", audit)
    assert _main("--from-audit", saved, "--no-host-scale", "--save-audit", str(out)) == 0
    capsys.readouterr()
    lectures = {Path(lec["path"]).stem: lec for lec in json.loads(out.read_text(encoding="utf-8"))["lectures"]}
    assert lectures["alpha"]["published"]["g4dn.2xlarge"]["seconds"] == 12.5
    assert "status.ipynb" in lectures["alpha"]["published"]["g4dn.2xlarge"]["source"]
    assert lectures["beta"]["published"]["g4dn.2xlarge"]["seconds"] == 3.25
    assert "published" not in lectures["capped"]   # a run stopped at the cap is not a time


def test_host_scale_moves_the_measured_parts_not_the_gpus_modelled_ones():
    audit = _audit("g4dn.2xlarge")
    published = pb.published_host("g4dn.2xlarge")
    assert published and "pure-Python" in published[1]
    said = pb.scale_host(audit, "g4dn.2xlarge", probe_s=published[0] / 2)  # this host twice the family's speed
    assert said.startswith("x 2 (band 2..2):")
    pred = audit["lectures"][0]["predicted"]["g4dn.2xlarge"]
    assert pred["parts"]["gpu"] == {"compile": 30.0, "calls": 5.0, "host": 10.0}  # calls modelled: unchanged
    assert pred["gpu_s"] == 25.0 * 45.0 / 25.0 and pred["cpu_s"] == 18.0 and "x 2 (published" in pred["basis"]
    assert pb.scale_host(_audit("no-such"), "no-such", 1.0) == ""  # no published figure: nothing moved


def test_the_host_factors_band_spans_the_probes_taken_before_and_after_the_run():
    """A VM's single thread drifts during a run: the factor takes the probes' geometric middle, and each band end
    moves by the factor at the other probe."""
    published = pb.published_host("g4dn.2xlarge")[0]
    probe, seen = pb.probes_around(published / 4, published)        # 4x faster before, the family's speed after
    assert seen == (published / 4, published) and probe == pytest.approx(published / 2)
    assert pb.probes_around(None, 0.9) == (0.9, (0.9,))            # --from-audit: only the one after
    audit = _audit("g4dn.2xlarge")
    said = pb.scale_host(audit, "g4dn.2xlarge", probe, seen)
    assert said.startswith("x 2 (band 1..4):")
    pred = audit["lectures"][0]["predicted"]["g4dn.2xlarge"]
    # measured-here parts of the GPU side: compile 15 + host 5 of 25 s, calls 5 s modelled
    assert pred["gpu_s"] == pytest.approx(5 + 2 * 20) and pred["gpu_low_s"] == pytest.approx(20 * 25 / 25)
    assert pred["gpu_high_s"] == pytest.approx(30 * (5 + 4 * 20) / 25)


def test_let_errors_tags_every_code_cell_and_the_table_names_the_cells_that_raised(tmp_path):
    pb.layout(FIX, None, ["alpha"], tmp_path / "out", let_errors=True)
    nb = json.loads((tmp_path / "out" / "alpha.ipynb").read_text(encoding="utf-8"))
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert code and all("raises-exception" in c["metadata"]["tags"] for c in code)
    assert all("raises-exception" not in c.get("metadata", {}).get("tags", []) for c in nb["cells"]
               if c["cell_type"] != "code")
    audit = _audit("g4dn.2xlarge")
    audit["lectures"][0]["runs"] = {"cpu": {"cells": [{"index": 4, "expected_error": "NameError: name 'i' is not "
                                                       "defined"}, {"index": 5, "expected_error": None}]}}
    records = pb.compare(list(_rows().values()), audit, "g4dn.2xlarge", gpu=True)
    assert records[0]["raised"] == ["cell 4: NameError: name 'i' is not defined"]
    assert "1 cell(s) raised, let through: cell 4 |" in _render(records)


def test_the_build_is_also_summed_over_the_lectures_none_of_whose_cells_raised():
    records = [_record("a", 10.0, 8.0), _record("b", 50.0, 5.0), _record("c", 20.0, 22.0)]
    records[1]["raised"] = ["cell 8: RuntimeError: latex could not be found"]
    _complete(records)
    whole = pb.summed_complete(records)
    assert whole["lectures"] == 2 and whole["published_s"] == 30.0 and whole["predicted_s"] == 30.0
    text = _render(records, family="ubuntu-latest", gpu=False)
    assert "over the 2 lectures none of whose cells raised here" in text and "ratio 1.00; within 2x: 2 of 2" in text
    for r in records:
        r["raised"] = []
    assert "none of whose cells raised" not in _render(records, family="ubuntu-latest", gpu=False)  # nothing to say


def _record(name, published, predicted, compile_s=1.0):
    return {"lecture": name, "published_s": published, "predicted_s": predicted, "parts": {"compile": compile_s},
            "ratio": predicted / published if published else None}


def _complete(records):
    """The rest of a compared record, for render: a band of the prediction alone, all of it host."""
    for r in records:
        r.update(low_s=r["predicted_s"], high_s=r["predicted_s"], refused="", status="ok", dominant="host 100%",
                 measured_here_s=r["predicted_s"])


def _bumped(records):
    """A copy of the records with the first lecture's published time moved to 1000 s."""
    bumped = [dict(r) for r in records]
    bumped[0].update(published_s=1000.0, ratio=bumped[0]["predicted_s"] / 1000.0)
    return bumped


def test_the_table_is_calibrated_leave_one_out_by_the_protocols_one_estimator():
    """Issue 70: the script's leave-one-out is jaxci.analysis.devsets / residual's (form both), never its own; a
    lecture is never calibrated on itself, and one whose cells raised is scored but never fitted on."""
    from jaxci.analysis import devsets
    from jaxci.analysis import residual as R
    from jaxci.analysis.prediction import MODELLED

    records = [_record("a", 10.0, 6.0), _record("b", 12.0, 8.0), _record("c", 9.0, 4.0),
               _record("d", 100.0, 400.0), _record("e", None, 3.0)]
    loo = pb.leave_one_out(records, 0.5)
    a, b, c, d, e = records
    expected = R.leave_one_out(devsets.scored(records[:4], 0.5, MODELLED), "both")
    assert [r["loo_predicted_s"] for r in records[:4]] == expected
    assert "loo_ratio" not in e and loo["lectures"] == 4 and "form both" in loo["what"]
    bumped = _bumped(records)            # moving one lecture's published time never moves its own prediction
    pb.leave_one_out(bumped, 0.5)
    assert bumped[0]["loo_predicted_s"] == a["loo_predicted_s"] and bumped[1]["loo_predicted_s"] != b["loo_predicted_s"]
    raised = [dict(r) for r in records[:4]]
    raised[3]["raised"] = ["cell 2: OSError"]   # never fitted on: the others' predictions no longer see it
    pb.leave_one_out(raised, 0.5)
    assert raised[3]["loo_ratio"] is not None and raised[0]["loo_predicted_s"] != a["loo_predicted_s"]
    _complete(records)
    text = _render(records, family="ubuntu-latest", gpu=False, loo=loo)
    assert "fitted leave-one-out on the other lectures" in text and f"a {a['loo_ratio']:.2f}" in text


def test_a_lecture_whose_kernel_served_local_copies_says_so_and_the_saved_audit_keeps_it(tmp_path, monkeypatch):
    """measure/offline_data.py records per kernel pid what it served; the lecture run by that kernel says its data
    came from local copies, not the build's download; another lecture is unmarked."""
    served = tmp_path / "data" / "served"
    served.mkdir(parents=True)
    (served / "4242.json").write_text(json.dumps(["FRED:M2SL", "FRED:TB3MS"]), encoding="utf-8")
    audit = _audit("g4dn.2xlarge")
    audit["lectures"][0]["runs"] = {"cpu": {"kernel_pid": 4242, "cells": []}}
    audit["lectures"][1]["runs"] = {"cpu": {"kernel_pid": 4343, "cells": []}}
    pb.mark_offline(audit, tmp_path / "data")
    assert audit["lectures"][0]["offline_data"] == ["FRED:M2SL", "FRED:TB3MS"]
    assert "offline_data" not in audit["lectures"][1]
    records = pb.compare(list(_rows().values()), json.loads(json.dumps(audit)), "g4dn.2xlarge", gpu=True)
    text = _render(records)
    assert "data from local copies, not the build's download: FRED:M2SL, FRED:TB3MS |" in text
    assert text.count("local copies") == 1


def test_the_offline_folder_is_read_from_the_kernelspec(tmp_path, monkeypatch):
    kernels = tmp_path / "share" / "jupyter" / "kernels"
    for name, env in (("off", {"JAXCI_OFFLINE_DATA": str(tmp_path / "data")}), ("plain", {})):
        (kernels / name).mkdir(parents=True)
        (kernels / name / "kernel.json").write_text(json.dumps({"argv": ["python"], "display_name": name,
                                                                "language": "python", "env": env}))
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "share" / "jupyter"))
    assert pb.offline_folder("off") == tmp_path / "data"
    assert pb.offline_folder("plain") is None
    assert pb.offline_folder("no-such-kernel") is None
    assert pb.offline_folder(None) is None


def test_a_cell_that_upgrades_or_solves_packages_at_every_build_is_named():
    """back_prop: `!pip install -U kaleido plotly` and `!conda install -y -c plotly plotly-orca` run in every
    build (network work this host, with the packages in its kernel, does not do); a plain `!pip install` of
    packages the build environment has is not named."""
    nb = {"cells": [
        {"cell_type": "code", "source": ["!pip install quantecon jax\n"]},
        {"cell_type": "code", "source": ["!pip install -U kaleido plotly\n", "!conda install -y -c plotly orca\n",
                                         "import kaleido"]},
        {"cell_type": "code", "source": ["%pip install --upgrade numpyro"]},
        {"cell_type": "markdown", "source": ["!conda install never (prose)"]}]}
    assert pb.build_installs(json.dumps(nb)) == ["!pip install -U kaleido plotly", "!conda install -y -c plotly orca",
                                                 "%pip install --upgrade numpyro"]
    assert pb.build_installs("not json") == []
    records = pb.compare(list(_rows().values()), _audit("g4dn.2xlarge"), "g4dn.2xlarge", gpu=True,
                         installs={"alpha": ["!conda install -y orca"]})
    text = _render(records)
    assert "installs at every build (network, not measured here): !conda install -y orca |" in text
