"""Every `jaxci ...` command the report prints runs as printed: exit 0, or a clear exit 2 that is not
'unknown machine' (placeholders such as LECTURE_REPO or DIR are refused with the reason)."""

import re
import subprocess
import sys

import pytest

from jaxci import REPO_ROOT
from jaxci.report.build import build
from jaxci.report.findings import findings_md, guidance_md
from tests import synth

COMMAND = re.compile(r"`(jaxci [^`]+)`")
# commands that start a measurement of hours (a release backfill): their options are checked with --help, never run
MEASURES = ("jaxci history",)


def printed_commands(*texts) -> list[str]:
    return sorted({m for text in texts for m in COMMAND.findall(text)})


@pytest.mark.parametrize("which", ["synthetic", "committed"])
def test_every_printed_jaxci_command_runs(which, tmp_path_factory):
    results = synth.gpu_set(tmp_path_factory.mktemp("synth")) if which == "synthetic" else REPO_ROOT / "results"
    report = build(results)
    commands = printed_commands(findings_md(report), guidance_md(report))
    assert any(c.startswith("jaxci env") for c in commands) and any(c.startswith("jaxci failures") for c in commands)
    work = tmp_path_factory.mktemp("run")
    for command in commands:
        shell = command.replace("jaxci ", f"{sys.executable} -m jaxci ", 1)
        if command.startswith(MEASURES):
            shell += " --help"
        proc = subprocess.run(shell, shell=True, cwd=work, capture_output=True, text=True, timeout=300,
                              env={"PYTHONPATH": str(REPO_ROOT), "PATH": "/usr/bin:/bin", "HOME": str(work)})
        said = proc.stdout[-500:] + proc.stderr[-1500:]
        assert proc.returncode in (0, 2), f"{command}: exit {proc.returncode}\n{said}"
        assert "unknown machine" not in said, f"{command}\n{said}"
        if proc.returncode == 2:
            assert proc.stderr.strip(), f"{command}: exit 2 without a reason"
