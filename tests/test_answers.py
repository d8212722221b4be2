"""The answer sheet, evidence counts, guidance per lecture type, readable figures and the terminal summary,
on synthetic asv result sets (labelled synthetic) whose answers are known by construction."""

import math
import re

import pytest

from jaxci.commands import report as cli
from jaxci.evidence.published import read as read_figures
from jaxci.report import answers, decisions, published, svg
from jaxci.report.asvindex import link_from_asv_index
from jaxci.report.build import INCIDENTS, build
from jaxci.report.findings import findings_md, guidance_md
from jaxci.report.page import render
from jaxci.report.summary import summary_lines
from tests import synth

DENSE = (["op", "n", "dtype", "device"], [["matmul"], synth.SIZES, ["float32", "float64"], ["cpu", "gpu"]])


def cpu_only_set(root, kind="local", name="local-box"):
    """A CPU-only machine: dense measured on cpu, gpu n/a; concurrency measured on the *cpu* device only."""
    s = synth.SynthResults(root)
    s.machine(name, kind=kind)
    s.add(name, "dense.Dense.time_warm", *DENSE,
          lambda op, n, dtype, device: synth.dense_truth(op, n, dtype, device) if device == "cpu" else math.nan)
    s.add(name, "concurrency.Concurrency.track_workers_died", ["n_workers", "policy", "device"],
          [[1, 2, 4], ["default"], ["cpu", "gpu"]],
          lambda n_workers, policy, device: 0.0 if device == "cpu" else math.nan,
          unit="workers")
    return s.save()


@pytest.fixture(scope="module")
def gpu_report(tmp_path_factory):
    return build(synth.gpu_set(tmp_path_factory.mktemp("gpu")))


@pytest.fixture(scope="module")
def cpu_report(tmp_path_factory):
    return build(cpu_only_set(tmp_path_factory.mktemp("cpu")))


def by_q(sheet):
    return {d.q: d for d in sheet.rows}


def test_gpu_family_answers_measured(gpu_report):
    """The evidence per measured machine comes from the same row functions as the families' sheets."""
    sheets = decisions.evidence_sheets(gpu_report)
    assert [s.family for s in sheets] == ["g4dn.2xlarge", "c7i.2xlarge"]  # the GPU machine answers first
    t4, cpu = by_q(sheets[0]), by_q(sheets[1])
    assert t4[2].status == "measured" and f"n ≈ {synth.CROSS_N:,.0f}" in t4[2].decision
    assert "gpu float64 costs 16.5x float32" in t4[1].decision and t4[1].status == "measured"
    assert "policy `no-prealloc`: up to 4 notebooks at once" in t4[3].decision and t4[3].status == "measured"
    # the synthetic NUTS run is CI-sized (fewer than 100 draws): no chain method is decided from it
    assert t4[4].status == "not measured" and "^nuts" in t4[4].basis
    assert "keep the repository's own value" in t4[7].decision  # fixtures never size a timeout
    # the CPU-only family: no GPU question answered from its CPU data
    assert cpu[2].decision.startswith("no GPU") and cpu[3].status == "not measured" and "no GPU" in cpu[3].decision
    assert "SYNTHETIC" in answers.headline(gpu_report)
    assert all("synthetic" in answers.machine_title(s.family, gpu_report.machines[s.family]) for s in sheets)
    family = {d.q: d for d in decisions.sheet(gpu_report, "g4dn.2xlarge").rows}
    assert [d.decision for d in t4.values()] == [d.decision for d in family.values()]  # one answer per question


def test_no_gpu_results_say_so_once_per_question(cpu_report):
    (sheet,) = decisions.evidence_sheets(cpu_report)
    assert "hold no GPU" in answers.headline(cpu_report)
    q = by_q(sheet)
    assert q[2].decision.startswith("no GPU")
    # CPU concurrency cells exist, yet the GPU question is not answered from them
    assert q[3].status.startswith("not measured") and "N =" not in q[3].decision
    md = findings_md(cpu_report)
    machine_part = md.split("## Evidence: answers per measured machine")[1].split("## Guidance per lecture type")[0]
    rows = [x for x in machine_part.splitlines() if x.startswith("| ") and x[2].isdigit()]
    unmeasured = sum(d.status == "not measured" for d in sheet.rows)
    assert sum(x.endswith("| not measured |") for x in rows) == unmeasured <= 7  # once per question, never per cell
    guide = guidance_md(cpu_report)
    several = guide.split("## Several kernels at once")[1].split("##")[0]
    assert "not measured" in several and "N = " not in several and "published reference" in several


def test_evidence_lists_measured_cells_and_counts_the_rest(cpu_report):
    md = findings_md(cpu_report)
    evidence = md.split("## Evidence: machines and runs")[1]
    assert "13 gpu combinations n/a: no GPU on this machine" in evidence
    assert "kernel/dtype pairs without both lines" in evidence
    assert "'gpu'" not in evidence and "| not measured |" not in evidence
    assert evidence.count("local-box, JAX ") == 1  # provenance said once per machine and run


def test_evidence_links_resolve_to_headings(gpu_report):
    md = findings_md(gpu_report)
    slugs = {answers.slug(h) for h in re.findall(r"^#+ (.+)$", md, re.M)}
    links = set(re.findall(r"\]\(#([\w\-]+)\)", md))
    assert links and links <= slugs, links - slugs


