"""The report on synthetic result sets (truth known by construction), on corrupt and partial results, and on
the suite's own CI-scale results."""

import json
import math
import re
import shutil

import pytest

from jaxci.analysis import crossover as cx
from jaxci.analysis import provenance as pv
from jaxci.analysis.host_speed import score_ratio
from jaxci.catalogue import load_catalogue, read_pins
from jaxci.commands import report as cli
from jaxci.policy.cost import suite_seconds
from jaxci.report.asvindex import LINK_ID, link_from_asv_index
from jaxci.report.build import build, incident_checks
from jaxci.report.findings import findings_md, guidance_md
from jaxci.report.text import seconds
from jaxci.results.records import load_results
from tests import synth
from tests.asvutil import result_values


@pytest.fixture(scope="module")
def gpu_results(tmp_path_factory):
    return synth.gpu_set(tmp_path_factory.mktemp("synth"))


@pytest.fixture(scope="module")
def gpu_report(gpu_results):
    return build(gpu_results)


def test_records_read_through_asv(gpu_results):
    rs = load_results(gpu_results)
    assert rs.errors == [] and set(rs.machines) == {"g4dn.2xlarge", "c7i.2xlarge"}
    rec = next(r for r in rs.records if r.machine == "g4dn.2xlarge" and r.benchmark == "dense.Dense.time_warm"
               and r.params == {"op": "matmul", "n": 1024, "dtype": "float64", "device": "gpu"})
    assert rec.value == pytest.approx(synth.dense_truth("matmul", 1024, "float64", "gpu")) and rec.unit == "seconds"
    assert rec.jax_version == read_pins("cuda13")["jax"] and "pin at" in rec.jax_source
    skipped = [r for r in rs.records if r.machine == "c7i.2xlarge" and r.params.get("device") == "gpu"]
    assert skipped and all(r.status == "skipped" and r.value is None for r in skipped)
    assert {r.status for r in rs.records if r.suite == "nuts" and r.params["device"] == "gpu"} == {"failed"}


def test_unknown_commit_gives_unknown_jax_version(tmp_path):
    s = synth.SynthResults(tmp_path, commit="0" * 40).machine("c7i.2xlarge")
    s.add("c7i.2xlarge", "dispatch.TinyOp.time_warm", ["dtype", "device"], [["float32"], ["cpu"]], lambda **_: 1e-5)
    (r,) = load_results(s.save()).records
    assert r.jax_version == "unknown"


def test_known_crossing_same_machine_and_across(gpu_report):
    got = {(c.cpu_machine, c.gpu_machine, c.dtype): c for c in gpu_report.crossovers
           if c.benchmark == "dense.Dense.time_warm"}
    same = got[("g4dn.2xlarge", "g4dn.2xlarge", "float32")]
    assert same.kind == cx.CROSSING and same.n == pytest.approx(synth.CROSS_N, rel=1e-9)
    assert [p[0] for p in same.points] == synth.SIZES
    # FP64 scales cpu by 2 and gpu by 32: 2e-10 n^3 = 32e-5 n^1.5 -> n = (1.6e6)^(2/3), beyond 4096: none in range
    assert got[("g4dn.2xlarge", "g4dn.2xlarge", "float64")].kind == cx.NONE_IN_RANGE
    # the CPU-only runner is 2x slower: 2e-10 n^3 = 1e-5 n^1.5 -> n = (5e4)^(2/3)
    across = got[("c7i.2xlarge", "g4dn.2xlarge", "float32")]
    assert across.kind == cx.CROSSING and across.n == pytest.approx(5e4 ** (2 / 3), rel=1e-9)


def test_known_fp64_ratio(gpu_report):
    by = {(s.machine, s.device): s for s in gpu_report.fp64_summary if s.kernel == "dense.Dense.time_warm op=matmul"}
    assert by[("g4dn.2xlarge", "gpu")].ratio == pytest.approx(synth.GPU_FP64_RATIO)
    assert by[("g4dn.2xlarge", "cpu")].ratio == pytest.approx(synth.CPU_FP64_RATIO)


def test_concurrency_and_sampler(gpu_report):
    assert gpu_report.safe_n[("g4dn.2xlarge", "gpu", "no-prealloc")] == 4
    assert gpu_report.safe_n[("g4dn.2xlarge", "gpu", "default")] == 1
    (cpu_row,) = [r for r in gpu_report.nuts if dict(r.setting)["device"] == "cpu"]
    assert cpu_row.best == (("vectorized", 4), 400.0)
    (gpu_row,) = [r for r in gpu_report.nuts if dict(r.setting)["device"] == "gpu"]
    assert gpu_row.best is None and set(gpu_row.configs.values()) == {None}


