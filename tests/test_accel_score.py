"""jaxci.analysis.accel_score: the runner model against lectures measured on a CPU and an accelerator."""

from jaxci.analysis import accel_score as A


def _run(cells, start=2.0, status="ok", error=None):
    return {"status": status, "cells_s": cells, "kernel_start_s": start, "error": error}


def _lec(name, cpu, tpu, pred_cpu, pred_tpu):
    runs = {"cpu": cpu} | ({"tpu": tpu} if tpu is not None else {})
    return {"path": f"lectures/{name}.md", "runs": runs,
            "predicted": {"lab": {"cpu_s": pred_cpu, "gpu_s": pred_tpu, "gpu_low_s": pred_tpu / 2,
                                  "gpu_high_s": pred_tpu * 2}}}


def test_measured_seconds_are_kernel_start_plus_cells_of_a_completed_run():
    assert A.measured_s(_run(10.0, 2.5)) == 12.5
    assert A.measured_s(_run(10.0, status="error")) is None
    assert A.measured_s(None) is None


def test_rows_score_both_sides_and_say_why_a_lecture_is_not_scored():
    audit = {"lectures": [_lec("a", _run(8.0), _run(18.0), 10.0, 25.0),
                          _lec("b", _run(8.0), _run(1.0, status="error", error="UNIMPLEMENTED: f64 LU"), 10.0, 5.0),
                          _lec("c", _run(8.0), None, 10.0, 5.0)]}
    rows = {r.lecture: r for r in A.rows(audit, "lab", "tpu")}
    a = rows["a"]
    assert a.scored and a.error == 25.0 / 20.0 and a.measured_ratio == 2.0 and a.predicted_ratio == 2.5
    assert not rows["b"].scored and "UNIMPLEMENTED" in rows["b"].status
    assert rows["c"].status == "not run on tpu" and rows["c"].error is None


def test_summary_counts_the_goals_and_the_margin_the_ratio_error_implies():
    audit = {"lectures": [_lec("a", _run(8.0), _run(18.0), 10.0, 25.0),     # ratio error 1.25
                          _lec("b", _run(8.0), _run(8.0), 10.0, 30.0),      # measured 1.0, predicted 3.0: error 3
                          _lec("c", _run(18.0), _run(8.0), 20.0, 9.0)]}     # both below 1: error 0.9
    s = A.summary(A.rows(audit, "lab", "tpu"))
    assert s["scored"] == 3 and s["within_2x"] == 2 and s["ratio_within_1_5x"] == 2
    assert s["same_side"] == 2          # b: measured exactly 1 is not above 1, predicted 3 is
    assert abs(s["margin_80"] - 3.0) < 1e-9   # 80% of three lectures is all three: the worst error


def test_a_lecture_split_over_two_audits_is_one_row():
    into: dict = {}
    A.merge_lecture(into, _lec("a", _run(8.0), None, 10.0, 25.0))
    A.merge_lecture(into, {"path": "lectures/a.md", "runs": {"tpu": _run(18.0)}, "predicted": {}})
    (row,) = A.rows({"lectures": list(into.values())}, "lab", "tpu")
    assert row.scored and row.accel_s == 20.0 and row.predicted_accel_s == 25.0


def test_a_side_that_failed_in_one_call_and_completed_in_another_keeps_the_completed_run():
    into: dict = {}
    A.merge_lecture(into, _lec("a", _run(8.0), _run(1.0, status="timeout", error="cell 3 exceeded"), 10.0, 25.0))
    A.merge_lecture(into, _lec("a", _run(9.0), _run(18.0), 10.0, 25.0))
    A.merge_lecture(into, _lec("a", _run(7.0), _run(30.0), 10.0, 25.0))
    (row,) = A.rows({"lectures": list(into.values())}, "lab", "tpu")
    assert row.scored and row.accel_s == 20.0 and row.cpu_s == 10.0   # the first completed run of each side


def test_a_family_without_the_accelerator_is_one_line(tmp_path, capsys):
    """Issue 83 item 9: `--family nosuch` was a KeyError traceback; a GPU family scored as a TPU one is refused too."""
    import pytest

    from jaxci.commands import accel_score as cmd

    audit = tmp_path / "a.json"
    audit.write_text("{}")
    for family, said in (("nosuch", "not a catalogue machine"), ("g4dn.2xlarge", "has no tpu")):
        assert cmd.main([str(audit), "--family", family, "--platform", "tpu"]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and said in err and "lab-tpu-v5e" in err
    with pytest.raises(SystemExit):
        cmd.main([str(audit), "--family", "lab-h200", "--platform", "npu"])


def test_a_run_s_seconds_and_host_probe_are_checked_when_the_audit_is_read(tmp_path, capsys):
    """Issue 83: a negative cells_s was scored (ratios -0.35 and -2.84), a NaN one wrote NaN into the margin record,
    a host probe whose seconds are a string was a traceback in devsets --from-audit. The audit's reader refuses
    each, naming the field."""
    import json

    from jaxci import REPO_ROOT
    from jaxci.commands import accel_score as cmd

    source = sorted((REPO_ROOT / "scoring").glob("lab-tpu-v5e@*/*.json"))[0]
    base = json.loads(source.read_text())
    lecture = next(i for i, lec in enumerate(base["lectures"]) if (lec.get("runs") or {}).get("tpu"))
    for field, value, said in (("cells_s", -50, "cells_s"), ("cells_s", float("nan"), "cells_s"),
                               ("host_probe", {"seconds": "1", "n": 1}, "host_probe.seconds")):
        audit = json.loads(json.dumps(base))
        audit["lectures"][lecture]["runs"]["tpu"][field] = value
        path = tmp_path / "a.json"
        path.write_text(json.dumps(audit))
        record = tmp_path / "m.json"
        assert cmd.main([str(path), "--family", "lab-tpu-v5e", "--margin-record", str(record)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and said in err and not record.exists(), err
