"""The decision sheet's advice rows: what each row says and where it says it comes from.

Content and wording logic only, from the committed results and hand-made audit records; never a timing."""

from types import SimpleNamespace

import pytest

from jaxci.analysis import provenance as pv
from jaxci.analysis.lecture_record import AuditView
from jaxci.catalogue import load_catalogue
from jaxci.commands import env as env_cmd
from jaxci.commands import predict
from jaxci.commands import report as report_cmd
from jaxci.policy.builds import cpu_twins
from jaxci.report import actions, decisions, memory_advice, questions, termcheck
from jaxci.report.build import build
from jaxci.report.findings import findings_md, guidance_md
from tests.committed import committed

RESULTS = committed()


@pytest.fixture(scope="module")
def report():
    return build(RESULTS)


def _audit(*lectures):
    """An executed audit's JSON shape: per lecture its runs per platform, each with its peak_memory."""
    return {"executed": True, "lectures": [{"path": path, "runs": {platform: {"status": "ok", "wall_s": 10.0,
                                                                             "cells": [], "peak_memory": peak}
                                                                  for platform, peak in runs.items()}}
                                           for path, runs in lectures]}


def test_concurrency_row_recommends_only_what_a_gpu_measured(report):
    row = decisions.sheet(report, "g4dn.2xlarge").rows[2]
    assert "XLA_PYTHON_CLIENT_PREALLOCATE=false" in row.decision and "at most 3 notebook" in row.decision
    assert "MEM_FRACTION" not in row.decision            # the fraction policy never ran on a GPU
    # in each engine's own setting (it named `sphinx-build -j 3`, which these repositories do not run)
    assert "Jupyter Book 1.x: nothing to set (it executes one notebook at a time), jax-env `concurrency: 1`" \
        in row.decision
    assert "mystmd: `myst build --execute --execute-parallel 3`, jax-env `concurrency: 3`" in row.decision
    assert "nbclient: a pool of 3" in row.decision and "sphinx-build" not in row.decision
    assert "mystmd: cannot be expressed: `--execute-parallel` is one number for every page" in row.decision
    assert row.status == decisions.NOT_MEASURED
    assert "lab-h200" in row.basis
    assert "never run on a GPU (fraction, platform: offered only as not measured)" in row.basis
    assert "3,136" not in row.basis + row.decision      # the synthetic worker's peak is no lecture's need
    assert "lectures' own need: not measured" in row.basis
    assert "JAX's own CUDA CI" in row.basis and "7 on this GPU" in row.basis   # 15,360 MiB / 2 GB


def test_concurrency_row_is_sized_by_the_lectures_gpu_peak(report):
    audit = _audit(("big.md", {"cuda": {"device_peak_mib": 6000.0, "device_platform": "gpu"},
                               "cpu": {"live_buffers_mib": 9000.0}}),
                   ("small.md", {"cuda": {"device_peak_mib": 500.0}}))
    row = decisions.sheet(report, "g4dn.2xlarge", audit=audit).rows[2]
    assert "at most 2 notebook" in row.decision         # floor(0.90 x 15,360 / 6,000) = 2 < the measured 3
    assert row.status == decisions.PREDICTED
    assert "6,000 MiB device memory in use at peak (`big.md`" in row.basis


def test_concurrency_row_never_sizes_a_gpu_from_cpu_figures(report):
    audit = _audit(("a.md", {"cpu": {"live_buffers_mib": 800.0, "host_rss_peak_mib": 1200.0}}))
    row = decisions.sheet(report, "g4dn.2xlarge", audit=audit).rows[2]
    assert "at most 3 notebook" in row.decision
    assert row.status == decisions.NOT_MEASURED
    assert "800 MiB of live buffers (`a.md`)" in row.basis and "not a GPU's need" in row.basis


def test_lecture_peaks_prefer_the_gpus_own_figure():
    peaks = memory_advice.lecture_peaks(AuditView.from_dict(_audit(
        ("a.md", {"cpu": {"device_peak_mib": 50.0, "live_buffers_mib": 40.0}, "cuda": {"device_peak_mib": 70.0}}),
        ("b.md", {"cpu": {"device_peak_mib": 90.0, "host_rss_peak_mib": 300.0}}))))
    assert [(p.path, p.mib, p.kind, p.platform) for p in peaks] == [
        ("a.md", 70.0, "device", "cuda"), ("b.md", 300.0, "host RSS", "cpu")]   # a CPU's own stats are skipped


def test_concurrency_row_without_gpu_names_the_build_setting(report):
    row = decisions.sheet(report, "c7i.2xlarge").rows[2]
    assert "no GPU" in row.decision and "`myst build --execute --execute-parallel 8`" in row.decision
    assert "jax-env" not in row.decision and "serial on the GPU" not in row.decision


