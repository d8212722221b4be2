"""The sharded executed audit: eight lectures of the 20-lecture folder audited unsharded and as 4 shards in parallel
processes (N = 2 would add kernel starts and check nothing more; measure/audit_shards.py compares N = 1, 2, 4), the
merge equal to the unsharded audit apart from timings; a deterministic, balanced assignment; shards that do not
make one audit refused in one line; progress lines with the lecture, the count left and an expected finish."""

from __future__ import annotations

import copy
import io
import json
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from jaxci.audit import repo
from jaxci.audit.lecture_ci.edits import SHARDED_AUDIT
from jaxci.audit.runner import progress, shard
from jaxci.audit.writing import merge
from jaxci.commands import audit
from tests.auditutil import BIN, CI_REPOS

ROOT = Path(__file__).resolve().parent.parent
FOLDER = Path(__file__).resolve().parent / "fixtures" / "shards20"
EXECUTED = ["jax_1.md", "jax_2.md", "plain_00.md", "plain_01.md", "plain_02.md", "plain_03.md", "part2/raises.md",
            "part2/skipped.md"]


def _audit(folder: Path, out: Path, *extra: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "jaxci", "audit", str(folder), "--execute", "--platforms", "cpu",
                             "--format", "json", "--output", str(out), *extra], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.fixture(scope="module")
def audits(tmp_path_factory):
    """{"1": the unsharded audit, "4/1": shard 1 of 4, ...}: five processes started at once."""
    tmp = tmp_path_factory.mktemp("shards")
    folder = tmp / "lectures"
    for name in EXECUTED:
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(FOLDER / name, folder / name)
    outputs = {"1": tmp / "n1.json", **{f"4/{i}": tmp / f"n4_{i}.json" for i in range(1, 5)}}
    jobs = {name: _audit(folder, path, *(["--shard", f"{name[2:]}/4"] if "/" in name else []))
            for name, path in outputs.items()}
    out = {}
    for name, proc in jobs.items():
        _, stderr = proc.communicate(timeout=600)
        assert proc.returncode == 0, f"{name}: {stderr[-2000:]}"
        out[name] = {"doc": json.loads(outputs[name].read_text()), "stderr": stderr}
    return out


def _shards(audits):
    return [audits[f"4/{i}"]["doc"] for i in range(1, 5)]


def test_the_fixture_has_twenty_lectures():
    assert len(repo.find_lectures(FOLDER)) == 20


@pytest.mark.slow  # real kernels
def test_merged_shards_equal_the_unsharded_audit_apart_from_timings(audits):
    merged = merge.merge(_shards(audits))
    single = audits["1"]["doc"]
    # the same keys in the same order: no `shard` block left, nor what a shard says of itself alone (merge.PER_SHARD)
    assert list(merged) == [k for k in single if k not in merge.PER_SHARD]
    assert merge.strip_timings(merged) == merge.strip_timings(single)
    assert len(merged["lectures"]) == len(EXECUTED) and not merged["failed"]


@pytest.mark.slow  # real kernels
def test_every_lecture_is_executed_by_exactly_one_shard(audits):
    owned = [d["shard"]["lectures"] for d in _shards(audits)]
    assert sorted(p for o in owned for p in o) == sorted(lec["path"] for lec in audits["1"]["doc"]["lectures"])
    for doc in _shards(audits):
        ran = {lec["path"] for lec in doc["lectures"] if lec["runs"]}
        assert ran == set(doc["shard"]["lectures"])
        others = [lec for lec in doc["lectures"] if lec["path"] not in ran]
        assert all(lec["not_executed"].startswith("executed by shard ") for lec in others)


@pytest.mark.slow  # real kernels
def test_each_shard_says_what_it_runs_and_counts_its_runs_in_progress_lines(audits):
    for i in range(1, 5):
        entry = audits[f"4/{i}"]
        owned = entry["doc"]["shard"]["lectures"]
        lines = [x for x in entry["stderr"].splitlines() if x.startswith("jaxci audit: [")]
        assert f"shard {i}/4: {len(owned)} of {len(EXECUTED)} lectures" in entry["stderr"]
        assert len(lines) == len(owned)  # stderr is a pipe: one plain line per executed run
        assert lines[-1].startswith(f"jaxci audit: [{len(owned)}/{len(owned)}] ")


def test_the_assignment_is_deterministic_and_balanced():
    verdicts = repo.audit_static(FOLDER)
    weights = shard.weights(verdicts)
    first = shard.assign(weights, 4)
    assert first == shard.assign(dict(reversed(list(weights.items()))), 4)  # input order does not matter
    loads = shard.loads(weights, first)
    mean = sum(loads) / len(loads)
    assert max(loads) <= 1.3 * mean  # the balance goal, on the static weights
    assert max(loads) - min(loads) <= max(weights.values())  # greedy LPT: within one lecture's weight
    assert shard.assign(weights, 1) == [sorted(weights)]


