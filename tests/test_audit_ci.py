"""The CI audit: fixture repositories with known findings, the patch (git apply + actionlint),
measured inputs injected as lecture facts, bad input, the CLI, and the 150-lecture generator."""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import shutil
import subprocess

import pytest

from jaxci.analysis.prediction import LecturePrediction, PredictedSide
from jaxci.audit.lecture_ci import audit_ci, lectures, render
from jaxci.audit.lecture_ci.lectures import KEEP_GPU, PIN_CPU
from jaxci.audit.lecture_ci.workflows import parse_label
from jaxci.catalogue import catalogue_defaults, read_pins
from jaxci.commands.audit import main
from jaxci.policy.timeouts import job_timeout_minutes
from tests.auditutil import ACTIONLINT, GIT, apply_and_lint, git_copy
from tests.auditutil import CI_REPOS as FIX


def kinds(report):
    return sorted(f.kind for f in report.findings)


def by_kind(report, kind):
    return [f for f in report.findings if f.kind == kind]


@pytest.fixture(scope="module")
def static():
    return {name: audit_ci(FIX / name, lectures.audit_lectures(FIX / name))
            for name in ("findings_gpu", "split_gpu", "clean")}


# ---- labels ----

def test_runs_on_labels_parse_into_keys():
    lab = parse_label("runs-on=${{ github.run_id }}/family=g4dn.2xlarge/image=ubuntu24-gpu-x64/spot=false/disk=large")
    assert (lab.kind, lab.family, lab.image, lab.spot, lab.other) == \
        ("runs-on", "g4dn.2xlarge", "ubuntu24-gpu-x64", "false", {"disk": "large"})
    assert not lab.on_spot
    assert parse_label("runs-on=1/family=c7i.2xlarge").on_spot  # no spot key: RunsOn's default is spot
    assert parse_label(["runs-on=1", "family=g5.xlarge", "spot=true"]).on_spot
    assert parse_label("ubuntu-24.04").kind == "github"
    assert parse_label("${{ matrix.runner }}").kind == "expression"
    assert parse_label({"group": "big", "labels": ["self-hosted", "gpu"]}).kind == "self-hosted"


# ---- the fixture repositories ----

def test_findings_repository(static):
    r = static["findings_gpu"]
    assert kinds(r) == ["compile-cache", "fail-once", "job-timeout", "runner-tier", "spot", "versions", "versions"]
    tier, = by_kind(r, "runner-tier")
    assert tier.where == ".github/workflows/publish.yml:10" and "move to CPU" in tier.message
    assert "c7i.2xlarge" in tier.fix and tier.label == "static verdicts"
    spot, = by_kind(r, "spot")
    assert spot.where == ".github/workflows/publish.yml:10" and "peaceiris/actions-gh-pages" in spot.reason
    timeout, = by_kind(r, "job-timeout")  # the preview job sets timeout-minutes: only publish is found
    assert timeout.where == ".github/workflows/publish.yml:8"
    # nothing executed: the build is not measured, so the job keeps GitHub's 360 (never lowered without one)
    assert timeout.inputs["timeout_minutes"] == 360 and not timeout.edits
    assert "until the build is measured" in timeout.fix
    versions = {f.where: f for f in by_kind(r, "versions")}
    regressed = versions["environment.yml:9"]
    assert "0.11.1" in regressed.message and "lectures/chaos.md" in regressed.reason
    assert "not pinned" in versions["environment.yml:10"].message
    cache, = by_kind(r, "compile-cache")
    assert cache.label == "not measured" and "pin-cpu: true" in cache.fix and "c7i.2xlarge" in cache.fix
    # a conda build (setup-miniconda): the action is told the build's interpreter, named in the build's login shell
    step, use = cache.fix.split("- uses: ", 1)
    assert "shell: bash -l {0}" in step and "JAXCI_PYTHON=$(command -v python)" in step
    assert 'python: "${{ env.JAXCI_PYTHON }}"' in use
    assert not by_kind(r, "memory-policy")  # the job moves to a CPU family: a GPU memory policy is moot
    # drafts/heavy.md would keep a GPU busy, but exclude_patterns keeps it out of the build
    assert r.tiers[0].inputs["lectures_in_build"] == 4 and r.tiers[0].inputs["executed"] == 0
    assert "static verdicts: nothing executed" in r.tiers[0].reason and "executed lectures" not in r.tiers[0].reason
    assert len(r.lectures) == 5


