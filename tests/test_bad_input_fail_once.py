"""Bad input, by command: fail once (`jaxci failures record/skip`, templates/fail-once-*.yml) fed what a kernel, a
page name or a book config can hold: an error output with an empty traceback whose value forges a workflow command
and an HTML comment, terminal control characters, a page named like a workflow command, a name with a tab or a NUL,
an .ipynb page under mystmd, a `_config.yml` that is a link, configs nested 5,000 deep or holding a 5,000-digit
number or a tab, CRLF and BOM pages. Each case runs in a fresh process (tests/badinput.py).

The promise checked here besides each case's outcome: a record never makes a build fail that would pass without
it (a name that cannot be skipped is said and runs; pages are edited all or none; the templates' steps go on when
jaxci refuses), and nothing printed is a workflow command, an HTML comment or a control character (every line
through jaxci.util.quoting.log, since the templates append it to the step summary)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from jaxci.util import quoting
from jaxci.workflows import failures as fo
from tests.badinput import REPO, Case, outcome_tests, run_case
from tests.workflowutil import run_bash

PAGE = ("---\nkernelspec:\n  name: python3\n  display_name: P\n---\n\n```{code-cell} ipython3\nraise ValueError(1)\n"
        "```\n")
NOTEBOOK = json.dumps({"cells": [{"cell_type": "code", "source": "raise ValueError(1)", "metadata": {}, "outputs": [],
                                  "execution_count": None}], "nbformat": 4, "nbformat_minor": 5,
                       "metadata": {"kernelspec": {"name": "python3", "display_name": "P"}}})
#: an error output as ipykernel sends it for an exception whose _render_traceback_ returns []
FORGED = {"output_type": "error", "ename": "E", "evalue": "x\n::warning title=forged::injected\n<!-- hidden",
          "traceback": []}
CONTROL = {"output_type": "error", "ename": "V", "evalue": "",
           "traceback": ["\x1b[31mValueError\x1b[0m: \x1b[2J\x07\x08\x08boom"]}
COMMAND_PAGE = "::warning title=x::forged.md"


def site(root: Path, pages: dict, errors: dict | None = None) -> Path:
    """A mystmd project at `root`: each page written and failing in _build/site/content (its error output)."""
    (root / "_build" / "site" / "content").mkdir(parents=True)
    for i, (name, text) in enumerate(pages.items()):
        if text is not None:
            (root / name).write_text(text, newline="")
        error = (errors or {}).get(name) or {"output_type": "error", "traceback": ["ValueError: 1"]}
        (root / "_build" / "site" / "content" / f"p{i}.json").write_text(
            json.dumps({"location": "/" + name, "mdast": {"children": [{"jupyter_data": error}]}}))
    return root


def known(root: Path, names: list[str], error: str = "ValueError: 1", file: str = "k.json") -> Path:
    """A known-failures record of `names` as `failures record` writes it (each page's current hash)."""
    failures = {n: {"hash": fo.content_hash(root / n) if (root / n).is_file() else "x", "error": error}
                for n in names}
    (root / file).write_text(json.dumps({"format": 1, "failures": failures}))
    return root / file


def setup(tmp: Path) -> None:
    """One project per case, with its pages, built site and record."""
    site(tmp / "evalue", {"a.md": PAGE}, {"a.md": FORGED})
    site(tmp / "control", {"a.md": PAGE}, {"a.md": CONTROL})
    site(tmp / "nul-location", {"a\x00.md": None})
    known(site(tmp / "newline", {"a.md": PAGE}), ["a.md"], "x\n::error title=forged::injected\n<!-- hidden")
    known(site(tmp / "command", {COMMAND_PAGE: PAGE}), [COMMAND_PAGE])
    known(site(tmp / "tab", {"a\tb.md": PAGE, "c.md": PAGE}), ["a\tb.md", "c.md"])
    known(site(tmp / "ipynb", {"nb.ipynb": NOTEBOOK, "c.md": PAGE}), ["nb.ipynb", "c.md"])
    (tmp / "nul").mkdir()
    (tmp / "nul" / "k.json").write_text('{"format":1,"failures":{"a\\u0000b.ipynb":{"hash":"x","error":"e"}}}')
    (tmp / "link").mkdir()
    (tmp / "link" / "real_config.yml").write_text("title: x\n")
    (tmp / "link" / "_config.yml").symlink_to("real_config.yml")
    (tmp / "link" / "k.json").write_text('{"format": 1, "failures": {}}')
    for name, config in (("tab-config", "title: x\nexecute:\n\texecute_notebooks: cache\n"),
                         ("deep-config", "x: " + "[" * 5000 + "]" * 5000 + "\n"),
                         ("digits-config", "execute:\n  timeout: " + "9" * 5000 + "\n")):
        (tmp / name).mkdir()
        (tmp / name / "a.md").write_text(PAGE)
        (tmp / name / "c.yml").write_text(config)
        known(tmp / name, ["a.md"])
    for name, page in (("crlf", PAGE.replace("\n", "\r\n")), ("bom", "\ufeff" + PAGE)):
        known(site(tmp / name, {"a.md": page}), ["a.md"])


def _skip(folder: str, *more: str) -> tuple:
    return ("failures", "skip", "--known", f"{{tmp}}/{folder}/k.json", "--project", f"{{tmp}}/{folder}", *more)


def _record(folder: str) -> tuple:
    return ("failures", "record", "--site", f"{{tmp}}/{folder}/_build/site", "--project", f"{{tmp}}/{folder}",
            "--out", f"{{tmp}}/{folder}/out.json")


CASES = [
    Case(_record("evalue"), 0, "1 failed notebook(s) recorded",
         shown="jaxci failures record --site S (an error output: traceback [], evalue 'x\\n::warning ...\\n<!--')"),
    Case(_record("control"), 0, "1 failed notebook(s) recorded",
         shown="jaxci failures record --site S (a traceback of bell, backspace, clear-screen codes)"),
    Case(_record("nul-location"), 0, "0 failed notebook(s) recorded",
         shown="jaxci failures record --site S (a page's location holds a NUL)"),
    Case(("failures", "record", "--site", "no\nsuch", "--out", "{tmp}/k.json"), 2,
         "no\\nsuch: not a mystmd site folder"),
    Case(_skip("newline"), 0, "&lt;!-- hidden", pick="skipping",
         shown="jaxci failures skip (a recorded error 'x\\n::error title=forged::injected\\n<!-- hidden')"),
    Case(_skip("command"), 0, "[:][:]warning title=x[:][:]forged.md",
         shown="jaxci failures skip (a page named '::warning title=x::forged.md')"),
    Case(_skip("tab", "--pages"), 0, "its name holds the control character",
         shown="jaxci failures skip --pages (pages 'a\\tb.md' and 'c.md')"),
    Case(_skip("ipynb", "--pages"), 0, "only MyST Markdown pages",
         shown="jaxci failures skip --pages (a mystmd project: nb.ipynb and c.md failed)"),
    Case(_skip("nul"), 0, "its name holds the control character '\\x00'",
         shown="jaxci failures skip (a recorded name holding a NUL)"),
    Case(_skip("link", "--config", "{tmp}/link/_config.yml"), 0, "",
         shown="jaxci failures skip --config C (C a link, nothing to skip)"),
    *[Case(_skip(folder, "--config", f"{{tmp}}/{folder}/c.yml"), 2, expect, shown=f"jaxci failures skip --config C "
           f"({what})") for folder, expect, what in (
               ("tab-config", "not valid YAML at line 3", "indented with a tab"),
               ("deep-config", "YAML nested more than 64 deep", "nested 5,000 deep"),
               ("digits-config", "an integer of 5,000 digits", "a 5,000-digit timeout"))],
    Case(_skip("crlf", "--pages"), 0, "skipping a.md", shown="jaxci failures skip --pages (a CRLF page)"),
    Case(_skip("bom", "--pages"), 0, "skipping a.md", shown="jaxci failures skip --pages (a page with a BOM)"),
]

scratch, test_bad_input_outcome = outcome_tests(CASES, setup)


def _for_runner(text: str) -> list[str]:
    """What a runner or a summary would read in `text`: workflow commands, HTML comments, control characters."""
    found = [x for x in text.splitlines() if x.lstrip().startswith("::") or "##[" in x]
    found += ["<!--"] * ("<!--" in text)
    return found + [repr(c) for c in text if ord(c) < 32 and c != "\n"]


@pytest.mark.parametrize("case", CASES, ids=[" ".join(c.args[:2]) + f"-{i}" for i, c in enumerate(CASES)])
def test_nothing_printed_is_a_workflow_command_a_comment_or_a_control_character(case, scratch):
    out = run_case(case, scratch)
    assert not _for_runner(out.stdout + out.stderr), out.stdout + out.stderr


def test_a_record_holds_one_plain_line_per_failure(scratch):
    for case in CASES[:2]:
        run_case(case, scratch)
    errors = [json.loads((scratch / folder / "out.json").read_text())["failures"]["a.md"]["error"]
              for folder in ("evalue", "control")]
    assert errors == ["E: x\\n::warning title=forged::injected\\n<!-- hidden", "ValueError: \\x07\\x08\\x08boom"]


def test_a_name_that_cannot_be_skipped_leaves_the_others_skipped(scratch):
    for case in (CASES[6], CASES[7]):
        run_case(case, scratch)
    for folder in ("tab", "ipynb"):
        assert "skip: true" in (scratch / folder / "c.md").read_text()
    assert (scratch / "ipynb" / "nb.ipynb").read_text() == NOTEBOOK
    assert (scratch / "link" / "real_config.yml").read_text() == "title: x\n"  # nothing to skip: untouched


@pytest.mark.parametrize("folder, newline", [("crlf", "\r\n"), ("bom", "\n")])
def test_a_page_keeps_its_own_front_matter_line_ends_and_bom(scratch, folder, newline):
    run_case(next(c for c in CASES if folder in c.args[3]), scratch)
    text = (scratch / folder / "a.md").read_bytes().decode()
    assert text.startswith("\ufeff---" if folder == "bom" else "---") and text.count("---") == 2, text
    front = yaml.safe_load(text.lstrip("\ufeff").split("---")[1])
    assert front["kernelspec"]["name"] == "python3" and front["execute"] == {"skip": True}
    assert text.count(newline) == text.count("\n") and (newline == "\r\n" or "\r" not in text)


def test_pages_are_edited_all_or_none(tmp_path, monkeypatch):
    """The second page's write fails: the first is put back as it was, and the refusal says nothing changed."""
    from jaxci.util import safewrite

    for name in ("a.md", "b.md"):
        (tmp_path / name).write_text(PAGE)
    edits, notes = fo.plan_pages(tmp_path, ["a.md", "b.md"])
    assert list(edits) == ["a.md", "b.md"] and not notes
    real, calls = safewrite.write_text, []

    def failing(path, text, **kw):
        calls.append(path)
        if Path(path).name == "b.md" and len(calls) == 2:
            raise OSError(28, "No space left on device")
        return real(path, text, **kw)

    monkeypatch.setattr(safewrite, "write_text", failing)
    with pytest.raises(fo.FailuresError, match="no page was changed"):
        fo.write_all(edits)
    assert (tmp_path / "a.md").read_text() == PAGE and (tmp_path / "b.md").read_text() == PAGE


@pytest.mark.parametrize("template", ["fail-once-jupyter-book.yml", "fail-once-mystmd.yml"])
def test_the_templates_go_on_when_jaxci_refuses(tmp_path, template):
    """Each jaxci step of a template, run as a runner runs it (bash -eo pipefail) with a jaxci that exits 2: the
    step still succeeds (the build runs every notebook, or keeps the previous record)."""
    steps = yaml.safe_load((REPO / "templates" / template).read_text())["jobs"]["build"]["steps"]
    scripts = [s["run"] for s in steps if "jaxci failures" in s.get("run", "")]
    assert len(scripts) == 2
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "jaxci").write_text("#!/bin/sh\necho 'jaxci failures: refused' >&2\nexit 2\n")
    (tmp_path / "bin" / "jaxci").chmod(0o755)
    (tmp_path / ".jaxci").mkdir()
    (tmp_path / ".jaxci" / "known-failures.json").write_text("{}")
    env = {"PATH": f"{tmp_path / 'bin'}:/usr/bin:/bin", "BOOK": ".",
           "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md")}
    for script in scripts:
        proc = run_bash(script, cwd=tmp_path, env=env)
        assert proc.returncode == 0, (script, proc.stdout, proc.stderr)
        assert "refused" in proc.stdout + proc.stderr
    assert (tmp_path / ".jaxci" / "known-failures.json").read_text() == "{}"  # the previous record is kept