def test_predictions_follow_the_stated_model(gpu_results):
    # transfer-only: the synthetic results' own world, no published figure of the real hardware beside them
    gpu_report = build(gpu_results, incidents=None, measurements=None)
    cat = load_catalogue()
    t4, a10 = cat["g4dn.2xlarge"], cat["g5.2xlarge"]
    # efficiency measured on the T4 at n=4096: flops / (t - dispatch) / peak
    n, o = 4096, 1e-5
    eff = 2 * n**3 / (synth.dense_truth("matmul", n, "float32", "gpu") - o) / (t4.value("gpu_fp32_tflops") * 1e12)
    (p,) = [p for p in gpu_report.runtimes if p.family == "g5.2xlarge" and p.device == "gpu" and p.n == 1024
            and p.dtype == "float32"]
    h = score_ratio(cat, "g4dn.2xlarge", "g5.2xlarge").mid   # the floor is host latency: the two CPUs' scores
    assert p.seconds == pytest.approx(o * h + 2 * 1024**3 / (eff * a10.value("gpu_fp32_tflops") * 1e12))
    assert p.measured is None and p.rests_on(pv.MEASURED, "g4dn.2xlarge") and p.rests_on(pv.CATALOGUE, "g5.2xlarge")
    # the measured T4 keeps its measured value beside a prediction (calibrated on itself, and it says so)
    (m,) = [p for p in gpu_report.runtimes if p.family == "g4dn.2xlarge" and p.device == "gpu" and p.n == 1024
            and p.dtype == "float32"]
    assert m.measured == pytest.approx(synth.dense_truth("matmul", 1024, "float32", "gpu"))
    assert "itself" in m.inputs and m.error is not None
    # predicted crossovers for a family never replace a measured one
    pc = {(p.family, p.dtype): p for p in gpu_report.predicted_crossovers if p.benchmark == "dense.Dense.time_warm"}
    assert pc[("g4dn.2xlarge", "float32")].measured.n == pytest.approx(synth.CROSS_N)
    assert pc[("g5.2xlarge", "float32")].measured is None


def test_costs_measured_and_predicted(gpu_report):
    rows = {c.family: c for c in gpu_report.costs}
    assert rows["g4dn.2xlarge"].label == "measured" and rows["c7i.2xlarge"].label == "measured"
    assert rows["g5.2xlarge"].label == "predicted" and rows["g5.2xlarge"].source_machine == "g4dn.2xlarge"
    assert rows["ubuntu-latest"].label == "predicted" and rows["ubuntu-latest"].source_machine == "c7i.2xlarge"
    t4 = rows["g4dn.2xlarge"]
    assert t4.suite_seconds == pytest.approx(5.0)  # five benchmarks written with a duration of 1 s each
    assert t4.job_dollars == pytest.approx((t4.overhead_s + 5.0) * t4.price_per_hour / 3600)


def test_findings_name_provenance_and_not_measured(gpu_report):
    md = findings_md(gpu_report)
    for q in range(1, 8):
        assert re.search(rf"^## {q}\. ", md, re.M), f"question {q} missing"
    assert f"n ≈ {synth.CROSS_N:,.0f}" in md
    assert "32.00" in md and "g4dn.2xlarge, JAX " in md
    assert "(no compile suite results)" in md and "pin to CPU" in md
    guide = guidance_md(gpu_report)
    assert f"n ≈ {synth.CROSS_N:,.0f}" in guide and "32.0x in float64" in guide and "vectorized" in guide
    assert "notebook=scan_lecture**: 5.0x slower on the GPU" in guide and "1 min" not in guide and "60 s" in guide


def test_incident_figures_are_an_outside_check_only(gpu_report):
    from jaxci.analysis.predict import Predictor
    from jaxci.evidence.published import read

    cases = ("1000x1000 matmul, compiled", "50M-element elementwise, compiled")
    figs = [f for f in read().incidents if f.case in cases]

    pred = Predictor(gpu_report.records, gpu_report.machines, gpu_report.catalogue)
    rows = incident_checks(figs, pred)
    t4 = [r for r in rows if r["family"] == "g4dn.2xlarge" and r["n"] == 1000]
    assert t4[0]["incident_s"] == 0.001 and t4[0]["predicted_s"] is not None
    assert t4[0]["predicted_s"] == pred.predict("g4dn.2xlarge", "dense.Dense.time_warm", (("op", "matmul"),),
                                                "float32", "gpu", 1000)[0]
    # no elementwise results: not predicted, never filled from the incident
    assert all(r["predicted_s"] is None for r in rows if r["n"] == 50_000_000)