def test_summary_prints_the_chosen_familys_sheet_first(capsys):
    assert report_cmd.main([str(RESULTS), "--family", "g4dn.2xlarge", "--format", "summary", "--no-progress"]) == 0
    lines = capsys.readouterr().out.splitlines()
    sheet = next(i for i, x in enumerate(lines) if x.startswith("Decision sheet: g4dn.2xlarge"))
    rows = lines[sheet + 1:sheet + 8]
    assert [x.split()[0] for x in rows] == [str(q) for q in range(1, 8)]
    assert all("[" in x for x in rows)                     # each row says measured / predicted / not measured
    assert sheet <= 2                                     # only the headline ahead of the family's answer
    assert "Evidence" in lines[-1] and "lab-h200" in lines[-1]
    assert all(len(x) <= 150 for x in lines)


def test_summary_fits_what_bench_sh_keeps(capsys):
    assert report_cmd.main([str(RESULTS), "--format", "summary", "--no-progress"]) == 0
    lines = capsys.readouterr().out.splitlines()
    kept = lines[:24]                                      # scripts/bench.sh: head -n 24
    assert sum(x.startswith("Decision sheet: ") for x in kept) == 2   # the default g4dn and c7i sheets, whole
    assert sum(x.startswith("  7 ") for x in kept) == 2


def test_guidance_is_written_for_the_family_and_lab_lines_are_evidence(report):
    guide = guidance_md(report)
    body = guide.split("**For g4dn.2xlarge")[1].split("**For ")[0]
    lines = [x for x in body.splitlines() if x.startswith("- ")]
    assert lines and not any("lab-h200" in x or "lab-epyc" in x for x in lines)   # no lab result as its guidance
    assert not any("cholesky" in x and "GPU wins" in x for x in lines)           # an H200 fact (FP64 at 1:2)
    assert any("cholesky" in x and "not predicted on g4dn.2xlarge" in x for x in lines)
    assert any("predicted" in x and "g4dn.2xlarge" in x for x in lines)
    md = findings_md(report)
    front, evidence = md.split("## Evidence: guidance lines per measured machine")
    assert "op=cholesky** (float64): the GPU wins at every measured size" in evidence   # lab-h200, as evidence
    assert "on lab-h200; measured" in evidence
    guidance = front.split("## Guidance per lecture type")[1]
    assert "on lab-h200; measured" not in guidance


def test_a_rows_published_checks_are_shown_and_judge_only_the_number_it_shows(report):
    rows = decisions.sheet(report, "g4dn.2xlarge").rows
    compile_row, nuts_row, crossover_row = rows[4], rows[3], rows[1]
    # the row shows 78 ms per fresh jit, derived from the published first call itself: the check's 0.95 s (carried
    # from the H200) is another number, shown beside it, and cannot refute the row
    assert "published check refutes it" not in compile_row.decision
    assert "1000x1000 matmul, first call" in compile_row.basis and "ratio 12.0" in compile_row.basis
    assert "no check of this row: the row's figure is derived from this published figure" in compile_row.basis
    # the pinned NUTS lecture's 892 s: checked as a value or as the whole lecture's upper bound, shown either way
    assert "published check (docs/reference/incidents.md, NUTS lecture pinned to CPU" in nuts_row.basis
    assert "892" in nuts_row.basis and "refutes" not in nuts_row.decision
    # the 1000x1000 warm matmul: 0.479 ms against a printed 0.001 s (0.0005-0.0015 s): it agrees
    assert "1000x1000 matmul, compiled, gpu): predicted 0.000479 s" in crossover_row.basis
    assert "0.96 to its rounding) (agrees)" in crossover_row.basis
    # the crossover's GPU line takes its GEMM rate from the published 3000x3000 matmul: that check is shown, and
    # can no longer call the row's band too narrow, since the row's number rests on the figure it checks
    big = pv.figure_name("3000x3000 matmul, compiled", "g4dn.2xlarge", "gpu")
    assert pv.derived_from(crossover_row.sources, big) and "too narrow" not in crossover_row.decision
    assert "3000x3000 matmul, compiled, gpu): predicted" in crossover_row.basis.split("no check of this row")[0]


def test_rows_without_a_published_check_are_left_as_they_are(report):
    for row in decisions.sheet(report, "c7i.2xlarge").rows:
        assert "published check" not in row.basis
    measured = decisions.QuestionDecision(questions.ENVIRONMENT, 5, "x", decisions.MEASURED, "on it")
    assert termcheck.annotate(report, "g4dn.2xlarge", measured) is measured


