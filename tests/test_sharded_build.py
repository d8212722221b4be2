"""The sharded build, end to end, for both engines (templates/build-sharded-*.yml; jaxci sharded): on a fixture book
of four pages, three shard jobs (one standing in for the GPU shard) each execute their share into their own cache in
a fresh checkout; the site job merges the caches that the shards uploaded and builds the site once. The site job
executes no notebook, and its pages equal a whole build's.

What differs from GitHub, as in tests/test_fail_once.py: the `uses:` steps are replaced by copying the cache folders
(upload-artifact, download-artifact), the install step by this environment, and mystmd builds `--site` with a local
stub template instead of `--html` (no network here).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from pathlib import Path

import pytest
import yaml

from tests.test_fail_once import MYST, PORT_RACE, _stop_leftover_servers
from tests.workflowutil import BIN, REPO, assert_clean_template, run_bash

BOOK = REPO / "tests" / "fixtures" / "books" / "sharded"
PLAN = {"format": "jaxci-shard-plan", "version": 1, "repository": "fixture", "option": "fixture: three shards",
        "shards": [{"name": "gpu", "runs_on": "g4dn.2xlarge", "device": "gpu", "pages": ["pages/matrix.md"],
                    "predicted_s": [1.0, 0.5, 2.0]},
                   {"name": "cpu-1", "runs_on": "ubuntu-latest", "device": "cpu",
                    "pages": ["pages/squares.md", "pages/loops.md"], "predicted_s": [2.0, 1.0, 4.0]},
                   {"name": "cpu-2", "runs_on": "ubuntu-latest", "device": "cpu", "pages": ["pages/primes.md"],
                    "predicted_s": [1.0, 0.5, 2.0]}]}
PAGES = ("matrix", "squares", "loops", "primes")
#: per template: the engine's cache folder in the book, the log line of a page it executes, the built pages
ENGINES = {
    "build-sharded-jupyter-book.yml": ("_build/.jupyter_cache", "pages/{}: Executing notebook", "_build/html/pages",
                                       "*.html"),
    "build-sharded-mystmd.yml": ("_build/execute", "Executing notebook (pages/{})", "_build/site/content", "*.json"),
}
TEMPLATES = list(ENGINES)


def _skip_without(template: str) -> None:
    if template.endswith("mystmd.yml") and not MYST.exists():
        pytest.skip("mystmd is not installed: scripts/setup-engines.sh could not install it (npm)")
    if template.endswith("jupyter-book.yml") and not shutil.which("jupyter-book", path=str(BIN)):
        pytest.skip("jupyter-book is not installed (the test extra)")


def _checkout(tmp_path: Path, name: str) -> Path:
    checkout = tmp_path / name
    shutil.copytree(BOOK, checkout)
    (checkout / ".github").mkdir()
    (checkout / ".github" / "jaxci-shards.json").write_text(json.dumps(PLAN))
    return checkout


def run_job(tmp_path: Path, checkout: Path, template: str, job: str, extra_env: dict | None = None,
            only: str | None = None) -> str:
    """A job's `run:` steps (not the install; with `only`, that step alone) in `checkout`, as a runner runs them:
    their output."""
    flow = yaml.safe_load((REPO / "templates" / template).read_text())
    config = tmp_path / "jupyter-config"
    config.mkdir(exist_ok=True)
    (config / "jupyter_server_config.json").write_text(json.dumps({"ServerApp": {"allow_root": True}}))
    env = {**os.environ, **flow["env"], **(extra_env or {}), "JUPYTER_CONFIG_DIR": str(config),
           "PATH": os.pathsep.join([str(MYST.parent), str(BIN), os.environ["PATH"]])}
    log = ""
    for step in flow["jobs"][job]["steps"]:
        if "run" not in step or step["name"].startswith("install") or only and step["name"] != only:
            continue
        script = step["run"]
        if "myst build" in script:  # the stub theme (no network) and the engine installed here
            myst_yml = checkout / "myst.yml"
            myst_yml.write_text(myst_yml.read_text().replace("template: book-theme", "template: ./theme"))
            (checkout / "theme").mkdir(exist_ok=True)
            (checkout / "theme" / "template.yml").write_text("myst: v1\nkind: site\n")
            script = "\n".join(line for line in script.splitlines() if "npm install" not in line)
            script = script.replace("--html", "--site")
        step_env = {k: v.replace("${{ matrix.shard }}", env.get("SHARD", "")) for k, v in step.get("env", {}).items()}
        proc = run_bash(script, cwd=checkout, env={**env, **step_env}, timeout=600)
        if proc.returncode != 0 and PORT_RACE in proc.stdout + proc.stderr:   # another test's kernel took the port
            proc = run_bash(script, cwd=checkout, env={**env, **step_env}, timeout=600)
        log += f"\n## {step['name']}\n{proc.stdout}{proc.stderr}"
        if "myst build" in script:
            _stop_leftover_servers(checkout)
        assert proc.returncode == 0, log
    return re.sub(r"\x1b\[[0-9;]*m", "", log)


#: what differs between two mystmd builds of one page whatever they executed: each node's `key` and each output's
#: `id` (random names a build draws), the exports' urls (a hash that includes the checkout's path)
DRAWN = ("key", "id", "exports")


def _without_node_keys(node):
    """mystmd's page JSON without the names a build draws (DRAWN)."""
    if isinstance(node, dict):
        return {k: _without_node_keys(v) for k, v in node.items() if k not in DRAWN}
    return [_without_node_keys(v) for v in node] if isinstance(node, list) else node


