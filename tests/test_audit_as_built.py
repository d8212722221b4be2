"""The audit runs lectures as the build does (issue 69, item 5): MyST-NB's `load:` cell option applied when a
lecture is read, and each failure labelled the lecture's or the harness's, with its cause, as a field."""

import json
from types import SimpleNamespace

import pytest
import yaml

from jaxci.audit import runner
from jaxci.audit.judging import failure as fl
from jaxci.audit.reading.notebook import NotebookReadError, read_notebook
from jaxci.audit.runner import errorinfo
from jaxci.audit.runner.outcome import CellTiming, NotebookRun

HEAD = "---\nkernelspec:\n  name: python3\n  display_name: Python 3\n---\n\n"


def lecture(tmp_path, body, files=None):
    for name, text in (files or {}).items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    path = tmp_path / "lecture.md"
    path.write_text(HEAD + body)
    return path


def test_load_replaces_the_cells_code_with_the_files(tmp_path):
    path = lecture(tmp_path, "```{code-cell} ipython3\n:load: helpers/add.py\n```\n\n"
                             "```{code-cell} ipython3\n---\nload: helpers/add.py\ntags: [hide-input]\n---\n"
                             "ignored = 0\n```\n", {"helpers/add.py": "total = 40 + 2\n"})
    cells = [c for c in read_notebook(path).cells if c.cell_type == "code"]
    assert [c.source for c in cells] == ["total = 40 + 2\n"] * 2  # as MyST-NB: the file wins over the body
    assert cells[1].metadata["load"] == "helpers/add.py" and cells[1].metadata["tags"] == ["hide-input"]


def test_a_load_file_missing_or_outside_the_lectures_folder_fails_the_read(tmp_path):
    (tmp_path / "outside.py").write_text("x = 1\n")
    inner = tmp_path / "book"
    inner.mkdir()
    missing = lecture(inner, "```{code-cell} ipython3\n:load: nowhere.py\n```\n")
    with pytest.raises(NotebookReadError, match="cell 0: load: nowhere.py"):
        read_notebook(missing)
    outside = lecture(inner, "```{code-cell} ipython3\n:load: ../outside.py\n```\n")
    with pytest.raises(NotebookReadError, match="outside the lecture's folder"):
        read_notebook(outside)


