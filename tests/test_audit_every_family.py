"""Executed: one audit of the every_family fixture lectures (a jitted scan in MyST, plain Python/NumPy in an .ipynb, a
debugging lecture whose failing cells are tagged raises-exception), run once on the CPU and shared by every check:
each lecture predicted on every catalogue runner family with a labelled basis and host factor, CPU-only families
included; peak memory recorded. No timing value is asserted: which fields exist, what they are labelled, and how
they relate."""

import copy
import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from jaxci.analysis.evidence import HOST_PYTHON, Evidence
from jaxci.analysis.lecture_record import AuditView
from jaxci.analysis.prediction import LecturePrediction
from jaxci.analysis.primitives import Band
from jaxci.audit import repo
from jaxci.audit.judging import every_family, family, host, rescaled
from jaxci.audit.judging.judge import Verdict
from jaxci.audit.lecture_ci import lectures
from jaxci.audit.reading.static import LectureScan
from jaxci.audit.runner import CellTiming, NotebookRun, host_probe, run_notebook
from jaxci.audit.writing import render
from jaxci.catalogue import load_catalogue, same_hardware
from jaxci.commands.audit import every_family as families_for
from jaxci.evidence.inputs import reference
from jaxci.nvml import gpu_present
from jaxci.report.memory_advice import lecture_peaks
from tests.frozen import RESULTS as FROZEN_RESULTS

pytestmark = pytest.mark.slow
HERE = Path(__file__).parent / "fixtures" / "every_family"
JAX, PLAIN, DEBUG, PROSE = "scan_jax.md", "plain_python.ipynb", "debugging.md", "references.ipynb"
ALLOWED = "allowed/untagged_error.md"  # its book sets execute.allow_errors: true


@pytest.fixture(scope="module")
def audited():
    """The command's own pipeline without --machine (every family, Markdown shows the per-family summary)."""
    verdicts = repo.audit_static(HERE)
    families = families_for(SimpleNamespace(results=None), None)
    repo.execute(verdicts, repo.Runs(("cpu",), cell_timeout=300, progress=False), families=families)
    return {"verdicts": {v.path: v for v in verdicts}, "families": families,
            "json": json.loads(render.to_json(verdicts, True)), "md": render.to_markdown(verdicts, True)}


def _runner_families():
    return every_family.runner_families(load_catalogue(include_lab=True))


def test_every_lecture_ran_and_none_failed(audited):
    assert set(audited["verdicts"]) == {JAX, PLAIN, DEBUG, PROSE, ALLOWED}
    for v in audited["verdicts"].values():
        assert v.status == "ok", v.errors
        assert v.runs["cpu"].ok or v.path == ALLOWED


def test_every_family_present_with_a_source_labelled_basis(audited):
    names = _runner_families()
    assert {"ubuntu-latest", "c7i.2xlarge", "g4dn.2xlarge"} <= set(names)
    for v in audited["verdicts"].values():
        assert set(names) <= set(v.predicted), v.path
        for name in names:
            rec = v.predicted[name]
            assert rec.label == "predicted" and f"runner model for {name}" in rec.basis
            h = rec.host_factor
            assert h["label"] in host.SCALED and h["source"]   # never this host's seconds unscaled (issue 70)
            assert h["low"] <= h["value"] <= h["high"]
            assert rec.cpu.low <= rec.cpu.seconds <= rec.cpu.high
            assert rec.unscaled.cpu.seconds is not None  # this host's seconds, before h
        same = [(a, b) for a in names for b in names if a < b and same_hardware(a, b)]
        assert ("g4dn.2xlarge", "g4dn.xlarge") in same
        for a, b in same:  # the same CPU and GPU models: the same host factor
            assert v.predicted[a].host_factor["value"] == v.predicted[b].host_factor["value"], (a, b)


def test_cpu_only_families_get_seconds(audited):
    for v in audited["verdicts"].values():
        for name in ("ubuntu-latest", "c7i.2xlarge"):
            rec = v.predicted[name]
            assert rec.family_kind == "cpu" and rec.cpu.seconds > 0 and rec.gpu is None
    h = audited["verdicts"][JAX].predicted["ubuntu-latest"].host_factor
    assert h["label"] == host.MEASURED and "incidents.md" in h["source"]  # the CPU runner's published probe


def test_gpu_families_have_both_sides(audited):
    rec = audited["verdicts"][JAX].predicted["g4dn.2xlarge"]
    assert rec.family_kind == "gpu" and rec.gpu.low <= rec.gpu.seconds <= rec.gpu.high
    assert rec.host_factor["label"] == host.MEASURED  # the T4 runner's published probe


def test_a_lecture_without_jax_is_host_time_on_every_family(audited):
    v = audited["verdicts"][PLAIN]
    assert not v.scan.uses_jax
    for rec in (v.predicted[n] for n in _runner_families()):
        parts = rec.cpu.parts
        assert parts["host"] > 0 and parts["calls"] == parts["loops"] == parts["eager"] == parts["compile"] == 0


