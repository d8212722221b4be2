"""The decision sheet per catalogue family: every registered question (jaxci.report.questions) as a decision a
maintainer can apply.

One sheet per runner family (`jaxci report --family NAME`, repeatable; by default the catalogue families the
results or the audit name, else g4dn.2xlarge and c7i.2xlarge). Every row is one decision, with where it comes
from: *measured* on that family; *predicted* by the runner model (jaxci.analysis.model, with its band and inputs);
or *not measured*, with the command that would measure it. Lab and local machines are evidence (below the sheets),
never a sheet's headline: a row that uses another machine's measurement names it, with its JAX version. The rules
are jaxci.report.rows; a row is found by its question (FamilySheet.row), never by its place.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from jaxci.analysis.lecture_record import AuditView
from jaxci.analysis.prediction import families as predicted_families
from jaxci.report import questions, termcheck
from jaxci.report.question import Context, Question, QuestionDecision, Status
from jaxci.report.rows import DENSE_N, NUTS_ITERATIONS  # noqa: F401  (the rules' constants, where tests read them)

DEFAULT_FAMILIES = ("g4dn.2xlarge", "c7i.2xlarge")
MEASURED, PREDICTED, NOT_MEASURED = Status.MEASURED, Status.PREDICTED, Status.NOT_MEASURED


@dataclass
class FamilySheet:
    family: str
    title: str
    price: float | None
    has_gpu: bool
    rows: list = field(default_factory=list)

    def row(self, question: Question) -> QuestionDecision:
        """The row that answers `question`."""
        return next(d for d in self.rows if d.asks is question)


def _measured_here(report, family) -> bool:
    return any(r.machine == family for r in report.records)


def families(report, chosen=None, audit=None) -> list[str]:
    """The families to draw sheets for: those asked for, else those the results (or the audit) name, else the
    defaults (g4dn.2xlarge first)."""
    cat = report.catalogue
    if chosen:
        return list(dict.fromkeys(chosen))
    named = [m for m in report.machines if m in cat and not cat[m].is_lab]
    named += [f for f in (audit or {}).get("families", []) if f in cat]
    named += [f for lec in (audit or {}).get("lectures", []) for f in predicted_families(lec)
              if f in cat and not cat[f].is_lab]
    named = sorted(dict.fromkeys(named), key=lambda f: (not cat[f].has_gpu, f != "g4dn.2xlarge", f))
    return named or list(DEFAULT_FAMILIES)


def sheet(report, family, audit=None, entry=None, view=None) -> FamilySheet:
    """The registered questions' rows for `family` (its catalogue entry, unless `entry` gives the machine's facts);
    `view` is the audit's typed view when the caller read it already (sheets reads it once for every family)."""
    if entry is None:
        entry = report.catalogue.get(family)
    if entry is None:
        from jaxci.catalogue import load_catalogue

        entry = load_catalogue(include_lab=True)[family]
    price = entry.value("price_per_hour")
    hw = entry.value("gpu_model") if entry.has_gpu else (entry.label if entry.backend == "tpu" else "CPU only")
    measured = "measured here" if _measured_here(report, family) else "not measured here: predicted and defaults"
    title = (f"{family} ({hw}, {entry.value('vcpu') or '?'} vCPU, "
             f"{f'${price:.3f}/h' if price is not None else 'no price'}; {measured})")
    if view is None and audit is not None:
        view = AuditView.from_dict(audit)
    context = Context(report, family, entry, audit, view)
    rows = [QuestionDecision.of(q, n, q.rule(context)) for n, q in enumerate(questions.REGISTRY, 1)]
    rows = [termcheck.annotate(report, family, d, entry.has_gpu) for d in rows]
    return FamilySheet(family, title, price, entry.has_gpu, rows)


def sheets(report, chosen=None, audit=None) -> list[FamilySheet]:
    """The sheets, computed once per report and choice (findings.md and the HTML page both show them)."""
    key = (tuple(chosen or ()), id(audit))
    memo = report.__dict__.setdefault("_decision_sheets", {})
    if key not in memo:
        view = AuditView.from_dict(audit) if audit is not None else None
        memo[key] = [sheet(report, f, audit, view=view) for f in families(report, chosen, audit)]
    return memo[key]


def evidence_entry(report, name: str):
    """A measured machine as the rows read it: its catalogue entry (lab machines included) with what its
    machine.json recorded filling the figures the catalogue leaves unknown (a lab GPU's memory from NVML, a local
    machine's vCPUs and GPU), each sourced to that file."""
    from jaxci.catalogue import Figure, Machine, load_catalogue

    facts = report.machines[name]
    entry = report.catalogue.get(name) or load_catalogue(include_lab=True).get(name)
    source = f"results/{name}/machine.json (recorded by jaxci machine)"
    recorded = {"vcpu": facts.get("num_cpu", ""), "gpu_memory_mib": facts.get("gpu_memory_mib", ""),
                "gpu_model": facts.get("gpu", "") if facts.has_gpu else "none"}
    figures = dict(entry.figures) if entry else {}
    for key, text in recorded.items():
        if figures.get(key, Figure(None)).value is None and text not in ("", "unknown"):
            value = int(text) if text.isdigit() else text
            figures[key] = Figure(value, source=source)
    if entry:
        return Machine(entry.name, entry.description, entry.runner, entry.image, entry.backend, entry.spot,
                       entry.bench, figures, entry.kind, entry.label)
    return Machine(name, f"{name} (not in the catalogue)", "local", "none", facts.backend or "cpu", "never", False,
                   figures, "lab")


def _tpu(catalogue: dict, name: str) -> bool:
    entry = catalogue.get(name)
    return entry is not None and entry.accelerator == "tpu"


def evidence_sheets(report) -> list[FamilySheet]:
    """Every machine with results, through the same seven row functions as a family's sheet (one answer per
    question): GPU machines first, then by name. Evidence for the families' sheets, never a family's answer. A TPU
    machine has none: the seven rows answer for GPU and CPU runners, and read as a CPU-only machine a TPU's sheet
    would say "no GPU: pin to the CPU" (its answers: docs/tpu.md; its results still fill the evidence tables)."""
    cat = getattr(report.model, "catalogue", None) or {}   # the lab-inclusive catalogue the model was given
    names = sorted((n for n in report.machines if _measured_here(report, n) and not _tpu(cat, n)),
                   key=lambda n: (not report.machines[n].has_gpu, n))
    return [sheet(report, n, entry=evidence_entry(report, n)) for n in names]


def sheet_md(s: FamilySheet) -> str:
    from jaxci.report.text import table

    rows = [[d.q, d.question, d.decision, d.status, d.basis] for d in s.rows]
    return f"### Decision sheet: {s.title}\n\n" + table(["#", "question", "decision", "status", "from"], rows)


FAIL_ONCE = ("**Fail once (every family).** Neither engine skips a known failure: jupyter-cache never caches a "
             "notebook that failed, and mystmd never caches one that raised, so every build runs it again. The "
             "templates record the failures on the gating build (`jaxci failures record`), carry the record in the "
             "Actions cache and skip an unchanged failure in every later build (`jaxci failures skip`), until its "
             "code changes: `templates/fail-once-jupyter-book.yml` (Jupyter Book 1.x: `execute.exclude_patterns`) "
             "and `templates/fail-once-mystmd.yml` (mystmd: the page's `execute: {skip: true}`).")


def sheets_md(report, chosen=None, audit=None) -> str:
    return "\n\n".join(sheet_md(s) for s in sheets(report, chosen, audit)) + "\n\n" + FAIL_ONCE + "\n"
