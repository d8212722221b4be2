"""The maintainers' report and the committed audits it reads: one cost function for the sheet's row 6 and the
report (the agreement test reads both), pins by the one placement rule, the JAX pin advice from confirmed steps,
a two-page bound, a corrupt audit folder said and left out, and publishing that keeps names and numbers only."""

import copy
import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from jaxci import REPO_ROOT
from jaxci.analysis.lecture_record import AuditView
from jaxci.analysis.releases import ReleaseStep, pin_advice
from jaxci.audit import repo
from jaxci.audit.writing import publish
from jaxci.commands import audit_shard
from jaxci.policy import wholebuild as wb
from jaxci.report import committed_audits as audits
from jaxci.report import decisions, maintainers, page
from jaxci.report import repo_builds as rb
from jaxci.report.build import build
from jaxci.report.repo_builds import repo_builds
from jaxci.results.published_build import PublishedBuild
from jaxci.util import quoting
from jaxci.util.validate import InputError
from tests.committed import committed
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
        mid = b.after_s[0]
        number = f"{rb.minutes(mid)} ≈ {rb.dollars(entry, mid)}"
        row6 = decisions.sheet(report, family).rows[5]
        sheet_md = decisions.sheets_md(report, [family])
        page_md = maintainers.family_page(report, family)
        assert row6.status == decisions.PREDICTED and row6.number == number
        for text in (sheet_md, page_md):
            assert rb.minutes(mid) in text and rb.dollars(entry, mid) in text
        for row in decisions.sheet(report, family).rows:  # every deciding number the report shows is the sheet's
            if row.number:
                assert row.number in page_md


def test_every_lecture_is_accounted_for_with_its_basis(report):
    """No published build: the JAX lectures run on the GPU as today (no band clears the margin), the one without
    a prediction is counted as such, never dropped."""
    (gpu,) = repo_builds(report, "g4dn.2xlarge", report.catalogue["g4dn.2xlarge"])
    assert len(gpu.lectures) == 4 and gpu.after_s[0] == 30 + 90 + 20 and gpu.unpriced == ["lectures/unpredicted.md"]
    assert gpu.counts == {wb.PUBLISHED: 0, wb.EXECUTED: 3, wb.NOT_PREDICTED: 1} and not gpu.pins
    (cpu,) = repo_builds(report, "c7i.2xlarge", report.catalogue["c7i.2xlarge"])
    assert cpu.after_s[0] == 90 + 45 + 15 and not cpu.pins


def test_without_committed_audits_row_6_keeps_the_published_build():
    plain = build(RESULTS)
    assert decisions.sheet(plain, "g4dn.2xlarge").rows[5].status == decisions.MEASURED


def _published(seconds: dict, family="g4dn.2xlarge") -> PublishedBuild:
    return PublishedBuild("owner/demo-lectures.notebooks", "f" * 40, "2026-08-14", family, seconds)


def test_pins_follow_the_one_rule_and_published_seconds_win(report):
    audit, cat = report.audits[0].audit, report.catalogue
    view = report.audits[0].view
    entry = cat["g4dn.2xlarge"]
    pinned = lambda b: [lec.path for lec in b.pins]  # noqa: E731
    # kalman: CPU 60 s against a GPU band of 70-120 s: the bands overlap (1.2 x 60 = 72 > 70): either, no pin
    assert pinned(wb.whole_build(view, "r", "g4dn.2xlarge", entry, None, cat)) == []
    # its published 90 s on the family's hardware outranks the band: pinned, and priced on the CPU after the patch
    build = wb.whole_build(view, "r", "g4dn.2xlarge", entry, _published({"kalman": 90.0, "vfi": 31.0}), cat)
    assert pinned(build) == ["lectures/kalman.md"]
    kalman, vfi = (next(lec for lec in build.lectures if lec.path.endswith(n)) for n in ("kalman.md", "vfi.md"))
    assert kalman.basis == wb.EXECUTED and kalman.after[0] == 60 and vfi.basis == wb.PUBLISHED and vfi.after[0] == 31
    # the same hardware (g4dn.xlarge: the same T4 and CPU model) takes the same published seconds; other GPUs do not
    assert wb.whole_build(view, "r", "g4dn.xlarge", cat["g4dn.xlarge"], build.published, cat).published is not None
    assert wb.whole_build(view, "r", "g6.xlarge", cat["g6.xlarge"], build.published, cat).published is None
    no_jax = copy.deepcopy(audit)
    for lec in no_jax["lectures"]:
        lec["scan"].update(imports=["numpy"], uses_jax=False)
    assert pinned(wb.whole_build(AuditView.from_dict(no_jax), "r", "g4dn.2xlarge", entry, build.published, cat)) == []
    shows = copy.deepcopy(audit)
    next(lec for lec in shows["lectures"] if lec["path"].endswith("kalman.md"))["shows_gpu"] = True
    assert pinned(wb.whole_build(AuditView.from_dict(shows), "r", "g4dn.2xlarge", entry, build.published, cat)) == []


