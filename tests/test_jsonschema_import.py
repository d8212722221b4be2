"""A process that reads notebooks validates them with jsonschema without importing rfc3987-syntax (1.5-2.5 s of lark
parsers per process on the 2-core VM, for formats no notebook schema uses)."""

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from jaxci import REPO_ROOT

LECTURE = REPO_ROOT / "tests" / "fixtures" / "lectures" / "model_verdicts" / "vmapped_scan.md"

READ = """
import json, sys
from jaxci.audit.reading.notebook import NotebookReadError, read_notebook
read_notebook(sys.argv[1])
try:
    read_notebook(sys.argv[2])
    refused = None
except NotebookReadError as exc:
    refused = str(exc)
print(json.dumps([sys.modules.get("rfc3987_syntax", "absent") is None, "jsonschema" in sys.modules, refused]))
"""


def test_notebooks_are_still_validated_without_the_iri_checkers(tmp_path):
    bad = tmp_path / "bad.ipynb"   # a code cell without its source: the notebook schema refuses it
    bad.write_text(json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {},
                               "cells": [{"cell_type": "code", "metadata": {}, "outputs": [],
                                          "execution_count": None, "id": "a"}]}))
    proc = subprocess.run([sys.executable, "-c", READ, str(LECTURE), str(bad)], capture_output=True, text=True,
                          timeout=120, cwd=REPO_ROOT)
    assert proc.returncode == 0, proc.stderr
    skipped, validated, refused = json.loads(proc.stdout)
    assert skipped and validated and refused and "bad.ipynb" in refused


def test_the_skip_leaves_a_process_that_imported_jsonschema_first_alone():
    code = ("import sys, jsonschema\nfrom jaxci.util.jsonschema_import import skip_iri_syntax_checkers\n"
            "before = sys.modules.get('rfc3987_syntax', 'absent')\nskip_iri_syntax_checkers()\n"
            "print(sys.modules.get('rfc3987_syntax', 'absent') is before)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.stdout.strip() == "True", proc.stderr


def test_the_environment_uv_built_leaves_out_rfc3987_syntax_and_stays_consistent():
    """scripts/setup-venv.sh installs through uv with scripts/uv-overrides.txt: rfc3987-syntax is not installed,
    uv finds every other requirement met, and jsonschema still checks formats other than "iri"."""
    uv = Path(sys.executable).with_name("uv")
    if not uv.is_file():
        pytest.skip("this environment was not installed by uv (scripts/setup-venv.sh fell back to pip)")
    assert importlib.util.find_spec("rfc3987_syntax") is None
    check = subprocess.run([str(uv), "pip", "check", "--python", sys.executable], capture_output=True, text=True,
                           timeout=120)
    assert check.returncode == 0, check.stdout + check.stderr
    code = ("import jsonschema; c = jsonschema.Draft7Validator.FORMAT_CHECKER; "
            "print('iri' in c.checkers, c.conforms('not a date', 'date'))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.stdout.split() == ["False", "False"], proc.stderr