def test_a_notebook_without_code_is_its_kernel_start(audited):
    v = audited["verdicts"][PROSE]
    assert not v.runs["cpu"].cells and v.runs["cpu"].kernel_start_s
    for rec in (v.predicted[n] for n in _runner_families()):   # and, where calibrated, the per-notebook residual
        parts = rec.cpu.parts
        assert parts["start-up"] > 0 and sum(parts.values()) == pytest.approx(parts["start-up"]
                                                                              + parts.get("residual", 0.0))


def test_a_raises_exception_lecture_is_ok_and_predicted(audited):
    v = audited["verdicts"][DEBUG]
    expected = [c for c in v.runs["cpu"].cells if c.expected_error]
    assert [c.expected_error.split(":")[0] for c in expected] == ["SyntaxError", "ZeroDivisionError"]
    assert not v.failed and any("raises-exception" in n for n in v.notes)  # the scan's syntax error: a note
    assert "ubuntu-latest" in v.predicted


def test_an_untagged_error_in_a_book_that_allows_errors_is_no_failure(audited):
    v = audited["verdicts"][ALLOWED]
    run = v.runs["cpu"]
    assert run.status == "error" and len(run.cells) == 2  # execution went on past the error, as the build does
    assert not v.failed and not v.errors and "ubuntu-latest" in v.predicted
    lec = next(lec for lec in audited["json"]["lectures"] if lec["path"] == ALLOWED)
    assert lec["status"] == "ok" and any("IndexError" in n and "allow_errors" in n for n in lec["notes"])
    assert ALLOWED not in audited["json"]["failed"]


def test_peak_memory_lands_in_the_json_and_the_table(audited):
    by_path = {lec["path"]: lec for lec in audited["json"]["lectures"]}
    for path, lec in by_path.items():
        if path == PROSE:  # no cell ran: nothing to record
            assert lec["runs"]["cpu"]["peak_memory"] is None
            continue
        peak = lec["runs"]["cpu"]["peak_memory"]
        assert peak["host_rss_peak_mib"] > 0, path
        assert "device_peak_mib" not in peak  # the CPU backend's own stats are not a device's need
    assert by_path[JAX]["runs"]["cpu"]["peak_memory"]["live_buffers_mib"] > 0
    peaks = {p.path: p for p in lecture_peaks(AuditView.from_dict(audited["json"]))}
    assert set(peaks) == set(by_path) - {PROSE}
    assert peaks[JAX].kind == "live buffers" and peaks[PLAIN].kind == "host RSS"
    assert "peak_mib" in audited["md"].splitlines()[0] and "host RSS" in audited["md"]


def test_the_per_family_summary_without_machine(audited):
    totals = audited["json"]["per_family"]
    assert set(totals) == set(_runner_families())
    assert all(t["lectures"] == 5 for t in totals.values())
    assert totals["ubuntu-latest"]["gpu_s"] is None and totals["g4dn.2xlarge"]["gpu_s"] is not None
    md = audited["md"]
    assert "**Predicted build per family**" in md and "largest measured peak memory" in md
    assert all(f"| {name} |" in md for name in totals)


def test_judged_ubuntu_latest_predicts_seconds_from_the_same_runs(audited):
    """--machine ubuntu-latest: the same runs give its CPU side (no kernel started)."""
    judged = family.from_results(FROZEN_RESULTS, "ubuntu-latest", published=reference())
    assert judged.missing.startswith("no runner model for ubuntu-latest") and "predicts its CPU seconds" in \
        judged.missing
    families = every_family.build(FROZEN_RESULTS, published=reference(), judged=judged)
    assert families.views["ubuntu-latest"] is judged.runner  # built once, reused
    verdicts = copy.deepcopy(list(audited["verdicts"].values()))  # the shared audit stays as it was
    probe = host_probe.Probe(1.0, 0.9, 1.1, host_probe.PROBE_N, "given")
    before = {v.path: v.recommendation for v in verdicts}
    every_family.predict_all(verdicts, families, probe)
    assert {v.path: v.recommendation for v in verdicts} == before  # predictions never move a verdict
    assert all(v.predicted["ubuntu-latest"].cpu.seconds > 0 for v in verdicts)
    for v in verdicts:
        v.family = "ubuntu-latest"  # as --machine ubuntu-latest sets it: the table shows its CPU side only
        row = render.row(v)
        assert row["predicted_cpu_s"].startswith("predicted ") and row["predicted_gpu_s"] == "-"


def test_host_scaling_is_applied_once():
    pred = {"cpu_s": 2.0, "cpu_low_s": 1.0, "cpu_high_s": 3.0, "gpu_s": 4.0, "gpu_low_s": 3.0, "gpu_high_s": 5.0,
            "basis": "b", "parts": {"cpu": {"host": 2.0, "calls": 0.0},
                                    "gpu": {"host": 2.0, "calls": 2.0}}}
    once = rescaled.host_scaled(LecturePrediction.from_dict(pred), 0.5, "s", 0.4, 0.6)
    twice = rescaled.host_scaled(once, 0.5, "s", 0.4, 0.6)
    assert once == twice and once.unscaled.cpu.seconds == 2.0
    assert once.cpu.seconds == 1.0 and once.gpu.seconds == 3.0  # the GPU's modelled calls do not move with the host
    assert once.cpu.low < once.cpu.seconds < once.cpu.high