def test_lab_machine_is_never_a_runner_family(tmp_path):
    s = synth.SynthResults(tmp_path).machine("lab-h200", gpu="1 x NVIDIA H200", backend="cuda13", kind="lab")
    s.add("lab-h200", "dense.Dense.time_warm", *DENSE, synth.dense_truth)
    report = build(s.save())
    (sheet,) = decisions.evidence_sheets(report)
    title = answers.machine_title(sheet.family, report.machines[sheet.family])
    assert title.startswith("lab: H200 (machine `lab-h200`") and "runner family" not in title
    assert "lab: H200 (machine `lab-h200`" in findings_md(report)
    s = synth.SynthResults(tmp_path / "other").machine("lab-x", gpu="1 x NVIDIA B200", backend="cuda13", kind="lab")
    s.add("lab-x", "dense.Dense.time_warm", *DENSE, synth.dense_truth)
    other = build(s.save())
    (unlisted,) = decisions.evidence_sheets(other)  # not catalogued: named by its recorded GPU, memory unknown
    assert answers.machine_title("lab-x", other.machines["lab-x"]).startswith("lab: 1 x NVIDIA B200")
    assert "not measured" in by_q(unlisted)[5].decision
    assert by_q(sheet)[2].status == "measured"


def test_sections_have_a_place_before_the_evidence(gpu_report):
    md = findings_md(gpu_report, sections=[lambda r: ("Release regressions", "- none found"), lambda r: None])
    evidence = md.index("## Evidence: machines")
    assert md.index("## Guidance per lecture type") < md.index("## Release regressions") < evidence


def test_guidance_per_lecture_type_is_traceable(gpu_report):
    guide = guidance_md(gpu_report)
    for title in ("Large-array", "Small float64 sequential", "NUTS", "many fresh compiles", "Several kernels at once"):
        assert title in guide
    evidence = guide.partition("\n# Evidence\n")[2]   # the author page above it carries no figures
    for line in evidence.splitlines():
        if line.startswith("- "):
            assert re.search(r"measured|predicted|published|not measured|Rule used here", line), line


def test_terminal_summary_is_short(gpu_report, tmp_path, capsys):
    lines = summary_lines(gpu_report)
    assert 5 < len(lines) < 30 and all(len(x) <= 150 for x in lines)
    assert any("GPU for dense op=matmul float32 from n ≈" in x for x in lines)
    s = synth.SynthResults(tmp_path)
    for i in range(5):
        s.machine(f"m{i}").add(f"m{i}", "dispatch.TinyOp.time_warm", ["dtype", "device"], [["float32"], ["cpu"]],
                               lambda **_: 1e-5)
    assert len(summary_lines(build(s.save()))) < 30
    assert cli.main([str(tmp_path / "results"), "--format", "summary"]) == 0
    assert len(capsys.readouterr().out.splitlines()) < 30


def test_log_axes_have_enough_ticks():
    for lo, hi in ((40, 6500), (1e-5, 3e-5), (1e3, 1e8), (0.9, 1.2)):
        ticks = svg.log_ticks(lo, hi)
        assert len(ticks) >= 3 and all(lo <= t <= hi for t in ticks), (lo, hi, ticks)
    assert svg.fmt(1e6) == "1e6" and svg.fmt(2e-5) == "2e-5" and svg.fmt(300) == "300"
    assert svg.nice_ticks(14.3) == [0, 5, 10, 15] and svg.nice_ticks(0.0762) == [0, 0.02, 0.04, 0.06, 0.08]


def test_figures_mark_single_points_and_never_rotate_labels():
    one = svg.loglog("t", [("cpu float32", "#1f77b4", False, [(64, 1e-3)])])
    assert one.count("<circle") == 2 and "(one point)" in one  # the point and its legend marker
    bars = svg.hbars("FP64", [("dense op=matmul (a, cpu)", 2.0, "#1f77b4")], "ratio",
                     legend=[("device cpu", "#1f77b4")])
    assert "rotate" not in bars and "device cpu" in bars
    assert 'font-size="9"' not in bars + one and 'font-size="10"' not in bars + one


def test_published_incidents_are_parsed_and_drawn_as_references(gpu_report):
    pts = published.points(read_figures(INCIDENTS).incidents)
    scan = {p.column: p.seconds for p in pts if p.benchmark == "loops.Scan.time_warm" and p.n == 10_000_000}
    assert scan["T4 runner"] / scan["CPU runner"] == pytest.approx(1360, rel=0.01)  # the "about 1,340x" incident
    page = render(gpu_report, findings_md(gpu_report), guidance_md(gpu_report))
    assert 'class="published"' in page and "published: T4 runner" in page
    assert page.index('id="answers"') < page.index('id="figures"') < page.index('id="evidence-machines-and-runs"')


def test_asv_error_page_links_the_findings(gpu_report, tmp_path):
    (tmp_path / "index.html").write_text('<html><body><ul class="nav navbar-nav navbar-left"></ul></body></html>')
    (tmp_path / "error.html").write_text("<html><body><h1>asv error</h1></body></html>")
    for _ in range(2):
        link_from_asv_index(tmp_path, gpu_report)
    error = (tmp_path / "error.html").read_text()
    assert error.count('href="findings/index.html"') == 1 and "CDN" in error
    assert (tmp_path / "index.html").read_text().count("One commit in these results") == 1
