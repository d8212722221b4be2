"""The whole-build deliverable's parts: the one pin rule (published seconds win; overlapping bands say either), the
runner a repository builds on read from its jobs (container jobs left out), the published build as versioned data,
and what a pin changes on a lecture's page (a GPU note replaced, sampled outputs named, JAX installs flagged)."""

import json
import subprocess

import pytest

from jaxci.analysis.prediction import LecturePrediction, PredictedSide
from jaxci.audit.lecture_ci import runner_use
from jaxci.audit.lecture_ci.workflows import read_workflows
from jaxci.audit.writing import pages
from jaxci.catalogue import load_catalogue
from jaxci.commands import audit_published
from jaxci.policy import placement
from jaxci.policy.margins import GPU_FASTER, GPU_SLOWER
from jaxci.results import published_build as pb

CAT = load_catalogue()


def side(mid, low=None, high=None, basis=placement.PREDICTED):
    return placement.Side(mid, mid if low is None else low, mid if high is None else high, basis)


# ---- the one pin rule ----

@pytest.mark.parametrize("cpu, gpu, device", [
    (side(10), side(30, 10 * GPU_SLOWER, 90), placement.CPU),      # the GPU's whole band above margin x the CPU top
    (side(10), side(30, 10 * GPU_SLOWER - 0.1, 90), placement.EITHER),  # its bottom inside the margin: overlap
    (side(10), side(5, 2, 10 * GPU_FASTER), placement.GPU),        # its whole band below the margin x the CPU's bottom
    (side(10), side(5, 2, 10 * GPU_FASTER + 0.1), placement.EITHER),
    (side(10, 9, 11), side(11 * GPU_SLOWER), placement.CPU),       # the CPU's band counts too: the margin x 11
    (side(10, 9, 11), side(11 * GPU_SLOWER - 0.1), placement.EITHER),
])
def test_a_pin_needs_the_whole_gpu_band_past_the_margin(cpu, gpu, device):
    assert GPU_SLOWER > 1 > GPU_FASTER
    assert placement.decide(cpu, gpu) == device


def test_published_seconds_win_over_the_predicted_band():
    pred = LecturePrediction.from_dict({"cpu_s": 10.0, "gpu_s": 30.0, "gpu_low_s": 5.0, "gpu_high_s": 90.0})
    assert placement.place("a.md", pred, None, "", "g4dn.2xlarge").device == placement.EITHER
    found = placement.place("a.md", pred, 25.0, "site@abc", "g4dn.2xlarge")
    assert found.device == placement.CPU and found.gpu.basis == placement.PUBLISHED
    assert "25.0 s published (site@abc)" in found.why and "10.0 s predicted" in found.why
    assert placement.place("a.md", pred, 9.0, "site@abc", "g4dn.2xlarge").device == placement.EITHER
    # no CPU prediction: a published GPU run is no reason to pin; nothing at all leaves the verdict standing
    assert placement.place("a.md", None, 50.0, "s", "g4dn.2xlarge").device == placement.EITHER
    assert placement.place("a.md", None, None, "", "g4dn.2xlarge").device is None


def test_what_both_devices_pay_decides_nothing():
    """A fresh kernel's 8 s on both sides: 10 vs 13 would be within the margin, 2 vs 5 is not."""
    pred = LecturePrediction(PredictedSide(10.0), PredictedSide(13.0), overhead_s=8.0)
    found = placement.place("a.md", pred, None, "", "g4dn.2xlarge")
    assert found.device == placement.CPU and found.cpu.seconds == 10.0  # whole-lecture seconds kept for the page


def test_the_same_hardware_shares_published_seconds():
    record = pb.PublishedBuild("o/site", "a" * 40, "2026-08-14", "g4dn.2xlarge", {"x": 1.0})
    assert placement.published_for(record, "g4dn.xlarge", CAT) is record  # the same T4 and Xeon
    assert placement.published_for(record, "g6.xlarge", CAT) is None
    assert placement.published_for(record, "c7i.2xlarge", CAT) is None


