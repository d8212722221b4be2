"""The bad-input case runner every tests/test_bad_input*.py file shares: a Case runs as a user runs it (a fresh
`python -m jaxci` process, or the script named, with a 60 s hang guard that is not a timing check), and must exit
2 with one line naming what and where, or exit 0 with a stated result; never a traceback. `table()` prints
docs/bad-input.md's table: every case of every file, grouped by command, with its outcome on this checkout."""

from __future__ import annotations

import hashlib
import importlib
import os
import shlex
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "tests" / "fixtures" / "lectures"
LIMIT_S = 60
#: jaxci's commands with subcommands (argparse subparsers): a case is named by both words
SUBCOMMANDS = {"audit": {"merge", "publish", "published"}, "failures": {"record", "skip"},
               "inputs": {"plan", "upgrade", "status", "collect", "suites", "requirements"},
               "release-watch": {"plan", "measure", "file"}}
#: every bad-input file: its CASES, and setup(tmp) preparing the scratch folder they read
FILES = ["tests.test_bad_input", "tests.test_bad_input_audit", "tests.test_bad_input_numbers_and_waits",
         "tests.test_bad_input_paths", "tests.test_bad_input_reports", "tests.test_bad_input_values",
         "tests.test_bad_input_committed",
         "tests.test_bad_input_fail_once", "tests.test_bad_input_ci_reading", "tests.test_bad_input_s7"]


@dataclass(frozen=True)
class Case:
    args: tuple  # after `jaxci`; "{tmp}" is the scratch folder setup() prepared, "{fixtures}" FIXTURES
    rc: int
    expect: str  # a fragment of the line shown in the table
    env: dict = field(default_factory=dict)  # "{tmp}" replaced too; an empty value removes the variable
    shown: str = ""  # the input as the table shows it, when args are not readable as they are
    script: str = ""  # run this file instead of `-m jaxci`
    pick: str = ""  # on exit 0, show the first line holding this (default: expect)

    @property
    def command(self) -> str:
        """What runs: the script, or `jaxci` and its command words (`jaxci audit merge`, `jaxci inputs plan`)."""
        if self.script:
            return self.script
        second = self.args[1:2] if self.args[1:2] and self.args[1] in SUBCOMMANDS.get(self.args[0], ()) else ()
        return " ".join(["jaxci", *self.args[:1], *second])


def case_ids(cases) -> list[str]:
    """pytest ids by command and position: `jaxci-audit-merge-4`."""
    return [f"{case.command.replace(' ', '-').replace('/', '-')}-{i}" for i, case in enumerate(cases)]


@dataclass
class Outcome:
    rc: int
    line: str  # the message line (rc != 0) or the line of the stated result (rc 0)
    stdout: str
    stderr: str


def user_env() -> dict[str, str]:
    """This environment without jaxci's and GitHub's variables, as a user's shell would have it."""
    return {k: v for k, v in os.environ.items() if not k.startswith(("JAXCI_", "GITHUB_"))}


def run_case(case: Case, tmp: Path) -> Outcome:
    """One case in a fresh process, "{tmp}" being the scratch folder in its arguments and environment alike."""
    args = [a.replace("{tmp}", str(tmp)).replace("{fixtures}", str(FIXTURES)) for a in case.args]
    cmd = [sys.executable, case.script, *args] if case.script else [sys.executable, "-m", "jaxci", *args]
    env = {**user_env(), **{k: v.replace("{tmp}", str(tmp)) for k, v in case.env.items()}, "PYTHONPATH": str(REPO)}
    for k in [k for k, v in case.env.items() if not v]:
        env.pop(k)
    try:
        proc = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=LIMIT_S)
    except subprocess.TimeoutExpired:
        return Outcome(-9, f"no answer within {LIMIT_S} s (killed)", "", "")
    if proc.returncode:
        line = ([x for x in proc.stderr.splitlines() if x.strip()] or [""])[-1]
    else:
        picked = [x for x in (proc.stdout + "\n" + proc.stderr).splitlines() if (case.pick or case.expect) in x]
        line = (picked or proc.stdout.splitlines() or [""])[0]
    return Outcome(proc.returncode, line, proc.stdout, proc.stderr)