def test_a_repository_on_another_runner_is_a_what_if(report):
    """Its build jobs name ubuntu-latest: on a GPU family's page it is a what-if (no pins in its patch), with
    what moving would cost or save; on its own CPU family it stays on the CPU."""
    audit = copy.deepcopy(report.audits[0].audit)
    audit["ci"]["workflows"] = [{"file": ".github/workflows/ci.yml", "jobs": [
        {"id": "build", "where": ".github/workflows/ci.yml:5", "builds": ["ci.yml:9 runs `jb build`"],
         "runs_on": {"raw": "ubuntu-latest", "family": None}}]}]
    cpu_repo = copy.copy(report)
    cpu_repo.__dict__.pop("_decision_sheets", None)  # the sheets are computed once per report object
    cpu_repo.audits = [audits.CommittedAudit("demo@abcdef1", audit)]
    (gpu,) = repo_builds(cpu_repo, "g4dn.2xlarge")
    assert gpu.what_if and gpu.runs_on == "ubuntu-latest"
    page_md = maintainers.family_page(cpu_repo, "g4dn.2xlarge")
    assert "a what-if: its build jobs run on ubuntu-latest" in page_md and "its patch pins none" in page_md
    assert "what moving here would change" in page_md
    (own,) = repo_builds(cpu_repo, "ubuntu-latest")
    assert not own.what_if and "stays on the CPU" in maintainers.family_page(cpu_repo, "ubuntu-latest")


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


def test_no_published_file_keeps_a_path_of_the_host_that_ran_it():
    """Issue 83 / 80: run.txt and audit.json kept the audit machine's working paths (/work/...); publish shows each
    as its last part, and a link's note never names its resolved target."""
    import re

    from jaxci.audit.writing.publish import names_and_numbers, without_host_paths

    host = re.compile(r"(?<![\w.~/-])(?:/(?:work|tmp|root|home|Users|var)/|~/)")
    for path in sorted([*(REPO_ROOT / "audits").glob("*/*"), *(REPO_ROOT / "scoring").glob("*/*")]):
        if path.suffix in (".json", ".txt", ".log"):
            assert not host.search(path.read_text()), path
    note = "data.csv: a link leading out of the lecture folder (to /tmp/x/home/alice/private/data.csv): left out"
    assert "alice" not in names_and_numbers(note) and "…/data.csv" in names_and_numbers(note)
    assert without_host_paths("see lectures/a.md, https://x.org/a/b and ~/d/f.csv") == \
        "see lectures/a.md, https://x.org/a/b and …/f.csv"


def test_committed_audits_hold_names_and_numbers_only():
    found, problems = audits.load(REPO_ROOT / "audits")
    assert problems == []
    for one in found:
        assert one.facts.get("repository") and one.facts.get("commit")
        again = publish.scrub(one.audit)
        assert again == publish.scrub(again) and one.audit == {**again, "published": one.facts}, \
            one.name  # publishing it again removes nothing: nothing quoted is left


def test_only_executes_the_named_lectures_and_refuses_unknown_names(tmp_path):
    for name in ("one", "two"):
        (tmp_path / f"{name}.md").write_text("---\njupytext:\n  text_representation:\n    format_name: myst\n---\n"
                                             "# A\n\n```{code-cell} python3\nx = 1\n```\n")
    verdicts = repo.audit_static(tmp_path, None)
    args = SimpleNamespace(only="two", baseline=None, shard_times=None, cache=None, cell_timeout=60)
    audit_shard.prepare(args, verdicts)
    reasons = {Path(v.path).stem: v.not_executed for v in verdicts}
    assert reasons["two"] is None or reasons["two"] == ""
    assert not next(v for v in verdicts if Path(v.path).stem == "one").selected
    assert all(v.selected for v in verdicts if Path(v.path).stem == "two")
    with pytest.raises(InputError, match="no lecture named three"):
        audit_shard.prepare(SimpleNamespace(**{**vars(args), "only": "two,three"}), verdicts)