def test_host_factor_from_a_published_probe_and_without_one():
    pub = [Evidence("fam", "cpu", HOST_PYTHON, Band(0.6, 0.5, 0.7), "a table", n=10_000_000)]
    here = host_probe.Probe(0.1, 0.09, 0.12, 1_000_000, "probe")
    h = host.factor("fam", pub, here)
    assert h.label == host.MEASURED and h.low <= h.value <= h.high and "a table" in h.source
    assert host.factor("other", pub, here).label == host.NOT_MEASURED
    assert host.factor("fam", pub, host_probe.Probe(None, None, None, 1, "no kernel")).label == host.NOT_MEASURED


@pytest.mark.skipif(not gpu_present(), reason="needs a GPU (NVML sees none): the device-bytes path runs on a GPU only")
def test_a_gpu_run_records_device_bytes():
    run = run_notebook(HERE / JAX, platform="cuda", timeout=300)
    assert run.ok, run.error
    peak = run.peak_memory
    assert peak["device_peak_mib"] > 0 and peak["device_platform"] in ("cuda", "gpu")


def test_a_gpu_runs_device_bytes_reach_the_table_and_the_advice():
    """Without a GPU here: a cuda run's recorded device peak (as the hooks record it on a GPU, tested with a stand-in
    jax in test_audit_runner) is the table's first figure and the concurrency advice's need."""
    memory = {"device_peak_bytes": 512 * 2**20, "device_platform": "gpu", "live_buffers_bytes": 2**20,
              "host_rss_peak_bytes": 300 * 2**20}
    run = NotebookRun("big.md", platform="cuda", cells=[CellTiming(1, "x", 1.0, 1.0, memory=memory)])
    v = Verdict("big.md", LectureScan("big.md"), runs={"cuda": run})
    assert render.row(v)["peak_mib"] == "cuda: device 512, live buffers 1, host RSS 300 MiB"
    (peak,) = lecture_peaks(AuditView.from_dict(json.loads(render.to_json([v], True))))
    assert (peak.kind, peak.mib, peak.platform) == ("device", 512.0, "cuda")


def test_the_tier_decision_shows_lab_machines_predicted_from_the_same_runs(audited):
    """`jaxci audit --ci --execute`: the tier decision shows each lab machine (never chosen) beside the runner families,
    every executed lecture predicted on it as the audit predicts a runner family (no host probe: h not measured)."""
    verdicts = list(audited["verdicts"].values())
    found, why = lectures.predict_lab(verdicts, FROZEN_RESULTS, reference())
    lab = {name for name, entry in load_catalogue(include_lab=True).items() if entry.is_lab}
    assert why == "" and set(found) == {v.path for v in verdicts if v.runs}
    assert all(set(per) == lab for per in found.values()), found
    assert all(rec.host_factor["label"] == host.NOT_MEASURED for per in found.values() for rec in per.values())
    for facts in lectures.from_verdicts(verdicts, found):
        assert set(facts.predicted) == lab | set(_runner_families())


def test_the_calibration_is_refused_on_a_host_it_was_not_fitted_on():
    """Issue 70: the calibration records the host it was fitted on; the audit keeps it only where this host's probe
    cannot be told from that one, else drops it and says why, with the command that refits it."""
    from jaxci.analysis.fixed_costs import FittedHost, FixedCosts

    fitted = FittedHost("the fit VM", 10_000_000, (1.2, 1.4), (1.0, 1.6), "its drift")
    fixed = FixedCosts({"k": 1.0}, {"k": 1.0}, (1.3,), "here", Band.of(0.4, 0.1, 0.5), "fit", 1.5, fitted)
    for seconds, kept in ((0.13, True), (0.05, False)):   # at n = 1M: 1.3 s and 0.5 s at the fitted n
        fams = every_family.Families(published=reference(), fixed=fixed)
        fams.views, fams.residual = {"ubuntu-latest": None}, {"ubuntu-latest": (Band.of(0.2), "fit", 1.5)}
        every_family.measure_host(fams, host_probe.Probe(seconds, seconds, seconds, 1_000_000, "probe"))
        assert bool(fams.residual) is kept and fams.factors["ubuntu-latest"].label == host.MEASURED
        assert ("refused" in fams.calibration) is not kept and ("refused" in " ".join(fams.notes)) is not kept


def test_the_verdict_reads_the_same_record_the_report_reads(audited):
    """One prediction per lecture and family: the judged family's verdict is decided again from its final,
    host-scaled record, so the patch's reason and the report's pin table print the same seconds."""
    from jaxci.audit.judging import judge
    from jaxci.policy import placement

    v = copy.deepcopy(audited["verdicts"][JAX])
    v.basis, v.why = "predicted", "decided on an earlier prediction"
    v.reasons.insert(0, v.why)
    judge.decide_on_record(v, SimpleNamespace(family="g4dn.2xlarge", published=None))
    record = v.predicted["g4dn.2xlarge"]
    assert placement.predicted_side(record, "cpu", "g4dn.2xlarge").text() in v.why and v.reasons[0] == v.why