def check_outcome(case: Case, out: Outcome, *, quiet_refusal: bool = False) -> None:
    """The promise: no traceback; the case's exit and message; a refusal is one line on stderr (and, with
    quiet_refusal, prints no result on stdout)."""
    assert "Traceback" not in out.stdout + out.stderr, out.stderr
    assert out.rc == case.rc and case.expect in out.line, (out.rc, out.line, out.stderr[-2000:])
    if case.rc == 2:
        assert out.stderr.strip().count("\n") == 0, f"not one line: {out.stderr!r}"
        if quiet_refusal:
            assert not out.stdout.strip(), f"a refusal printed a result: {out.stdout[:300]!r}"


def tree_hash(root: Path) -> dict[str, str]:
    """Every entry at and under root (links not followed): a file's sha256, a folder's marker, a link's target,
    another kind's marker; {} where root does not exist."""
    paths = [root, *root.rglob("*")] if root.exists() or root.is_symlink() else []
    return {str(path.relative_to(root)): _entry(path) for path in paths}


def _entry(path: Path) -> str:
    if path.is_symlink():
        return "link:" + os.readlink(path)
    if path.is_dir():
        return "dir"
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "special"


def outcome_tests(cases, setup, *, quiet_refusal: bool = False, kept=None):
    """A bad-input file's `scratch` fixture (setup() run once on a fresh folder) and its test of every case:
    `scratch, test_bad_input_outcome = outcome_tests(CASES, setup)`. kept(case, scratch) names a folder the
    case must leave byte for byte as it was (every file's sha256), or None."""

    @pytest.fixture(scope="module", name="scratch")
    def scratch(tmp_path_factory):
        tmp = tmp_path_factory.mktemp("bad-input")
        setup(tmp)
        return tmp

    @pytest.mark.parametrize("case", cases, ids=case_ids(cases))
    def test_bad_input_outcome(case, scratch):
        folder = kept and kept(case, scratch)
        before = folder and tree_hash(folder)
        check_outcome(case, run_case(case, scratch), quiet_refusal=quiet_refusal)
        assert not folder or tree_hash(folder) == before, f"{folder} changed"

    return scratch, test_bad_input_outcome


# ---- the table for docs/bad-input.md ---------------------------------------------------------------------

def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", "\\n")


def shown(case: Case) -> str:
    if case.shown:
        return case.shown
    prefix = "".join(f"{k}={v} " for k, v in case.env.items() if v)
    args = [a.replace("{tmp}", "TMP").replace("{fixtures}", "tests/fixtures/lectures") for a in case.args]
    return prefix + "jaxci " + " ".join(map(shlex.quote, args))


def _summary(out: Outcome, tmp: str) -> tuple[str, str]:
    line = out.line.replace(tmp, "TMP").replace(str(REPO), "CHECKOUT") or "(no message)"
    if "Traceback" in out.stdout + out.stderr:
        last = [x for x in out.stderr.splitlines() if x.strip()]
        line = "traceback: " + (last[-1] if last else line)
    return ("hang" if out.rc == -9 else str(out.rc)), line[:300]


def table() -> str:
    """docs/bad-input.md's table: every case of every file with its outcome on this checkout, grouped by command."""
    rows = []
    for name in FILES:
        module = importlib.import_module(name)
        with tempfile.TemporaryDirectory() as tmp:
            module.setup(Path(tmp))
            for case in module.CASES:
                rc, line = _summary(run_case(case, Path(tmp)), tmp)
                rows.append((case.command, f"| {case.command} | `{_cell(shown(case))}` | {rc} | {_cell(line)} |"))
    rows.sort(key=lambda row: row[0])  # stable: a command's cases stay in their files' order
    return "\n".join(["| command | input | exit | message (first line) |", "|---|---|---|---|",
                      *(row for _, row in rows)]) + "\n"
