"""Fail once, end to end, for both engines: the workflow templates (templates/fail-once-*.yml) run step by step on
a fixture book with a failing page, three builds in a row, each in a fresh checkout with only the Actions cache's
record carried over: the first build executes the page and records its failure, the second skips it and says so,
the third (after the page's code changed) executes it again.

What differs from GitHub: the `uses:` steps are replaced by carrying the record file, the install step by this
environment (Jupyter Book 1.x from the test extra; mystmd from scripts/setup-engines.sh, pinned as the template
pins it), and mystmd builds `--site` with a local stub template instead of `--html` (the theme is downloaded from
api.mystmd.org, which this machine cannot reach; `--site` runs the same execution step).
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest
import yaml

from tests.workflowutil import BIN, REPO, assert_clean_template, run_bash

BOOK = REPO / "tests" / "fixtures" / "books" / "fail_once"
MYST = REPO / ".engines" / "node_modules" / ".bin" / "myst"
RECORD = Path(".jaxci") / "known-failures.json"


#: jupyter_client picks a kernel's TCP ports free, then binds them later: a kernel started at the same moment by a
#: parallel test can take one in between (ZMQError, then "Kernel died before replying to kernel_info")
PORT_RACE = "Address already in use"

def _steps(template: str) -> tuple[list[dict], dict]:
    flow = yaml.safe_load((REPO / "templates" / template).read_text())
    return [s for s in flow["jobs"]["build"]["steps"] if "run" in s and not s["name"].startswith("install")], flow


def _stop_leftover_servers(book: Path) -> None:
    """mystmd leaves the Jupyter server it started running after the build: end those of this checkout."""
    psutil = pytest.importorskip("psutil")
    for proc in psutil.process_iter(["cmdline"]):
        cmd = " ".join(proc.info["cmdline"] or [])
        if "jupyter_server" in cmd and str(book) in cmd:
            proc.kill()


def build(tmp_path: Path, n: int, template: str, change=None, previous: Path | None = None) -> tuple[str, dict]:
    """One push build in a fresh checkout: (the steps' output, the record it keeps)."""
    checkout = tmp_path / f"build{n}"
    shutil.copytree(BOOK, checkout)
    if change:
        change(checkout)
    if previous and (previous / RECORD).exists():  # actions/cache/restore
        (checkout / RECORD).parent.mkdir()
        shutil.copy(previous / RECORD, checkout / RECORD)
    steps, flow = _steps(template)
    config = tmp_path / "jupyter-config"
    config.mkdir(exist_ok=True)
    (config / "jupyter_server_config.json").write_text(json.dumps({"ServerApp": {"allow_root": True}}))
    env = {**os.environ, **flow["env"], "GITHUB_STEP_SUMMARY": str(tmp_path / f"summary{n}.md"),
           "PATH": os.pathsep.join([str(MYST.parent), str(BIN), os.environ["PATH"]]),
           "JUPYTER_CONFIG_DIR": str(config)}
    log = ""
    for step in steps:
        script = step["run"]
        if "myst build" in script:  # the stub theme (no network) and the engine installed here
            myst_yml = checkout / "myst.yml"
            myst_yml.write_text(myst_yml.read_text().replace("template: book-theme", "template: ./theme"))
            (checkout / "theme").mkdir()
            (checkout / "theme" / "template.yml").write_text("myst: v1\nkind: site\n")
            script = "\n".join(line for line in script.splitlines() if "npm install" not in line)
            script = script.replace("--html", "--site")
        cwd = checkout / step.get("working-directory", ".").replace("${{ env.BOOK }}", flow["env"]["BOOK"])
        proc = run_bash(script, cwd=cwd, env=env, timeout=600)
        if proc.returncode != 0 and PORT_RACE in proc.stdout + proc.stderr:   # another test's kernel took the port
            proc = run_bash(script, cwd=cwd, env=env, timeout=600)             # between its pick and its bind: once
        log += f"\n## {step['name']}\n{proc.stdout}{proc.stderr}"
        if "myst build" in script:
            _stop_leftover_servers(checkout)
        assert proc.returncode == 0, log
    record = json.loads((checkout / RECORD).read_text())["failures"] if (checkout / RECORD).exists() else {}
    return re.sub(r"\x1b\[[0-9;]*m", "", log), record


def fix(checkout: Path) -> None:
    page = checkout / "pages" / "bad.md"
    page.write_text(page.read_text().replace('raise ValueError("fixture failure: not fixed yet")', "fixed = True"))


# Per engine: the log line of a page it executes, of the failing page's failure, and its mark of any failure.
ENGINES = {
    "fail-once-jupyter-book.yml": ("pages/{}: Executing notebook", "pages/bad.md: WARNING: Executing notebook failed",
                                   "Executing notebook failed"),
    "fail-once-mystmd.yml": ("Executing notebook (pages/{})", "⛔️ pages/bad.md", "⛔️"),
}


@pytest.mark.parametrize("template", list(ENGINES))
def test_a_failing_page_is_built_once(tmp_path, template):
    if template == "fail-once-mystmd.yml" and not MYST.exists():
        pytest.skip("mystmd is not installed: scripts/setup-engines.sh could not install it (npm)")
    if template == "fail-once-jupyter-book.yml" and not shutil.which("jupyter-book", path=str(BIN)):
        pytest.skip("jupyter-book is not installed (the test extra)")
    executing, failed, failure = ENGINES[template]
    log, record = build(tmp_path, 1, template)
    assert executing.format("bad.md") in log and failed in log
    assert list(record) == ["pages/bad.md"] and "fixture failure" in record["pages/bad.md"]["error"]

    log, record = build(tmp_path, 2, template, previous=tmp_path / "build1")
    assert "skipping pages/bad.md: it failed before (ValueError: fixture failure: not fixed yet)" in log
    assert executing.format("bad.md") not in log and failure not in log
    assert executing.format("ok.md") in log  # a fresh checkout: the other page runs as before
    assert list(record) == ["pages/bad.md"]  # skipped, unchanged: kept for the next build
    assert "skipping pages/bad.md" in (tmp_path / "summary2.md").read_text()  # said in the job summary
    if template == "fail-once-jupyter-book.yml":
        assert "pages/bad.md: Excluded from execution by pattern" in log

    log, record = build(tmp_path, 3, template, change=fix, previous=tmp_path / "build2")
    assert "skipping" not in log and executing.format("bad.md") in log and failure not in log
    assert record == {}


@pytest.mark.parametrize("template", list(ENGINES))
def test_the_templates_pass_actionlint_and_zizmor(template):
    assert_clean_template(REPO / "templates" / template)
