"""Every command the report prints runs as printed, lab machines included.

`jaxci ...`: run, exit 0, or a clear exit 2 that is not 'unknown machine' (placeholders such as LECTURE_REPO or DIR
are refused with the reason). `asv compare ...`: run on the results it names. `asv run --bench RE --machine M`
starts a measurement of minutes to hours, so it is checked, never run: RE selects benchmarks of this suite and M is
a catalogue machine. `JAXCI_MACHINE=F bash scripts/bench.sh`: F is a catalogue family. No row advises a per-cell
timeout under 60 s."""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from jaxci import REPO_ROOT
from jaxci.catalogue import load_catalogue
from jaxci.report.build import build
from jaxci.report.findings import findings_md, guidance_md
from tests import synth
from tests.committed import committed

COMMAND = re.compile(r"`((?:jaxci|asv|JAXCI_MACHINE=\S+ bash) [^`]+)`")
# commands that start a measurement of hours (a release backfill): their options are checked with --help, never run
MEASURES = ("jaxci history",)
AUDIT = REPO_ROOT / "tests" / "fixtures" / "report" / "audit_predicted.json"
ENV = {"PYTHONPATH": str(REPO_ROOT), "PATH": f"{REPO_ROOT / '.venv' / 'bin'}:/usr/bin:/bin"}


def printed_commands(*texts) -> list[str]:
    return sorted({m for text in texts for m in COMMAND.findall(text)})


def _report(which, tmp_path_factory):
    if which == "committed":
        return build(committed())
    audit = json.loads(AUDIT.read_text()) if which == "synthetic+audit" else None
    return build(synth.gpu_set(tmp_path_factory.mktemp("synth")), audit=audit,
                 families=["g4dn.2xlarge", "c7i.2xlarge"] if audit else None)


def _run_jaxci(command, work):
    shell = command.replace("jaxci ", f"{sys.executable} -m jaxci ", 1)
    if command.startswith(MEASURES):
        shell += " --help"
    proc = subprocess.run(shell, shell=True, cwd=work, capture_output=True, text=True, timeout=300,
                          env={**ENV, "HOME": str(work)})
    said = proc.stdout[-500:] + proc.stderr[-1500:]
    assert proc.returncode in (0, 2), f"{command}: exit {proc.returncode}\n{said}"
    assert "unknown machine" not in said, f"{command}\n{said}"
    # a printed option or choice the command does not have is a wrong command, not a missing input
    assert "unrecognized arguments" not in said and "invalid choice" not in said, f"{command}\n{said}"
    if proc.returncode == 2:
        assert proc.stderr.strip(), f"{command}: exit 2 without a reason"


def _check_asv_run(command, benchmarks, machines):
    m = re.fullmatch(r"asv run --bench '([^']+)'(?: --machine (\S+))?", command)
    assert m, f"{command}: not the `asv run --bench RE [--machine M]` form the test knows"
    assert any(re.search(m[1], name) for name in benchmarks), f"{command}: selects no benchmark of this suite"
    assert m[2] is None or m[2] in machines, f"{command}: {m[2]} is not a catalogue machine"


def _restored_clone(work) -> Path:
    """A clone of this checkout's branch with the release tags `jaxci history --restore-refs` makes (what the
    README's first command runs): the tags come from the command under test, never from whatever this checkout
    holds."""
    clone = work / "clone"
    subprocess.run(["git", "clone", "-q", "--no-local", "--single-branch", "--no-tags", str(REPO_ROOT), str(clone)],
                   check=True, capture_output=True)
    subprocess.run([sys.executable, "-m", "jaxci", "history", "--restore-refs", "--repo", str(clone)], check=True,
                   capture_output=True, env={**ENV, "HOME": str(work)})
    return clone


def _run_asv_compare(command, clone: Path) -> None:
    """Runs it in `clone` (its committed results, its restored tags)."""
    m = re.fullmatch(r"asv compare (jax-v\S+) (jax-v\S+) --machine (\S+)", command)
    assert m, command
    tags = subprocess.run(["git", "tag", "-l", m[1], m[2]], cwd=clone, capture_output=True, text=True).stdout
    assert len(tags.split()) == 2, f"{command}: --restore-refs made no tag for {m[1]} or {m[2]}"
    assert (clone / "results" / m[3]).is_dir(), f"{command}: no results for {m[3]}"
    proc = subprocess.run(command.replace("asv ", str(REPO_ROOT / ".venv" / "bin" / "asv") + " ", 1), shell=True,
                          cwd=clone, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and "|" in proc.stdout, f"{command}: exit {proc.returncode}\n{proc.stderr[-800:]}"


@pytest.mark.parametrize("which", ["synthetic", "synthetic+audit", "committed"])
def test_every_printed_command_runs(which, tmp_path_factory):
    report = _report(which, tmp_path_factory)
    texts = findings_md(report), guidance_md(report)
    commands = printed_commands(*texts)
    assert any(c.startswith("jaxci failures") for c in commands) and any(c.startswith("jaxci audit") for c in commands)
    if which != "committed":  # a measured family's concurrency row gives its env command
        assert any(c.startswith("jaxci env") for c in commands)
    work = tmp_path_factory.mktemp("run")
    benchmarks = json.loads((committed() / "benchmarks.json").read_text())
    machines = set(load_catalogue(include_lab=True))
    clone = None
    for command in commands:
        if command.startswith("jaxci "):
            _run_jaxci(command, work)
        elif command.startswith("asv run"):
            _check_asv_run(command, benchmarks, machines)
        elif command.startswith("asv compare"):
            clone = clone or _restored_clone(work)
            _run_asv_compare(command, clone)
        else:
            family = command.split("=", 1)[1].split()[0]
            assert command.endswith("bash scripts/bench.sh") and family in machines, command
    for text in texts:  # no advice of a per-cell timeout under a minute
        for seconds in re.findall(r"`timeout: (\d+)`", text):
            assert int(seconds) >= 60, seconds
        assert "a per-cell timeout of 3x" not in text