def test_a_lecture_that_shows_the_gpu_is_never_pinned():
    shown = ["cell 5: runs nvidia-smi", "cell 7: prints jax.devices()"]
    assert placement.narrative_of(shown, placement.TRIVIAL)
    assert not placement.narrative_of(shown, "bulk-loops")  # real work: the pin stands
    assert not placement.narrative_of([], placement.TRIVIAL)  # prose about GPU speed is never in gpu_shown


# ---- the runner the build uses ----

WORKFLOW = """name: b
on: [push]
jobs:
  build:
    runs-on: {label}
    steps:
      - run: jb build lectures
  colab:
    runs-on: "runs-on=${{{{ github.run_id }}}}/family=g4dn.2xlarge"
    container:
      image: docker://example.invalid/notebook-runtime:latest
    steps:
      - run: jb build lectures
  links:
    runs-on: ubuntu-latest
    steps:
      - run: jb build lectures --builder linkcheck
"""


@pytest.mark.parametrize("label, family", [
    ("ubuntu-latest", "ubuntu-latest"),
    ('"runs-on=${{ github.run_id }}/family=g4dn.2xlarge/image=ubuntu24-gpu-x64"', "g4dn.2xlarge"),
    ("self-hosted", None),
])
def test_the_build_jobs_name_the_family_a_container_job_does_not(tmp_path, label, family):
    folder = tmp_path / ".github" / "workflows"
    folder.mkdir(parents=True)
    (folder / "b.yml").write_text(WORKFLOW.format(label=label))
    use = runner_use.from_workflows(read_workflows(tmp_path), CAT)
    assert use.family == family and len(use.jobs) == 1 and "job `build`" in use.jobs[0]
    assert use.what_if("c7i.2xlarge") == (family is not None) and not use.what_if(family)


def test_the_json_ci_block_reads_the_same_family():
    ci = {"workflows": [{"jobs": [
        {"id": "b", "where": "w.yml:3", "builds": ["w.yml:5 runs `jb build`"], "container": "",
         "runs_on": {"raw": "ubuntu-latest", "family": None}},
        {"id": "c", "where": "w.yml:9", "builds": ["w.yml:12 runs `jb build`"], "container": "img",
         "runs_on": {"raw": "x", "family": "g4dn.2xlarge"}}]}]}
    assert runner_use.from_ci(ci, CAT).family == "ubuntu-latest"
    assert runner_use.from_ci({"workflows": "not a list"}, CAT).family is None


# ---- the published build as data ----

STATUS = {"cells": [{"cell_type": "markdown", "source": [
    "| Document | Modified | Method | Run Time (s) | Status |\n", "|---|---|---|---|---|\n",
    "| a | 2026-08-13 10:00 | cache | 12.5 | ✅ |\n", "| b | 2026-08-14 11:00 | cache | 7200.0 | ✅ |\n",
    "| c | 2026-08-14 11:30 | cache | nan | ✅ |\n", "| d | 2026-08-14 12:00 | cache | 3.0 | ❌ |\n"]}]}


def test_a_status_table_becomes_a_versioned_record(tmp_path):
    rows = pb.parse_status(json.dumps(STATUS), cap=7200)
    record = pb.from_rows(rows, "owner/site.notebooks", "a" * 40, "g4dn.2xlarge")
    assert record.seconds == {"a": 12.5} and set(record.refused) == {"b", "c", "d"}
    assert record.executed == "2026-08-14" and record.notebooks == 4 and record.lecture("lectures/a.md") == 12.5
    path = tmp_path / "published.json"
    path.write_text(json.dumps(record.as_dict()))
    assert pb.read(path) == record
    path.write_text(json.dumps({**record.as_dict(), "version": 99}))
    with pytest.raises(pb.PublishedError, match="version 99, this jaxci reads 1: write it again with `jaxci audit"):
        pb.read(path)
    path.write_text(json.dumps({**record.as_dict(), "seconds": {"a": -1}}))
    with pytest.raises(pb.PublishedError, match="'seconds'"):
        pb.read(path)


