"""The --emit-config patch builds (kernelspec install step, narrative lectures left on the
GPU), every install line is checked, job timeouts only for notebook-executing jobs, tier counts say what ran,
the tier decision with numbers, and the TITAN RTX lab entry."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
from pathlib import Path

import pytest
import yaml

from jaxci.analysis import peak
from jaxci.analysis.prediction import LecturePrediction, PredictedSide
from jaxci.audit import repo as lecture_repo
from jaxci.audit.lecture_ci import audit_ci, decision, lectures, render
from jaxci.audit.lecture_ci.edits import join_emitted
from jaxci.audit.lecture_ci.lectures import KEEP_GPU, PIN_CPU, LectureFacts
from jaxci.audit.writing import emit
from jaxci.catalogue import catalogue_defaults, load_catalogue, read_pins
from jaxci.commands.audit import main
from tests.auditutil import ACTIONLINT, BIN, GIT, apply_and_lint, git_copy
from tests.auditutil import CI_REPOS as FIX


def _steps(path: Path, job: str) -> list[dict]:
    return yaml.safe_load(path.read_text())["jobs"][job]["steps"]


# ---- the patch builds: kernelspec install step, narrative left on the GPU, executed with the pinned kernel ----

@pytest.mark.slow
@pytest.mark.skipif(GIT is None or not ACTIONLINT.exists(), reason="needs git and actionlint (.venv/bin)")
def test_sample_book_patch_applies_lints_and_builds_the_pinned_lecture_on_cpu(tmp_path, monkeypatch, capsys):
    import nbclient

    from jaxci.audit.runner import read_notebook

    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    monkeypatch.delenv("JAX_PLATFORMS", raising=False)  # only the kernelspec may set it
    repo = git_copy("sample_book", tmp_path)
    patch = tmp_path / "patch.diff"
    assert main([str(repo), "--output", str(tmp_path / "a.md"), "--emit-config", str(patch), "--no-progress"]) == 0
    text = patch.read_text()
    assert "Left on the GPU: narrative" in text and "lectures/gpu_intro.md (cell 1: prints jax.devices()" in text
    workflow = repo / ".github" / "workflows" / "build.yml"
    apply_and_lint(repo, patch, workflow)
    build = _steps(workflow, "build")
    names = [s.get("name") for s in build]
    install = names.index(emit.INSTALL_STEP)
    assert names[install - 1] == "Install the lecture environment" and names[install + 1] == "Build the book"
    assert all("kernelspec" not in (s.get("run") or "") for s in _steps(workflow, "linkcheck"))
    assert "# build every lecture, executing the notebooks" in workflow.read_text()  # the comment kept its step
    # install the kernelspec exactly as the patched step says, into a private Jupyter data dir
    data = tmp_path / "jupyter-data"
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}", "JUPYTER_DATA_DIR": str(data)}
    subprocess.run(["bash", "-ec", build[install]["run"]], cwd=repo, env=env, check=True)
    assert json.loads((data / "kernels" / emit.KERNEL / "kernel.json").read_text())["env"] == {"JAX_PLATFORMS": "cpu"}
    # build the pinned lecture with the kernel its metadata now names
    monkeypatch.setenv("JUPYTER_DATA_DIR", str(data))
    monkeypatch.setenv("PATH", env["PATH"])
    nb = read_notebook(repo / "lectures" / "scalar_loop.md")
    assert nb.metadata.kernelspec.name == emit.KERNEL
    assert read_notebook(repo / "lectures" / "gpu_intro.md").metadata.kernelspec.name == "python3"  # narrative
    import nbformat

    nb.cells.append(nbformat.v4.new_code_cell(
        "import os, jax\nprint('JAX_PLATFORMS=' + os.environ.get('JAX_PLATFORMS', ''), jax.default_backend())"))
    nbclient.NotebookClient(nb, kernel_name=nb.metadata.kernelspec.name, timeout=300,
                            resources={"metadata": {"path": str(repo / "lectures")}}).execute()
    outputs = ["".join(o.get("text", "") for o in c.get("outputs", [])) for c in nb.cells if c.cell_type == "code"]
    assert outputs[-1].strip() == "JAX_PLATFORMS=cpu cpu", outputs
    with capsys.disabled():  # the run, for the record
        print(f"\n[sample_book] kernel {nb.metadata.kernelspec.name}: lecture output {outputs[0].strip()!r}; "
              f"check cell {outputs[-1].strip()!r}")


def test_no_pins_no_install_step(tmp_path):
    """A patch that pins nothing adds no kernelspec step (clean: every lecture keeps the GPU)."""
    root = FIX / "clean"
    config = emit.build(lecture_repo.audit_static(root))
    join_emitted(audit_ci(root, lectures.audit_lectures(root)), config)
    assert not emit.pins_kernel(config) and not any(emit.INSTALL_STEP in s for s in config.steps)


# ---- every install line of every workflow ----

WF = """name: {name}
on: [push]
permissions: {{}}
jobs:
  build:
    runs-on: ubuntu-latest
    timeout-minutes: 30
    steps:
      - uses: actions/checkout@v4
      - run: |
          python -m pip install --upgrade pip
          pip install "jax[cuda13]{spec}" \\
            numpyro{numpyro}
{extra}      - run: jb build lectures
"""


def test_every_install_line_in_every_workflow_and_installed_file(tmp_path):
    wf = tmp_path / ".github" / "workflows"
    wf.mkdir(parents=True)
    (wf / "a.yml").write_text(WF.format(name="a", spec="==0.11.1", numpyro="", extra=""))
    (wf / "b.yml").write_text(WF.format(name="b", spec="==0.11.1", numpyro="==0.21.0", extra=""))
    (wf / "c.yml").write_text(WF.format(name="c", spec="", numpyro="==0.21.0",
                                        extra="      - run: pip install -r ci/requirements.txt\n"))
    (tmp_path / "ci").mkdir()
    (tmp_path / "ci" / "requirements.txt").write_text("# CI extras\njaxlib\nnumpyro>=0.15\n")
    facts = [LectureFacts("l.md", uses_jax=True, uses_numpyro=True, recommendation=PIN_CPU, sequential=True)]
    r = audit_ci(tmp_path, facts)
    where = {(x.where, x.name): x.version for x in r.installs}
    assert where == {(".github/workflows/a.yml:12", "jax"): "0.11.1", (".github/workflows/a.yml:13", "numpyro"): None,
                     (".github/workflows/b.yml:12", "jax"): "0.11.1",
                     (".github/workflows/b.yml:13", "numpyro"): "0.21.0",
                     (".github/workflows/c.yml:12", "jax"): None, (".github/workflows/c.yml:13", "numpyro"): "0.21.0",
                     ("ci/requirements.txt:2", "jaxlib"): None, ("ci/requirements.txt:3", "numpyro"): None}
    found = {f.where: f.message for f in r.findings if f.kind == "versions"}
    assert "0.11.1" in found[".github/workflows/a.yml:12"] and "0.11.1" in found[".github/workflows/b.yml:12"]
    assert "unpinned" in found[".github/workflows/c.yml:12"] and "unpinned" in found[".github/workflows/a.yml:13"]
    assert "not pinned" in found["ci/requirements.txt:2"] and "not pinned" in found["ci/requirements.txt:3"]
    assert not any(w.startswith(".github/workflows/b.yml:13") for w in found)  # pinned: listed, no finding
    pins = read_pins("cpu")
    patch = r.patch()
    assert f'pip install "jax[cuda13]=={pins["jax"]}" \\' in patch and f"+numpyro=={pins['numpyro']}" in patch
    md = render.to_markdown(r)
    assert "### Install lines (8:" in md and "`.github/workflows/c.yml:12`" in md


# ---- job timeouts only where notebooks execute ----

def test_job_timeouts_only_for_notebook_executing_jobs(tmp_path):
    r = audit_ci(FIX / "sample_book", lectures.audit_lectures(FIX / "sample_book"))
    timeouts = [f for f in r.findings if f.kind == "job-timeout"]
    assert [f.where for f in timeouts] == [".github/workflows/build.yml:9"]  # not the linkcheck job
    assert timeouts[0].label == "policy" and "planning ceiling" in timeouts[0].fix
    wf = tmp_path / ".github" / "workflows"
    wf.mkdir(parents=True)
    (wf / "t.yml").write_text("on: [push]\njobs:\n  translate:\n    runs-on: ubuntu-latest\n    steps:\n"
                              "      - run: jb build lectures\n  links:\n    runs-on: ubuntu-latest\n    steps:\n"
                              "      - run: sphinx-build -b linkcheck lectures out\n")
    assert "job-timeout" not in {f.kind for f in audit_ci(tmp_path, []).findings}


# ---- tier counts say what ran ----

def test_tier_counts_say_executed_only_when_lectures_ran():
    """Unexecuted, the count says nothing executed (test_audit_ci.test_findings_repository)."""
    root = FIX / "findings_gpu"
    ran = [LectureFacts(f.path, f.uses_jax, f.uses_numpyro, f.recommendation, executed=True, cpu_s=1.0,
                        excluded=f.excluded) for f in lectures.audit_lectures(root)]
    executed = audit_ci(root, ran)
    assert "of 4 executed lectures" in executed.tiers[0].reason


# ---- the tier decision with numbers ----

def _pred(cpu, gpu=None):
    return LecturePrediction(PredictedSide(cpu, cpu, 1.5 * cpu),
                             None if gpu is None else PredictedSide(gpu, gpu, 1.5 * gpu), "test")


def _facts():
    """Lecture A wins on the T4 (600 s -> 60 s of JAX work), B and C lose there (5 s -> 30 s); each lecture also has
    10 s of host code, which its predicted record holds: whole-lecture seconds (jaxci.audit.judging.predicted)."""
    rows = {"A": (610.0, 70.0, 510.0), "B": (15.0, 40.0, 14.0), "C": (15.0, 40.0, 14.0)}
    out = []
    for name, (cpu, gpu, c7i) in rows.items():
        rec = KEEP_GPU if name == "A" else PIN_CPU
        out.append(LectureFacts(f"lectures/{name}.md", uses_jax=True, recommendation=rec, executed=True,
                                cpu_s=cpu,
                                predicted={"g4dn.2xlarge": _pred(cpu, gpu), "c7i.2xlarge": _pred(c7i),
                                           "lab-titan-rtx": _pred(cpu, gpu / 2)}))
    return out


def test_decision_prices_every_option_and_keeps_gpu_winners_fast():
    cat = {n: m for n, m in load_catalogue(include_lab=True).items()
           if n in ("g4dn.2xlarge", "c7i.2xlarge", "lab-titan-rtx")}
    defaults = catalogue_defaults()
    d = decision.decide(_facts(), "w.yml:3", "g4dn.2xlarge", cat, defaults, builds_per_year=500)
    by = {o.name: o for o in d.options}
    assert d.gpu_winning == ["lectures/A.md"]
    assert by["GPU as is: g4dn.2xlarge"].build_s == pytest.approx(30 + 60 + 30 + 30)
    assert by["GPU with pins: g4dn.2xlarge"].build_s == pytest.approx(30 + 60 + 5 + 5)
    assert by["CPU alone: c7i.2xlarge"].build_s == pytest.approx(30 + 500 + 4 + 4)
    assert not by["CPU alone: c7i.2xlarge"].keeps_fast  # A would run 510 s on a CPU
    split = by["split: c7i.2xlarge + g4dn.2xlarge"]
    assert split.jobs_s == pytest.approx({"c7i.2xlarge": 360 + 28, "g4dn.2xlarge": 360 + 70}) and split.keeps_fast
    assert by["GPU with pins: lab-titan-rtx"].dollars is None  # shown, never chosen
    fit = [o for o in d.options if o.keeps_fast and o.dollars is not None]
    assert d.chosen is min(fit, key=lambda o: o.dollars) and d.chosen.dollars is not None
    overhead = float(defaults["job_overhead_minutes"].value) * 60
    before, after = d.gpu_hours_year
    assert d.before.name == "GPU as is: g4dn.2xlarge"
    assert before == pytest.approx(500 * (overhead + 150) / 3600)
    assert after == pytest.approx(500 * d.chosen.gpu_hours)


def test_decision_sets_the_tier_and_sizes_the_job_timeout():
    root = FIX / "findings_gpu"  # the publish job builds on g4dn.2xlarge
    r = audit_ci(root, _facts(), builds_per_year=200)
    t = r.tiers[0]  # A wins on the T4 and pins make B and C cheap: stay, with the pins
    assert (t.recommendation, t.label) == ("stay", "predicted") and "GPU-hours a year at 200 builds" in t.reason
    assert r.decision.chosen.name == "GPU with pins: g4dn.2xlarge"
    timeout, = [f for f in r.findings if f.kind == "job-timeout"]
    assert timeout.label == "predicted" and "high end of each lecture's band" in timeout.fix
    # the slower of as written (all JAX on the T4) and with pins, at the band's high end: 1.5 x (70 + 40 + 40) s
    assert timeout.inputs["build_min"] == pytest.approx(1.5 * (70 + 40 + 40) / 60)
    md = render.to_markdown(r)
    assert "### Tier decision for `.github/workflows/publish.yml:8` (g4dn.2xlarge): predicted" in md
    assert json.loads(render.to_json(r))["decision"]["chosen"] == "GPU with pins: g4dn.2xlarge"
    slow = [dataclasses.replace(f, predicted={**f.predicted,
                                              "g4dn.2xlarge": _pred(f.predicted["g4dn.2xlarge"].cpu.seconds, 900.0)})
            for f in _facts()]
    moved = audit_ci(root, slow)  # nothing wins on the T4 any more: the cheapest CPU family takes the build
    tier, = [f for f in moved.findings if f.kind == "runner-tier"]
    assert tier.label == "predicted" and moved.decision.chosen.name == "CPU alone: c7i.2xlarge"
    assert "family=c7i.2xlarge" in moved.patch()


def test_decision_needs_executed_predictions():
    assert decision.decide(lectures.audit_lectures(FIX / "clean"), "w:1", "g4dn.2xlarge",
                           load_catalogue(), catalogue_defaults()) is None


def test_builds_per_year_is_validated(capsys):
    with pytest.raises(SystemExit) as exc:
        main([str(FIX / "clean"), "--builds-per-year", "many"])
    assert exc.value.code == 2 and "whole number of builds" in capsys.readouterr().err


# ---- TITAN RTX: a lab Turing box ----

def test_titan_rtx_is_a_lab_machine_on_the_fp32_path():
    m = load_catalogue(include_lab=True)["lab-titan-rtx"]
    assert m.is_lab and m.has_gpu and "lab-titan-rtx" not in load_catalogue()
    assert m.value("gpu_compute_capability") == 7.5 and m.value("gpu_fp32_tflops") == 16.3
    assert m.value("gpu_bandwidth_gbs") == 672 and m.value("gpu_fp64_tflops") == pytest.approx(16.3 / 32, abs=0.01)
    assert m.value("price_per_hour") is None and m.figure("gpu_tf32_tflops").reason
    path, key, gflops, _ = peak.gemm_path(m, "float32")
    assert (path, key, gflops) == ("fp32", "gpu_fp32_tflops", 16300.0)  # Turing: no TF32
    assert peak.gemm_path(m, "float64")[0] == "fp64"
    for name in m.figures:
        fig = m.figure(name)
        assert (fig.value is not None and fig.source) or fig.reason, name
