"""The committed executed audit's runs predicted again by this checkout's model, from the audit JSON alone (no lecture
source, nothing executed), through the audit's own predict step (jaxci.audit.judging.every_family.predict_all: each
run moved by the host factor of the probe recorded when it ran), without the calibration: what `jaxci devsets
--from-audit` scores (jaxci.analysis.devsets_audit). On an unchanged model it is the audit's own record."""

from __future__ import annotations

from jaxci.analysis import devsets as D


def _scan(record: dict):
    """A lecture's static scan read back from its audit record (what the prediction reads: loops, pins, dtype)."""
    from dataclasses import fields

    from jaxci.audit.reading.pins import Pin
    from jaxci.audit.reading.scanrecord import LectureScan
    from jaxci.audit.reading.sizes import Loop, SizeFinding

    names = {f.name for f in fields(LectureScan)}
    return LectureScan(**{**{k: v for k, v in record.items() if k in names},
                          "loops": [Loop(**x) for x in record.get("loops") or []],
                          "size_findings": [SizeFinding(**x) for x in record.get("size_findings") or []],
                          "pins": [Pin(x["cell"], x["line"], tuple(x["platforms"]), x["what"])
                                   for x in record.get("pins") or []]})


def verdict_of(lec: dict):
    """The lecture's verdict as the audit held it when it predicted: its scan and runs; the book's allow_errors
    where the record says a run's error was no failure (status ok beside a run that raised)."""
    from jaxci.audit.judging.judge import Verdict
    from jaxci.audit.reading.book import BookConfig
    from jaxci.audit.runner.outcome import NotebookRun

    verdict = Verdict(lec["path"], _scan(lec.get("scan") or {"path": lec["path"]}))
    verdict.runs = {p: NotebookRun.from_dict(r) for p, r in (lec.get("runs") or {}).items()}
    if lec.get("status") == "ok" and any(r.status == "error" for r in verdict.runs.values()):
        verdict.config = BookConfig(".", "", allow_errors=True)
    return verdict


def repredicted(audit: dict, family: str) -> dict:
    """The audit with each lecture's prediction for `family` made again by this checkout's model, as the audit's
    predict step makes it (each run moved by its own recorded probe), without the calibration."""
    from jaxci import REPO_ROOT
    from jaxci.audit import repo
    from jaxci.audit.judging import every_family
    from jaxci.audit.runner import host_probe
    from jaxci.evidence.inputs import reference

    try:
        verdicts = [verdict_of(lec) for lec in audit.get("lectures", [])]
    except (TypeError, KeyError, ValueError) as exc:
        raise D.DevSetError(f"a lecture's scan or run cannot be read back ({type(exc).__name__}: {exc})") from None
    families = every_family.build(REPO_ROOT / "results", published=reference(), names=[family])
    if family not in families.views:
        raise D.DevSetError(f"no runner model for {family}: {'; '.join(families.notes) or 'not a runner family'}")
    every_family.predict_all(verdicts, families, None, repo.run_probes(verdicts, host_probe))
    return {**audit, "lectures": [{**lec, "predicted": {family: v.predicted[family].as_dict()}
                                   if family in v.predicted else {}}
                                  for lec, v in zip(audit.get("lectures", []), verdicts)]}