def test_corrupt_and_partial_results_are_reported_not_fatal(tmp_path):
    results = synth.gpu_set(tmp_path)
    (results / "g4dn.2xlarge" / "deadbeef-virtualenv-py3.11.json").write_text('{"commit_hash": "dead", "results": {')
    bad = results / "broken-machine"
    bad.mkdir()
    (bad / "machine.json").write_text("not json")
    (bad / "abc-env.json").write_text("{}")
    rs = load_results(results)
    assert any("deadbeef-virtualenv-py3.11.json" in e for e in rs.errors)
    assert any("broken-machine" in e and "machine.json" in e for e in rs.errors)
    assert {r.machine for r in rs.records} == {"g4dn.2xlarge", "c7i.2xlarge"}
    (results / "benchmarks.json").unlink()
    rs = load_results(results)
    assert any("benchmarks.json" in e and "missing" in e for e in rs.errors)
    rec = next(r for r in rs.records if r.benchmark == "dense.Dense.time_warm")
    assert set(rec.params) == {"param0", "param1", "dtype", "device"}  # names guessed from values, said so above
    assert "not measured" in findings_md(build(results))


def test_a_folder_read_again_unchanged_is_the_same_read_and_a_changed_byte_reads_it_again(tmp_path):
    results = synth.gpu_set(tmp_path)
    first = load_results(results)
    first.errors.append("a caller's own note")
    again = load_results(results)
    assert again.records == first.records and "a caller's own note" not in again.errors  # each caller's own copy
    assert again.records[0] is first.records[0]  # not parsed again: the same frozen records
    path = next((results / "g4dn.2xlarge").glob("*-*.json"))
    path.write_text(path.read_text().replace('"commit_hash"', '"commit_hash" ', 1))  # same data, one byte more
    assert load_results(results).records[0] is not first.records[0]


