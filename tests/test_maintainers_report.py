"""The maintainers' report and the committed audits it reads: one cost function for the sheet's row 6 and the
report (the agreement test reads both), pins by the one placement rule, the JAX pin advice from confirmed steps,
a two-page bound, a corrupt audit folder said and left out, and publishing that keeps names and numbers only."""

import copy
import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from jaxci import REPO_ROOT
from jaxci.analysis.releases import ReleaseStep, pin_advice
from jaxci.audit import repo
from jaxci.audit.writing import publish
from jaxci.commands import audit_shard
from jaxci.report import decisions, maintainers, page
from jaxci.report.build import build
from jaxci.report.repo_builds import repo_builds
from jaxci.results import audits
from jaxci.util.validate import InputError
from tests.frozen import RESULTS

AUDIT = json.loads((REPO_ROOT / "tests" / "fixtures" / "report" / "audit_predicted.json").read_text())


def _committed(tmp_path: Path, pin: str | None = "0.4.35") -> Path:
    """An audits/ folder with one published audit (the fixture's lectures, each importing jax) and one corrupt."""
    doc = copy.deepcopy(AUDIT)
    for lec in doc["lectures"]:
        lec["scan"] = {"imports": ["jax", "numpy"], "uses_jax": True}  # as the static scan records it
    doc["ci"] = {"installs": [{"name": "jax", "version": pin, "where": ".github/workflows/ci.yml:37"}]}
    folder = tmp_path / "audits"
    (folder / "demo-lectures@abcdef1").mkdir(parents=True)
    facts = {"repository": "demo-lectures", "commit": "abcdef1234", "jax": "0.12.0.1"}
    (folder / "demo-lectures@abcdef1" / "audit.json").write_text(json.dumps(publish.publish(doc, facts)))
    (folder / "broken@0000000").mkdir()
    (folder / "broken@0000000" / "audit.json").write_text("{not json")
    return folder


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    found, problems = audits.load(_committed(tmp_path_factory.mktemp("m")))
    assert len(found) == 1 and len(problems) == 1 and "broken@0000000" in problems[0]
    return build(RESULTS, audits=found)


def test_row_6_and_the_report_say_the_same_build_minutes_and_dollars(report):
    for family in ("g4dn.2xlarge", "c7i.2xlarge"):
        entry = report.catalogue[family]
        (b,) = repo_builds(report, family, entry)
        row6 = decisions.sheet(report, family).rows[5]
        sheet_md = decisions.sheets_md(report, [family])
        page_md = maintainers.family_page(report, family)
        assert row6.status == decisions.PREDICTED and row6.number == f"{b.minutes:.1f} min ≈ ${b.dollars:.2f}"
        for text in (sheet_md, page_md):
            assert f"{b.minutes:.1f}" in text and f"${b.dollars:.2f}" in text
        for row in decisions.sheet(report, family).rows:  # every deciding number the report shows is the sheet's
            if row.number:
                assert row.number in page_md


def test_the_fixture_builds_are_the_audits_sums(report):
    (gpu,) = repo_builds(report, "g4dn.2xlarge", report.catalogue["g4dn.2xlarge"])
    assert (gpu.repository, gpu.lectures, gpu.on_gpu, gpu.minutes * 60, gpu.missing) == \
        ("demo-lectures@abcdef1", 3, 2, 110, 1)


def test_without_committed_audits_row_6_keeps_the_published_build():
    plain = build(RESULTS)
    assert decisions.sheet(plain, "g4dn.2xlarge").rows[5].status == decisions.MEASURED


def test_pins_follow_the_one_placement_rule(report):
    audit = report.audits[0].audit
    # kalman: CPU 60 s against GPU 90 s; vfi and wealth win on the GPU
    assert [p for p, _, _ in maintainers.pins(audit, "g4dn.2xlarge", True)] == ["lectures/kalman.md"]
    assert maintainers.pins(audit, "c7i.2xlarge", False) == []
    no_jax = copy.deepcopy(audit)
    for lec in no_jax["lectures"]:
        lec["scan"].update(imports=["numpy"], uses_jax=False)
    assert maintainers.pins(no_jax, "g4dn.2xlarge", True) == []  # never touches the GPU: nothing to pin
    judged = {**audit, "pin_to_cpu": ["lectures/wealth.md"], "published": {"family": "g4dn.2xlarge"}}
    assert maintainers.pins(judged, "g4dn.2xlarge", True) == [("lectures/wealth.md", 30.0, 20.0)]  # the patch's
    # the same CPU and GPU models (issue 70): g4dn.xlarge takes the audit's own pins, never another rule's
    twin = [p for p, _, _ in maintainers.pins(judged, "g4dn.xlarge", True)]
    assert twin == ["lectures/wealth.md"]


