"""The --emit-config patch cannot be steered by names from the audited repository (issue 83 item 1): a container
image whose name carries newlines and a whole forged `diff --git` section becomes one escaped line of the patch's
notes; `git apply` then changes only the files the audit meant to change, with their modes."""

from __future__ import annotations

import json
import subprocess

import pytest

from jaxci.audit.lecture_ci.workflows import container_image
from jaxci.commands.audit import main
from tests.auditutil import GIT, git_copy

FORGED = ("img\ndiff --git a/evil.sh b/evil.sh\nnew file mode 100755\n--- /dev/null\n+++ b/evil.sh\n"
          "@@ -0,0 +1 @@\n+touch PWNED\nx")


KERNEL = "_jaxci/kernels/python3-jax-cpu/kernel.json"


def test_a_container_image_is_one_line():
    assert container_image(FORGED).startswith("img\\ndiff --git") and "\n" not in container_image(FORGED)
    assert container_image({"image": "ghcr.io/x:1"}) == "ghcr.io/x:1" and container_image(None) == ""


@pytest.mark.skipif(GIT is None, reason="needs git")
def test_a_hostile_container_name_adds_no_file_to_the_patch(tmp_path, monkeypatch):
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    repo = git_copy("sample_book", tmp_path)
    workflow = repo / ".github" / "workflows" / "build.yml"
    workflow.write_text(workflow.read_text() + "  check:\n    runs-on: ubuntu-latest\n"
                        f"    container: {json.dumps(FORGED)}\n    steps:\n      - run: echo check\n")
    subprocess.run([GIT, "add", "-A"], cwd=repo, check=True)
    subprocess.run([GIT, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "base"], cwd=repo, check=True)
    patch = tmp_path / "emit.patch"
    assert main([str(repo), "--output", str(tmp_path / "a.md"), "--emit-config", str(patch), "--machine",
                 "g4dn.2xlarge", "--no-progress"]) == 0
    text = patch.read_text()
    head = text.split("\ndiff --git ", 1)[0]
    assert "img\\ndiff --git a/evil.sh" in head      # said, escaped, in the notes
    touched = subprocess.run([GIT, "apply", "--numstat", "--summary", str(patch)], cwd=repo, check=True,
                             capture_output=True, text=True).stdout
    paths = {line.split("\t")[2] for line in touched.splitlines() if line.count("\t") == 2}
    assert paths == {KERNEL, "lectures/scalar_loop.md", ".github/workflows/build.yml"}, touched
    created = [line.split() for line in touched.splitlines() if line.startswith(" create mode")]
    assert created == [["create", "mode", "100644", KERNEL]], touched   # the kernelspec, not executable
    subprocess.run([GIT, "apply", str(patch)], cwd=repo, check=True)
    changed = subprocess.run([GIT, "status", "--porcelain", "--untracked-files=all"], cwd=repo, check=True,
                             capture_output=True, text=True).stdout.splitlines()
    assert sorted(changed) == sorted([" M .github/workflows/build.yml", " M lectures/scalar_loop.md", f"?? {KERNEL}"])
    assert not (repo / "evil.sh").exists() and not (repo / "PWNED").exists()
