"""Bad input, by command: what a pull request controls in the CI audit (`jaxci audit` of a repository with
.github/workflows), and the text of committed or collected records that reaches Markdown: `run:` lines tens or
hundreds of KiB long repeating `pytest --nbmake`, `sphinx-build`, `xargs`; a 6 MiB myst.yml; 5,000-digit counts
and timeouts; `xargs -P 0`; `timeout-minutes: .nan`; a workflow file name, a job id and a command holding a
backtick and an HTML comment; `--only @FILE` of the environment, of 80,000 names, with a BOM; committed audits
and run statuses whose text forges Markdown; concurrency results with impossible N. Each case runs in a fresh
process (tests/badinput.py); the 60 s hang guard is what a quadratic or cubic reading of these lines would
pass (the structural rules are checked apart: sizes before parsing, counts while composing)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from jaxci.audit.lecture_ci import engine
from jaxci.util import quoting, safeyaml
from jaxci.util.safeio import UnsafeFile
from tests.badinput import REPO, Case, outcome_tests, run_case

FIX = REPO / "tests" / "fixtures" / "ci_repos"
D5 = "9" * 5000
RUNS = {"pytest": "echo " + "pytest --nbmake " * 3000, "sphinx": "echo " + "sphinx-build " * 30000,
        "xargs": "jupyter nbconvert --execute a.ipynb; echo " + "xargs " * 50000,
        "myst-digits": f"myst build --execute --execute-parallel {D5}",
        "sphinx-digits": f"sphinx-build -j {D5} -b html .",
        "pytest-digits": f"pytest --nbmake -n {D5} lectures", "xargs-digits": f"ls | xargs -P {D5} -n1 nbconvert",
        "xargs-0": "ls lectures/*.ipynb | xargs -P 0 -n1 jupyter nbconvert --execute",
        "command": "myst build --execute --execute-parallel 4 --html --x `<!--hidden @octocat"}


def _repo(root: Path, run: str | None = None, edit=None) -> Path:
    """The mystmd fixture repository (a GPU job on g4dn.2xlarge), its build step's run: line replaced."""
    shutil.copytree(FIX / "mystmd_gpu", root)
    wf = root / ".github" / "workflows" / "build.yml"
    text = wf.read_text()
    if run is not None:
        text = text.replace("      - run: myst build --execute --html", "      - run: " + json.dumps(run))
    wf.write_text(edit(text) if edit else text)
    return root


def setup(tmp: Path) -> None:
    for name, run in RUNS.items():
        _repo(tmp / name, run)
    _repo(tmp / "nan", edit=lambda t: t.replace("timeout-minutes: 120", "timeout-minutes: .nan"))
    _repo(tmp / "minutes-digits", edit=lambda t: t.replace("timeout-minutes: 120", f"timeout-minutes: {D5}"))
    _repo(tmp / "job", edit=lambda t: t.replace("  build:", '  "b`<!--x":'))
    wf = _repo(tmp / "file-name") / ".github" / "workflows"
    (wf / "build.yml").rename(wf / "b`<!--x.yml")
    (_repo(tmp / "big-myst") / "myst.yml").write_text("version: 1\nproject:\n  n: [" + "1," * 3_000_000 + "1]\n")
    (_repo(tmp / "flat-myst") / "myst.yml").write_text("version: 1\nproject:\n  n: [" + "1," * 200_000 + "1]\n")
    shutil.copytree(FIX / "findings_gpu", tmp / "config-digits")
    (tmp / "config-digits" / "_config.yml").write_text(f"execute:\n  timeout: {D5}\n")
    (tmp / "names.txt").write_text("\n".join(f"nosuch{i}" for i in range(80_000)) + "\n")


def _audit(name: str, *more: str) -> tuple:
    return ("audit", f"{{tmp}}/{name}", "--no-progress", *more)