def test_a_lecture_is_excluded_by_the_verdicts_flag_not_by_the_words_of_a_note():
    from jaxci.audit import repo

    verdicts = repo.audit_static(FIX / "findings_gpu")
    for v in verdicts:
        v.notes = [] if v.excluded else ["a cell excluded from execution by its own tag"]
    facts = {f.path: f.excluded for f in lectures.from_verdicts(verdicts)}
    assert facts == {v.path: v.excluded for v in verdicts} and sum(facts.values()) == 1


def test_split_repository(static):
    r = static["split_gpu"]
    assert kinds(r) == ["cell-timeout", "compile-cache", "fail-once", "memory-policy", "runner-tier", "spot",
                        "versions"]
    tier, = by_kind(r, "runner-tier")
    assert "split" in tier.message and tier.as_dict()["patched"] is False
    spot, = by_kind(r, "spot")
    assert "spot=true" in spot.message and "ghp-import" in spot.reason
    memory, = by_kind(r, "memory-policy")
    assert memory.where == ".github/workflows/build.yml:16" and memory.inputs["kernels"] == 8
    assert memory.inputs["env"] == {"XLA_PYTHON_CLIENT_PREALLOCATE": "false"}
    cell, = by_kind(r, "cell-timeout")
    # nothing measured: no built-in 600 s replaces "no limit"; the finding says to time the lectures first
    assert cell.where == "_config.yml:3" and cell.inputs["proposed_s"] is None and cell.label == "not measured"
    assert not cell.edits and "no advice lowers a limit without a measurement" in cell.fix
    versions, = by_kind(r, "versions")
    assert "not declared" in versions.message


def test_clean_repository_has_no_findings(static):
    r = static["clean"]
    assert r.findings == [] and r.errors == []
    assert [t.recommendation for t in r.tiers] == ["stay"]
    assert r.patch() == ""
    assert "No findings." in render.to_markdown(r)
    root = FIX / "clean"  # measured: a 600 s cell timeout is within 4x of the proposed 480 s
    assert audit_ci(root, _measured(root, slowest=150.0)).findings == []


# ---- the patch ----

@pytest.mark.skipif(GIT is None or not ACTIONLINT.exists(), reason="needs git and actionlint (.venv/bin)")
@pytest.mark.parametrize("name", ["findings_gpu", "split_gpu"])
def test_patch_applies_passes_actionlint_and_clears_its_findings(name, tmp_path, static):
    repo = git_copy(name, tmp_path)
    (tmp_path / "ci.diff").write_text(static[name].patch())
    apply_and_lint(repo, tmp_path / "ci.diff")
    after = audit_ci(repo, lectures.audit_lectures(repo))
    patched = {f.kind for f in static[name].findings if f.as_dict()["patched"]}
    assert patched and not patched & {f.kind for f in after.findings if f.as_dict()["patched"]}
    # comments and layout survive: only the named lines changed
    for path in (FIX / name / ".github" / "workflows").glob("*.yml"):
        old = path.read_text().splitlines()
        new = (repo / ".github" / "workflows" / path.name).read_text().splitlines()
        assert [line for line in old if line.lstrip().startswith("#")] == \
            [line for line in new if line.lstrip().startswith("#")]
    if name == "findings_gpu":
        pins = read_pins("cpu")
        text = (repo / "environment.yml").read_text()
        assert f"jax=={pins['jax']}   # pinned on a regressed release" in text
        wf = (repo / ".github" / "workflows" / "publish.yml").read_text()
        assert "family=c7i.2xlarge/image=ubuntu24-full-x64/spot=false" in wf
        assert "timeout-minutes: 99" not in wf  # an unmeasured build lowers no limit (policy.timeouts)


# ---- measured inputs (lecture facts as --execute gives them) ----

def _measured(root, slowest, cpu_s=30.0, compile_s=2.0):
    return [dataclasses.replace(f, cpu_s=cpu_s, compile_cpu_s=compile_s if f.uses_jax else None, slowest_cell_s=slowest)
            for f in lectures.audit_lectures(root)]


def test_cell_timeout_far_above_and_below_measured_need():
    root = FIX / "findings_gpu"  # execute.timeout: 7200
    far = audit_ci(root, _measured(root, slowest=40.0))
    cell, = by_kind(far, "cell-timeout")
    assert "far above" in cell.message and cell.inputs["proposed_s"] == 120 and cell.label == "measured"
    assert cell.where == "_config.yml:5"
    assert "-  timeout: 7200   # seconds per cell\n+  timeout: 120   # seconds per cell" in far.patch()
    below = audit_ci(root, _measured(root, slowest=9000.0))
    cell, = by_kind(below, "cell-timeout")
    assert "below what the slowest measured cell" in cell.message and cell.inputs["proposed_s"] == 27000
    near = audit_ci(root, _measured(root, slowest=2000.0))  # 7200 is within 4x of 6000: no finding
    assert not by_kind(near, "cell-timeout")