def test_an_ipynb_keeps_its_own_code(tmp_path):
    """`load:` is an option of MyST-NB's text reader only."""
    (tmp_path / "f.py").write_text("a = 1\n")
    nb = {"cells": [{"cell_type": "code", "id": "c1", "metadata": {"load": "f.py"}, "source": "b = 2", "outputs": [],
                     "execution_count": None}], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path = tmp_path / "n.ipynb"
    path.write_text(json.dumps(nb))
    assert read_notebook(path).cells[0].source == "b = 2"


@pytest.mark.slow
def test_a_loaded_cell_is_executed(tmp_path):
    path = lecture(tmp_path, "```{code-cell} ipython3\n:load: defs.py\n```\n\n```{code-cell} ipython3\n"
                             "assert double(21) == 42\n```\n", {"defs.py": "def double(v):\n    return 2 * v\n"})
    assert runner.run_notebook(path).ok


def test_error_info_keeps_the_exception_name_and_packages_only():
    output = {"output_type": "error", "ename": "TypeError", "evalue": "secret text",
              "traceback": ["\x1b[0;31mCell In[3], line 2\x1b[0m", "File \x1b[0;32m/v/lib/python3.12/site-packages/"
                            "plotpkg/io/_x.py:10\x1b[0m, in f()", "File /v/lib/site-packages/plotpkg/base.py:3",
                            "File /usr/lib/python3/dist-packages/numlib/core.py:1"]}
    cell = {"outputs": [{"output_type": "stream", "text": "x"}, output]}
    found = errorinfo.error_output(cell)
    assert errorinfo.error_name(found) == "TypeError"
    assert errorinfo.traceback_packages(found) == ["plotpkg", "numlib"]
    assert errorinfo.error_name({"ename": "no name; rm -rf"}) is None


def verdict(status="error", name=None, cell_s=1.0, timeout=2400.0, path="lectures/a.md", errors=()):
    cell = CellTiming(4, "", cell_s, cell_s, status=status, error=f"cell 4: {name}" if name else None,
                      error_name=name, error_packages=["pkg"] if name else None)
    run = NotebookRun("a.md", status=status, cells=[CellTiming(2, "", 0.1, 0.1), cell], platform="cpu")
    failed = status != "ok"
    return SimpleNamespace(failed=failed, status="unreadable" if errors else status, runs={"cpu": run},
                           timeout=timeout, path=path, scan=SimpleNamespace(errors=list(errors)))


def test_no_network_is_the_harnesss():
    found = fl.failure(verdict(name="URLError"))
    assert found == {"by": "harness", "cause": "no-network", "platform": "cpu", "cell": 4, "error": "URLError",
                     "packages": ["pkg"]}
    assert fl.failure(verdict(name="OfflineCopyMissing"))["cause"] == "no-network"


def test_a_cell_past_the_audits_limit_but_within_the_builds_is_the_harnesss():
    assert fl.failure(verdict("timeout", cell_s=900.4, timeout=2400.0))["cause"] == "cell-timeout"
    assert fl.failure(verdict("timeout", cell_s=900.4, timeout=None))["by"] == "harness"  # the build: no limit
    assert fl.failure(verdict("timeout", cell_s=900.4, timeout=600.0)) == {
        "by": "lecture", "cause": "timeout", "platform": "cpu", "cell": 4, "error": None, "packages": []}


def test_an_error_the_published_build_does_not_have_is_the_kernel_environments():
    assert fl.failure(verdict(name="TypeError"))["by"] == "lecture"
    found = fl.failure(verdict(name="TypeError"), built={"lectures/a.md"})
    assert (found["by"], found["cause"], found["packages"]) == ("harness", "kernel-environment", ["pkg"])
    assert fl.failure(verdict(name="TypeError", path="lectures/b.md"), built={"lectures/a.md"})["by"] == "lecture"


def test_a_refused_load_file_is_the_harnesss_and_a_passing_lecture_has_no_record():
    refused = verdict(errors=["x.md: cell 1: load: ../y.py lies outside the lecture's folder; not read by the audit"])
    assert fl.failure(refused) == {"by": "harness", "cause": "load-file"}
    assert fl.failure(verdict(errors=["x.md: malformed notebook"])) == {"by": "lecture", "cause": "unreadable"}
    assert fl.failure(verdict("ok")) is None


ENV = {"name": "x", "dependencies": ["python=3.13", "anaconda=2026.07", "numpy=2.1", "scipy==1.14.1", "pip",
                                     {"pip": ["jupyter-book>=1.0,<2.0", "plotpkg", "toolpkg==0.4"]}]}


def test_the_environment_files_entries_as_pip_equivalents():
    from jaxci.audit.runner import build_env

    listed = {e["name"]: e for e in build_env.entries(ENV)}
    assert listed["numpy"]["pip"] == "numpy==2.1.*" and listed["scipy"]["pip"] == "scipy==1.14.1"
    assert listed["anaconda"]["pip"] is None and listed["anaconda"]["status"] == "not-reproducible"
    assert listed["pip"]["status"] == "installer" and listed["plotpkg"]["pip"] == "plotpkg"
    assert build_env.entries(["not", "a", "mapping"]) == [] and build_env.entries({"dependencies": 3}) == []


def test_the_kernel_against_the_environment_file():
    from jaxci.audit.runner import build_env

    kernel = {"numpy": "2.5.5", "scipy": "1.14.1", "plotpkg": "7.1.0", "toolpkg": "0.3"}
    block = build_env.record(ENV, kernel, "3.12.1", "environment.yml")
    status = {e["name"]: e["status"] for e in block["entries"]}
    assert status == {"anaconda": "not-reproducible", "numpy": "differs", "scipy": "same", "pip": "installer",
                      "jupyter-book": "absent", "plotpkg": "unpinned", "toolpkg": "differs"}
    assert block["python"] == {"named": "3.13", "kernel": "3.12.1", "status": "differs"}
    assert block["differences"] == ["python", "anaconda", "numpy", "toolpkg"]
    assert build_env.record(ENV, kernel, "3.13.0", "e.yml")["python"]["status"] == "same"


def test_a_kernel_built_from_the_environment_file_takes_its_versions(tmp_path, capsys):
    from jaxci.audit.runner import build_env
    from jaxci.commands import audit

    stack = "# stack\nnumpy\nplotpkg==0.2.1  # pinned for a reason\nextra[x]>=1\n"
    python, lines = build_env.requirements(ENV, stack)
    assert python == "3.13"
    assert [line for line in lines if not line.startswith("#")] == [
        "numpy==2.1.*", "scipy==1.14.1", "jupyter-book>=1.0,<2.0", "plotpkg", "toolpkg==0.4", "extra[x]>=1"]
    # the command measure/lecture_kernel.sh runs: the same lines written, the Python named printed
    (tmp_path / "environment.yml").write_text(yaml.safe_dump(ENV))
    (tmp_path / "stack.txt").write_text(stack)
    args = [str(tmp_path / "environment.yml"), str(tmp_path / "req.txt"), "--stack", str(tmp_path / "stack.txt")]
    assert audit.main(["kernel-requirements", *args]) == 0
    assert capsys.readouterr().out == "3.13\n" and (tmp_path / "req.txt").read_text() == "\n".join(lines) + "\n"
    assert audit.main(["kernel-requirements", str(tmp_path / "missing.yml"), str(tmp_path / "r.txt")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("jaxci audit kernel-requirements: ") and err.count("\n") == 1


def test_a_dependency_that_reads_as_a_pip_option_is_never_written(tmp_path, capsys):
    """Issue 83: `--pre` and `-e.` among environment.yml's conda entries became lines of the kernel's requirements,
    which pip reads as options (-e. installs the repository itself). They are not conda specs: left out, said."""
    from jaxci.commands import audit

    env = {"dependencies": ["python=3.12", "numpy=2.1", "--pre", "-e.", "scipy=1.14;x", {"pip": ["requests", "-e ."]}]}
    (tmp_path / "environment.yml").write_text(yaml.safe_dump(env))
    out = tmp_path / "req.txt"
    assert audit.main(["kernel-requirements", str(tmp_path / "environment.yml"), str(out)]) == 0
    lines = [x for x in out.read_text().splitlines() if x and not x.startswith("#")]
    assert not [x for x in lines if x.startswith("-") or ";" in x], lines   # no option, no marker smuggled in
    assert lines[:2] == ["numpy==2.1.*", "requests"], lines
    capsys.readouterr()
