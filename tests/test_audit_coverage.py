"""`jaxci audit coverage`: each lecture of a published build counted once, in the first class that holds
(executed, stopped by the harness, failed, not executed), from an audit JSON and the published build's record
(once measure/audit_coverage.py, which read status.ipynb out of a snapshot). Small made-up records only."""

from __future__ import annotations

import json

from jaxci.analysis.lecture_record import AuditView
from jaxci.commands import audit
from jaxci.report import coverage
from jaxci.results import published_build as pb

OK, BAD = {"cpu": {"status": "ok"}}, {"cpu": {"status": "error"}}
AUDIT = {"lectures": [
    {"path": "lectures/a.md", "runs": OK, "not_executed": ""},
    {"path": "lectures/b.md", "runs": BAD, "failure": {"by": "harness", "cause": "no-network", "cell": 3,
                                                       "error": "URLError"}},
    {"path": "lectures/c.md", "runs": BAD, "errors": ["cpu: cell 2: ValueError"], "failure": {"by": "lecture"}},
    {"path": "lectures/d.md", "runs": {}, "not_executed": "not selected for execution (--only)"}]}
SECONDS = {"a": 60.0, "b": 30.0, "c": 6.0, "d": 3.0, "e": 1.0}


def test_coverage_counts_each_published_lecture_once():
    rows = coverage.coverage(AuditView.from_dict(AUDIT), SECONDS)
    assert [(r.document, r.klass) for r in rows] == [("a", "executed"), ("b", "stopped by the harness"),
                                                     ("c", "failed"), ("d", "not executed"), ("e", "not executed")]
    assert rows[1].why == "no-network (cell 3: URLError)" and rows[4].why == "not in the audit"
    assert "executed: 1 lectures, 60 s = 60.0%" in coverage.summary(rows)


def _committed(folder):
    """An audit folder as committed under audits/: audit.json and its published build beside it."""
    folder.mkdir()
    (folder / "audit.json").write_text(json.dumps(AUDIT))
    record = pb.PublishedBuild("owner/site.notebooks", "c0ffee", "2026-12-01", "ubuntu-latest", SECONDS,
                               {"f": "not a run time"})
    (folder / "published.json").write_text(json.dumps(record.as_dict()))
    return folder / "audit.json"


def test_the_command_reads_the_published_build_beside_the_audit(tmp_path, capsys):
    assert audit.main(["coverage", str(_committed(tmp_path / "repo@c0ffee")), "--table"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("published: 5 lectures, 100 s\nexecuted: 1 lectures, 60 s = 60.0%\n")
    assert "| b | 30.0 | stopped by the harness | no-network (cell 3: URLError) |" in out


def test_a_missing_or_foreign_record_is_one_line_and_exit_2(tmp_path, capsys):
    path = _committed(tmp_path / "repo@c0ffee")
    (tmp_path / "other.json").write_text(json.dumps({"format": "something-else"}))
    assert audit.main(["coverage", str(path), "--published", str(tmp_path / "other.json")]) == 2
    assert audit.main(["coverage", str(tmp_path / "nothing.json")]) == 2
    (tmp_path / "list.json").write_text("[]")
    published = str(path.parent / "published.json")
    assert audit.main(["coverage", str(tmp_path / "list.json"), "--published", published]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 3 and all(line.startswith("jaxci audit coverage: ") for line in err)
    assert "not a jaxci-published-build record" in err[0] and "not an audit JSON" in err[2]


def test_a_malformed_lecture_is_one_line_naming_it_and_the_field(tmp_path, capsys):
    path = _committed(tmp_path / "repo@c0ffee")
    bad = json.loads(path.read_text())
    bad["lectures"][1]["failure"]["cell"] = "3"
    path.write_text(json.dumps(bad))
    assert audit.main(["coverage", str(path)]) == 2
    (err,) = capsys.readouterr().err.splitlines()
    assert err == (f"jaxci audit coverage: {path}: lectures[1] ('lectures/b.md').failure.cell: expected a cell "
                   "number, got str")