def test_jaxci_audit_published_reads_a_commit_of_a_snapshot(tmp_path, capsys):
    snap = tmp_path / "site.notebooks"
    snap.mkdir()
    (snap / "status.ipynb").write_text(json.dumps(STATUS))
    for args in (["init", "-q"], ["add", "status.ipynb"],
                 ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "publish"]):
        subprocess.run(["git", *args], cwd=snap, check=True)
    out = tmp_path / "p.json"
    assert audit_published.main([str(snap), "--commit", "HEAD", "--family", "g4dn.2xlarge", "--cap", "7200",
                                 "--repository", "owner/site.notebooks", "--output", str(out)]) == 0
    assert pb.read(out).seconds == {"a": 12.5}
    assert audit_published.main([str(snap), "--commit", "HEAD", "--family", "no-such", "--output",
                                 str(tmp_path / "q.json")]) == 2
    assert not (tmp_path / "q.json").exists() and "not a catalogue family" in capsys.readouterr().err


def _snapshot(tmp_path, status: bytes):
    snap = tmp_path / "site.notebooks"
    snap.mkdir(parents=True)
    (snap / "status.ipynb").write_bytes(status)
    for args in (["init", "-q"], ["add", "status.ipynb"],
                 ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "publish"]):
        subprocess.run(["git", *args], cwd=snap, check=True)
    return snap


def _table(*rows: str) -> bytes:
    head = ["| Document | Modified | Method | Run Time (s) | Status |\n", "|---|---|---|---|---|\n"]
    return json.dumps({"cells": [{"cell_type": "markdown", "source": head + [r + "\n" for r in rows]}]}).encode()


def test_audit_published_over_hostile_snapshots_says_one_line_and_writes_nothing(tmp_path, capsys, monkeypatch):
    """Issue 83: a status.ipynb that is not UTF-8, past the record's size limit, a missing output folder, the
    snapshot's own status.ipynb as the output, a --repository with a newline, --cap inf: one line, exit 2, nothing
    written; a relative snapshot path is the caller's."""
    good = _snapshot(tmp_path / "good", _table("| a | 2026-08-13 | cache | 12.5 | ✅ |"))
    bad = _snapshot(tmp_path / "bad", b"\xff\xfe" + _table("| a | x | cache | 1 | ✅ |"))
    monkeypatch.setattr(pb, "LIMIT", 100)
    big = _snapshot(tmp_path / "big", _table("| a | 2026-08-13 | cache | 12.5 | ✅ |") + b" " * 200)
    monkeypatch.undo()
    out = tmp_path / "p.json"
    for snap, extra, said in ((bad, [], "not UTF-8"), (good, ["--cap", "inf"], "finite number above zero"),
                              (good, ["--repository", "o/n\n# Forged"], "control character"),
                              (good, ["--output", str(tmp_path / "nodir" / "p.json")], "does not exist"),
                              (good, ["--output", str(good / "status.ipynb")], "the snapshot's status.ipynb")):
        argv = [str(snap), "--commit", "HEAD", "--family", "g4dn.2xlarge", "--output", str(out), *extra]
        try:
            code = audit_published.main(argv)
        except SystemExit as exc:
            code = exc.code
        err = capsys.readouterr().err
        assert code == 2 and err.count("\n") == 1 and said in err, (extra, err)
        assert not out.exists()
    assert json.loads((good / "status.ipynb").read_text())["cells"]   # never replaced
    monkeypatch.setattr(pb, "LIMIT", 100)
    assert audit_published.main([str(big), "--commit", "HEAD", "--family", "g4dn.2xlarge", "--output",
                                 str(out)]) == 2
    assert "past the 100-byte limit" in capsys.readouterr().err and not out.exists()
    monkeypatch.undo()
    monkeypatch.chdir(good.parent)
    assert audit_published.main(["site.notebooks", "--commit", "HEAD", "--family", "g4dn.2xlarge", "--output",
                                 str(out)]) == 0