def test_measured_seconds_balance_when_given():
    verdicts = repo.audit_static(FOLDER)
    previous = {"lectures": [{"path": "plain_00.md", "runs": {"cpu": {"wall_s": 100.0}}}]}
    weights = shard.weights(verdicts, shard.measured_weights(previous))
    shards = shard.assign(weights, 2)
    assert shards[0] == ["plain_00.md"]  # the one heavy lecture alone; everything else on the other shard


@pytest.mark.parametrize("text", ["0/4", "5/4", "2", "a/b", "1/300", ""])
def test_bad_shard_specs_are_refused(text):
    with pytest.raises(shard.ShardError):
        shard.parse(text)


def _written(docs, tmp_path) -> list[str]:
    """The shard documents written to files, for `jaxci audit merge`."""
    paths = [tmp_path / f"s{i}.json" for i in range(len(docs))]
    for path, doc in zip(paths, docs):
        path.write_text(json.dumps(doc))
    return list(map(str, paths))


def _refusal(capsys, docs, tmp_path) -> str:
    assert audit.main(["merge", *_written(docs, tmp_path), "--output", str(tmp_path / "merged.json")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and not (tmp_path / "merged.json").exists()
    return err


@pytest.mark.slow  # real kernels
def test_merge_refusals(audits, capsys, tmp_path):
    four = _shards(audits)
    assert "missing shard(s) 4/4" in _refusal(capsys, four[:3], tmp_path)
    of_two = copy.deepcopy(four[1])   # a shard of another N, as a 2-shard run would write it
    of_two["shard"].update(count=2, spec="2/2")
    assert "different N" in _refusal(capsys, [four[0], of_two], tmp_path)
    assert "given twice" in _refusal(capsys, [four[0], four[0], *four[2:]], tmp_path)
    overlap = copy.deepcopy(four[1])
    overlap["shard"]["lectures"].append(four[0]["shard"]["lectures"][0])
    assert "shards overlap" in _refusal(capsys, [four[0], overlap, *four[2:]], tmp_path)
    other = copy.deepcopy(four[1])
    other["shard"]["source"] = "0" * 16
    assert "different repositories" in _refusal(capsys, [four[0], other, *four[2:]], tmp_path)
    assert "not a shard" in _refusal(capsys, [audits["1"]["doc"]], tmp_path)


@pytest.mark.slow  # real kernels
def test_merge_as_markdown(audits, tmp_path):
    assert audit.main(["merge", *_written(_shards(audits), tmp_path), "--format", "md", "--output",
                       str(tmp_path / "m.md")]) == 0
    table = (tmp_path / "m.md").read_text().splitlines()
    assert table[0].startswith("| lecture | status")
    assert len([r for r in table if r.startswith("| ")]) == len(EXECUTED) + 1


def test_shard_needs_execute_and_json(capsys):
    assert audit.main([str(FOLDER), "--shard", "1/2"]) == 2
    assert "--shard needs --execute" in capsys.readouterr().err
    assert audit.main([str(FOLDER), "--reuse-failures"]) == 2   # issue 83: it was taken in silence
    assert "--reuse-failures needs --execute" in capsys.readouterr().err
    assert audit.main([str(FOLDER), "--execute", "--shard", "1/2"]) == 2
    assert "--format json" in capsys.readouterr().err
    assert audit.main([str(FOLDER), "--execute", "--shard", "1/2", "--format", "json", "--ci"]) == 2
    assert "run it unsharded" in capsys.readouterr().err


def test_progress_lines_name_the_lecture_the_count_and_the_time_left():
    clock = iter([0.0, 12.3, 65.0]).__next__
    sink = io.StringIO()
    shown = progress.Progress(["a.md (cpu)", "b.md (cpu)", "c.md (cpu)"], {"a.md (cpu)": 1.0, "b.md (cpu)": 1.0,
                              "c.md (cpu)": 4.0}, stream=sink, plain=True, clock=clock)
    shown.end("a.md (cpu)", 12.3)
    # 12.3 s for weight 1: the remaining weight 5 takes about 61.5 s
    assert sink.getvalue().strip() == "jaxci audit: [1/3] a.md (cpu) 12.3 s; elapsed 12.3 s, about 1 min 02 s left"
    shown.end("b.md (cpu)", 52.7)
    assert "[2/3] b.md (cpu) 52.7 s; elapsed 1 min 05 s" in sink.getvalue().splitlines()[1]


def test_plain_lines_in_ci_or_without_a_terminal(monkeypatch):
    terminal = SimpleNamespace(isatty=lambda: True)
    monkeypatch.setenv("CI", "true")
    assert progress.plain_wanted(terminal)
    monkeypatch.delenv("CI")
    assert not progress.plain_wanted(terminal)
    assert progress.plain_wanted(object())


TEMPLATE = ROOT / "templates" / "audit-sharded.yml"


def test_the_workflow_template_passes_actionlint_and_zizmor():
    shellcheck = BIN / "shellcheck"
    lint = subprocess.run([str(BIN / "actionlint"), "-shellcheck", str(shellcheck) if shellcheck.exists() else "",
                           str(TEMPLATE)], capture_output=True, text=True, cwd=ROOT)
    assert lint.returncode == 0, lint.stdout + lint.stderr
    audit = subprocess.run([str(BIN / "zizmor"), "--offline", "--no-progress", "--min-severity", "low", str(TEMPLATE)],
                           capture_output=True, text=True, cwd=ROOT)
    assert audit.returncode == 0 and "No findings" in audit.stdout + audit.stderr, audit.stdout + audit.stderr


def test_the_workflow_template_runs_every_shard_then_merges():
    flow = yaml.safe_load(TEMPLATE.read_text())
    shards = flow["jobs"]["audit"]["strategy"]["matrix"]["shard"]
    assert shards == list(range(1, int(flow["env"]["SHARDS"]) + 1))
    assert flow["jobs"]["merge"]["needs"] == "audit"
    runs = " ".join(s.get("run", "") for job in flow["jobs"].values() for s in job["steps"])
    assert '--shard "${SHARD}/${SHARDS}"' in runs and "jaxci audit merge shards/audit-shard-*.json" in runs
    uses = [s["uses"] for job in flow["jobs"].values() for s in job["steps"] if "uses" in s]
    assert any("/.github/actions/jax-env@" in u for u in uses)
    assert all(len(u.rsplit("@", 1)[1]) == 40 for u in uses)  # every action pinned to a full commit SHA


def test_the_emitted_ci_change_offers_the_sharded_audit(tmp_path, monkeypatch):

    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    repo = tmp_path / "book"
    shutil.copytree(CI_REPOS / "sample_book", repo)
    patch = tmp_path / "patch.diff"
    assert audit.main([str(repo), "--output", str(tmp_path / "a.md"), "--emit-config", str(patch)]) == 0
    text = patch.read_text()
    assert SHARDED_AUDIT in text and "templates/audit-sharded.yml" in text
    assert text.index(SHARDED_AUDIT) < text.index("\ndiff --git")  # an explanation line, not a file in the diff


@pytest.mark.slow  # real kernels
def test_a_failed_lecture_fails_only_the_shard_that_owns_it(tmp_path, capsys):
    head = (FOLDER / "plain_00.md").read_text().split("# Plain", 1)[0]
    (tmp_path / "broken.md").write_text(head + "# Broken\n\n```{code-cell} ipython3\nx = (\n```\n")
    (tmp_path / "fine.md").write_text(head + "# Fine\n\n```{code-cell} ipython3\nx = 1\n```\n")
    owner = shard.assign(shard.weights(repo.audit_static(tmp_path)), 2)
    broken = next(i for i, paths in enumerate(owner, 1) if "broken.md" in paths)
    status = {i: audit.main([str(tmp_path), "--execute", "--platforms", "cpu", "--no-progress", "--format", "json",
                             "--shard", f"{i}/2", "--output", str(tmp_path / f"s{i}.json")]) for i in (1, 2)}
    assert status == {broken: 1, 3 - broken: 0}
    err = capsys.readouterr().err
    assert err.count("broken.md: error") == 1
    assert audit.main(["merge", str(tmp_path / "s1.json"), str(tmp_path / "s2.json"), "--output",
                       str(tmp_path / "m.json")]) == 1  # merged, and the failure said by its exit status
    assert json.loads((tmp_path / "m.json").read_text())["failed"] == ["broken.md"]


def test_a_builds_execution_statistics_balance_the_first_sharded_audit(tmp_path, capsys):
    """jupyter-book's status page (its header may follow other text on its line, as QuantEcon's does)."""
    page = ("# Execution Statistics\n\n[](a.html)|Document|Modified|Method|Run Time (s)|Status|\n"
            "|:-:|:-:|:-:|:-:|:-:|\n|plain_03|2026-08-14 00:26|cache|500.5|✅|\n|part2/raises|2026-08-14|cache|20|✅|\n"
            "|plain_04|2026-08-14|cache|9000|❌|\n|plain_05|2026-08-14|cache|n/a|✅|\n")
    assert shard.execution_statistics(page) == {"plain_03": 500.5, "part2/raises": 20.0}
    verdicts = repo.audit_static(FOLDER)
    matched = shard.by_lecture(verdicts, shard.execution_statistics(page))
    assert matched == {"plain_03.md": 500.5, "part2/raises.md": 20.0}
    assert shard.assign(shard.weights(verdicts, matched), 3)[0] == ["plain_03.md"]
    (tmp_path / "status.md").write_text(page)
    assert audit.main([str(FOLDER), "--execute", "--shard", "1/3", "--format", "json", "--shard-times",
                       str(tmp_path / "nothing.md")]) == 2
    assert "no such file" in capsys.readouterr().err
    (tmp_path / "other.md").write_text(page.replace("plain_03", "elsewhere").replace("part2/raises", "gone"))
    assert audit.main([str(FOLDER), "--execute", "--shard", "1/3", "--format", "json", "--shard-times",
                       str(tmp_path / "other.md")]) == 2
    assert "no Execution Statistics row names a lecture here" in capsys.readouterr().err