def test_check_verdicts():
    agree = termcheck.Check("t", "c", "gpu", 1.0, 1.5, 1.5, "", 1.2, 1.8, 1.5)
    assert not agree.refutes and agree.outside_band and agree.label() == "outside the band"
    inside = termcheck.Check("t", "c", "gpu", 1.0, 1.1, 1.1, "", 0.9, 1.3, 1.1)
    assert inside.label() == "agrees"
    far = termcheck.Check("t", "c", "gpu", 1.0, 2.5, 2.5, "", 2.4, 2.6, 2.5)
    assert far.refutes and far.label() == "refutes the term"
    bound = termcheck.Check("t", "c", "gpu", 2400.0, 100.0, None, "published is a bound (> 2,400 s): predicted "
                            "below it", bound_refuted=True)
    assert bound.refutes
    upper = termcheck.Check("t", "c", "cpu", 892.0, 950.0, None, "published is an upper bound (the whole lecture, "
                            "<= 892 s): predicted outside it at both ends of the band", bound_refuted=True)
    inside = termcheck.Check("t", "c", "cpu", 892.0, 475.0, None, "published is an upper bound (the whole lecture, "
                             "<= 892 s): predicted inside it at both ends of the band")
    assert upper.refutes and not inside.refutes and inside.label() == "agrees"


PIN = "kernelspec.name: python3-jax-cpu"


def _predicted(cpu_s, gpu_s):
    return {"g4dn.2xlarge": {"cpu_s": cpu_s, "cpu_low_s": cpu_s, "cpu_high_s": cpu_s,
                             "gpu_s": gpu_s, "gpu_low_s": gpu_s, "gpu_high_s": gpu_s}}


def test_sheet_names_the_lectures_to_pin_from_the_audit_and_how(report):
    audit = {"executed": True, "lectures": [
        {"path": "slow_on_gpu.md", "scan": {"uses_jax": True}, "predicted": _predicted(10.0, 30.0), "runs": {}},
        {"path": "fast_on_gpu.md", "scan": {"uses_jax": True}, "predicted": _predicted(100.0, 10.0), "runs": {}},
        {"path": "near_tie.md", "scan": {"uses_numpyro": True}, "predicted": _predicted(10.0, 9.0), "runs": {}},
        {"path": "unpredicted.md", "scan": {"uses_jax": True}, "runs": {}},
        {"path": "no_jax.md", "scan": {"uses_jax": False}, "predicted": _predicted(1.0, 5.0), "runs": {}}]}
    row = decisions.sheet(report, "g4dn.2xlarge", audit=audit).rows[1]
    # the one pin rule: a pin only where the GPU is at least 1.2x the CPU; a near tie stays where it is
    assert "pin 1 lecture(s) to the CPU (`slow_on_gpu.md`)" in row.decision
    assert "2 stay on the GPU (`fast_on_gpu.md`, `near_tie.md`)" in row.decision
    assert "1 without a prediction for g4dn.2xlarge" in row.decision and "no_jax.md" not in row.decision
    assert PIN in row.decision and "not `JAX_PLATFORMS=cpu` for the whole job" in row.decision


def test_without_an_audit_the_sheet_gives_the_command_and_the_per_lecture_pin(report):
    rows = decisions.sheet(report, "g4dn.2xlarge").rows
    assert "`jaxci audit LECTURE_REPO --execute --machine g4dn.2xlarge --format json > audit.json`" in rows[1].decision
    assert PIN in rows[1].decision
    assert "(`JAX_PLATFORMS=cpu`)" not in rows[3].decision and PIN in rows[3].decision   # NUTS: per lecture


def test_float64_default_is_answered_directly(report):
    assert decisions.sheet(report, "g4dn.2xlarge").rows[0].decision.startswith(
        "float64 lectures default to the CPU: no blanket default")
    assert decisions.sheet(report, "c7i.2xlarge").rows[0].decision.startswith(
        "float64 lectures default to the CPU: yes (no GPU)")
    assert actions.float64_default(10.0, 2.0, False).startswith("float64 lectures default to the CPU: no")
    assert actions.float64_default(10.0, 9.0, False).startswith(
        "float64 lectures default to the CPU: no blanket default")


def test_environment_row_lists_every_variable_the_action_sets(report, tmp_path):
    """The variables row 5 names are exactly what `jaxci env` (the action's one call) writes to $GITHUB_ENV
    for the inputs the sheet advises (row 3's N)."""
    row = decisions.sheet(report, "g4dn.2xlarge").rows[4]
    assert "concurrency: 3}" in row.decision
    github_env = tmp_path / "env"
    assert env_cmd.main(["--machine", "g4dn.2xlarge", "--kernels", "3", "--cache-dir", actions.CACHE_DIR,
                         "--github-env", str(github_env)]) == 0
    written = [line for line in github_env.read_text().splitlines() if line]
    assert written and all(f"`{line}`" in row.decision for line in written)
    named = row.decision.split(" sets ")[1].split("; it restores")[0]
    assert named.count("`") == 2 * len(written)