def test_one_bound_of_a_lecture_s_seconds():
    from jaxci.analysis.prediction import MOST_SECONDS
    from jaxci.audit.reading.runrecord import LECTURE_S
    from jaxci.policy.timeouts import MAX_CELL_S
    from jaxci.util.bounds import JOB_S

    assert pb.MOST_SECONDS == MOST_SECONDS == LECTURE_S == MAX_CELL_S == JOB_S == 432_000


def test_a_name_listed_twice_or_unprintable_is_no_run_time():
    rows = pb.parse_status(_table("| a | x | cache | 20 | ✅ |", "| a | x | cache | 900 | ❌ |",
                                  "| b | x | cache | 10 | ✅ |", "| b | x | cache | 300 | ✅ |",
                                  "| bell\u0007x | x | cache | 5 | ✅ |", "| c | x | cache | 7 | ✅ |").decode())
    record = pb.from_rows(rows, "o/n", "c" * 40, "g4dn.2xlarge")
    assert record.seconds == {"c": 7.0}
    assert "listed 2 times in the table (20 s ✅, 900 s ❌)" in record.refused["a"]
    assert "listed 2 times" in record.refused["b"] and record.refused["bell\\x07x"].startswith("the name")


# ---- what a pin changes on the page ----

def test_a_pinned_lecture_loses_its_gpu_note_and_keeps_other_includes(tmp_path):
    (tmp_path / "_admonition").mkdir()
    (tmp_path / "_admonition" / "gpu.md").write_text("```{admonition} Hardware\nWritten with a GPU at hand.\n```\n")
    (tmp_path / "_admonition" / "other.md").write_text("A note on data.\n")
    text = ("# T\n\n```{include} _admonition/gpu.md\n```\n\n```{include} _admonition/other.md\n```\n\n"
            "```{code-cell} ipython3\nx = 1\n```\n")
    new, replaced = pages.without_gpu_notes(text, tmp_path)
    assert replaced == ["_admonition/gpu.md"] and pages.CPU_NOTE in new and "_admonition/other.md" in new
    assert "gpu.md" not in new and new.endswith("x = 1\n```\n")


@pytest.mark.parametrize("line, flagged", [
    ("!pip install --upgrade quantecon jax", True), ("%pip install 'jax[cuda13]'", True),
    ("!pip install jax==0.12.0.1", False), ("!pip install quantecon", False), ("x = 'pip install jax'", False),
])
def test_in_notebook_jax_installs_are_flagged(line, flagged):
    assert bool(pages.jax_installs(f"```{{code-cell}}\n{line}\n```\n")) == flagged


# ---- a re-judge executes nothing that ran before ----

def test_a_rejudge_reuses_failed_runs_only_when_asked():
    from jaxci.audit.runner import cache

    failed = {"path": "a.md", "status": "error", "error": "cell 3: URLError", "platform": "cpu",
              "cells": [{"index": 0, "wall_s": 1.0, "client_s": 1.0}]}
    baseline = {"lectures": [{"path": "a.md", "runs": {"cpu": failed}}], "execution": {"keys": {"a.md": {"cpu": "k"}}}}

    class Lecture:
        path, path_abs = "a.md", "a.md"

    assert cache.Reuse(baseline=baseline).lookup(Lecture(), "cpu", "k") is None  # by default a failure runs again
    run = cache.Reuse(baseline=baseline, failures=True).lookup(Lecture(), "cpu", "k")
    assert run is not None and run.status == "error" and run.cells[0].first_line == ""  # published: no lecture text


