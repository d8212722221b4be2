"""The maintainers' report (`jaxci report RESULTS --maintainers DIR`, committed as docs/report/): per runner
family, at most two printed pages a lecture organisation can check into its meta repository.

Each page starts from each audited repository's whole build on the family (its last published build, the build
after the patch with every lecture accounted for, the model's own check; jaxci.policy.wholebuild, the sheet's row 6
from the same function), then the seven answers in plain words (the decision sheet's own rows: the first clause of
each, the one number that decides it, its evidence kind and a link to the evidence), the lectures to pin to the CPU
with both sides as the patch prints them (published or predicted), and the JAX pin advice from the release
history. A repository that builds on another family is a what-if there. README.md says what each committed audit
ran, and every lecture that could not run here with its cause.
"""

from __future__ import annotations

from jaxci.analysis.lecture_record import AuditView
from jaxci.analysis.provenance import describe
from jaxci.report import answers, questions
from jaxci.report.decisions import MEASURED, NOT_MEASURED, PREDICTED, sheets
from jaxci.report.repo_builds import repo_builds
from jaxci.report.text import table
from jaxci.util import quoting

#: the longest plain-words answer kept (the sheet has the whole decision)
ANSWER_CHARS = 200
#: the page title: a constant, since a quote inside a nested f-string expression is Python 3.12 syntax (the TPU
#: image has 3.11; tests/test_python311.py)
TITLE = "maintainers' report"


def families(report) -> list[str]:
    """The families of the report: those asked for (--family), else every runner family of the catalogue (GPU
    families first, g4dn.2xlarge, the lecture builds' runner, at the top)."""
    cat = report.catalogue
    chosen = report.families or [n for n, m in cat.items() if not m.is_lab]
    return sorted(dict.fromkeys(chosen), key=lambda f: (not cat[f].has_gpu, f != "g4dn.2xlarge", f))


def headline(decision: str) -> str:
    """A decision's first clause, as the plain-words answer (cut at a word near ANSWER_CHARS)."""
    first = decision.split("; ", 1)[0].strip()
    return first if len(first) <= ANSWER_CHARS else first[:ANSWER_CHARS].rsplit(" ", 1)[0] + " …"


def evidence(d, family: str, site: bool) -> str:
    """The row's evidence kind, linked: the family's results when measured there, the question's section of the
    findings page on the site, else the committed document that explains the model or the rule (the question's
    own, jaxci.report.questions); a prediction says what it rests on (jaxci.analysis.provenance.describe, brief)."""
    if d.status == NOT_MEASURED:
        return "not measured"
    rests = f": {describe(d.sources, brief=True)}" if d.status == PREDICTED and d.sources else ""
    if site:
        return f"[{d.status}](index.html#{answers.slug(questions.heading(d.asks))}){rests}"
    own = d.status == MEASURED and d.asks.results_are_evidence
    target = f"../../results/{family}/" if own else d.asks.evidence_doc
    return f"[{d.status}]({target}){rests}"


def answers_md(rows, family: str, site: bool) -> str:
    body = [[d.q, d.question, headline(d.decision), d.number or "—", evidence(d, family, site)] for d in rows]
    return table(["#", "question", "answer", "deciding number", "evidence"], body)


def pin_rows(build) -> list[list[str]]:
    """One row per pinned lecture: its path and both sides as the patch's reasons print them."""
    def text(side) -> str:
        return side.text() if side is not None else "—"

    return [[quoting.code(lec.path, table=True), text(lec.placement and lec.placement.cpu),
             text(lec.placement and lec.placement.gpu)] for lec in build.pins]


def label_md(committed) -> str:
    """repository@commit for Markdown: both parts from the audit file, escaped (jaxci.util.quoting.cell)."""
    return _at(committed.label)


def _at(label: str) -> str:
    """'repository@commit' with each part escaped and our own @ kept."""
    repository, at, commit = label.rpartition("@")
    return f"{quoting.cell(repository)}{at}{quoting.cell(commit)}"


