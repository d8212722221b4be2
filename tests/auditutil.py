"""Setup the audit tests share: lectures and notebooks written on the fly, fixture CI repositories copied into a git
work tree, and a patch applied there and linted."""

import shutil
import subprocess
import sys
from pathlib import Path

import nbformat.v4 as v4

CI_REPOS = Path(__file__).parent / "fixtures" / "ci_repos"
BIN = Path(sys.executable).parent
ACTIONLINT = BIN / "actionlint"
GIT = shutil.which("git")


def myst(code: str) -> str:
    """A MyST lecture for the python3 kernel with one code cell."""
    return "---\nkernelspec:\n  name: python3\n  display_name: Python 3\n---\n\n```{code-cell} ipython3\n" + code + \
        "\n```\n"


def notebook(*sources):
    """A notebook of code cells for the python3 kernel."""
    nb = v4.new_notebook(cells=[v4.new_code_cell(s) for s in sources])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    return nb


def by_path(verdicts):
    return {v.path: v for v in verdicts}


def git_copy(name, tmp_path):
    """A fixture CI repository copied into a fresh git work tree."""
    dest = tmp_path / name
    shutil.copytree(CI_REPOS / name, dest)
    subprocess.run([GIT, "init", "-q", str(dest)], check=True)
    return dest


def apply_and_lint(repo, patch, *workflows):
    """`git apply` the patch file in repo, then actionlint the workflows named (every workflow when none is)."""
    subprocess.run([GIT, "apply", str(patch)], cwd=repo, check=True)
    files = workflows or sorted((repo / ".github" / "workflows").glob("*.yml"))
    lint = subprocess.run([str(ACTIONLINT), *map(str, files)], cwd=repo, capture_output=True, text=True)
    assert lint.returncode == 0, lint.stdout + lint.stderr
