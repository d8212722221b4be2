"""A CI finding carries what later steps decide on (its fix is a RunsOn label change: `by_label`) as a field set
where the finding is made; no step reads it back from the finding's sentences. Fixture repositories only."""

from __future__ import annotations

from jaxci.audit.lecture_ci import audit_ci, core, lectures
from jaxci.audit.lecture_ci.report import Finding
from tests.auditutil import CI_REPOS as FIX


def _audit(name):
    return audit_ci(FIX / name, lectures.audit_lectures(FIX / name))


def _one(report, kind):
    (found,) = [f for f in report.findings if f.kind == kind]
    return found


def test_a_label_fix_is_a_flag_of_the_finding():
    moved, split = _audit("findings_gpu"), _audit("split_gpu")
    for f in (_one(moved, "runner-tier"), _one(moved, "spot")):
        assert f.by_label and f.as_dict()["patched"] and "by_label" not in f.as_dict()
    tier = _one(split, "runner-tier")
    assert not tier.by_label and not tier.as_dict()["patched"]


def test_rewording_a_fix_changes_nothing_the_audit_decides(monkeypatch):
    """Every fix reworded as it is made: the same findings are patched (the label edit was once decided by the
    fix's first words)."""
    before = sorted((f.kind, f.where, f.as_dict()["patched"]) for f in _audit("findings_gpu").findings)

    def reworded(*args, **kw):
        f = Finding(*args, **kw)
        f.fix = "in other words: " + f.fix
        return f

    monkeypatch.setattr(core, "Finding", reworded)
    after = _audit("findings_gpu")
    assert _one(after, "runner-tier").fix.startswith("in other words: run the build on")
    assert sorted((f.kind, f.where, f.as_dict()["patched"]) for f in after.findings) == before