def test_a_rejudge_divides_by_the_probe_of_the_host_that_ran_the_runs():
    """h must use the speed of the host that ran the reused runs: a probe taken now, on a busy machine, would
    move every prediction (seen: 0.93 s under load 16 against the 0.15 s recorded with the runs)."""
    from types import SimpleNamespace

    from jaxci.audit import repo
    from jaxci.audit.runner import host_probe

    class Here:
        @staticmethod
        def probe():
            return host_probe.given(0.93)

    ran = [SimpleNamespace(runs={"cpu": object()})]
    recorded = host_probe.from_dict(host_probe.as_dict(host_probe.given(0.148)))
    all_reused = repo.Runs(("cpu",), reuse=SimpleNamespace(executed=[]), baseline_probe=recorded)
    assert repo.judging_probe(ran, all_reused, Here).seconds == 0.148
    some_ran = repo.Runs(("cpu",), reuse=SimpleNamespace(executed=["a.md [cpu]"]), baseline_probe=recorded)
    assert repo.judging_probe(ran, some_ran, Here).seconds == 0.93  # new runs here: this host, now
    given = repo.Runs(("cpu",), probe=host_probe.given(0.2), reuse=SimpleNamespace(executed=["a.md [cpu]"]))
    assert repo.judging_probe(ran, given, Here).seconds == 0.2
    assert repo.judging_probe([SimpleNamespace(runs={})], given, Here) is None
    assert host_probe.from_dict({"seconds": "0.1", "low": 1, "high": 1, "n": 1}) is None


def test_each_run_is_moved_by_the_probe_of_the_host_when_it_ran():
    """Runs executed at different times (and loads) keep their own probe: a run executed now gets the probe
    measured now, a reused run the probe it carries, else the baseline's."""
    from types import SimpleNamespace

    from jaxci.audit import repo
    from jaxci.audit.runner import host_probe
    from jaxci.audit.runner.outcome import NotebookRun

    class Here:
        as_dict, from_dict = staticmethod(host_probe.as_dict), staticmethod(host_probe.from_dict)

        @staticmethod
        def probe():
            return host_probe.given(0.9)

    old = NotebookRun("a.md", host_probe=host_probe.as_dict(host_probe.given(0.15)))
    reused, fresh = NotebookRun("b.md"), NotebookRun("c.md")
    verdicts = [SimpleNamespace(path=p, runs={"cpu": r}) for p, r in (("a.md", old), ("b.md", reused),
                                                                         ("c.md", fresh))]
    reuse = SimpleNamespace(executed=["c.md [cpu]"], restore=lambda *a: None)
    runs = repo.Runs(("cpu",), reuse=reuse, baseline_probe=host_probe.given(0.2))
    repo.stamp_probes(verdicts, runs, host_probe.given(0.9), Here)
    assert [v.runs["cpu"].host_probe["seconds"] for v in verdicts] == [0.15, 0.2, 0.9]
    assert NotebookRun.from_dict(old.as_dict()).host_probe["seconds"] == 0.15


def test_published_is_read_once_for_the_verdicts_and_the_build_block(monkeypatch, tmp_path):
    """--published is read once per command: attach_published (the verdicts) and build_block (audit.json's build)
    share the record, so they can never judge from two different reads of the file."""
    from argparse import Namespace

    from jaxci.commands import audit_runner
    from jaxci.results import published_build

    record, calls = object(), []
    monkeypatch.setattr(published_build, "read", lambda path: calls.append(path) or record)
    args = Namespace(published=tmp_path / "published.json")
    assert audit_runner.published_record(args) is record
    assert audit_runner.attach_published(args, None) is None
    assert audit_runner.published_record(args) is record and len(calls) == 1
    assert audit_runner.published_record(Namespace(published=None)) is None


def test_the_models_check_names_its_largest_misses_in_seconds():
    """The check line says where the model misses most (seconds, either way), so a reader of 0.86x sees which
    lectures carry it; lectures without a published time or a prediction are never named."""
    from jaxci.policy.wholebuild import EXECUTED, PUBLISHED, LectureTime, WholeBuild

    def lec(path, today, published):
        return LectureTime(path, published, None if today is None else (today, today, today),
                           (published, published, published), PUBLISHED if published else EXECUTED, False)

    build = WholeBuild("r", "f", "f", None, None, (lec("a.md", 10.0, 12.0), lec("b.md", 300.0, 100.0),
                                                   lec("c.md", 50.0, 120.0), lec("d.md", None, 900.0),
                                                   lec("e.md", 5000.0, None)))
    assert build.largest_gaps() == [("b.md", 300.0, 100.0), ("c.md", 50.0, 120.0)]
    assert build.today == (360.0, 232.0, 3)   # the check holds the same three lectures
