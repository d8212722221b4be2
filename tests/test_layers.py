"""The layer contracts (pyproject.toml [tool.importlinter]) hold on this tree, and they can fail: an arrow back up
(a results module importing the report) breaks the layers. CI installs import-linter (the test extra), so this runs
there; a checkout without it skips, saying so."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LINT = shutil.which("lint-imports", path=str(Path(sys.executable).parent)) or shutil.which("lint-imports")
pytestmark = pytest.mark.skipif(LINT is None, reason="import-linter is not installed (pip install -e '.[test]')")


def lint(root: Path) -> subprocess.CompletedProcess:
    return subprocess.run([LINT, "--no-logo", "--no-cache"], cwd=root, capture_output=True, text=True, timeout=120)


def test_the_contracts_are_kept():
    done = lint(ROOT)
    assert done.returncode == 0, done.stdout + done.stderr


def test_an_arrow_back_up_breaks_the_layers(tmp_path):
    shutil.copytree(ROOT / "jaxci", tmp_path / "jaxci", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    upward = tmp_path / "jaxci" / "results" / "upward.py"
    upward.write_text('"""An arrow back up."""\n\nfrom jaxci.report import build\n')
    done = lint(tmp_path)
    assert done.returncode == 1
    assert "jaxci.results is not allowed to import jaxci.report" in done.stdout
    assert "jaxci.results.upward -> jaxci.report.build" in done.stdout
