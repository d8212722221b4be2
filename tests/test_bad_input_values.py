"""Values and messages: `predict` sizes and devices, `report --audit` records, JAXCI_SCALE, messages of
several lines, a closed stdout pipe and user regular expressions, each run as a user runs it (a fresh
`python -m jaxci` process, tests/badinput.py): exit 2 and one line naming what and where, or exit 0 with a
stated result; never a traceback, a hang, or a measurement started on a value that is refused."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.badinput import REPO, Case, outcome_tests, user_env

BIG = "9" * 400
PREDICT = ("predict", "--family", "g4dn.2xlarge")
AUDIT = ("report", "results", "--no-progress", "--family", "g4dn.2xlarge", "--audit")
WATCH = ("release-watch", "measure", "--release", "0.12.1", "--previous", "0.12.0", "--machine", "c7i.2xlarge",
         "--out", "{tmp}/watch-out")


def _lecture(**pred) -> dict:
    return {"path": "a.md", "predicted": {"g4dn.2xlarge": {"cpu_s": 10.0, "gpu_s": 5.0, **pred}}}


#: audit files written by setup(): name -> the JSON document
AUDITS = {
    "string-lecture": {"lectures": ["a.md"]},
    "string-predicted": {"lectures": [{"path": "a.md", "predicted": "x"}]},
    "list-path": {"lectures": [{"path": ["a.md"]}]},
    "negative": {"lectures": [_lecture(cpu_s=-1e6, gpu_s=-1e6)]},
    "huge": {"lectures": [_lecture(cpu_s=1e308, gpu_s=1e308)]},
    "string-seconds": {"lectures": [_lecture(cpu_s="10")]},
    "newline-path": {"lectures": [{"path": "a.md\n| forged | row |"}]},
    "runs-list": {"lectures": [{"path": "a.md", "runs": {"cpu": [1, 2]}}]},
    "cell-inf": {"lectures": [{"path": "a.md", "runs": {"cpu": {"wall_s": 1.0, "cells": [{"wall_s": 1e999}]}}}]},
    "string-timeout": {"lectures": [{"path": "a.md", "timeout": "600"}]},
    "good": {"lectures": [_lecture()]},
}

#: every option that takes a regular expression, each given the same catastrophic one: (args, script)
EVIL_RE = "(.|.)*z"
REGEX_OPTIONS = [
    (("history", "--bench", EVIL_RE, "--dry-run"), ""),
    (("history", "--confirm", "--machine", "lab-h200", "--dry-run", "--bench", EVIL_RE), ""),
    (("upgrade-check", "--old", "0.10.1", "--new", "0.10.2", "--bench", EVIL_RE), ""),
    (("inputs", "plan", f"--bench={EVIL_RE}", "--run-id", "1"), ""),
    (("capture", "--plan", "--only", EVIL_RE), ""),
    (("inputs", "suites", "--check-filters", f"dense=^(?=.*?(?:{EVIL_RE}))dense[.]"), ""),  # run-suites.sh's check
    (("{tmp}/smoke", "--bench", EVIL_RE), "scripts/gpu_smoke.py"),
    (("--bench", EVIL_RE), "measure/suite_cost.py"),
    (("--bench", EVIL_RE), "measure/launch_fidelity.py"),
]


CASES = [
    Case((*PREDICT, "--kernel", "matmul", "--n", BIG), 2, "a 400-digit number",
         shown="jaxci predict --family g4dn.2xlarge --kernel matmul --n 9...9 (400 digits)"),
    Case((*PREDICT, "--kernel", "nuts", "--n", BIG, "--dtype", "float64"), 2, "a 400-digit number",
         shown="jaxci predict --family g4dn.2xlarge --kernel nuts --n 9...9 (400 digits) --dtype float64"),
    Case((*PREDICT, "--kernel", "matmul", "--n", "0"), 2, "--n 0: must be a whole number in [1, 100,000]"),
    Case((*PREDICT, "--kernel", "elementwise", "--n", "-1"), 2, "--n -1: must be a whole number"),
    Case((*PREDICT, "--kernel", "nuts", "--n", "0"), 2, "--n 0: must be a whole number in [1, 1,000,000,000]"),
    Case((*PREDICT, "--kernel", "nuts"), 2, "--n: nuts needs a size"),
    Case((*PREDICT, "--kernel", "while", "--n", "-5"), 2, "--n -5: must be a whole number"),
    Case((*PREDICT, "--kernel", "kalman_grad", "--n", "-96"), 2, "--n -96: must be a whole number"),
    Case((*PREDICT, "--kernel", "dispatch", "--n", "3"), 2, "dispatch takes no size"),
    Case(("predict", "--family", "c7i.2xlarge", "--kernel", "matmul", "--n", "100", "--device", "gpu"), 2,
         "--device gpu: c7i.2xlarge has no GPU"),
    Case((*PREDICT, "--kernel", "matmul", "--n", "100", "--results", "{tmp}/empty"), 2,
         "no asv result values in it"),
    Case((*PREDICT, "--kernel", "matmul", "--n", "abc"), 2, "'abc': expected a whole number in ASCII digits"),
    Case((*PREDICT, "--kernel", "while"), 0, "71 iterations", pick="model:"),
    Case((*PREDICT, "--kernel", "matmul", "--n", "1024"), 0, "predicted", pick="predicted"),
    *[Case((*AUDIT, f"{{tmp}}/audit/{name}.json"), 2, expect,
           shown=f"jaxci report results --family g4dn.2xlarge --audit A ({json.dumps(AUDITS[name])[:90]})")
      for name, expect in (("string-lecture", "lectures[0]: expected an object, got str 'a.md'"),
                           ("string-predicted", "lectures[0].predicted: expected an object, got str 'x'"),
                           ("list-path", "lectures[0].path: expected a string, got list"),
                           ("negative", "cpu_s -1000000.0: must be a finite number in [0, 432,000] seconds"),
                           ("huge", "cpu_s 1e+308: must be a finite number in [0, 432,000] seconds"),
                           ("string-seconds", "cpu_s: expected a number, got str '10'"),
                           ("newline-path", "must be one line"),
                           ("runs-list", "runs['cpu']: expected an object, got list"),
                           ("cell-inf", "cells[0].wall_s inf: must be a finite number in [0, 86,400] seconds"),
                           ("string-timeout", "lectures[0] ('a.md').timeout: expected seconds (a finite number "
                                              "within 5 days), got str"))],
    Case(("history", "--releases", "0.10.1", "--dry-run"), 2, "JAXCI_SCALE='evil': expected ci or full",
         env={"JAXCI_SCALE": "evil"}),
    Case(WATCH, 2, "JAXCI_SCALE='evil': expected ci or full", env={"JAXCI_SCALE": "evil"}),
    Case(WATCH, 2, "JAXCI_SCALE='a\\nb'", env={"JAXCI_SCALE": "a\nb"},
         shown="JAXCI_SCALE=$'a\\nb' jaxci release-watch measure ... --out O"),
    Case(("report", "results", "--no-progress", "--family", "g4dn.2xlarge\n"), 2,
         "--family 'g4dn.2xlarge\\n': not a runner family", shown="jaxci report results --family $'g4dn.2xlarge\\n'"),
    Case(("history", "--restore-refs", "--repo", "{tmp}/empty-checkout"), 2,
         "fatal: ambiguous argument 'HEAD'", shown="jaxci history --restore-refs --repo R (git init, no commit yet)"),
    *[Case(args, 2, "can backtrack through inf paths", script=script,
           shown=f"python {script} {' '.join(args)}".replace("{tmp}", "TMP") if script else "")
      for args, script in REGEX_OPTIONS],
    Case((*AUDIT, "{tmp}/audit/good.json", "--format", "summary"), 0, "one build of 1 lectures",
         shown="jaxci report results --family g4dn.2xlarge --audit A (one lecture, cpu_s 10, gpu_s 5) "
               "--format summary"),
]


def setup(tmp: Path) -> None:
    (tmp / "empty").mkdir()
    checkout = tmp / "empty-checkout"  # a jax-ci-bench checkout's shape, with no commit: git's 3-line message
    (checkout / "env_matrix").mkdir(parents=True)
    (checkout / "asv.conf.json").write_text("{}")
    subprocess.run(["git", "init", "-q", str(checkout)], check=True)
    (tmp / "audit").mkdir()
    for name, doc in AUDITS.items():
        (tmp / "audit" / f"{name}.json").write_text(json.dumps(doc))


scratch, test_bad_input_outcome = outcome_tests(CASES, setup, quiet_refusal=True)


def test_run_suites_refuses_a_catastrophic_suite_filter_before_asv(tmp_path):
    asv = tmp_path / "asv"
    asv.write_text("#!/bin/sh\necho asv ran\n")
    asv.chmod(0o755)
    env = user_env() | {"ASV": str(asv), "PYTHON": sys.executable,
                        "JAXCI_SUITE_FILTERS": f"dense=^(?=.*?(?:{EVIL_RE}))dense[.]"}
    proc = subprocess.run(["bash", "scripts/run-suites.sh", "fam"], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 2 and "can backtrack" in proc.stderr and "asv ran" not in proc.stdout, proc.stderr


def test_every_regex_option_is_in_the_bounded_list():
    """A new option whose help says it takes a regex must be added to REGEX_OPTIONS (and so be bounded)."""
    found = set()
    for path in [*REPO.glob("jaxci/commands/*.py"), *REPO.glob("scripts/*.py"), *REPO.glob("measure/*.py")]:
        text = path.read_text()
        for m in re.finditer(r"add_argument\(\s*\"(--[a-z-]+)\"[^)]*?(?:regex|regular expression)", text, re.S):
            found.add((path.stem, m[1]))
        for m in re.finditer(r"add_argument\(\s*\"(--(?:bench|only|filter|pattern|match|regex)[a-z-]*)\"", text):
            found.add((path.stem, m[1]))
    tested = {(Path(script).stem if script else args[0].replace("-", "_"),
               next(a.split("=")[0] for a in args if a.startswith("--bench") or a in ("--only", "--check-filters")))
              for args, script in REGEX_OPTIONS}
    not_regex = {("history_graph", "--bench"),  # one benchmark's full name (its graph file), never matched as a regex
                 ("audit_shard", "--only")}  # lecture names, each checked against the lectures (audit_shard.selected)
    assert len(found) >= 7 and found <= tested | not_regex, found - tested - not_regex


def test_a_bad_scale_starts_nothing(scratch):
    """The refused JAXCI_SCALE left no report folder behind: it is checked before the watch writes one."""
    assert not (scratch / "watch-out").exists()


def test_scale_is_checked_once_for_option_and_environment():
    from jaxci.util.validate import InputError, scale

    assert scale("full", "ci", {"JAXCI_SCALE": "evil"}) == "full"  # --scale given: argparse checked it
    assert scale(None, "ci", {}) == "ci" and scale(None, "ci", {"JAXCI_SCALE": ""}) == "ci"
    assert scale(None, "ci", {"JAXCI_SCALE": "full"}) == "full"
    with pytest.raises(InputError, match="JAXCI_SCALE='FULL': expected ci or full"):
        scale(None, "ci", {"JAXCI_SCALE": "FULL"})


@pytest.mark.parametrize("cmd", [["bash", "scripts/bench.sh"], [sys.executable, "-c", "import benchmarks.common"]],
                         ids=["bench.sh", "suite-import"])
def test_the_suite_and_its_script_refuse_a_bad_scale_before_asv(cmd):
    """bench.sh refuses before the virtualenv or asv starts; the suite itself at import, so a stock `asv run`
    discovers no benchmark to measure rather than failing every setup after the environments were built."""
    proc = subprocess.run(cmd, cwd=REPO, env=user_env() | {"JAXCI_SCALE": "evil"}, capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode != 0 and re.search(r"JAXCI_SCALE='?evil'?: expected", proc.stderr), proc.stderr[-500:]
    assert "setup-venv" not in proc.stdout + proc.stderr


@pytest.mark.parametrize("scale", ["ci", "full"])
def test_bench_sh_refuses_a_bad_quick_switch_before_the_virtualenv(scale):
    env = user_env() | {"JAXCI_SCALE": scale, "JAXCI_QUICK": "yes"}
    proc = subprocess.run(["bash", "scripts/bench.sh"], cwd=REPO, env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "JAXCI_QUICK=yes: expected 0 or 1" in proc.stderr, proc.stderr[-500:]
    assert "setup-venv" not in proc.stdout + proc.stderr


def test_git_messages_and_input_errors_are_one_line(tmp_path):
    """The two places a refusal is made one line: GitError keeps git's cause (its first fatal:/error: line, not
    the usage advice after it), InputError escapes control characters in whatever value its message quotes."""
    from jaxci.util.git import GitError, git
    from jaxci.util.validate import InputError

    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    with pytest.raises(GitError) as err:
        git(tmp_path, "log", "HEAD")
    assert "\n" not in str(err.value) and "fatal: ambiguous argument 'HEAD'" in str(err.value)
    assert "Use '--'" not in str(err.value)
    assert str(InputError("--x a\nb\tc: bad")) == "--x a\\nb\\tc: bad"


def test_an_audit_as_the_audit_writes_it_passes_unchanged():
    """The validation keeps the record's shape: the audit fixture (what `jaxci audit --execute --format json`
    writes, predictions and runs included) comes back equal, so consumers see what they saw before."""
    from jaxci.audit.writing import record

    doc = json.loads((REPO / "tests" / "fixtures" / "report" / "audit_predicted.json").read_text())
    assert record.validated(doc) == doc and any(lec.get("predicted") for lec in doc["lectures"])


def test_every_predicted_seconds_field_is_checked():
    from jaxci.audit.writing import record

    for key in record.PREDICTED_SECONDS:
        with pytest.raises(record.AuditError, match=rf"\.{key} -1\.0: must be a finite number"):
            record.validated({"lectures": [_lecture(**{key: -1.0})]})
        with pytest.raises(record.AuditError, match=rf"\.{key}: expected a number, got bool"):
            record.validated({"lectures": [_lecture(**{key: True})]})


@pytest.mark.parametrize(("args", "rc"), [(PREDICT + ("--kernel", "matmul", "--n", "1000"), 141), (("--help",), 141),
                                         (("report", "results", "--no-progress"), 141), (("predict", "--help"), 0)])
def test_a_closed_stdout_pipe_ends_quietly_with_141(args, rc):
    """`jaxci ... | head -1`: the reader is gone before the first write (its end closed at once), so the
    first print meets EPIPE; the dispatcher ends it with 141 (128 + SIGPIPE) and no traceback. argparse's own
    help text ignores write errors itself (exit 0), quietly too."""
    proc = subprocess.Popen([sys.executable, "-m", "jaxci", *args], cwd=REPO, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == rc and err == "", err


def test_an_audit_of_another_version_is_refused_with_the_command_that_writes_it(tmp_path):
    """audit.json is versioned: another format or version is one line naming the rerun; one written before the
    version (neither field) is version 1's shape, read as it is and stamped."""
    from jaxci.audit.writing import record

    doc = json.loads((REPO / "tests" / "fixtures" / "report" / "audit_predicted.json").read_text())
    for change in ({"version": record.VERSION + 1}, {"version": True}, {"format": "other"}):
        with pytest.raises(record.AuditError) as err:
            record.validated({**doc, **change})
        assert record.RERUN in str(err.value) and "\n" not in str(err.value)
    legacy = {k: v for k, v in doc.items() if k not in ("format", "version")}
    assert record.validated(legacy) == record.validated({**doc, "version": 1})  # neither field: version 1
    assert all("selected" in lec for lec in record.validated(legacy)["lectures"])
    assert list(record.validated(legacy))[:2] == ["format", "version"]
    assert record.validated(legacy)["version"] == record.VERSION  # upgraded on reading (record._upgraded_v1)
    for path in sorted((REPO / "audits").glob("*/audit.json")):   # the committed audits carry it
        assert json.loads(path.read_text())["version"] in record.READ


def test_the_audit_is_written_strict_never_through_str():
    """A value of no JSON type is a TypeError at the writer, not its str(); a NaN is a ValueError."""
    from pathlib import PurePath

    from jaxci.audit.writing import record

    with pytest.raises(TypeError):
        record.dumps({"lectures": [], "where": PurePath("x")})
    with pytest.raises(ValueError):
        record.dumps({"lectures": [], "s": float("nan")})
    assert json.loads(record.dumps({"lectures": []})) == {"format": "jaxci-audit", "version": record.VERSION,
                                                          "lectures": []}