def test_the_committed_report_is_what_the_committed_results_and_audits_give():
    """docs/report/ against the pages generated now from results/ and audits/: the report's numbers are the
    sheet's numbers, because both come from the one build of the committed data."""
    found, problems = audits.load(REPO_ROOT / "audits")
    assert problems == [] and found, "no committed audit"
    report = build(committed(), audits=found)
    folder = REPO_ROOT / "docs" / "report"
    families = maintainers.families(report)
    assert sorted(p.name for p in folder.glob("*.md")) == sorted(["README.md", *(f"{f}.md" for f in families)])
    assert (folder / "README.md").read_text() == maintainers.index_page(report, families)
    for family in families:
        page_md = (folder / f"{family}.md").read_text()
        assert page_md == maintainers.family_page(report, family), f"docs/report/{family}.md is stale"
        row6 = decisions.sheet(report, family).rows[5]
        assert row6.number in page_md


def _patched(patch: str) -> dict[str, str]:
    """lecture -> its reason, for every lecture the patch's explanation lists as pinned to the CPU."""
    head = patch.split("\ndiff --git", 1)[0]
    lines = [x.strip()[2:] for x in head.splitlines() if x.startswith("  - ") and ": pin to CPU (" in x]
    return dict(x.split(": ", 1) for x in lines)


@pytest.mark.parametrize("folder", sorted(p.name for p in (REPO_ROOT / "audits").iterdir() if p.is_dir()))
def test_the_report_the_patch_and_the_audit_agree_on_pins_seconds_and_minutes(folder):
    """For every committed audit, on the family its build jobs run on: the report's pins are audit.json's
    `pin_to_cpu` and the lectures its ci.patch switches, each side printed as the patch prints it, and the build
    minutes are audit.json's `build` block (one function, jaxci.policy.wholebuild)."""
    found, problems = audits.load(REPO_ROOT / "audits")
    assert problems == []
    audit = next(c for c in found if c.name == folder)
    report = build(committed(), audits=found)
    family = audit.audit["runner"]["judged"]
    whole = rb.build_of(report, audit, family, report.catalogue[family])
    pins = [lec.path for lec in whole.pins]
    assert pins == audit.audit["pin_to_cpu"] == audit.audit["build"]["pins"]
    patched = _patched((REPO_ROOT / "audits" / folder / "ci.patch").read_text())
    assert sorted(patched) == sorted(pins)
    for lec in whole.pins:
        assert lec.placement.cpu.text() in patched[lec.path] and lec.placement.gpu.text() in patched[lec.path]
    after = audit.audit["build"]["after_patch_s"]
    assert (after["mid"], after["low"], after["high"]) == pytest.approx(whole.after_s)   # the band too
    page_md = (REPO_ROOT / "docs" / "report" / f"{family}.md").read_text()
    assert rb.after_line(whole) in page_md and all(quoting.code(p, table=True) in page_md for p in pins)


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


def test_audit_files_on_their_own_are_published_names_and_numbers_only(tmp_path, capsys):
    """`jaxci audit publish A.json B.json DEST`: each file scrubbed as a repository audit is (no cell's first line,
    no exception's message), under its own name, its `published` block naming it; DEST may not be an input's
    folder, and two inputs of one name are refused (one would overwrite the other); a refusal writes nothing."""
    from jaxci.commands.audit import main

    raw = tmp_path / "raw"
    (raw / "other").mkdir(parents=True)
    doc = copy.deepcopy(AUDIT)
    run = {"status": "error", "error": "cell 3: ValueError: the lecture's own words", "platform": "cpu",
           "cells": [{"index": 3, "first_line": "x = secret_code()", "status": "error"}]}
    doc["lectures"][0]["runs"] = {"cpu": run}
    for name in ("call1-both.json", "call2-cpu-a.json"):
        (raw / name).write_text(json.dumps(doc))
    dest = tmp_path / "scoring"
    assert main(["publish", str(raw / "call1-both.json"), str(raw / "call2-cpu-a.json"), str(dest)]) == 0
    for name in ("call1-both.json", "call2-cpu-a.json"):
        text = (dest / name).read_text()
        assert "secret_code" not in text and "own words" not in text and "first_line" not in text
        assert json.loads(text)["published"] == {"source": name}
    (raw / "other" / "call1-both.json").write_text(json.dumps(doc))
    assert main(["publish", str(raw / "call1-both.json"), str(raw / "other" / "call1-both.json"),
                 str(tmp_path / "x")]) == 2
    assert "share a name" in capsys.readouterr().err and not (tmp_path / "x").exists()
    assert main(["publish", str(raw / "call1-both.json"), str(raw)]) == 2
    assert "the folder of an input" in capsys.readouterr().err


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