def test_each_family_page_fits_two_printed_pages(report):
    for family in maintainers.families(report):
        text = maintainers.family_page(report, family)
        wrapped = sum(max(1, -(-len(line) // 100)) for line in text.splitlines())
        assert wrapped <= 120, (family, wrapped)


def test_the_site_links_the_report_from_its_first_screen(report):
    html = page.render(report, "", "")
    assert html.index('href="report.html"') < html.index('id="answers"')
    site = maintainers.site_html(report, ["g4dn.2xlarge"])
    assert "demo-lectures@abcdef1" in site and 'href="index.html#' in site


def _step(before, after, kind="regression", undone=None, t_last=2.0, confirmed=True):
    return ReleaseStep("m", "loops.Scan.time_warm", (), before, after, 1.0, 2.0, kind, undone, "0.12.0",
                       t_last=t_last, confirmed=confirmed)


def test_pin_advice_moves_to_the_newest_unless_a_confirmed_regression_stands():
    measured = {"m": ["0.10.0", "0.11.0", "0.11.1", "0.11.2", "0.12.0"]}
    undone = _step("0.11.0", "0.11.1", undone="0.11.2", t_last=1.0)
    advice = pin_advice([undone], measured, "0.10.0", 1.3)
    assert advice.target == "0.12.0" and advice.between == (undone,) and advice.held_back_by == ()
    standing = _step("0.11.2", "0.12.0")
    advice = pin_advice([undone, standing], measured, "0.10.0", 1.3)
    assert advice.target == "0.11.2" and advice.held_back_by == (standing,)
    noise = _step("0.11.2", "0.12.0", confirmed=False)
    assert pin_advice([noise], measured, "0.10.0", 1.3).target == "0.12.0"  # unconfirmed never moves it
    assert pin_advice([standing], measured, "0.12.0", 1.3).target == "0.12.0"  # never below the pin
    assert pin_advice([], {}, None, 1.3).target is None


def test_the_report_names_the_pin_and_the_target(report):
    text = maintainers.pin_md(report)
    assert "pinned `jax==0.4.35`" in text and "Pin `jax==" in text


def test_publishing_keeps_names_and_numbers_only():
    doc = {"lectures": [{
        "path": "lectures/a.md", "why": "latency-bound loop: cell 5 line 3: y = secret_formula(x) <- cell 2 line 1",
        "errors": ["ValueError: the lecture's own words here"],
        "scan": {"gpu_narrative": ["cell 9: 'On a GPU this lecture says something long'"],
                 "loops": [{"func": "step", "carry_why": "cell 4 line 2: z = x @ w <- cell 4 line 1: w = np.eye(9)",
                            "trips_why": "cell 4 line 7: for t in range(100):"}]},
        "runs": {"cpu": {"path": "/tmp/checkout/lectures/a.md", "cells": [
            {"first_line": "import secret", "wall_s": 1.5, "expected_error": "HTTPError: 404 for https://x/y"}]}}}]}
    out = publish.publish(doc, {"repository": "r", "commit": "c"})
    text = json.dumps(out)
    for quoted in ("secret", "lecture's own words", "says something", "np.eye", "x @ w", "range(100)"):
        assert quoted not in text, quoted
    lec = out["lectures"][0]
    assert lec["scan"]["loops"][0] == {"func": "step", "carry_why": "cell 4 line 2 <- cell 4 line 1",
                                       "trips_why": "cell 4 line 7"}
    assert lec["errors"] == ["ValueError"] and lec["runs"]["cpu"]["cells"][0]["expected_error"] == "HTTPError"
    assert lec["runs"]["cpu"]["path"] == "lectures/a.md" and lec["runs"]["cpu"]["cells"][0]["wall_s"] == 1.5
    assert "cell 5 line 3" in lec["why"] and out["published"] == {"repository": "r", "commit": "c"}


def test_committed_audits_hold_names_and_numbers_only():
    found, problems = audits.load(REPO_ROOT / "audits")
    assert problems == []
    for committed in found:
        assert committed.facts.get("repository") and committed.facts.get("commit")
        again = publish.scrub(committed.audit)
        assert again == publish.scrub(again) and committed.audit == {**again, "published": committed.facts}, \
            committed.name  # publishing it again removes nothing: nothing quoted is left


def test_only_executes_the_named_lectures_and_refuses_unknown_names(tmp_path):
    for name in ("one", "two"):
        (tmp_path / f"{name}.md").write_text("---\njupytext:\n  text_representation:\n    format_name: myst\n---\n"
                                             "# A\n\n```{code-cell} python3\nx = 1\n```\n")
    verdicts = repo.audit_static(tmp_path, None)
    args = SimpleNamespace(only="two", baseline=None, shard_times=None, cache=None, cell_timeout=60)
    audit_shard.prepare(args, verdicts)
    reasons = {Path(v.path).stem: v.not_executed for v in verdicts}
    assert reasons["two"] is None or reasons["two"] == ""
    assert reasons["one"].startswith(maintainers.NOT_SELECTED)
    with pytest.raises(InputError, match="no lecture named three"):
        audit_shard.prepare(SimpleNamespace(**{**vars(args), "only": "two,three"}), verdicts)


def test_the_committed_report_is_what_the_committed_results_and_audits_give():
    """docs/report/ against the pages generated now from results/ and audits/: the report's numbers are the
    sheet's numbers, because both come from the one build of the committed data."""
    found, problems = audits.load(REPO_ROOT / "audits")
    assert problems == [] and found, "no committed audit"
    report = build(REPO_ROOT / "results", audits=found)
    folder = REPO_ROOT / "docs" / "report"
    families = maintainers.families(report)
    assert sorted(p.name for p in folder.glob("*.md")) == sorted(["README.md", *(f"{f}.md" for f in families)])
    assert (folder / "README.md").read_text() == maintainers.index_page(report, families)
    for family in families:
        page_md = (folder / f"{family}.md").read_text()
        assert page_md == maintainers.family_page(report, family), f"docs/report/{family}.md is stale"
        row6 = decisions.sheet(report, family).rows[5]
        assert row6.number in page_md


def test_publish_refuses_a_folder_without_its_run_facts_and_writes_nothing(tmp_path, capsys):
    from jaxci.commands.audit import main

    raw, dest = tmp_path / "raw", tmp_path / "audits" / "r@c"
    raw.mkdir()
    (raw / "audit.json").write_text(json.dumps(AUDIT))
    assert main(["publish", str(raw), str(dest)]) == 2 and "run.txt" in capsys.readouterr().err
    (raw / "run.txt").write_text("family: g4dn.2xlarge\n")
    assert main(["publish", str(raw), str(dest)]) == 2 and "no repository, commit line" in capsys.readouterr().err
    assert not dest.exists()
    (raw / "run.txt").write_text("repository: r\ncommit: c0ffee\nwall_s: 12\nexit: 0\n")
    (raw / "kernel-packages.txt").write_text("jax==0.12.0.1\nnumpy==2.3.0\n")
    assert main(["publish", str(raw), str(dest)]) == 0
    published = json.loads((dest / "audit.json").read_text())["published"]
    assert published == {"repository": "r", "commit": "c0ffee", "wall_s": "12", "exit": "0", "jax": "0.12.0.1"}
    assert (dest / "run.txt").is_file() and (dest / "kernel-packages.txt").is_file()


def test_a_maintainers_destination_that_is_a_file_is_refused_before_anything_is_read(tmp_path, capsys):
    from jaxci.commands.report import main

    target = tmp_path / "report"
    target.write_text("a file")
    assert main([str(RESULTS), "--maintainers", str(target), "--no-progress"]) == 2
    assert "--maintainers" in capsys.readouterr().err and target.read_text() == "a file"
    assert main([str(RESULTS), "--audits", str(tmp_path / "none"), "--no-progress"]) == 2
    assert "--audits" in capsys.readouterr().err


def test_a_predicted_answer_says_what_it_rests_on():
    """The committed page (the same as generated: the test above) names, beside each predicted answer, the machines
    it was measured on and the published files it used; a measured or unmeasured answer names none."""
    page = (REPO_ROOT / "docs" / "report" / "g4dn.2xlarge.md").read_text()
    rows = {line.split("|")[1].strip(): line.split("|")[-2].strip() for line in page.splitlines()
            if line.startswith("| ") and line.split("|")[1].strip().isdigit()}
    assert rows["2"].startswith("[predicted](../runner-model.md): measured on lab-")
    assert "published: incidents.md (" in rows["2"] and rows["3"] == rows["7"] == "not measured"
