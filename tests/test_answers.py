"""The answer sheet, evidence counts, guidance per lecture type, readable figures and the terminal summary,
on synthetic asv result sets (labelled synthetic) whose answers are known by construction."""

import math
import re

import pytest

from jaxci.commands import report as cli
from jaxci.report import answers, published, svg
from jaxci.report.build import INCIDENTS, build
from jaxci.report.findings import findings_md, guidance_md
from jaxci.report.page import link_from_asv_index, render
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
    return {a.q: a for a in sheet.answers}


def test_gpu_family_answers_measured(gpu_report):
    sheets = answers.sheets(gpu_report)
    assert [s.machine for s in sheets] == ["g4dn.2xlarge", "c7i.2xlarge"]  # the GPU machine answers first
    t4, cpu = by_q(sheets[0]), by_q(sheets[1])
    assert t4[2].status == "measured" and f"n ≈ {synth.CROSS_N:,.0f}" in t4[2].answer
    assert "32.0x" in t4[1].answer and t4[1].status == "measured"
    assert "no-prealloc: up to N = 4 kernels at once, no worker lost;" in t4[3].answer
    assert "default: up to N = 1 kernel at once, no worker lost (N = 2: 1 died)" in t4[3].answer
    assert "vectorized with 4 chains" in t4[4].answer and "gpu" in t4[4].status  # gpu nuts failed: said
    assert "60 s" in t4[7].answer and "never size a timeout" in t4[7].answer  # fixtures: evidence, no timeout
    # the CPU-only family: its cpu line against the T4's gpu line, measured, never its own "GPU"
    assert f"n ≈ {5e4 ** (2 / 3):,.0f}" in cpu[2].answer and cpu[2].status.startswith("measured")
    assert cpu[3].status.startswith("not measured") and "no GPU" in cpu[3].answer
    assert "SYNTHETIC" in answers.headline(gpu_report) and all("synthetic" in s.title for s in sheets)


def test_no_gpu_results_say_so_once_per_question(cpu_report):
    (sheet,) = answers.sheets(cpu_report)
    assert "hold no GPU" in answers.headline(cpu_report)
    q = by_q(sheet)
    assert q[2].status.startswith("not measured") and "bench.sh" in q[2].status
    # CPU concurrency cells exist, yet the GPU question is not answered from them
    assert q[3].status.startswith("not measured") and "N =" not in q[3].answer
    md = findings_md(cpu_report)
    machine_part = md.split("## Evidence: answers per measured machine")[1].split("## Guidance per lecture type")[0]
    rows = [x for x in machine_part.splitlines() if x.startswith("| ")]
    assert sum(x.count("not measured") for x in rows) == sheet.not_measured <= 7  # once per question, never per cell
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
    (sheet,) = answers.sheets(report)
    assert sheet.title.startswith("lab: H200 (machine `lab-h200`") and "runner family" not in sheet.title
    s = synth.SynthResults(tmp_path / "other").machine("lab-x", gpu="1 x NVIDIA B200", backend="cuda13", kind="lab")
    s.add("lab-x", "dense.Dense.time_warm", *DENSE, synth.dense_truth)
    assert answers.sheets(build(s.save()))[0].title.startswith("lab: 1 x NVIDIA B200")  # not catalogued: its GPU
    assert by_q(sheet)[2].status == "measured"


def test_sections_have_a_place_before_the_evidence(gpu_report):
    md = findings_md(gpu_report, sections=[lambda r: ("Release regressions", "- none found"), lambda r: None])
    evidence = md.index("## Evidence: machines")
    assert md.index("## Guidance per lecture type") < md.index("## Release regressions") < evidence


def test_guidance_per_lecture_type_is_traceable(gpu_report):
    guide = guidance_md(gpu_report)
    for title in ("Large-array", "Small float64 sequential", "NUTS", "many fresh compiles", "Several kernels at once"):
        assert title in guide
    for line in guide.splitlines():
        if line.startswith("- "):
            assert re.search(r"measured|predicted|published|not measured|Rule used here", line), line


def test_terminal_summary_is_short(gpu_report, tmp_path, capsys):
    lines = answers.summary_lines(gpu_report)
    assert 5 < len(lines) < 30 and all(len(x) <= 150 for x in lines)
    assert any("GPU faster from n ≈" in x for x in lines)
    s = synth.SynthResults(tmp_path)
    for i in range(5):
        s.machine(f"m{i}").add(f"m{i}", "dispatch.TinyOp.time_warm", ["dtype", "device"], [["float32"], ["cpu"]],
                               lambda **_: 1e-5)
    lines = answers.summary_lines(build(s.save()))
    assert len(lines) < 30 and "2 more machine(s)" in lines[-1]
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
    pts = published.points(published.figures(INCIDENTS.read_text()))
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