def _pages(checkout: Path, template: str) -> dict:
    _, _, folder, pattern = ENGINES[template]
    read = (lambda p: _without_node_keys(json.loads(p.read_text()))) if pattern == "*.json" else Path.read_text
    return {p.name: read(p) for p in sorted((checkout / folder).glob(pattern))}


@pytest.mark.parametrize("template", TEMPLATES)
def test_the_sharded_build_executes_each_page_once_and_equals_a_whole_build(tmp_path, template):
    _skip_without(template)
    cache, executing, _, _ = ENGINES[template]
    start = time.perf_counter()
    whole = _checkout(tmp_path, "whole")
    log = run_job(tmp_path, whole, template, "site", only="build the site once")  # the build step alone
    assert all(executing.format(page + ".md") in log for page in PAGES), log
    whole_s = time.perf_counter() - start

    site = _checkout(tmp_path, "site")
    start = time.perf_counter()
    for shard in PLAN["shards"]:
        checkout = _checkout(tmp_path, f"shard-{shard['name']}")
        log = run_job(tmp_path, checkout, template, "shard", {"SHARD": shard["name"]})
        mine = {Path(p).stem for p in shard["pages"]}
        for page in PAGES:  # the shard executes its own pages and no other
            assert (executing.format(page + ".md") in log) == (page in mine), (shard["name"], page, log)
        shutil.copytree(checkout / cache, site / "shard-caches" / f"shard-cache-{shard['name']}")  # the artifacts
    log = run_job(tmp_path, site, template, "site")
    sharded_s = time.perf_counter() - start
    assert "4 executed notebook(s) from 3 shard cache(s) merged" in log
    assert not any(executing.format(page + ".md") in log for page in PAGES), log  # the site job executes nothing
    assert _pages(site, template) == _pages(whole, template) and len(_pages(site, template)) >= len(PAGES)
    assert "squares: [0, 1, 4, 9" in json.dumps(_pages(site, template))  # the pages hold the shards' outputs
    print(f"{template}: whole build {whole_s:.1f} s, three shards and the site one after another {sharded_s:.1f} s")


@pytest.mark.parametrize("template", TEMPLATES)
def test_the_sharded_templates_pass_actionlint_and_zizmor(template):
    path = REPO / "templates" / template
    assert_clean_template(path)
    jobs = yaml.safe_load(path.read_text())["jobs"]
    assert jobs["shard"]["strategy"]["fail-fast"] is False  # one shard's failure never stops the others
    assert jobs["site"]["if"] == "${{ !cancelled() }}"       # the site is built from whatever shards arrived
    # the patch's workflow pins the artifact actions as the templates do (one pin, checked in both places)
    from jaxci.workflows import sharded_workflow

    uses = {s["uses"] for job in jobs.values() for s in job["steps"] if "uses" in s}
    assert {sharded_workflow.UPLOAD, sharded_workflow.DOWNLOAD} <= {u.split(" ")[0] for u in uses}