def test_measured_build_sets_job_timeout_and_cache_saving():
    root = FIX / "findings_gpu"
    r = audit_ci(root, _measured(root, slowest=5.0, cpu_s=60.0, compile_s=3.0))
    timeout, = by_kind(r, "job-timeout")
    assert timeout.label == "measured" and timeout.inputs["build_min"] == 4.0  # 4 lectures x 60 s
    assert timeout.inputs["timeout_minutes"] == 15  # ceil((6 + 4) x 1.5)
    cache, = by_kind(r, "compile-cache")
    assert cache.label == "measured" and "9.0 s" in cache.reason  # 3 JAX lectures x 3 s compile


def _predicted(root, cpu=150.0, gpu=200.0, c7i=80.0):
    """Executed lectures with the runner model's predictions: the T4's GPU slower than its CPU, c7i faster."""
    predicted = {"g4dn.2xlarge": LecturePrediction(PredictedSide(cpu), PredictedSide(gpu)),
                 "c7i.2xlarge": LecturePrediction(PredictedSide(c7i))}
    return [dataclasses.replace(f, executed=True, predicted=predicted)
            for f in _measured(root, slowest=5.0, cpu_s=100.0)]


def test_runner_tier_rows_from_the_predicted_builds():
    root = FIX / "findings_gpu"
    facts = _predicted(root)
    r = audit_ci(root, facts)
    rows = {row.family: row for row in r.tiers[0].rows}
    n = len([f for f in facts if not f.excluded])
    # the one build model (policy.builds): each lecture on its faster device by the one margin
    assert rows["c7i.2xlarge"].label == "predicted" and rows["c7i.2xlarge"].build_s == pytest.approx(80 * n)
    assert rows["g4dn.2xlarge"].build_s == pytest.approx(150 * n)  # its GPU is slower: every lecture on its CPU
    assert rows["g4dn.2xlarge"].dollars > rows["c7i.2xlarge"].dollars
    assert rows["g5.2xlarge"].label == "not measured" and rows["g5.2xlarge"].build_s is None


# ---- adapter, bad input, outputs ----

def test_adapter_reads_lecture_verdicts():
    facts = {f.path: f for f in lectures.audit_lectures(FIX / "clean")}
    assert facts["lectures/big.md"].recommendation == KEEP_GPU and facts["lectures/big.md"].uses_jax
    assert facts["lectures/intro.md"].recommendation == PIN_CPU and not facts["lectures/intro.md"].uses_jax


def test_malformed_files_are_named_and_the_rest_still_audited(tmp_path):
    repo = tmp_path / "repo"
    shutil.copytree(FIX / "findings_gpu", repo)
    (repo / ".github" / "workflows" / "broken.yml").write_text("name: x\njobs:\n  a: [unclosed\n")
    (repo / "environment.yml").write_text("dependencies:\n  - python=3.13\n  - {bad\n")
    r = audit_ci(repo, lectures.audit_lectures(repo))
    assert any(e.startswith(".github/workflows/broken.yml:") and "not valid YAML" in e for e in r.errors)
    assert any(e.startswith("environment.yml:") for e in r.errors)
    assert by_kind(r, "spot") and by_kind(r, "job-timeout")  # publish.yml still audited


def test_json_and_summary(static):
    data = json.loads(render.to_json(static["findings_gpu"]))
    assert {f["kind"] for f in data["findings"]} >= {"spot", "runner-tier"} and data["patch"].startswith("diff --git")
    job = data["workflows"][0]["jobs"][0]
    assert job["runs_on"]["family"] == "g4dn.2xlarge" and job["runs_on"]["spot"] is None
    assert data["environment"]["packages"]["jax"]["where"] == "environment.yml:9"
    assert data["book"]["timeout"] == 7200 and data["book"]["timeout_where"] == "_config.yml:5"
    text = render.summary(static["findings_gpu"])
    assert text.startswith("## jaxci audit: CI (7 finding(s))") and "move to CPU" in text


