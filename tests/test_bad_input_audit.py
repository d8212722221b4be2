"""Bad input to `jaxci audit` and `jaxci audit merge`: the run cache, the shards and the merge, the outputs, and
what they write into Markdown summaries. Each case runs as a user runs it (tests/badinput.py): exit 2 and one
line naming what and where, or a stated result; never a traceback, a hang, a write outside the named folder, or
an input replaced."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from jaxci.audit.reading import runrecord
from jaxci.audit.runner import cache as run_cache
from jaxci.audit.runner.outcome import CellTiming, NotebookRun
from tests.badinput import Case, outcome_tests, run_case

LECTURE = ("---\nkernelspec:\n  name: python3\n  display_name: Python 3\n---\n# A\n\n"
           "```{code-cell} ipython3\nx = 1\n```\n")


def _shard(which: int, count=2, **block) -> dict:
    paths = ["a.md", "b.md"]
    mine = [paths[which - 1]] if count == 2 else paths
    return {"lectures": [{"path": p} for p in paths], "pin_to_cpu": [], "failed": [],
            "execution": {"keys": {}, "reused": []},
            "shard": {"spec": f"{which}/{count}", "index": which, "count": count, "lectures": mine, "source": "s",
                      **block}}


#: shard files written by setup(): name -> the document
SHARDS = {
    "s1": _shard(1), "s2": _shard(2),
    "count-list": _shard(1, count=[2]), "count-string": _shard(1, count="2"), "count-float": _shard(1, count=2.0),
    "count-huge": _shard(1, count=10**9), "index-big": _shard(1, index=7),
    "lectures-dicts": _shard(1, lectures=[{"a": 1}]), "spec-newline": _shard(1, spec="1/2\n| forged |"),
    "pins-missing": {**_shard(1), "pin_to_cpu": ["nowhere.md"]}, "pins-string": {**_shard(1), "pin_to_cpu": "a.md"},
    "execution-list": {**_shard(1), "execution": [1, 2]}, "reused-ints": {**_shard(1), "execution": {"reused": [1]}},
    "nan": {**_shard(1), "lectures": [{"path": "a.md", "proposed_timeout": float("nan")}, {"path": "b.md"}]},
    "pins-other": {**_shard(1), "pin_to_cpu": ["b.md"]},  # a shard pins others' lectures by their static verdict
    "html-path": {**_shard(1, count=1, lectures=["a<!--hidden.md", "@team <img src=x>"]),
                  "lectures": [{"path": "a<!--hidden.md"}, {"path": "@team <img src=x>"}]},
}

#: --baseline audits whose execution block is not the shape the run cache reads: name -> the field refused
BASELINES = {"baseline-execution-list": "execution", "baseline-keys-list": "execution.keys",
             "baseline-key-list": "execution.keys['a.md']"}
BASELINE_DOCS = {"baseline-execution-list": [1], "baseline-keys-list": {"keys": [1]},
                 "baseline-key-list": {"keys": {"a.md": [1]}}}

MERGE = ("audit", "merge")
CASES = [
    Case((*MERGE, "{tmp}/s1.json", "{tmp}/s2.json", "--output", "{tmp}/s1.json"), 2, "one of the shards"),
    Case((*MERGE, "{tmp}/count-list.json", "{tmp}/s2.json"), 2, "shard.count"),
    Case((*MERGE, "{tmp}/count-string.json", "{tmp}/s2.json"), 2, "shard.count"),
    Case((*MERGE, "{tmp}/count-float.json", "{tmp}/s2.json"), 2, "shard.count"),
    Case((*MERGE, "{tmp}/count-huge.json"), 2, "shard.count '1000000000'"),
    Case((*MERGE, "{tmp}/index-big.json", "{tmp}/s2.json"), 2, "shard.index '7'"),
    Case((*MERGE, "{tmp}/lectures-dicts.json", "{tmp}/s2.json"), 2, "shard.lectures"),
    Case((*MERGE, "{tmp}/spec-newline.json", "{tmp}/s2.json"), 2, "shard.spec"),
    Case((*MERGE, "{tmp}/pins-missing.json", "{tmp}/s2.json"), 0, "2 shard(s), 2 lectures"),
    Case((*MERGE, "{tmp}/pins-string.json", "{tmp}/s2.json"), 2, "pin_to_cpu"),
    Case((*MERGE, "{tmp}/execution-list.json", "{tmp}/s2.json"), 2, "execution"),
    Case((*MERGE, "{tmp}/reused-ints.json", "{tmp}/s2.json"), 2, "execution"),
    Case((*MERGE, "{tmp}/nan.json", "{tmp}/s2.json"), 2, "proposed_timeout"),
    Case((*MERGE, "{tmp}/pins-other.json", "{tmp}/s2.json"), 0, "2 shard(s), 2 lectures"),
    *(Case(("audit", "{tmp}/lect", "--execute", "--baseline", f"{{tmp}}/{name}.json", "--format", "json"), 2,
           f"{name}.json: {field}: expected an object")
      for name, field in BASELINES.items()),
    Case(("audit", "{tmp}/lect", "--output", "{tmp}/lect/a.md"), 2, "is a lecture under"),
    Case(("audit", "{tmp}/lect", "--execute", "--cache", "/dev/null/x", "--format", "json"), 2,
         "--cache /dev/null/x: cannot make the folder"),
    Case(("audit", "{tmp}/lect", "--execute", "--cache", "{tmp}/dangling", "--format", "json"), 2,
         "which does not exist"),
    Case(("audit", "{tmp}/lect", "--execute", "--shard", "1/2\n", "--format", "json"), 2,
         "--shard '1/2\\n': expected i/N in ASCII digits"),
    Case(("audit", "{tmp}/lect", "--execute", "--shard", "１/２", "--format", "json"), 2,
         "expected i/N in ASCII digits"),
    Case(("audit", "{tmp}/lect", "--cell-timeout", "６０"), 2, "expected a number in ASCII digits"),
    Case(("audit", "{tmp}/lect", "--execute", "--shard-times", "{tmp}/times.md", "--platforms", "cpu",
                   "--format", "json", "--output", "{tmp}/out.json", "--no-progress"), 2,
         "no Execution Statistics row names a lecture here"),  # deep JSON read as text; 1e999 and -50 no times
    Case(("audit", "{tmp}/lect", "--machine", "g4dn.2xlarge", "--published", "{tmp}/times.md"), 2,
         "times.md: JSON nested deeper"),
    Case(("audit", "{tmp}/lect", "--machine", "g4dn.2xlarge", "--published", "{tmp}/published-v9.json"), 2,
         "version 9, this jaxci reads 1: write it again with `jaxci audit published"),
    Case(("audit", "published", "{tmp}/lect", "--commit", "HEAD", "--family", "g4dn.2xlarge", "--output",
          "{tmp}/p.json"), 2, "git --git-dir="),
    Case(("audit", "published", "{tmp}", "--commit", "HEAD", "--family", "tpu-pod", "--output", "{tmp}/p.json"), 2,
         "--family 'tpu-pod': not a catalogue family"),
    Case(("audit", "{tmp}/lect", "--build-status", "{tmp}/times.md"), 2,
         "times.md: no Execution Statistics row names a lecture here"),
    Case(("audit", "{tmp}/lect", "--build-status", "/dev/zero"), 2, "--build-status /dev/zero: "),
    Case(("audit", "{tmp}/lect", "--build-status", "{tmp}/nowhere.md"), 2, "nowhere.md: "),
    Case(("audit", "{tmp}/lect", "--build-status", "{tmp}/times.md", "--output", "{tmp}/times.md"), 2,
         "an input of the audit"),
]


def setup(tmp: Path) -> None:
    """The shards, a lecture, a dangling link and an Execution Statistics page the cases read."""
    for name, doc in SHARDS.items():
        (tmp / f"{name}.json").write_text(json.dumps(doc))
    for name, execution in BASELINE_DOCS.items():
        (tmp / f"{name}.json").write_text(json.dumps({"lectures": [], "execution": execution}))
    (tmp / "lect").mkdir()
    (tmp / "lect" / "a.md").write_text(LECTURE)
    (tmp / "published-v9.json").write_text(json.dumps({"format": "jaxci-published-build", "version": 9}))
    os.symlink(tmp / "nowhere", tmp / "dangling")
    deep = "[" * 100_000 + "]" * 100_000
    rows = "| a | x | cache | 1e999 | ✅ |\n| b | x | cache | -50 | ✅ |\n"
    (tmp / "times.md").write_text(f"{deep}\n| Document | Modified | Method | Run Time (s) | Status |\n"
                                  f"|---|---|---|---|---|\n{rows}")


scratch, test_bad_input_outcome = outcome_tests(CASES, setup)


def test_the_shard_an_output_would_replace_is_left_as_it_was(scratch):
    run_case(CASES[0], scratch)
    assert json.loads((scratch / "s1.json").read_text()) == SHARDS["s1"]
    assert (scratch / "lect" / "a.md").read_text() == LECTURE


def test_markdown_from_lecture_names_is_escaped(scratch):
    out = run_case(Case((*MERGE, "{tmp}/html-path.json", "--format", "md"), 0, ""), scratch)
    assert "<!--" not in out.stdout and "<img" not in out.stdout and "@team" not in out.stdout
    assert "&lt;!--hidden.md" in out.stdout and "&#64;team" in out.stdout


# ---- the run cache, in process -----------------------------------------------------------------------------------

class _Verdict:
    path, path_abs = "a.md", Path("a.md")


def _run(**cell) -> NotebookRun:
    return NotebookRun("a.md", cells=[CellTiming(0, "x = 1", 1.0, 1.0, **cell)])


def test_a_planted_link_never_redirects_a_cache_write(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    cache = tmp_path / "cache"
    cache.mkdir()
    for name in ("k.json", f".k.json.{os.getpid()}", f".k.json.{os.getpid()}.0.tmp"):
        os.symlink(victim, cache / name)
    reuse = run_cache.Reuse(cache)
    reuse.store(_Verdict(), "cpu", "k", _run())
    reuse.keys["a.md"] = {"cpu": "k"}
    reuse.restore(_Verdict(), "cpu", _run())   # the same entry met again once judging stamped the run
    assert victim.read_text() == "precious" and (cache / "k.json").is_symlink()
    assert len(reuse.refused) == 1 and "not stored" in reuse.refused[0]   # one line, not two


@pytest.mark.parametrize("cell", [{"wall_s": -1e6}, {"wall_s": 1e308}, {"wall_s": "NaN"}, {"compile_s": [1]},
                                  {"calls": "x"}, {"calls": [{"wall_s": -1}]}, {"loops": [["lax.scan"]]},
                                  {"eager": {"ops": "many"}}, {"samplers": [{"s": float("inf")}]},
                                  {"first_line": 3}, {"index": -1}])
def test_a_cached_run_that_fails_the_checks_is_run_again(tmp_path, cell):
    record = _run().as_dict()
    record["cells"][0].update(cell)
    (tmp_path / "k.json").write_text(json.dumps(record))
    reuse = run_cache.Reuse(tmp_path)
    assert reuse.lookup(_Verdict(), "cpu", "k") is None
    assert reuse.refused and "run.cells[0]" in reuse.refused[0] and "\n" not in reuse.refused[0]


def test_a_cache_entry_that_is_not_a_regular_file_is_never_read(tmp_path):
    outside = tmp_path / "outside.json"
    outside.write_text(json.dumps(_run().as_dict()))
    cache = tmp_path / "cache"
    cache.mkdir()
    os.symlink("/dev/zero", cache / "zero.json")
    os.symlink(outside, cache / "out.json")
    os.mkfifo(cache / "fifo.json")
    reuse = run_cache.Reuse(cache)
    for key in ("zero", "out", "fifo"):
        assert reuse.lookup(_Verdict(), "cpu", key) is None


def test_a_good_cached_run_is_reused_as_it_was(tmp_path):
    run = _run(compile_s=0.5, calls=[{"name": "f", "calls": 3, "wall_s": 0.1, "loops": [["lax.while_loop", 4.5, 2,
                                                                                          "counted"]]}])
    (tmp_path / "k.json").write_text(json.dumps(run.as_dict()))
    again = run_cache.Reuse(tmp_path).lookup(_Verdict(), "cpu", "k")
    assert again is not None and again.cells[0].calls == run.cells[0].calls and again.cells[0].index == 0


def test_a_record_check_names_the_field():
    with pytest.raises(runrecord.RecordError, match=r"^run\.cells\[0\]\.calls\[0\]\.wall_s -1: must be"):
        NotebookRun.from_dict({"path": "a", "cells": [{"index": 0, "first_line": "", "wall_s": 1, "client_s": 1,
                                                        "calls": [{"wall_s": -1}]}]})


def test_a_pin_on_another_shards_lecture_is_that_shards_to_decide():
    """A shard lists static pins of lectures it did not run (its verdicts of every lecture); the merge keeps the
    pin list of the shard that ran each lecture, so shard 1's pin of b.md never reaches the merged audit."""
    from jaxci.audit.writing import merge

    assert merge.merge([SHARDS["pins-other"], SHARDS["s2"]])["pin_to_cpu"] == []