CASES = [
    *[Case(_audit(name), 0, "CI audit", pick="## CI audit", shown=f"jaxci audit R (a run: line {what})")
      for name, what in (("pytest", "repeating 'pytest --nbmake ' 3,000 times, 47 KiB"),
                         ("sphinx", "repeating 'sphinx-build ' 30,000 times, 380 KiB"),
                         ("xargs", "repeating 'xargs ' 50,000 times, 292 KiB"))],
    *[Case(_audit(name), 0, "CI audit", pick="## CI audit", shown=f"jaxci audit R (run: {shown} of 5,000 digits)")
      for name, shown in (("myst-digits", "myst build --execute-parallel N"), ("sphinx-digits", "sphinx-build -j N"),
                          ("pytest-digits", "pytest --nbmake -n N"), ("xargs-digits", "xargs -P N"))],
    Case(_audit("minutes-digits"), 0, "an integer of 5,000 digits (at most 100)",
         shown="jaxci audit R (timeout-minutes of 5,000 digits)"),
    Case(_audit("config-digits"), 0, "an integer of 5,000 digits (at most 100)",
         shown="jaxci audit R (_config.yml execute.timeout of 5,000 digits)"),
    Case(_audit("big-myst"), 0, "over the limit of 1.0 MiB", shown="jaxci audit R (a 6 MiB myst.yml: a flat list)"),
    Case(_audit("flat-myst"), 0, "more than 100,000 YAML nodes",
         shown="jaxci audit R (a 400 KiB myst.yml of 200,001 list items)"),
    Case(_audit("xargs-0", "--format", "json"), 0, "memory-policy", shown="jaxci audit R --format json (xargs -P 0)"),
    Case(_audit("nan", "--format", "json"), 0, '"timeout_minutes": ".nan"',
         shown="jaxci audit R --format json (timeout-minutes: .nan)"),
    Case(_audit("command"), 0, "``myst build", shown="jaxci audit R (run: ... `<!--hidden @octocat)"),
    Case(_audit("job", "--summary", "{tmp}/job-summary.md"), 0, "job `b`&lt;!--x`",
         shown="jaxci audit R --summary S (a job id 'b`<!--x')"),
    Case(_audit("file-name", "--summary", "{tmp}/file-summary.md"), 0, "Runner tier",
         shown="jaxci audit R --summary S (a workflow named 'b`<!--x.yml')"),
    Case(("audit", "{tmp}/pytest/lectures", "--execute", "--only", "@/proc/self/environ"), 2,
         "line 1 holds a control character: not a list of lecture names (its content is not shown)"),
    Case(("audit", "{tmp}/pytest/lectures", "--execute", "--only", "@{tmp}/names.txt"), 2,
         "no lecture named as written on line 1, as written on line 2",
         shown="jaxci audit L --execute --only @FILE (80,000 unknown names)"),
]

scratch, test_bad_input_outcome = outcome_tests(CASES, setup)


def outside_code(line: str) -> str:
    """A Markdown line without its code spans (backtick runs paired by length, as CommonMark pairs them)."""
    runs, out, start, k = list(re.finditer(r"`+", line)), [], 0, 0
    while k < len(runs):
        close = next((j for j in range(k + 1, len(runs)) if len(runs[j].group()) == len(runs[k].group())), None)
        if close is None:
            k += 1
            continue
        out.append(line[start:runs[k].start()])
        start, k = runs[close].end(), close + 1
    return "".join(out) + line[start:]


def forged(text: str) -> list[str]:
    """Lines a runner would run as a workflow command, or with HTML (a comment, a tag) outside code spans and
    fenced blocks (where Markdown shows every character as it is)."""
    found, fence = [], None
    for x in text.splitlines():
        if x.lstrip().startswith("::") or "##[" in x:
            found.append(x)
        opening = re.match(r"\s*(`{3,})", x)
        if fence is None and opening:
            fence = opening.group(1)
        elif fence is not None:
            fence = None if x.strip() == fence else fence
        elif re.search(r"<!--|<[A-Za-z/]", outside_code(x)):
            found.append(x)
    return found


