"""The runner decision (issue 79, item 1): one function over the committed audits, every option priced from the
runner model's predictions, the rule that takes one, and docs/runner-decision.md as the command prints it."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from jaxci import REPO_ROOT
from jaxci.catalogue import load_catalogue
from jaxci.policy import runner_decision as rd
from jaxci.report import committed_audits
from jaxci.report import runner_decision as page

CATALOGUE = load_catalogue()


@pytest.fixture(scope="module")
def decisions():
    found, problems = committed_audits.load(REPO_ROOT / "audits")
    assert not problems and found
    return [(c, page.for_committed(c, CATALOGUE)) for c in found]


def test_the_rule_takes_the_cheapest_option_within_today_s_build(decisions):
    for _, d in decisions:
        fits = [o for o in d.options if o.wall_min[2] <= d.today_min and not o.limits]
        if not fits:
            assert d.chosen is d.options[0] and d.chosen.kind == rd.STAY
            continue
        assert d.chosen in fits and d.chosen.dollars[0] == min(o.dollars[0] for o in fits)
        assert d.chosen.wall_min[2] <= d.today_min


def test_every_option_prices_the_same_lectures_once(decisions):
    for c, d in decisions:
        for option in d.options:
            names = [name for job in option.jobs for name in job.lectures]
            assert len(names) == len(set(names)) == d.priced, option.name
            assert option.billed_min >= option.wall_min[0] - 1e-9
            low, mid, high = option.wall_min[1], option.wall_min[0], option.wall_min[2]
            assert low <= mid <= high
        assert d.priced + len(d.left_out) == len(c.view.lectures)


def test_a_lecture_that_does_not_use_jax_never_needs_the_gpu(decisions):
    for c, _ in decisions:
        for lec in c.view.lectures:
            if not lec.uses_jax:
                assert not rd.needs_gpu(lec, "g4dn.2xlarge") and not rd.borderline(lec, "g4dn.2xlarge")


def test_shards_put_each_lecture_once_longest_first(decisions):
    c, _ = next((c, d) for c, d in decisions if d.today == "g4dn.2xlarge")
    lectures = [lec for lec in c.view.lectures if rd.prediction(lec, "c7i.2xlarge") is not None][:40]
    jobs = rd.shards("c7i.2xlarge", lectures, 4)
    assert sorted(n for j in jobs for n in j.lectures) == sorted(lec.path for lec in lectures)
    whole = sum(rd._seconds(lec, "c7i.2xlarge", "cpu")[0] for lec in lectures)
    assert sum(j.seconds[0] for j in jobs) == pytest.approx(whole)
    longest = max(rd._seconds(lec, "c7i.2xlarge", "cpu")[0] for lec in lectures)
    assert max(j.seconds[0] for j in jobs) <= whole / 4 + longest   # LPT's bound


def test_the_page_is_what_the_command_prints():
    out = subprocess.run([sys.executable, "-m", "jaxci", "runner-decision"], cwd=REPO_ROOT, capture_output=True,
                         text=True, check=True).stdout
    doc = (REPO_ROOT / "docs" / "runner-decision.md").read_text()
    assert doc.split("\n## ", 1)[1] == out.split("## ", 1)[1], "docs/runner-decision.md is stale: regenerate it"


def test_no_readable_audit_is_one_line(tmp_path, capsys):
    from jaxci.commands import runner_decision as cmd

    assert cmd.main([str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no readable" in err


def test_builds_a_year_are_read_from_their_sourced_record(tmp_path):
    builds = page.builds_per_year()
    assert builds["lecture-python.myst"][0] == 52 and "cache.yml" in builds["lecture-python.myst"][1]
    bad = tmp_path / "b.json"
    for doc, said in (({"format": page.BUILDS_FORMAT, "version": 1, "repositories": {"r": {"full_builds": True,
                                                                                          "source": "x"}}},
                       "repositories.r: full_builds"),
                      ({"format": page.BUILDS_FORMAT, "version": True, "repositories": {}}, "version True")):
        bad.write_text(json.dumps(doc))
        with pytest.raises(ValueError, match=said) as caught:
            page.builds_per_year(bad)
        assert str(bad) in str(caught.value)
    assert page.builds_per_year(tmp_path / "none.json") == {}


def test_every_page_says_one_decision_per_repository(decisions):
    """Zero disagreements: the report's first section, every family's page and the sheet's row 6 say each
    repository's decision in the one sentence `headline` writes (issue 79: the c7i page said "saves 40 min" while
    the audit said stay)."""
    import re

    pages = sorted((REPO_ROOT / "docs" / "report").glob("*.md"))
    said: dict[str, set[str]] = {}
    for path in pages:
        for line in path.read_text().splitlines():
            for m in re.finditer(r"the runner decision: ((\S+?): [^|]*?staying\.)", line):
                said.setdefault(m.group(2), set()).add(m.group(1))
    readme = (REPO_ROOT / "docs" / "report" / "README.md").read_text()
    for _, d in decisions:
        sentence = page.headline(d)
        assert said.get(d.repository) == {sentence}, (d.repository, said.get(d.repository))
        assert sentence.removesuffix(".") in readme  # the first section adds the year's figures after it
    families = [p for p in pages if p.name != "README.md"]
    for path in families:  # each repository's block, and row 6 (its cell cut short after the first sentence)
        text = path.read_text()
        assert text.count("- the runner decision: ") == len(decisions)
        assert "| 6 | Instance fit (cost) | one build: the runner decision: " in text


def test_the_shard_plans_are_the_decisions_and_cover_each_lecture_once(decisions, tmp_path):
    from jaxci.workflows import sharded

    out = subprocess.run([sys.executable, "-m", "jaxci", "runner-decision", "--shard-plan", str(tmp_path)],
                         capture_output=True, text=True, cwd=REPO_ROOT, check=True)
    assert "shard(s) in" in out.stderr
    for _, d in decisions:
        plan = sharded.plan_of(d)
        if plan is None:
            assert d.chosen.kind in (rd.STAY, rd.MOVE)
            continue
        written = tmp_path / f"{d.repository}.json"
        assert sharded.load_plan(written) == plan
        assert written.read_text() == (REPO_ROOT / "docs" / "shard-plans" / written.name).read_text()
        pages = [p for s in plan.shards for p in s.pages]
        priced = [p for j in d.chosen.jobs for p in j.lectures]
        assert sorted(pages) == sorted(priced + list(d.left_out)) and len(set(pages)) == len(pages)
        assert sorted(p for s in plan.shards for p in s.unpriced) == sorted(d.left_out)  # said apart, never dropped
        assert [s.device for s in plan.shards].count("gpu") <= 1
        assert all(CATALOGUE[s.runs_on].has_gpu for s in plan.shards if s.device == "gpu")


def test_the_audit_s_block_is_the_report_s_decision(decisions, tmp_path):
    """The audit writes its `runner_decision` block by the function the report's pages use, from the same inputs
    (the lectures' records, the family the build jobs run on, the site's published build): the block of each
    committed audit, computed as the audit computes it, is the report's decision (the committed audit.json gets it
    at its next re-judge)."""
    from types import SimpleNamespace

    from jaxci.audit.lecture_ci.runner_use import from_ci
    from jaxci.commands import audit_runner

    for committed, d in decisions:
        folder = REPO_ROOT / "audits" / committed.label
        data = json.loads((folder / "audit.json").read_text())
        args = SimpleNamespace(machine=d.today, path=str(tmp_path / committed.label),
                               published=str(folder / "published.json"), published_record=None)
        use = from_ci(data.get("ci"), CATALOGUE)
        block = audit_runner.decision_block(args, data, use)
        assert block == {k: v for k, v in rd.as_dict(d).items() if k != "repository"}
        assert block["chosen"] == d.chosen.name and block["kind"] in (rd.SPLIT, rd.SHARD)