def test_cost_row_prices_the_cheaper_families(report):
    row = decisions.sheet(report, "g4dn.2xlarge").rows[5]
    assert "g4dn.xlarge $0.526/h (Tesla T4" in row.decision and "ubuntu-latest $0.000/h (CPU only" in row.decision
    assert "cheaper per hour" in actions.cheaper(report.catalogue, "c7i.2xlarge")
    assert actions.cheaper(report.catalogue, "ubuntu-latest").startswith("no catalogue family is cheaper")


def test_a_check_of_a_prediction_built_from_published_figures_is_not_counted():
    """A prediction whose inputs are published figures (analysis.evidence labels them) checked against the same
    file proves nothing: it neither refutes nor agrees."""
    circular = termcheck.Check("t", "c", "gpu", 0.079, 1.0, 12.0, "", 0.9, 1.1, 12.0, on_published=True)
    assert not circular.refutes and circular.label().startswith("not independent")
    rows = [{"family": "f", "device": "gpu", "case": "1000x1000 matmul, first call", "predicted_s": 1.0,
             "kernel": "matmul", "n": 1000, "first_call": True,
             "published_s": 0.079, "ratio": 12.0, "sources": [{"kind": kind, "origin": "x"}]}
            for kind in ("published", "measured")]
    found = [termcheck.checks(SimpleNamespace(model_checks=[r]), "f", questions.ENVIRONMENT.terms)[0] for r in rows]
    assert [c.independent for c in found] == [False, True]


def test_family_guidance_pins_per_lecture(report):
    body = guidance_md(report).split("**For g4dn.2xlarge")[1].split("**For ")[0]
    how = [x for x in body.splitlines() if x.startswith("- How to pin")]
    assert len(how) == 1 and PIN in how[0] and "not `JAX_PLATFORMS=cpu` for the whole job" in how[0]


def test_row_6_without_an_audit_gives_the_build_published_on_the_family(report):
    """Without an executed audit (hours), the build published on the family's own hardware (the catalogue's
    published_build_s, sourced) answers question 6, labelled published."""
    row = decisions.sheet(report, "g4dn.2xlarge").rows[5]
    assert "a published build of 145 notebooks executed in 109 min on this family" in row.decision
    assert row.status == decisions.MEASURED and row.basis.startswith("published, not measured here:")
    assert "4ecc3db2" in row.basis and "jaxci audit LECTURE_REPO --execute" in row.basis


def test_row_6_says_which_cpu_families_the_model_cannot_tell_apart(report):
    """Families whose CPUs the model predicts alike (cpu_twins): the row names them, not silently. g6.xlarge and
    g6e.xlarge share a CPU model and a core count; c7i.2xlarge's host probe now tells it from the others."""
    twins = cpu_twins(report.model, report.catalogue, "g6.xlarge")
    assert twins == ["g6e.xlarge"] and not cpu_twins(report.model, report.catalogue, "c7i.2xlarge")
    row = decisions.sheet(report, "g6.xlarge").rows[5]
    assert twins and row.status == decisions.NOT_MEASURED
    assert f"cannot tell this family's CPU from {twins[0]}" in row.decision
    assert "ubuntu-latest" not in row.decision.split("cannot tell")[1].split(";")[0]  # a different CPU (published)


def test_cpu_twins_compares_every_cpu_case():
    seconds = {"a": 1.0, "b": 1.01, "c": 1.5}
    model = SimpleNamespace(predict=lambda f, *args: SimpleNamespace(seconds=seconds[f]))
    entry = SimpleNamespace(is_lab=False)
    assert cpu_twins(model, {"a": entry, "b": entry, "c": entry}, "a") == ["b"]


def test_predict_says_when_it_cannot_tell_two_cpus_apart(capsys):
    assert predict.main(["--family", "g6.xlarge", "--kernel", "matmul", "--n", "4096", "--device", "cpu"]) == 0
    out = capsys.readouterr().out
    named = out.split("note: the model cannot tell this CPU from ", 1)[1].split(":", 1)[0].split(", ")
    assert named == ["g6e.xlarge"] and all(f in load_catalogue() for f in named), out
    assert predict.main(["--family", "c7i.2xlarge", "--kernel", "notebook_start", "--device", "cpu"]) == 0
    assert "cannot tell" not in capsys.readouterr().out  # its host probe (Xeon 8488C) differs from g6.2xlarge's
    assert predict.main(["--family", "ubuntu-latest", "--kernel", "matmul", "--n", "4096", "--device", "cpu"]) == 0
    assert "cannot tell" not in capsys.readouterr().out  # its CPU has published figures of its own
