"""A process that reads notebooks validates them with jsonschema without importing rfc3987-syntax (2-3 s of lark
parsers per process, for formats no notebook schema uses)."""

import json
import subprocess
import sys

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
