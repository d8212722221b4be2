"""The --ci-patch over workflow files a pull request controls (issue 83 item 3-4 and the container job): CRLF line
ends, a U+2028 inside a quoted name, `runs-on` written as a YAML alias, a build job that runs in a container. Each
patch applies with `git apply` and changes the job it names, and only that one."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from jaxci.commands.audit import main
from tests.auditutil import CI_REPOS, GIT

BUILD = "      - run: myst build --execute --html"
PARALLEL = "      - run: myst build --execute --execute-parallel 4 --html"


def _repo(tmp_path: Path, edit) -> tuple[Path, Path]:
    root = tmp_path / "repo"
    shutil.copytree(CI_REPOS / "mystmd_gpu", root)
    wf = root / ".github" / "workflows" / "build.yml"
    wf.write_bytes(edit(wf.read_text().replace(BUILD, PARALLEL)).encode())
    subprocess.run([GIT, "init", "-q", str(root)], check=True)
    return root, wf


def _patched(tmp_path: Path, root: Path) -> str:
    patch = tmp_path / "ci.diff"
    assert main([str(root), "--ci-patch", str(patch), "--output", str(tmp_path / "a.md"), "--no-progress"]) == 0
    text = patch.read_bytes().decode() if patch.exists() else ""
    if text:
        subprocess.run([GIT, "apply", "--check", str(patch)], cwd=root, check=True)
        subprocess.run([GIT, "apply", str(patch)], cwd=root, check=True)
    return text


pytestmark = pytest.mark.skipif(GIT is None, reason="needs git")


def test_a_crlf_workflow_gets_a_patch_that_applies(tmp_path):
    root, wf = _repo(tmp_path, lambda t: t.replace("\n", "\r\n"))
    assert "XLA_PYTHON_CLIENT" in _patched(tmp_path, root)
    after = wf.read_bytes().decode()
    assert "\r\n" in after and "\n" not in after.replace("\r\n", "")   # the file keeps its line ends
    assert any("XLA_PYTHON_CLIENT" in k for k in yaml.safe_load(after)["jobs"]["build"]["env"])


def test_a_line_separator_in_a_quoted_name_leaves_the_patch_applicable(tmp_path):
    name = json.dumps("Build\u2028docs", ensure_ascii=False)   # the build job's own name, inside the hunk
    root, wf = _repo(tmp_path, lambda t: t.replace("    timeout-minutes: 120\n",
                                                   f"    name: {name}\n    timeout-minutes: 120\n"))
    assert "\u2028" in wf.read_text()
    assert "XLA_PYTHON_CLIENT" in _patched(tmp_path, root)
    assert any("XLA_PYTHON_CLIENT" in k for k in yaml.safe_load(wf.read_text())["jobs"]["build"]["env"])


def test_an_aliased_runs_on_gets_its_fix_in_its_own_job(tmp_path):
    def alias(text: str) -> str:
        head, _, rest = text.partition("  build:\n")
        rest = rest.replace("    runs-on:\n      - runs-on=${{ github.run_id }}\n      - family=g4dn.2xlarge\n"
                            "      - image=ubuntu24-gpu-x64\n", "    runs-on: *gpu\n")
        lint = ("  lint:\n    runs-on: &gpu\n      - runs-on=${{ github.run_id }}\n      - family=g4dn.2xlarge\n"
                "      - image=ubuntu24-gpu-x64\n    steps:\n      - run: echo lint\n")
        return head + lint + "  build:\n" + rest
    root, wf = _repo(tmp_path, alias)
    assert "*gpu" in wf.read_text()
    _patched(tmp_path, root)
    jobs = yaml.safe_load(wf.read_text())["jobs"]
    assert "env" not in jobs["lint"]
    assert any("XLA_PYTHON_CLIENT" in k for k in jobs["build"].get("env", {}))


def test_a_container_build_job_is_left_alone_by_both_patches(tmp_path):
    root, wf = _repo(tmp_path, lambda t: t.replace("    timeout-minutes: 120\n",
                                                   "    timeout-minutes: 120\n    container:\n"
                                                   "      image: ghcr.io/x:1\n      options: --gpus all\n"))
    text = _patched(tmp_path, root)
    assert "XLA_PYTHON_CLIENT" not in text
    assert "env" not in yaml.safe_load(wf.read_text())["jobs"]["build"]
