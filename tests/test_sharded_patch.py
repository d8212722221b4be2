"""The patch that carries out a split or shard decision (jaxci.workflows.sharded_workflow; `jaxci sharded patch`):
a fixture repository's own cache workflow, rewritten as the plan's shard matrix and a site job, applies with
`git apply --check` at its commit, passes actionlint, keeps the repository's set-up steps (a GPU-only one gated to
the GPU shard) and puts the GPU shard on the job's own runner label."""

from __future__ import annotations

import shutil
import subprocess

import yaml

from jaxci.catalogue import load_catalogue
from jaxci.workflows import sharded, sharded_workflow
from tests.workflowutil import REPO, actionlint

FIXTURE = REPO / "tests" / "fixtures" / "ci_repos" / "sharded_gpu"
PLAN = sharded.ShardPlan("fixture@0000000", "shard: 1 on g4dn.2xlarge's GPU, 3 over 2 x ubuntu-latest", (
    sharded.Shard("gpu", "g4dn.2xlarge", "gpu", ("book/pages/matrix.md",), (60.0, 30.0, 120.0)),
    sharded.Shard("cpu-1", "ubuntu-latest", "cpu", ("book/pages/loops.md", "book/pages/squares.md"),
                  (60.0, 30.0, 120.0)),
    sharded.Shard("cpu-2", "ubuntu-latest", "cpu", ("book/pages/primes.md",), (30.0, 15.0, 60.0))))
SHA = "1" * 40


def _repo(tmp_path):
    repo = tmp_path / "repo"
    shutil.copytree(FIXTURE, repo)
    shutil.copytree(REPO / "tests" / "fixtures" / "books" / "sharded", repo / "book")
    for args in (["init", "-q"], ["add", "-A"], ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "f"]):
        subprocess.run(["git", *args], cwd=repo, check=True)
    return repo


def test_the_patch_applies_and_is_the_plan(tmp_path):
    repo = _repo(tmp_path)
    text = sharded_workflow.patch(repo, ".github/workflows/cache.yml", PLAN, "g4dn.2xlarge", load_catalogue(),
                                  "the decision, said", SHA)
    assert text.startswith("the decision, said\n")
    (tmp_path / "p.patch").write_text(text)
    check = subprocess.run(["git", "apply", "--check", str(tmp_path / "p.patch")], cwd=repo, capture_output=True,
                           text=True)
    assert check.returncode == 0, check.stderr
    subprocess.run(["git", "apply", str(tmp_path / "p.patch")], cwd=repo, check=True)
    lint = actionlint(repo / ".github" / "workflows" / "cache.yml", cwd=repo)
    assert lint.returncode == 0, lint.stdout + lint.stderr
    assert sharded.load_plan(repo / ".github" / "jaxci-shards.json") == PLAN

    flow = yaml.safe_load((repo / ".github" / "workflows" / "cache.yml").read_text())
    assert list(flow["jobs"]) == ["cache-shards", "cache", "lint"]  # the other job kept as it was
    shards, site = flow["jobs"]["cache-shards"], flow["jobs"]["cache"]
    include = shards["strategy"]["matrix"]["include"]
    assert [(i["shard"], i["device"]) for i in include] == [("gpu", "gpu"), ("cpu-1", "cpu"), ("cpu-2", "cpu")]
    assert include[0]["runs-on"] == "runs-on=${{ github.run_id }}/family=g4dn.2xlarge/image=fixture-gpu"
    assert include[1]["runs-on"] == include[2]["runs-on"] == site["runs-on"] == "ubuntu-latest"
    assert shards["strategy"]["fail-fast"] is False and shards["timeout-minutes"] == 240
    names = [s.get("name", s.get("uses")) for s in shards["steps"]]
    gpu_step = next(s for s in shards["steps"] if s.get("run") == "nvidia-smi")
    assert gpu_step["if"] == "${{ matrix.device == 'gpu' }}"
    assert not any(s.get("run") == "nvidia-smi" for s in site["steps"])  # the site job has no GPU
    share_step = "keep this shard to its own pages (jaxci sharded)"
    assert names.index("install jaxci (jaxci sharded)") < names.index(share_step)
    assert any(SHA in s.get("run", "") for s in shards["steps"])
    share = next(s for s in shards["steps"] if "jaxci sharded share" in s.get("run", ""))
    assert "--book book --engine jupyter-book" in share["run"] and share["shell"] == "bash -l {0}"
    upload = shards["steps"][-1]
    assert upload["with"]["path"] == "_build/.jupyter_cache"  # --path-output ./: _build at the root
    assert site["needs"] == "cache-shards" and site["if"] == "${{ !cancelled() }}"
    merge = next(s for s in site["steps"] if "jaxci sharded merge" in s.get("run", ""))
    assert "--book ./ shard-caches/*" in merge["run"]
    assert site["steps"][-1]["with"]["name"] == "build-cache"  # the previews' artifact, as the job uploaded it


def test_a_workflow_without_one_book_build_is_refused(tmp_path):
    import pytest

    repo = _repo(tmp_path)
    (repo / ".github" / "workflows" / "lint.yml").write_text("on: push\njobs:\n  a:\n    runs-on: x\n    steps:\n"
                                                              "      - run: echo\n")
    with pytest.raises(sharded.ShardError, match="0 Jupyter Book build steps"):
        sharded_workflow.patch(repo, ".github/workflows/lint.yml", PLAN, "g4dn.2xlarge", load_catalogue(), "h")


def test_the_command_says_the_decision_it_carries_out(tmp_path):
    """`jaxci sharded patch` with a committed plan: its header is the repository's runner decision."""
    import sys

    from jaxci.report import committed_audits
    from jaxci.report import runner_decision as page

    plan = REPO / "docs" / "shard-plans" / "lecture-python.myst@40e15dc.json"
    repo = _repo(tmp_path)
    out = subprocess.run([sys.executable, "-m", "jaxci", "sharded", "patch", "--plan", str(plan), "--checkout",
                          str(repo), "--workflow", ".github/workflows/cache.yml", "--jaxci-ref", SHA],
                         capture_output=True, text=True, cwd=REPO)
    assert out.returncode == 0, out.stderr
    found, _ = committed_audits.load(REPO / "audits")
    committed = next(c for c in found if c.label == "lecture-python.myst@40e15dc")
    decision = page.for_committed(committed, load_catalogue())
    assert page.headline(decision).removesuffix(".") in out.stdout.splitlines()[0]
    bad = subprocess.run([sys.executable, "-m", "jaxci", "sharded", "patch", "--plan", str(plan), "--checkout",
                          str(repo), "--workflow", ".github/workflows/cache.yml", "--jaxci-ref", "main"],
                         capture_output=True, text=True, cwd=REPO)
    assert bad.returncode == 2 and "not a full commit SHA" in bad.stderr
