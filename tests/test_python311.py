"""The TPU image runs Python 3.11 (issue 71): every module of jaxci, benchmarks and scripts must parse with 3.11's
grammar, and every jaxci module must import there (a missing third-party package is that image's matter, not a
syntax or standard-library fault). The quick start keeps needing 3.12 for today's JAX pin; this guards the code.

The check runs a real 3.11 interpreter (`python3.11`, or `python3` where that is 3.11): `ast.parse` with
`feature_version` does not refuse every newer construct (PEP 701 f-strings parse either way on 3.12).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tomllib

import pytest

from jaxci import REPO_ROOT

COMPILE_ALL = """
import json, sys
bad = {}
for path in json.loads(sys.stdin.read()):
    try:
        compile(open(path, encoding="utf-8").read(), path, "exec", dont_inherit=True)
    except SyntaxError as exc:
        bad[path] = f"line {exc.lineno}: {exc.msg}"
print(json.dumps(bad))
"""

IMPORT_ALL = """
import importlib, json, pkgutil, sys
import jaxci
bad = {}
for m in pkgutil.walk_packages(jaxci.__path__, "jaxci."):
    if m.name.endswith("__main__"):
        continue
    try:
        importlib.import_module(m.name)
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] in ("jaxci", "benchmarks"):
            bad[m.name] = repr(exc)
    except Exception as exc:
        bad[m.name] = repr(exc)[:300]
print(json.dumps(bad))
"""


def python311() -> str | None:
    """A Python 3.11 interpreter on PATH, or None."""
    for name in ("python3.11", "python3"):
        exe = shutil.which(name)
        if exe and subprocess.run([exe, "-c", "import sys; sys.exit(sys.version_info[:2] != (3, 11))"]).returncode == 0:
            return exe
    return None


@pytest.fixture(scope="module")
def py311():
    exe = python311()
    if exe is None:
        pytest.skip("no Python 3.11 on PATH (python3.11, python3): the 3.11 grammar check needs one")
    return exe


def sources() -> list[str]:
    return sorted(str(p) for top in ("jaxci", "benchmarks", "scripts", "measure") if (REPO_ROOT / top).is_dir()
                  for p in (REPO_ROOT / top).rglob("*.py"))


def test_every_module_parses_with_python311(py311):
    proc = subprocess.run([py311, "-c", COMPILE_ALL], input=json.dumps(sources()), capture_output=True, text=True,
                          check=True)
    assert json.loads(proc.stdout) == {}


def test_every_jaxci_module_imports_on_python311(py311):
    proc = subprocess.run([py311, "-c", IMPORT_ALL], capture_output=True, text=True, check=True, cwd=REPO_ROOT,
                          env={"PYTHONPATH": str(REPO_ROOT), "PATH": "/usr/bin:/bin"})
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == {}


def test_requires_python_admits_311():
    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]
    assert project["requires-python"] == ">=3.11"