def test_cli_outputs_and_errors(gpu_results, tmp_path, capsys):
    assert cli.main([str(tmp_path / "missing")]) == 2
    assert "not a directory" in capsys.readouterr().err
    assert cli.main([str(gpu_results), "--out", str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out
    assert "Crossovers (measured)" in out and "FP64 / FP32" in out
    assert {p.name for p in (tmp_path / "out").iterdir()} == {"findings.md", "guidance.md", "report.json"}
    assert cli.main([str(gpu_results), "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert all(row["label"] == "predicted" for row in data["runtimes"])
    assert any(c["kind"] == cx.CROSSING and math.isclose(c["n"], synth.CROSS_N) for c in data["crossovers"])


def test_link_into_asv_index_is_idempotent(gpu_results, tmp_path):
    html = tmp_path / "html"
    html.mkdir()
    assert "asv publish" in link_from_asv_index(html)  # no index yet: says what to do, writes nothing
    (html / "index.html").write_text('<html><body><nav><ul class="nav navbar-nav navbar-left"><li>x</li></ul></nav>'
                                     '</body></html>')
    assert cli.main([str(gpu_results), "--html", str(html)]) == 0
    assert cli.main([str(gpu_results), "--html", str(html)]) == 0
    assert (html / "index.html").read_text().count(LINK_ID) == 1
    page = (html / "findings" / "index.html").read_text()
    assert (page.count('class="jaxci-figure"') >= 4 and "<script" not in page
            and "http://" not in page.replace("http://www.w3.org/2000/svg", ""))


@pytest.mark.slow
def test_report_on_ci_scale_run(ci_run, tmp_path):
    box, machine, _ = ci_run
    report = build(box.results)
    assert report.errors == []
    suites = {r.suite for r in report.records}
    md = findings_md(report)
    swept = {(r.benchmark, r.params["dtype"]) for r in report.records
             if {"n", "dtype", "device"} <= r.params.keys() and r.method.startswith("time_")}
    assert {(c.benchmark, c.dtype) for c in report.crossovers} == swept
    assert all(c.kind == cx.NOT_MEASURED for c in report.crossovers if not report.machines[machine].has_gpu)
    assert f"{machine}, JAX {read_pins('cpu')['jax']}" in md
    for s in report.fp64_summary:
        assert s.ratio > 0 and math.isfinite(s.ratio)
    # the scale was recorded by the run itself (JAXCI_SCALE=ci in the sandbox), not inferred
    assert {r.scale for r in report.records} == {"ci"} and {"dense", "nuts", "notebooks"} <= suites
    from asv.results import iter_results_for_machine

    (res,) = iter_results_for_machine(str(box.results), machine)
    stored = result_values(res, "dense.Dense.time_warm")[("'matmul'", "64", "'float64'", "'cpu'")]
    (mine,) = [r for r in report.records if r.benchmark == "dense.Dense.time_warm"
               and r.params == {"op": "matmul", "n": 64, "dtype": "float64", "device": "cpu"}]
    assert mine.value == stored > 0  # the report's number is asv's stored median, not a copy of itself
    box.asv("publish")
    assert cli.main([str(box.results), "--html", str(box.html), "--out", str(tmp_path)]) == 0
    assert f'id="{LINK_ID}"' in (box.html / "index.html").read_text()
    assert machine in (box.html / "findings" / "index.html").read_text()


def test_full_scale_run_is_labelled_full_even_with_skipped_cpu_cases(tmp_path):
    """A full-scale run skips cpu cases too (1-chain NUTS with a parallel method): the cost table's scale comes
    from the recorded track_scale, not from skips."""
    s = synth.SynthResults(tmp_path).machine("c7i.2xlarge")
    s.add("c7i.2xlarge", "nuts.Nuts.track_wall_s", ["chain_method", "num_chains", "device"],
          [["sequential", "parallel"], [1], ["cpu"]],
          lambda chain_method, **_: 5.0 if chain_method == "sequential" else math.nan)
    s.record_scale("c7i.2xlarge", "full")
    report = build(s.save())
    (row,) = [c for c in report.costs if c.family == "c7i.2xlarge"]
    assert row.scale == "full" and {r.scale for r in report.records} == {"full"}
    assert "measured (full scale)" in findings_md(report)


def test_ci_scale_never_replaces_full_and_is_warned_under_a_family_name(tmp_path):
    """A newer CI-scale run under a catalogue family's name is kept apart, never read as full."""
    nuts = (["model", "device"], [["regression"], ["cpu"]])
    full = synth.SynthResults(tmp_path, commit="a" * 40, date_ms=1_795_000_000_000).machine("c7i.2xlarge")
    full.add("c7i.2xlarge", "nuts.Nuts.track_wall_s", *nuts,
             lambda **_: 100.0).record_scale("c7i.2xlarge", "full").save()
    ci = synth.SynthResults(tmp_path, commit="b" * 40, date_ms=1_796_000_000_000).machine("c7i.2xlarge")
    results = ci.add("c7i.2xlarge", "nuts.Nuts.track_wall_s", *nuts,
                     lambda **_: 1.0).record_scale("c7i.2xlarge", "ci").save()
    rs = load_results(results)
    assert [(r.value, r.scale) for r in rs.latest()] == [(100.0, "full")]
    assert any("CI-scale results under the catalogue family name 'c7i.2xlarge'" in e for e in rs.errors)
    (row,) = [c for c in build(results).costs if c.family == "c7i.2xlarge"]
    assert row.scale == "full" and row.suite_seconds == pytest.approx(1.0)  # the full run's duration, not the ci one's


def test_gpu_faster_only_in_the_middle_is_said_and_not_pinned_to_cpu(tmp_path):
    """A GPU faster only between two sizes is a band, not "none in the measured range" nor a CPU faster at every
    size."""
    s = synth.SynthResults(tmp_path).machine("g4dn.2xlarge", gpu="1 x Tesla T4", backend="cuda13")
    gpu = {10: 2.0, 100: 0.5, 1000: 2.0}
    s.add("g4dn.2xlarge", "loops.Scan.time_warm", ["n", "dtype", "device"],
          [[10, 100, 1000], ["float32"], ["cpu", "gpu"]],
          lambda n, dtype, device: 1.0 if device == "cpu" else gpu[n])
    report = build(s.save())
    (c,) = report.crossovers
    assert c.kind == cx.GPU_BAND and c.answer().startswith("GPU faster between n ≈ 32 and n ≈ 316")
    guide = guidance_md(report)
    assert "GPU faster between n ≈ 32 and n ≈ 316" in guide
    assert "the CPU is faster at every measured size" not in guide


def test_timeout_comes_only_from_whole_notebook_times(tmp_path):
    """A 4.9 s compile-only track sets no timeout; the skipped whole time is named."""
    s = synth.SynthResults(tmp_path).machine("c7i.2xlarge")
    s.add("c7i.2xlarge", "notebooks.NotebookSplit.track_compile_s", ["notebook", "device"], [["nuts_f64"], ["cpu"]],
          lambda **_: 4.9)
    s.add("c7i.2xlarge", "notebooks.Notebook.time_notebook", ["notebook", "device"], [["nuts_f64"], ["cpu"]],
          lambda **_: math.nan)
    guide = guidance_md(build(s.save()))
    whole = guide.split("## Whole notebooks and timeouts")[1]
    assert "not measured; decision sheet row 7" in whole and "14.7" not in guide and "15 s" not in guide


def test_zero_and_inf_times_do_not_crash_and_json_is_strict(tmp_path):
    """0.0 and inf times give no ratio (never a crash or "nan"), and report.json holds no bare NaN."""
    s = synth.SynthResults(tmp_path).machine("g4dn.2xlarge", gpu="1 x Tesla T4", backend="cuda13")
    vals = {("float32", "cpu"): 0.0, ("float64", "cpu"): 1.0,
            ("float32", "gpu"): math.inf, ("float64", "gpu"): math.inf}
    s.add("g4dn.2xlarge", "dense.Dense.time_warm", ["op", "n", "dtype", "device"],
          [["matmul"], [64, 128], ["float32", "float64"], ["cpu", "gpu"]],
          lambda op, n, dtype, device: vals[(dtype, device)])
    s.add("g4dn.2xlarge", "notebooks.Notebook.time_notebook", ["notebook", "device"], [["a"], ["cpu", "gpu"]],
          lambda notebook, device: 0.0 if device == "cpu" else 2.0)
    results = s.save()
    report = build(results)
    assert report.fp64_summary == [] and all(r.ratio is None for r in report.fp64)
    findings_md(report), guidance_md(report)
    out = tmp_path / "out"
    assert cli.main([str(results), "--out", str(out)]) == 0

    def reject(token):
        raise ValueError(f"bare {token} in report.json")

    data = json.loads((out / "report.json").read_text(), parse_constant=reject)
    assert all(r["ratio"] is None for r in data["fp64"])


def test_short_value_list_is_warned_with_the_file(tmp_path):
    """A value list shorter than its params is warned with its file, not read silently."""
    results = synth.gpu_set(tmp_path)
    (path,) = [p for p in (results / "g4dn.2xlarge").iterdir() if p.name != "machine.json"]
    doc = json.loads(path.read_text())
    cols = doc["result_columns"]
    row = doc["results"]["dense.Dense.time_warm"]
    row[cols.index("result")] = row[cols.index("result")][:3]
    path.write_text(json.dumps(doc))
    rs = load_results(results)
    (warning,) = [e for e in rs.errors if "dense.Dense.time_warm" in e]
    assert str(path) in warning and "3 value(s) for 20 param combinations" in warning
    assert {r.machine for r in rs.records} == {"g4dn.2xlarge", "c7i.2xlarge"}


def test_two_folders_with_one_machine_name_are_both_kept_and_warned(tmp_path):
    """The second folder's facts never silently replace the first's."""
    results = synth.gpu_set(tmp_path)
    shutil.copytree(results / "c7i.2xlarge", results / "c7i-copy")
    rs = load_results(results)
    (warning,) = [e for e in rs.errors if "also used by" in e]
    assert (str(results / "c7i.2xlarge" / "machine.json") in warning
            and str(results / "c7i-copy" / "machine.json") in warning)
    assert set(rs.machines) == {"g4dn.2xlarge", "c7i.2xlarge", "c7i.2xlarge (folder c7i-copy)"}
    n = sum(r.machine == "c7i.2xlarge" for r in rs.records)
    assert n > 0 and sum(r.machine == "c7i.2xlarge (folder c7i-copy)" for r in rs.records) == n


def test_a_setup_cache_duration_is_its_suites_and_a_suite_total_reads_in_seconds():
    """asv records a class's setup_cache as `<setup_cache concurrency:99>`: its seconds (the concurrency suite's
    worker runs) are the suite's, not "(asv build/setup)"."""
    run = {"machine": "m", "date": 1, "file": "f", "scales": {"concurrency": "full"},
           "durations": {"<setup_cache concurrency:99>": 194.0, "concurrency.Concurrency.track_slowdown": 2.0,
                         "<build>": 0.5, "nuts.Nuts.track_wall_s": 3.0}}
    assert suite_seconds([run], "m") == {"concurrency": 196.0, "(asv build/setup)": 0.5, "nuts": 3.0}
    assert seconds(3440.4) == "3,440 s" and seconds(12.34) == "12.3 s"