@pytest.mark.parametrize("text", [FORGED["evalue"], "::warning title=x::forged.md", "  ::error::x", "a ##[error]b",
                                  "\x1b[31mred\x1b[0m \x1b[2J\x07\x08", "x\u202eevil\ufeff", "@octocat <b>x</b> &amp;"])
def test_a_log_line_is_one_line_markdown_safe_and_no_workflow_command(text):
    """quoting.log, the one rule for what fail-once prints, on the probe set's strings."""
    out = quoting.log(text)
    assert "\n" not in out and not any(ord(c) < 32 or 0x7f <= ord(c) <= 0x9f for c in out)
    assert not out.lstrip().startswith("::") and "##[" not in out and "<" not in out and "@" not in out
    assert "\u202e" not in out and "\ufeff" not in out


def test_a_glob_matches_its_name_and_is_safe_in_a_log(tmp_path):
    from pathlib import PurePosixPath

    for name in (COMMAND_PAGE, "a[1]<!--@x.md", "##[error]x.md", "`b`|c.md", "*.md"):
        glob = quoting.glob_literal(name)
        assert PurePosixPath(name).match(glob) and not PurePosixPath("other.md").match(glob), (name, glob)
        assert not _for_runner(glob) and not re.search(r"<[!/?A-Za-z]|@\w", glob), glob  # no tag, no mention