def pins_md(report, family: str, entry) -> str:

    if not entry.has_gpu:
        return "No GPU on this family: every lecture runs on its CPU; nothing to pin."
    parts = []
    for build in repo_builds(report, family):
        rows = pin_rows(build)
        if build.what_if:
            head = (f"**{_at(build.repository)}** (a what-if: it builds on {build.runs_on}): the one pin rule "
                    f"would pin {len(rows)} lectures here; its patch pins none for this family")
        else:
            head = (f"**{_at(build.repository)}**: {len(rows)} lectures to pin, as its ci.patch pins them (the one "
                    "rule: published seconds on this hardware win over a prediction; a pin only where the GPU's "
                    "whole band is above the CPU's by the margin)")
        parts.append(head + (":\n\n" + table(["lecture", "CPU", "GPU"], rows) if rows else "."))
    return "\n\n".join(parts) or "No committed audit."


def cost_md(report, family: str, entry) -> str:
    from jaxci.report import repo_builds as rb

    builds = repo_builds(report, family)
    if not builds:
        return "No committed audit: build minutes not measured."
    return "\n\n".join(
        f"**{_at(b.repository)}** ({rb.verdict_line(b, entry.has_gpu)})\n\n- {rb.decision_line(report, b.repository)}"
        f"\n- {rb.published_line(b)}\n- "
        f"{rb.after_line(b)}\n- {rb.what_if_line(report, b) if b.what_if else rb.check_line(b)}" for b in builds)


def repo_pin(audit: dict) -> tuple[str | None, str, bool]:
    """The repository's JAX pin and where it is said, and whether any workflow installs JAX: the CI audit's install
    lines (`==` pins only)."""
    lines = [x for x in (audit.get("ci") or {}).get("installs") or [] if x.get("name") == "jax"]
    pinned = [x for x in lines if x.get("version")]
    if pinned:
        return pinned[0]["version"], pinned[0].get("where", ""), True
    where = ", ".join(x.get("where", "") for x in lines)
    return None, f"unpinned ({where})" if where else "no JAX install line in the workflows", bool(lines)


def pin_md(report) -> str:
    from jaxci.analysis.releases import pin_advice

    lines = []
    for committed in report.audits:
        pin, where, installed = repo_pin(committed.audit)
        start = pin or committed.facts.get("jax")
        advice = pin_advice(report.release_steps, report.releases_measured, start, report.upgrade_factor)
        if advice.target is None:
            lines.append(f"- **{label_md(committed)}**: no release history measured: not decided.")
            continue
        now = (f"pinned {quoting.code('jax==' + pin)} ({quoting.cell(where)})" if pin else
               f"{quoting.cell(where)}: builds take the newest JAX (audited with {quoting.cell(start)})")
        steps = "; ".join(f"{s.benchmark} {s.kind} {s.before}→{s.after} (x{s.ratio:.2f}, "
                          f"{s.undone_text(report.upgrade_factor)})" for s in advice.between[:4])
        more = f" and {len(advice.between) - 4} more" if len(advice.between) > 4 else ""
        held = (f"; not newer: {len(advice.held_back_by)} confirmed regression(s) still standing after it"
                if advice.held_back_by else "")
        where_pin = ("Pin" if installed else
                     "No workflow installs JAX (its lectures install it themselves where they need it: its ci.patch "
                     "lists each line): pin it there and in the environment file as")
        lines.append(f"- **{label_md(committed)}**: {now}. {where_pin} `jax=={advice.target}`; confirmed steps "
                     f"between: {steps + more if steps else 'none'}{held}.")
    machines = ", ".join(sorted(m for m, rs in report.releases_measured.items() if len(rs) > 1)) or "no machine"
    return ("\n".join(lines) or "No committed audit.") + (
        f"\n\nFrom the release history measured on {machines} (`jaxci history`): a step counts only when "
        "confirmed by a quiet rerun (docs/history.md).")


def family_page(report, family: str, site: bool = False) -> str:
    (s,) = sheets(report, [family])  # computed once per report: the site's links and the findings page read it too
    entry = report.catalogue[family]
    audited = ", ".join(quoting.code(f"audits/{a.name}/") for a in report.audits) or "none"
    return "\n\n".join([
        f"# {s.title}",
        f"Generated by `jaxci report results --maintainers docs/report` from the committed results and audits "
        f"({audited}). Evidence: *{MEASURED}* on this family; *{PREDICTED}* by the runner model from runs here "
        "(docs/runner-model.md), followed by what the prediction rests on: the machines it was measured on, the "
        "published files and how many of their entries, the catalogue; *not measured* says what would measure it.",
        "## The whole build per repository", cost_md(report, family, entry),
        "## The seven answers", answers_md(s.rows, family, site),
        "## Lectures to pin to the CPU", pins_md(report, family, entry),
        "## JAX pin", pin_md(report)]) + "\n"