@pytest.mark.parametrize("name", ["command", "job", "file-name"])
def test_no_name_or_command_forges_markdown_or_a_workflow_command(scratch, name):
    case = next(c for c in CASES if c.args[1] == f"{{tmp}}/{name}")
    out = run_case(case, scratch)
    summary = scratch / f"{name}-summary.md"
    for text in (out.stdout, out.stderr, summary.read_text() if summary.exists() else ""):
        assert not forged(text), forged(text)[:3]


def test_the_audit_json_is_strict_json(scratch):
    out = run_case(next(c for c in CASES if c.args[1] == "{tmp}/nan"), scratch)
    json.loads(out.stdout, parse_constant=lambda c: pytest.fail(f"{c} in the audit JSON"))


@pytest.mark.parametrize("text, every, read", [("0", 12, 12), ("0", None, engine.AT_MOST), (D5, 12, 12),
                                               ("4097", None, engine.AT_MOST), ("4", 12, 4), ("٣", 12, None),
                                               ("auto", 12, 8)])
def test_a_count_is_read_by_one_rule(text, every, read):
    """xargs -P 0 and a count over AT_MOST are every notebook at once; other scripts' digits are no count."""
    assert engine.count(text, 8, every, zero_is_all=True) == read


def test_an_engine_is_read_from_words_whatever_the_line_repeats():
    line = "echo " + "pytest --nbmake " * 100_000 + "-n 4"
    found = engine.engine_of([("w.yml:3", line)], Path("."), 8)
    assert found.now == 4 and found.where.startswith("w.yml:3 `")
    assert engine.engine_of([("w.yml:3", "xargs " * 200_000)], Path("."), 8) is None


def test_yaml_is_bounded_before_and_while_it_is_parsed(monkeypatch):
    """Size refused before a character is parsed; nodes and depth counted while composing; big integers named."""
    import yaml

    monkeypatch.setattr(yaml.reader.Reader, "__init__", lambda *a: pytest.fail("parsed before its size check"))
    with pytest.raises(UnsafeFile, match="over the limit"):
        safeyaml.parse("x" * (safeyaml.LIMIT + 1), "big.yml")
    monkeypatch.undo()
    for text, match in (("[" + "1," * 200_000 + "1]", "more than 100,000 YAML nodes"),
                        ("x: " + "[" * 5000 + "]" * 5000, "nested more than 64 deep"),
                        (f"a:\n  b: {D5}\n", "line 2: an integer of 5,000 digits"),
                        ("a: &a [*a]\n", "recursive alias")):
        with pytest.raises(UnsafeFile, match=match):
            safeyaml.parse(text, "c.yml")
    assert safeyaml.parse("a: [1, {b: 2}]\nc: &x 1\nd: *x\ne: 0x1f\n") == {"a": [1, {"b": 2}], "c": 1, "d": 1, "e": 31}


@pytest.mark.parametrize("text", ["b`<!--x.yml", "`<!--hidden @octocat", "x\n\n# Forged heading\n<!--",
                                  "evil<!-- hidden", "a \\`<!--` b", "::warning title=x::y", "``a`<b>``c`<i>"])
def test_prose_writes_no_html_outside_code_spans_and_one_line(text):
    """quoting.prose, the one rule for a message written into Markdown, on the probe set's strings."""
    out = quoting.prose(text)
    assert "\n" not in out and not forged(out), out
    assert not forged(quoting.code(text)) and "\n" not in quoting.cell(text)


def test_a_fence_outlasts_every_backtick_run():
    lines = quoting.fenced("a\n````\nb", "diff")
    assert lines[0] == "`````diff" and lines[-1] == "`````"