def test_cli_appends_ci_and_writes_patch(tmp_path):
    out, diff, summ = tmp_path / "a.md", tmp_path / "ci.diff", tmp_path / "summary.md"
    assert main([str(FIX / "split_gpu"), "--output", str(out), "--ci-patch", str(diff), "--summary", str(summ),
                 "--no-progress"]) == 0
    assert "## CI audit: 7 finding(s)" in out.read_text() and diff.read_text().startswith("diff --git")
    assert "## jaxci audit: CI" in summ.read_text()
    assert main([str(FIX / "split_gpu"), "--output", str(out), "--no-ci"]) == 0
    assert "CI audit" not in out.read_text()


def test_cli_json_has_ci_key(tmp_path):
    out = tmp_path / "a.json"
    assert main([str(FIX / "clean"), "--format", "json", "--output", str(out)]) == 0
    assert json.loads(out.read_text())["ci"]["findings"] == []


def test_generated_150_lecture_repository_is_audited(tmp_path):
    spec = importlib.util.spec_from_file_location("audit_ci_measure", FIX.parents[2] / "measure" / "audit_ci.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    root = tmp_path / "repo"
    root.mkdir()
    module.generate(root, 150, 6)
    facts = lectures.audit_lectures(root)
    r = audit_ci(root, facts)
    assert len(facts) == 150 and {"spot", "job-timeout", "versions"} <= set(kinds(r))


# ---- edit layouts: list labels without spot, an existing env block, a book without execute.timeout ----

LIST_WORKFLOW = """name: Deploy
on:
  push:
    branches: [main]
jobs:
  deploy:
    runs-on:
      - runs-on=${{ github.run_id }}
      - family=g4dn.xlarge
      - image=ubuntu24-gpu-x64
    timeout-minutes: 60
    env:
      JAX_TRACEBACK_FILTERING: "off"  # kept as written
    steps:
      - run: sphinx-build -j 2 -b html lectures _build/html
      - uses: actions/deploy-pages@v4
"""


def test_edits_for_list_labels_env_blocks_and_absent_cell_timeout(tmp_path):
    repo = tmp_path / "repo"
    (repo / ".github" / "workflows").mkdir(parents=True)
    (repo / ".github" / "workflows" / "deploy.yml").write_text(LIST_WORKFLOW)
    (repo / ".github" / "actionlint.yaml").write_text(
        'self-hosted-runner:\n  labels: ["family=*", "image=*", "spot=*"]\n')
    (repo / "_config.yml").write_text("execute:\n  execute_notebooks: force\n")
    (repo / "requirements.txt").write_text("jupyter-book==1.0.4")  # no final newline
    shutil.copytree(FIX / "clean" / "lectures", repo / "lectures")
    facts = [dataclasses.replace(f, cpu_s=10.0, slowest_cell_s=45.0) for f in lectures.audit_lectures(repo)]
    r = audit_ci(repo, facts)
    assert kinds(r) == ["cell-timeout", "compile-cache", "fail-once", "memory-policy", "spot", "versions"]
    patch = r.patch()
    assert "+      - spot=false\n" in patch
    assert '+      XLA_PYTHON_CLIENT_PREALLOCATE: "false"\n' in patch
    assert "   execute_notebooks: force\n+  timeout: 180\n" in patch  # 45 s x 3, rounded up to a minute
    pins = read_pins("cpu")
    assert f"+jax[cuda13]=={pins['jax']}" in patch  # the build stays on a GPU: the CUDA wheels
    if GIT and ACTIONLINT.exists():
        subprocess.run([GIT, "init", "-q", str(repo)], check=True)
        (tmp_path / "p.diff").write_text(patch)
        apply_and_lint(repo, tmp_path / "p.diff", ".github/workflows/deploy.yml")
        assert "# kept as written" in (repo / ".github" / "workflows" / "deploy.yml").read_text()
        assert (repo / "requirements.txt").read_text().startswith("jupyter-book==1.0.4\n")
        after = audit_ci(repo, facts)
        assert kinds(after) == ["compile-cache", "fail-once"]


@pytest.mark.skipif(GIT is None, reason="needs git")
def test_emit_config_carries_the_ci_changes(tmp_path):
    repo = git_copy("split_gpu", tmp_path)
    out, emitted = tmp_path / "a.md", tmp_path / "emit.diff"
    assert main([str(repo), "--output", str(out), "--emit-config", str(emitted), "--no-progress"]) == 0
    text = emitted.read_text()
    assert "diff --git a/.github/workflows/build.yml b/.github/workflows/build.yml" in text
    assert "CI audit: kernelspec install, memory-policy, spot" in text
    assert "CI findings to act on by hand: runner-tier" in text
    subprocess.run([GIT, "apply", str(emitted)], cwd=repo, check=True)
    assert "spot=false" in (repo / ".github" / "workflows" / "build.yml").read_text()


def test_cli_refuses_unwritable_ci_paths_before_auditing(tmp_path, capsys):
    assert main([str(FIX / "clean"), "--ci-patch", str(tmp_path / "no" / "such" / "ci.diff")]) == 2
    err = capsys.readouterr().err
    assert "--ci-patch" in err and "does not exist" in err and "Traceback" not in err
    assert main([str(FIX / "clean"), "--ci-output", str(tmp_path)]) == 2
    assert "--ci-output" in capsys.readouterr().err


def test_job_timeout_is_the_one_rule_on_the_predicted_build():
    root = FIX / "findings_gpu"
    timeout, = by_kind(audit_ci(root, _predicted(root)), "job-timeout")
    assert timeout.label == "predicted" and "high end of each lecture's band" in timeout.fix
    assert timeout.inputs["timeout_minutes"] == job_timeout_minutes(timeout.inputs["build_min"] * 60,
                                                                    catalogue_defaults())


def test_tier_rows_give_the_whole_builds_figure():
    """With the audit's whole build (jaxci.policy.wholebuild, audit.json's `build`), a family's tier row is that
    figure, published and predicted lectures together: never "build time not measured" beside it because one
    lecture failed here."""
    from types import SimpleNamespace

    from jaxci.audit.lecture_ci import tier
    from jaxci.catalogue import catalogue_defaults, load_catalogue
    from jaxci.policy import wholebuild

    cat = load_catalogue()
    build = SimpleNamespace(after_s=(3600.0, 3500.0, 3700.0), unpriced=["lectures/failed.md"],
                            counts={wholebuild.PUBLISHED: 140, wholebuild.EXECUTED: 5, wholebuild.NOT_PREDICTED: 1})
    rows = {r.family: r for r in tier.estimates([], cat, catalogue_defaults(), {"g4dn.2xlarge": build})}
    row = rows["g4dn.2xlarge"]
    assert row.build_s == 3600.0 and row.label == "predicted" and row.dollars is not None
    assert "140 lectures at their published seconds, 5 predicted" in row.basis and "1 with neither" in row.basis
    assert rows["c7i.2xlarge"].build_s is None   # no whole build given for it: the old rule (nothing executed)


def test_job_timeout_rests_on_the_whole_build_when_the_audit_has_one():
    """A job with no timeout-minutes gets the one rule on the whole build of the family it runs on after the patch
    (every lecture priced: published or predicted), the slower of the build as published and after the patch:
    never "build time not measured" beside the audit's own `build` block. A whole build with an unpriced lecture is
    not used (it would be part of the build)."""
    from types import SimpleNamespace

    from jaxci.policy import wholebuild

    root = FIX / "findings_gpu"   # its publishing job moves to c7i.2xlarge (the tier decision)
    counts = {wholebuild.PUBLISHED: 0, wholebuild.EXECUTED: 145, wholebuild.NOT_PREDICTED: 0}
    build = SimpleNamespace(lectures=("x",) * 145, unpriced=[], after_s=(3600.0, 3500.0, 3700.0), counts=counts,
                            published=None)
    timeout, = by_kind(audit_ci(root, _predicted(root), whole={"c7i.2xlarge": build}), "job-timeout")
    assert timeout.label == "predicted" and "the whole build on c7i.2xlarge" in timeout.fix
    assert timeout.inputs["build_min"] == pytest.approx(3700.0 / 60, abs=0.01)   # the band's high end
    assert timeout.inputs["timeout_minutes"] == job_timeout_minutes(3700.0, catalogue_defaults())
    assert "not measured" not in timeout.fix and str(root) not in timeout.fix
    published = SimpleNamespace(**{**vars(build), "published": SimpleNamespace(total_s=6535.0, source="site@abc")})
    timeout, = by_kind(audit_ci(root, _predicted(root), whole={"c7i.2xlarge": published}), "job-timeout")
    assert timeout.inputs["build_min"] == pytest.approx(6535.0 / 60, abs=0.01)   # as published: the slower
    partial = SimpleNamespace(**{**vars(build), "unpriced": ["lectures/a.md"]})
    timeout, = by_kind(audit_ci(root, _predicted(root), whole={"c7i.2xlarge": partial}), "job-timeout")
    assert "the whole build" not in timeout.fix   # the tier decision's predicted build, as before