def not_run(audit: AuditView) -> list[tuple[str, str]]:
    """(lecture, cause) of every lecture that could not run here: not executed for a reason other than not being
    selected, or executed and failed (its errors, names only once published)."""
    out = []
    for lec in audit.lectures:
        reason = lec.not_executed or ""
        if reason and lec.selected:
            out.append((lec.path, reason))
        elif not reason and lec.status not in ("ok", None):
            out.append((lec.path, f"{lec.status}: {'; '.join(lec.errors)}"))
    return out


def audit_md(committed) -> str:
    """One committed audit's heading and facts, and the lectures that could not run; every value from the audit
    written through jaxci.util.quoting (a repository named `evil<!--` hides nothing after it)."""
    audit, facts = committed.view, {k: quoting.cell(v) for k, v in committed.facts.items()}
    lectures = audit.lectures
    executed = [lec for lec in lectures if lec.runs]
    selected = sum(lec.selected for lec in lectures)
    failed = not_run(audit)
    head = (f"### {label_md(committed)}\n\n"
            f"- commit {quoting.code(committed.commit)}; judged for {facts.get('family', '?')}; kernel "
            f"{facts.get('kernel', '?')}, JAX {facts.get('jax', '?')}; host {facts.get('cpu', '?')}\n"
            f"- {len(lectures)} lectures; {selected} chosen to execute; {len(executed)} ran; {len(failed)} could not "
            f"run here\n- execution here: {facts.get('wall_s', '?')} s wall, one process, not sharded; load "
            f"average {facts.get('start_load', '?')} at the start, {facts.get('end_load', '?')} at the end (1, 5, "
            "15 min)" + (f"\n- re-judged with today's rules: {facts['rejudged']}" if facts.get("rejudged") else ""))
    rows = [[quoting.code(p, table=True), quoting.cell(cause)] for p, cause in failed]
    return head + ("\n\n" + table(["lecture", "could not run here because"], rows) if rows else "")


def intro(report, families: list[str], site: bool = False) -> str:
    links = " · ".join(f"[{f}](#{answers.slug(sheets(report, [f])[0].title)})" if site else f"[{f}]({f}.md)"
                       for f in families)
    return (f"# JAX lecture builds on CI runners: the maintainers' report\n\nOne page per runner family, at most two "
            f"printed pages each: {links}.\n\nEach page is generated from this repository's committed results and "
            "the executed audits of the repositories below (`jaxci report results --maintainers docs/report`); the "
            "numbers are the decision sheet's (the findings page).")


def audited_md(report) -> str:
    return "## The audited repositories\n\n" + ("\n\n".join(audit_md(a) for a in report.audits)
                                                or "No committed audit (audits/).")


def index_page(report, families: list[str]) -> str:
    from jaxci.report.runner_decision import decisions_md

    decisions = decisions_md(report)
    return intro(report, families) + "\n\n" + (decisions + "\n" if decisions else "") + audited_md(report) + "\n"


def site_html(report, families: list[str]) -> str:
    """The whole report as one page of the site (findings/report.html), its links kept inside the site."""
    from html import escape

    from jaxci.report.page import CSS, markdown_to_html
    from jaxci.report.runner_decision import decisions_md

    md = "\n\n".join([intro(report, families, site=True), decisions_md(report)]
                     + [family_page(report, f, site=True) for f in families] + [audited_md(report)])
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{escape(TITLE)}'
            f'</title>\n<style>{CSS}</style></head><body>\n<nav><a href="index.html">← findings</a> · '
            f'<a href="../index.html">asv benchmarks</a></nav>\n{markdown_to_html(md)}\n</body></html>\n')


def write(report, folder, families: list[str], site: bool = False) -> list:
    """README.md (index.md on the site) and one page per family into `folder`; the paths written."""
    from pathlib import Path

    from jaxci.util import safewrite

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    pages = {"README.md": index_page(report, families), **{f"{f}.md": family_page(report, f, site) for f in families}}
    return safewrite.write_files(folder, pages, option="--maintainers")  # every page checked before the first
