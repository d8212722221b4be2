"""Bad input, sixth pass: committed audits and `jaxci audit publish`, the maintainers' report, the results
loader, the fail-once files, YAML values and command-line counts that cannot be built, and Ctrl-C. Each command
case runs as a user runs it (tests/badinput.py): exit 2 and one line naming what and where, or exit 0 with a
stated result; never a traceback, a partial output or a file written outside the named folder. The in-process
tests check each class's one rule directly (the probe set's strings: ../shared/probes6/broken-s6.txt)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest

from jaxci.audit.writing import publish, record
from jaxci.util import safewrite
from tests.badinput import REPO, Case, outcome_tests, run_case, tree_hash

AUDIT = REPO / "audits" / "lecture-python-advanced.myst@b83d6da"
GIT = shutil.which("git")

#: committed-audit fields changed to what the report cannot read: (where, value) set on a copy of AUDIT
MUTATIONS = {
    "commit-int": (("published", "commit"), 1234567), "published-list": (("published",), [1]),
    "not_executed-int": (("lectures", 0, "not_executed"), 5), "errors-ints": (("lectures", 0, "errors"), [1, 2]),
    "pins-objects": (("pin_to_cpu",), [{}]), "ci-list": (("ci",), []), "installs-strings": (("ci", "installs"), ["x"]),
    "jax-list": (("published", "jax"), [1]), "scan-list": (("lectures", 0, "scan"), []),
    "lecture-published-list": (("lectures", 0, "published"), []),
    "lecture-published-1e308": (("lectures", 0, "published"), {"g4dn.2xlarge": {"seconds": 1e308, "source": "x"}}),
    "execution-list": (("execution",), [1]), "execution-keys-list": (("execution", "keys"), [1]),
    "execution-key-list": (("execution", "keys"), {"a.md": [1]}),
}


def mutated(name: str) -> dict:
    doc = json.loads((AUDIT / "audit.json").read_text())
    keys, value = MUTATIONS[name]
    target = doc
    for key in keys[:-1]:
        target = target[key]
    target[keys[-1]] = value
    return doc


def _raw(folder: Path, **files) -> Path:
    """A raw audit folder (measure/repo_audit.sh's) with `files` (name -> text, bytes, or a link target Path)."""
    shutil.copytree(AUDIT, folder)
    for name, content in files.items():
        path = folder / name.replace("_", ".")
        path.unlink(missing_ok=True)
        if isinstance(content, Path):
            os.symlink(content, path)
        else:
            path.write_bytes(content if isinstance(content, bytes) else content.encode())
    return folder


CASES = [
    Case(("audit", "publish", "{tmp}/raw", "{tmp}/raw"), 2, "is RAW_DIR, the raw audit"),
    Case(("audit", "publish", "{tmp}/raw", "{tmp}/a-file"), 2, "a-file: cannot make the folder"),
    Case(("audit", "publish", "{tmp}/raw", "/dev/null/x"), 2, "DEST_DIR /dev/null/x: cannot make the folder"),
    Case(("audit", "publish", "{tmp}/raw", "{tmp}/d-link"), 2, "audit.json: is a symbolic link"),
    Case(("audit", "publish", "{tmp}/raw-link", "{tmp}/out-link"), 2, "ci.patch: is a symbolic link"),
    Case(("audit", "publish", "{tmp}/raw-binary", "{tmp}/out-binary"), 2, "ci.patch: not UTF-8 text"),
    Case(("report", "/proc", "--format", "summary"), 2, "no asv result values"),
    Case(("predict", "--family", "c7i.2xlarge", "--kernel", "scan", "--n", "10", "--results", "/proc"), 2,
         "--results /proc"),
    Case(("env", "--kernels", "2", "--device-memory-mib", "16000", "--evidence", "/proc"), 0, "kernels: 2"),
    Case(("report", "results", "--maintainers", "{tmp}/maint", "--format", "summary"), 2,
         "g4dn.2xlarge.md: is a symbolic link"),
    # fail-once never fails a build that would pass without it: a name it cannot skip runs as usual, said
    Case(("failures", "skip", "--known", "{tmp}/nul.json", "--project", "{tmp}"), 0,
         "its name holds the control character '\\x00'; it runs as usual"),
    Case(("failures", "record", "--site", "{tmp}/site", "--project", "{tmp}", "--out", "{tmp}/k.json"), 0,
         "0 failed notebook(s) recorded"),
    # nothing to skip: the book's config is left alone, whatever it holds
    Case(("failures", "skip", "--known", "{tmp}/empty.json", "--config", "{tmp}/deep.yml", "--project", "{tmp}"), 0,
         ""),
    Case(("failures", "skip", "--known", "{tmp}/empty.json", "--config", "{tmp}/digits.yml", "--project", "{tmp}"),
         0, ""),
    Case(("history", "--confirm", "--machine", "lab-h200", "--bench", "(a|a)*$"), 2,
         "'(a|a)*$' can backtrack through inf paths"),
]


def setup(tmp: Path) -> None:
    _raw(tmp / "raw")
    _raw(tmp / "raw-link", ci_patch=Path("/etc/passwd"))
    _raw(tmp / "raw-binary", ci_patch=b"\xff\xfe")
    (tmp / "a-file").write_text("")
    (tmp / "d-link").mkdir()
    (tmp / "victim.txt").write_text("precious")
    os.symlink(tmp / "victim.txt", tmp / "d-link" / "audit.json")
    (tmp / "maint").mkdir()
    os.symlink(tmp / "victim.txt", tmp / "maint" / "g4dn.2xlarge.md")
    (tmp / "nul.json").write_text('{"format":1,"failures":{"a\\u0000b.ipynb":{"hash":"x","error":"e"}}}')
    (tmp / "site" / "content").mkdir(parents=True)
    (tmp / "site" / "content" / "p0.json").write_text(json.dumps(
        {"location": "/a\0.md", "mdast": {"children": [{"jupyter_data": {"output_type": "error",
                                                                          "traceback": ["ValueError: 1"]}}]}}))
    (tmp / "empty.json").write_text('{"format":1,"failures":{}}')
    (tmp / "deep.yml").write_text("x: " + "[" * 5000 + "]" * 5000 + "\n")
    (tmp / "digits.yml").write_text(f"execute:\n  timeout: {'9' * 5000}\n")


scratch, test_bad_input_outcome = outcome_tests(CASES, setup)


def test_a_refused_publish_writes_nothing_and_leaves_its_inputs(scratch):
    for case in CASES[:6]:
        raw = scratch / case.args[2].replace("{tmp}/", "")
        before = tree_hash(raw), (scratch / "victim.txt").read_text()
        run_case(case, scratch)
        assert (tree_hash(raw), (scratch / "victim.txt").read_text()) == before
    assert not (scratch / "out-link").exists() and not (scratch / "out-binary").exists()
    assert (scratch / "a-file").read_text() == "" and sorted(os.listdir(scratch / "d-link")) == ["audit.json"]


def test_the_maintainers_report_writes_no_page_before_refusing_one(scratch):
    run_case(CASES[9], scratch)
    assert sorted(os.listdir(scratch / "maint")) == ["g4dn.2xlarge.md"]
    assert (scratch / "victim.txt").read_text() == "precious"


def test_publish_keeps_no_message_of_any_exception_whatever_its_name(tmp_path):
    doc = json.loads((AUDIT / "audit.json").read_text())
    doc["lectures"][0]["errors"] = ["cpu: cell 3: StopIteration: token=SECRET1", "cpu: cell 4: Boom: password SECRET2",
                                    "Exception: Solution not found SECRET3", "cpu: cell 4: : SECRET4"]
    (tmp_path / "raw").mkdir()
    for name in ("run.txt", "kernel-packages.txt"):
        shutil.copy(AUDIT / name, tmp_path / "raw" / name)
    (tmp_path / "raw" / "audit.json").write_text(json.dumps(doc))
    out = run_case(Case(("audit", "publish", str(tmp_path / "raw"), str(tmp_path / "dest")), 0, "wrote"), tmp_path)
    assert out.rc == 0, out.stderr
    errors = json.loads((tmp_path / "dest" / "audit.json").read_text())["lectures"][0]["errors"]
    assert errors == ["cpu: cell 3: StopIteration", "cpu: cell 4: Boom", "Exception", "cpu: cell 4: …"]
    assert publish.exception_name("cell 33 exceeded the 900 s cell timeout") == \
        "cell 33 exceeded the 900 s cell timeout"
    assert publish.exception_name("kernel failed: DeadKernelError: Kernel died x") == "kernel failed: DeadKernelError"


@pytest.mark.parametrize("name", sorted(MUTATIONS))
def test_a_committed_audit_with_a_field_of_the_wrong_type_is_one_line_naming_it(name, tmp_path):
    from jaxci.report import committed_audits as audits

    folder = tmp_path / "A" / "x@1234567"
    folder.mkdir(parents=True)
    (folder / "audit.json").write_text(json.dumps(mutated(name)))
    found, problems = audits.load(tmp_path / "A")
    field = MUTATIONS[name][0][-1]
    assert not found and len(problems) == 1 and "\n" not in problems[0] and str(field) in problems[0], problems


def test_audit_values_never_reach_the_maintainers_markdown_raw():
    from jaxci.report import maintainers
    from jaxci.report.committed_audits import CommittedAudit

    doc = json.loads((AUDIT / "audit.json").read_text())
    doc["published"]["repository"] = "evil<!-- hidden"
    doc["lectures"][0]["not_executed"] = "x\n\n# Forged heading\n<!--"
    doc["lectures"][1].update(path="a`<!--x.md", status="error", not_executed="", errors=["cpu: cell 1: E"])
    text = maintainers.audit_md(CommittedAudit("x@1234567", record.validated(doc)))
    assert "\n# Forged" not in text and "evil&lt;!-- hidden@" in text and "x  # Forged heading &lt;!--" in text
    assert text.count("<!--") == text.count("``a`<!--x.md``") == 1  # only inside its one closed code span


def test_a_lecture_path_with_a_backtick_stays_inside_its_code_span_in_the_findings(tmp_path):
    doc = json.loads((REPO / "audits" / "lecture-python.myst@40e15dc" / "audit.json").read_text())
    for lec in doc["lectures"]:
        lec["path"] = lec["path"].replace("lectures/", "lectures/a`<!--x")
    doc["pin_to_cpu"] = [p.replace("lectures/", "lectures/a`<!--x") for p in doc["pin_to_cpu"]]
    (tmp_path / "tick.json").write_text(json.dumps(doc))
    case = Case(("report", "results", "--audit", str(tmp_path / "tick.json"), "--family", "g4dn.2xlarge", "--out",
                 str(tmp_path / "O"), "--format", "summary"), 0, "")
    assert run_case(case, tmp_path).rc == 0
    for page in ("findings.md", "guidance.md"):
        text = (tmp_path / "O" / page).read_text()
        assert text.count("<!--") == text.count("``lectures/a`<!--x"), page  # only inside a double-backtick span


# ---- the results loader --------------------------------------------------------------------------------------

def test_the_loader_never_reads_a_file_it_does_not_parse(tmp_path, monkeypatch):
    from jaxci.results import records

    shutil.copytree(REPO / "results", tmp_path / "R")
    stray = tmp_path / "R" / "ref-epyc-2c-ci" / "stray.tar"
    with stray.open("wb") as f:
        f.truncate(3 * 1024**3)  # sparse: 3 GiB that a whole read would need in memory
    real = Path.read_bytes

    def read_bytes(self):
        assert self.name != "stray.tar", "the stray file was read"
        return real(self)

    monkeypatch.setattr(Path, "read_bytes", read_bytes)
    first = records._content_digest(tmp_path / "R")
    (tmp_path / "R" / "ref-epyc-2c-ci" / "machine.json").write_text("{}")
    assert records._content_digest(tmp_path / "R") != first  # a parsed file's bytes still key the read


def test_a_concurrency_n_that_is_not_a_whole_number_of_kernels_is_not_read():
    from jaxci.analysis import concurrency

    rec = lambda n: SimpleNamespace(suite="concurrency", method="track_workers_died", machine="m", ok=True, value=0,
                                    params={"n_workers": n, "policy": "no-prealloc", "device": "gpu"},
                                    provenance=lambda: "", status="ok")
    cells = concurrency.grid([rec(n) for n in (1, "x", 3, -1, True, 2.5)])
    assert [c.n_workers for c in cells] == [1, 3]


# ---- fail-once pages, YAML values, command-line counts -------------------------------------------------------

PAGE = "---\ntitle: Real Title\nkernelspec:\n  name: python3\n  display_name: P\n---\n\n```{code-cell} ipython3\n" \
       "raise ValueError(1)\n```\n"


@pytest.mark.parametrize("text", [PAGE.replace("\n", "\r\n"), "\ufeff" + PAGE], ids=["crlf", "bom"])
def test_skipping_a_crlf_or_bom_page_edits_its_own_front_matter(tmp_path, text):
    from jaxci.workflows import failures

    (tmp_path / "a.md").write_bytes(text.encode())
    failures.skip_pages(tmp_path, ["a.md"])
    out = (tmp_path / "a.md").read_bytes().decode()
    newline = "\r\n" if "\r\n" in text else "\n"
    assert out.count("---" + newline) == 2 and out.startswith(text[:1] if text[0] == "\ufeff" else "---")
    assert f"title: Real Title{newline}" in out and f"  skip: true{newline}" in out
    assert out.split("---" + newline)[2] == text.split("---" + newline)[2]  # the body as it was


def test_a_yaml_value_that_cannot_be_built_is_one_line_in_every_reader():
    from jaxci.audit.reading import yamlread
    from jaxci.util import safeio, safeyaml

    doc = yamlread.parse(f"jobs:\n  b:\n    timeout-minutes: {'9' * 5000}\n", "w.yml")
    assert doc.error == "w.yml: line 3: an integer of 5,000 digits (at most 100)"
    with pytest.raises(safeio.UnsafeFile, match="a YAML value cannot be read"):
        safeyaml.parse("d: 2001-13-45\n", "c.yml")


@pytest.mark.parametrize("line", ["myst build --execute --execute-parallel {n} --html",
                                  "sphinx-build -j {n} -b html . _b", "pytest --nbmake -n {n} lectures",
                                  "ls | xargs -P {n} -n1 jupyter nbconvert --execute"])
def test_a_count_of_5000_digits_in_a_command_line_is_very_many_not_a_traceback(line):
    from jaxci.audit.lecture_ci import engine

    found = engine.engine_of([("w.yml:1", line.format(n="9" * 5000))], Path("/nonexistent"), 8)
    assert found is not None and found.now == engine.AT_MOST  # every notebook at once, never int() of 5,000 digits


def test_ctrl_c_in_any_command_is_one_line_and_exit_130(monkeypatch, capsys):
    from jaxci import cli
    from jaxci.commands import report

    def interrupted(argv):
        raise KeyboardInterrupt

    monkeypatch.setattr(report, "main", interrupted)
    assert cli.main(["report", "results"]) == 130
    assert capsys.readouterr().err.strip().count("\n") == 0


def test_write_files_checks_every_target_before_the_first(tmp_path):
    os.symlink(tmp_path / "elsewhere", tmp_path / "z.md")
    with pytest.raises(safewrite.UnsafeWrite, match="z.md: is a symbolic link"):
        safewrite.write_files(tmp_path, {"a.md": "x", "z.md": "y"})
    assert sorted(os.listdir(tmp_path)) == ["z.md"]


def test_an_artifact_link_is_never_followed_into_results(tmp_path):
    from jaxci.workflows import collect

    source = tmp_path / "in" / "results-f" / "results" / "f"
    source.mkdir(parents=True)
    (source / "a.json").write_text("{}")
    (tmp_path / "secret").write_text("secret")
    os.symlink(tmp_path / "secret", source / "leak.json")
    merged, skipped = collect._merge(tmp_path / "in" / "results-f", "f", tmp_path / "res")
    assert merged and skipped == ["results/f/leak.json"]
    assert sorted(os.listdir(tmp_path / "res" / "f")) == ["a.json"]


@pytest.mark.parametrize("text", ["[" * 100_000 + "]" * 100_000, json.dumps({"cells": ["x", "y"]}),
                                  json.dumps({"cells": [{"source": [1, 2]}, {"source": 5}]}),
                                  json.dumps({"cells": {"a": 1}})])
def test_published_builds_reads_a_malformed_status_page_in_one_line(text):
    import sys

    sys.path.insert(0, str(REPO / "measure"))
    import published_builds

    with pytest.raises(published_builds.InputError) as exc:
        published_builds.parse_status(text, None)
    assert "\n" not in str(exc.value)


@pytest.mark.skipif(GIT is None, reason="needs git")
def test_restore_refs_on_a_pin_commit_dated_off_the_calendar_is_one_line(tmp_path):
    (tmp_path / "asv.conf.json").write_text("{}")
    (tmp_path / "env_matrix").mkdir()
    env = {**os.environ, "GIT_AUTHOR_NAME": "x", "GIT_AUTHOR_EMAIL": "x@x", "GIT_COMMITTER_NAME": "x",
           "GIT_COMMITTER_EMAIL": "x@x", "GIT_COMMITTER_DATE": "@9999999999999 +0000"}
    for argv in (["init", "-q"], ["add", "."], ["commit", "-q", "-m", "history: pin jax 9.9.9"]):
        subprocess.run([GIT, *argv], cwd=tmp_path, env=env, check=True)
    out = run_case(Case(("history", "--restore-refs", "--repo", str(tmp_path)), 2, "outside the calendar"), tmp_path)
    assert out.rc == 2 and "outside the calendar" in out.line and "Traceback" not in out.stderr