def test_only_from_a_file_drops_a_bom_and_never_quotes_the_file(tmp_path):
    from types import SimpleNamespace

    from jaxci.commands.audit_shard import selected
    from jaxci.util.validate import InputError

    lectures = [SimpleNamespace(path="a.md"), SimpleNamespace(path="b.md")]
    (tmp_path / "bom.txt").write_bytes(b"\xef\xbb\xbfa\r\nb\r\n")
    assert selected(f"@{tmp_path / 'bom.txt'}", lectures) == {"a", "b"}
    (tmp_path / "secret.txt").write_text("a\nTOKEN=ghp_not_real\n")
    with pytest.raises(InputError) as exc:
        selected(f"@{tmp_path / 'secret.txt'}", lectures)
    assert "ghp_not_real" not in str(exc.value) and "line 2" in str(exc.value)


def test_an_impossible_n_workers_is_no_measurement():
    from types import SimpleNamespace

    from jaxci.analysis.concurrency import grid, workers
    from jaxci.policy.builds import number

    assert [workers(v) for v in (-1, 0, "x", True, 10 ** 5000, 4)] == [None, None, None, None, None, 4]
    rec = lambda n: SimpleNamespace(suite="concurrency", method="track_workers_died", machine="m", ok=True,  # noqa: E731
                                    params={"n_workers": n, "policy": "default", "device": "gpu"}, value=0.0,
                                    provenance=lambda: "", status="ok")
    assert [c.n_workers for c in grid([rec(-1), rec("x"), rec(2), rec(1)])] == [1, 2]
    assert [number(v) for v in (1e308, float("inf"), -1, 30.5)] == [None, None, -1.0, 30.5]


def test_the_results_digest_reads_only_what_the_loader_opens(tmp_path):
    """A stray file of any size in a results folder is never read (the digest used to read every file whole)."""
    from jaxci.results.records import _read_files

    shutil.copytree(REPO / "results", tmp_path / "R")
    stray = tmp_path / "R" / "ref-epyc-2c-ci" / "stray.tar"
    stray.touch()
    stray.chmod(0)
    files = _read_files(tmp_path / "R")
    assert stray not in files and tmp_path / "R" / "benchmarks.json" in files
    assert any(f.name == "machine.json" for f in files)


def test_a_patch_is_written_hunk_by_hunk_and_applies(tmp_path):
    """A workflow of 1,500 GPU jobs, each edited: the patch is written from the edits (no whole-file matching,
    which is quadratic), applies with git, and on the fixture repositories is byte for byte difflib's."""
    import subprocess

    from jaxci.audit.lecture_ci import audit_ci, edits, lectures
    from jaxci.util.patch import file_diff

    for name in ("findings_gpu", "split_gpu", "mystmd_gpu"):
        report = audit_ci(FIX / name, lectures.audit_lectures(FIX / name))
        texts = {e.file: (FIX / name / e.file).read_text() for e in report.edits}
        whole = "".join(file_diff(f, texts[f], edits.apply(texts, report.edits)[f]) for f in sorted(texts))
        assert edits.unified_diff(FIX / name, report.edits) == whole
    root = _repo(tmp_path / "jobs", edit=lambda t: "on: push\njobs:\n" + "".join(
        f"  j{i}:\n    runs-on: [runs-on=1, family=g4dn.2xlarge]\n    steps:\n"
        "      - run: myst build --execute --execute-parallel 4\n" for i in range(1500)))
    report = audit_ci(root, lectures.audit_lectures(root))
    patch = edits.unified_diff(root, report.edits)
    assert patch.count("XLA_PYTHON_CLIENT_PREALLOCATE") >= 1500
    if shutil.which("git"):
        subprocess.run(["git", "init", "-q"], cwd=root, check=True)
        (tmp_path / "p.diff").write_text(patch)
        proc = subprocess.run(["git", "apply", "--check", str(tmp_path / "p.diff")], cwd=root, capture_output=True,
                              text=True)
        assert proc.returncode == 0, proc.stderr
