"""findings.md (an answer sheet first, then guidance per lecture type, then the evidence) and guidance.md.

Provenance (machine, JAX version, date, commit) is said once per machine and run, in the evidence's first table;
every evidence row names its machine. Evidence lists only measured and predicted cells: skipped and n/a cells
are counted, never listed. "not measured" is said once per question and machine, in the answer sheet.
Predicted numbers say "predicted" and carry their inputs.
"""

from __future__ import annotations

from jaxci.analysis import crossover as cx
from jaxci.analysis import group, median
from jaxci.report import answers, questions
from jaxci.report.guidance_lines import _pin_once, guidance_sections
from jaxci.report.model_check import model_section
from jaxci.report.text import Notes, dollars, num, pct, seconds, table


def _release_section(report):
    """Regressions and improvements between consecutive JAX releases (the history `jaxci history` backfills)."""
    from jaxci.analysis.releases import releases_md

    text = releases_md(report.release_steps, report.releases_measured, report.upgrade_factor)
    return "Regressions across JAX releases", text


# Extra sections of findings.md: callables report -> (title, markdown) or None, placed between the guidance and
# the evidence.
SECTIONS: list = [_release_section, model_section]


def _rows_or(header, rows, empty: str) -> str:
    """A table of the rows that exist, or one sentence when there are none (never a table of 'not measured')."""
    return table(header, rows) if rows else empty


def _v(value, fmt="{:.3g}") -> str:
    """A number in an evidence cell, or a dash where that metric was not recorded (the row itself was measured)."""
    return "—" if value is None else fmt.format(value)


def _once(rows: list, columns: int) -> list:
    """Rows sorted as given, the first `columns` cells left blank where they repeat the row above (a table says
    the machine and benchmark once per group, not once per row)."""
    out, last = [], None
    for row in rows:
        key = row[:columns]
        out.append(([""] * columns if key == last else list(key)) + list(row[columns:]))
        last = key
    return out


def _counted(count: int, what: str) -> str:
    return f"\n\n{count} {what}: counted, not listed." if count else ""


def _machines(report) -> str:
    """Provenance once per machine and run; what each run measured, skipped (n/a) and failed, counted."""
    rows, counts = [], []
    for name, f in sorted(report.machines.items()):
        recs = [r for r in report.records if r.machine == name]
        runs = group(recs, lambda r: (r.jax_version, r.jax_source, r.date[:10], r.commit[:8]))
        for (_jax, src, _date, _commit), rs in sorted(runs.items()):
            rows.append([name, answers.machine_title(name, f), f.get("cpu"), f.get("cpu_cores"), rs[0].provenance(),
                         src, sum(r.ok for r in rs)])
        has = {"gpu": f.has_gpu, "tpu": f.get("accelerator_platform", "") == "tpu"}   # the device params it lacks
        na = {d: sum(r.status == "skipped" and r.params.get("device") == d for r in recs) for d in has if not has[d]}
        skipped = sum(r.status == "skipped" for r in recs) - sum(na.values())
        failed = [r for r in recs if r.status == "failed"]
        parts = [f"{sum(r.ok for r in recs)} measured"]
        parts += [f"{n} {d} combinations n/a: no {d.upper()} on this machine" for d, n in na.items() if n]
        if skipped:
            parts.append(f"{skipped} skipped (large cases at CI scale, or not applicable here)")
        if failed:
            names = sorted({r.benchmark for r in failed})
            parts.append(f"{len(failed)} failed ({', '.join(names[:4])}{', …' if len(names) > 4 else ''})")
        counts.append(f"- {name}: " + "; ".join(parts) + ".")
    return (table(["machine", "shown as", "cpu", "cores", "provenance (said once: rows below name only the machine)",
                   "JAX version from", "measured"], rows) + "\n\n" + "\n".join(counts)) if rows else "No machine."


def _pair(c) -> str:
    return c.cpu_machine if c.cpu_machine == c.gpu_machine else f"cpu: {c.cpu_machine} / gpu: {c.gpu_machine}"


def _crossover_rows(items):
    return [[c.kernel, c.dtype, _pair(c), c.answer(), ", ".join(f"{n:,}" for n, *_ in c.points) or "—"] for c in items]


def crossover_table(report, items=None) -> str:
    items = report.crossovers if items is None else items
    shown = [c for c in items if c.kind != cx.NOT_MEASURED]
    return _rows_or(["kernel", "dtype", "machine(s)", "crossover (measured)", "sizes used"], _crossover_rows(shown),
                    "No kernel has both a cpu and a gpu line at two or more sizes.") + \
        _counted(len(items) - len(shown), "kernel/dtype pairs without both lines (no crossover possible)")


def predicted_crossover_table(report, notes: Notes | None = None) -> str:
    """The predicted crossovers; each model input is cited by label and listed once (below the table, or where
    the caller lists `notes`)."""
    own = notes is None
    notes = notes if notes is not None else Notes()
    rows = []
    for p in report.predicted_crossovers:
        if p.kind == cx.NOT_MEASURED:
            continue
        if p.kind == cx.CROSSING:
            ans = f"predicted n ≈ {p.n:,.0f}"
        else:
            ans = f"predicted: {p.kind}"
        meas = p.measured.answer() if p.measured is not None else "—"
        rows.append([p.family, p.kernel, p.dtype, ans, meas, notes.cite(p.inputs)])
    missing = len(report.predicted_crossovers) - len(rows)
    legend = f"\n\n{notes.md()}" if own and rows else ""
    return _rows_or(["family", "kernel", "dtype", "predicted", "measured", "inputs (labels listed below)"], rows,
                    "No crossover predicted: the model needs a measured GPU machine to calibrate on.") + \
        _counted(missing, "family/kernel/dtype combinations not predicted") + legend


def fp64_table(report) -> str:
    rows = [[s.machine, s.kernel, s.device, f"{s.ratio:.2f}", " ".join(f"{k}={v}" for k, v in s.at.items()) or "—",
             f"{s.low:.2f}–{s.high:.2f} ({s.count})"] for s in report.fp64_summary]
    return _rows_or(["machine", "kernel", "device", "float64/float32", "at", "range (sizes)"], rows,
                    "No kernel measured in both float32 and float64.")


def _fp64_answer(report) -> str:
    lines = []
    for (machine, device), rows in sorted(group(report.fp64_summary, lambda s: (s.machine, s.device)).items()):
        vals = [s.ratio for s in rows]
        lines.append(f"- {machine} {device}: median float64/float32 time ratio {median(vals):.2f} over {len(vals)} "
                     f"kernels (largest {max(vals):.2f}).")
    return "\n".join(lines) or "No kernel measured in both float32 and float64."


def _concurrency(report) -> str:
    if not report.concurrency:
        return "Not measured on any machine (no concurrency suite results)."
    shown = [c for c in report.concurrency if c.status not in ("skipped", "not measured")]
    rows = [[c.machine, c.device, c.policy, c.n_workers, c.status, _v(c.values.get("slowdown")),
             _v(c.values.get("peak_mib"), "{:.0f}")] for c in shown]
    safe = [f"- {m} {d}, policy {p}: largest safe N = {n if n is not None else 'none measured safe'}"
            for (m, d, p), n in sorted(report.safe_n.items())
            if any(c.machine == m and c.device == d and c.policy == p for c in shown)]
    return _rows_or(["machine", "device", "policy", "N", "outcome", "slowdown", "peak MiB"], rows,
                    "Every concurrency combination was skipped (n/a).") + "\n\n" + "\n".join(safe) + \
        _counted(len(report.concurrency) - len(shown), "concurrency combinations skipped (n/a)")


def _nuts(report) -> str:
    if not report.nuts:
        return "Not measured on any machine (no nuts suite results)."
    rows, missing = [], 0
    for row in report.nuts:
        setting = " ".join(f"{k}={v}" for k, v in row.setting)
        for (method, chains), ess in sorted(row.configs.items(), key=str):
            if ess is None:
                missing += 1
                continue
            ex = row.extras.get((method, chains), {})
            rows.append([row.machine, setting, method, chains, num(ess), _v(ex.get("leapfrog_per_s")),
                         seconds(ex.get("wall_s")) if ex.get("wall_s") is not None else "—"])
    rows = _once(rows, 2)
    best = [f"- {row.machine} {' '.join(f'{k}={v}' for k, v in row.setting)}: best {row.best[0][0]} x "
            f"{row.best[0][1]} chains at {row.best[1]:.3g} ESS/s" for row in report.nuts if row.best]
    return _rows_or(["machine", "setting", "chain_method", "chains", "ESS/s", "leapfrog/s", "wall"], rows,
                    "Every nuts combination was skipped or failed.") + "\n\n" + "\n".join(best) + \
        _counted(missing, "nuts configurations skipped or failed")


def _cold(report) -> str:
    rows = [[c.machine, c.suite, " ".join(f"{k}={v}" for k, v in c.params.items()), seconds(c.first_call),
             seconds(c.compile), f"{c.share:.0%}" if c.share is not None else c.note] for c in report.cold]
    return _rows_or(["machine", "suite", "params", "cold first call", "compile (trace+lower+backend)",
                     "compile share"], rows,
                    "No cold first call with its compile split (the *ColdStart and *Compile classes) measured.")


def _generic(report, suite: str, what: str) -> str:
    recs = report.suite_records(suite)
    if not recs:
        return f"Not measured on any machine (no {suite} suite results)."
    ok = [r for r in recs if r.ok]
    rows = _once(sorted([[r.machine, r.benchmark, " ".join(f"{k}={v}" for k, v in r.params.items()),
                          num(r.value) + " " + r.unit] for r in ok], key=lambda row: row[:2]), 2)
    return f"{what}\n\n" + _rows_or(["machine", "benchmark", "params", "value"], rows,
                                    f"No {suite} combination measured.") + \
        _counted(len(recs) - len(ok), f"{suite} combinations skipped or failed")


VERDICT_WORDS = {cx.CPU_FASTER: "pin to CPU", cx.GPU_FASTER: "GPU helps", cx.TIE: "within noise (quartiles overlap)"}


def _device_ratios(report) -> str:
    rows = [[d.machine, d.benchmark, " ".join(f"{k}={v}" for k, v in d.params) or "—", seconds(d.cpu), seconds(d.gpu),
             f"{d.ratio:.2f}", VERDICT_WORDS[d.verdict]] for d in report.device_ratios]
    return _rows_or(["machine", "benchmark", "params", "cpu", "gpu", "gpu/cpu", "verdict"], rows,
                    "No machine measured the same notebook or unsized kernel on both devices.")


def _costs(report) -> str:
    """The benchmark suite's own job per family (not a lecture build: that is the decision sheets' row 6)."""
    notes, rows = Notes("C"), []
    for c in report.costs:
        if c.job_dollars is None:
            continue
        suites = ", ".join(f"{s} {dollars(d)}" for s, d in sorted(c.suite_dollars().items())) or "—"
        label = f"{c.label} ({c.scale} scale)" if c.label in ("measured", "predicted") else c.label
        rows.append([c.family, num(c.price_per_hour, "${:.4g}/h"), label, seconds(c.suite_seconds),
                     dollars(c.job_dollars), suites,
                     dollars(c.predicted_job_dollars)
                     if c.label == "measured" and c.predicted_job_dollars is not None else "—",
                     pct(c.error), notes.cite(c.inputs)])
    legend = f"\n\n{notes.md()}" if rows else ""
    return _rows_or(["family", "price", "label", "suite time", "job $", "per workload", "predicted job $", "error",
                     "inputs (labels listed below)"],
                    rows, "No cost: no measured machine with a catalogue price.") + \
        _counted(len(report.costs) - len(rows),
                 "catalogue families without a cost (no price, or no machine of their kind measured)") + legend


def _achieved(report) -> str:
    """Achieved rate over the catalogue's sourced peak; timings without a sourced peak are counted per reason."""
    sourced = [a for a in report.achieved if a.peak is not None]
    rows = [[a.machine, a.benchmark.split(".")[0], " ".join(f"{k}={v}" for k, v in a.params.items()),
             seconds(a.seconds), f"{a.rate:.3g} {a.unit}", _v(a.peak, "{:.4g}"),
             "—" if a.fraction is None else f"{a.fraction:.1%}", a.peak_key] for a in sourced]
    unsourced = group([a for a in report.achieved if a.peak is None], lambda a: a.note)
    counted = "\n".join(f"- {len(items)} timing(s) on {', '.join(sorted({a.machine for a in items}))}: no fraction "
                         f"({note})" for note, items in sorted(unsourced.items(), key=str))
    return _rows_or(["machine", "kernel", "params", "time", "achieved", "catalogue peak", "fraction", "peak source"],
                    rows, "No timing has a sourced catalogue peak to compare with." if report.achieved else
                    "No dense or elementwise timing to compare with a peak.") + (f"\n\n{counted}" if counted else "")


def _incidents(report) -> str:
    """One pointer, not a second table: the published figures are held against the model in one place."""
    if not report.incidents:
        return "No incident figures found (docs/reference/incidents.md)."
    return ("The published runner figures (docs/reference/incidents.md; the page draws them beside the measured "
            "lines) are held against the model once, in [The runner model against the published figures]"
            "(#the-runner-model-against-the-published-figures).")


def _sections(report, builders) -> str:
    out = []
    for builder in builders:
        got = builder(report)
        if got:
            out.append(f"## {got[0]}\n\n{got[1].strip()}\n")
    return "\n".join(out)


def findings_md(report, sections=None) -> str:
    """Answers first (one table per machine), guidance per lecture type, extra sections, then the evidence."""
    extra = _sections(report, SECTIONS if sections is None else sections)
    return _front(report) + extra + _evidence(report)


def model_inputs_md(report) -> str:
    """Which machines' results the runner model read, and which it was shown but left out (a local run moves no
    family's prediction unless it is named: jaxci.analysis.model.INPUT_KINDS): one paragraph."""
    model = report.model
    if model is None:
        return ""
    used = sorted({r.machine for r in model.records})
    left = sorted(set(report.machines) - set(used))
    text = ("\nThe runner model's inputs: the results of " + (", ".join(f"`{m}`" for m in used) or "no machine")
            + " (committed captures and full-scale runs of catalogue families"
            + (", and the machines named with --model-input" if getattr(model, "named", ()) else "") + ").")
    if left:
        names = ", ".join(f"`{m}`" for m in left)
        text += (f" Shown as measured, no input to any family's prediction: {names} (a local or CI-scale run; "
                 f"`jaxci report RESULTS --model-input NAME` makes one an input).")
    return text + "\n"


def _front(report) -> str:
    """The decision sheet per runner family, the release regressions, the per-machine evidence sheets and the
    guidance per lecture type: what a maintainer reads first."""
    from jaxci.report import decisions, regressions

    guide = "\n\n".join(f"### {family}\n\n" + "\n\n".join(f"#### {title}\n\n" + "\n".join(lines)
                                                             for title, lines in sections)
                          for family, sections in family_guidance(report))
    lab = evidence_guidance(report) if report.machines else []
    lab_md = "\n\n".join(f"### {title}\n\n" + "\n".join(lines) for title, lines in lab)
    lab_md = (f"## Evidence: guidance lines per measured machine\n\nWhat each measured machine showed, on its own "
              f"hardware: evidence for the guidance above, never a family's answer.\n\n{lab_md}\n\n" if lab else "")
    regress = regressions.regressions_md(report)
    regress = f"## Regressions across JAX releases: summary\n\n{regress}\n" if regress else ""
    return f"""# Findings

Generated {report.generated} by `jaxci report {report.results_dir}` from asv results.
{model_inputs_md(report)}
## Decision sheets per runner family

{answers.headline(report)}

{decisions.sheets_md(report, report.families, report.audit)}
Status: *measured* on that family; *predicted* by the runner model (band and inputs; docs/runner-model.md);
*not measured*, with the command that would measure it. A row that uses another machine names it.

{regress}## Evidence: answers per measured machine

Lab and local machines are evidence for the sheets above, never a runner family's answer.

{machine_evidence(report)}
Status: *measured* on the machine in the heading (its JAX version, date and commit are under
[Evidence](#evidence-machines-and-runs)); *predicted from* the model's inputs, never filling a measured cell.

## Guidance per lecture type

{guide}

{lab_md}"""


def machine_evidence(report) -> str:
    """The seven answers per measured machine, as evidence, from the same row functions as the families' sheets
    (decisions.evidence_sheets: one answer per question); the question links to its evidence section."""
    from jaxci.report import decisions

    parts = []
    for s in decisions.evidence_sheets(report):
        rows = [[d.q, f"[{d.question}](#{answers.slug(questions.heading(d.asks))})", d.decision, d.status]
                for d in s.rows]
        title = answers.machine_title(s.family, report.machines[s.family])
        parts.append(f"### {title}\n\n" + table(["#", "question", "answer", "status"], rows))
    return "\n\n".join(parts) + "\n" if parts else "No machine with results.\n"


def _evidence(report) -> str:
    """The machines and runs, then the measured (and predicted) figures behind each registered question's answer,
    one numbered section per question (jaxci.report.questions), then the suite's own cost."""
    errors = "\n".join(f"- {e}" for e in report.errors)
    errors = (f"\nProblems reading the results (those files or cells are left out, the rest is used):\n\n{errors}\n"
              if errors else "")
    sections = "".join(f"## {questions.heading(q)}\n\n{EVIDENCE.get(q, _answers_only)(report, q)}\n\n"
                       for q in questions.REGISTRY)
    return f"""## Evidence: machines and runs

Only measured and predicted cells are listed below; skipped and n/a cells are counted.

{_machines(report)}
{errors}
{sections}## The benchmark suite itself

What one bench job of this suite costs per runner family (job = catalogue overhead + asv suite wall time, billed
with the catalogue minimum). This is the benchmark's own cost, not a lecture build (the decision sheets' row \
{questions.number(questions.COST)}):

{_costs(report)}
"""


def _fp64_evidence(report, q) -> str:
    return f"{_fp64_answer(report)}\n\n{fp64_table(report)}"


def _crossover_evidence(report, q) -> str:
    """Measured and predicted crossovers; every model input of the section cited once, at its end."""
    notes = Notes()
    predicted, incidents = predicted_crossover_table(report, notes), _incidents(report)
    return ("Measured: where the gpu median becomes faster than the cpu median, interpolated on a log scale between "
            f"measured sizes.\n\n{crossover_table(report)}\n\nPredicted for runner families (labelled, with inputs; "
            f"a measured crossover stands beside it when one exists):\n\n{predicted}\n\n{incidents}\n\n"
            + notes.md("Model inputs cited in this section (each once)"))


def _environment_evidence(report, q) -> str:
    return ("Compile share of a cold first call (compile seconds from jax.monitoring in one fresh process, first "
            f"call in another):\n\n{_cold(report)}\n\n"
            + _generic(report, "compile", "Compile suite (persistent compilation cache):"))


def _cost_evidence(report, q) -> str:
    return (f"A lecture build's minutes and dollars per family are the decision sheets' row {questions.number(q)} "
            "(from an executed audit:\n`jaxci report RESULTS --audit audit.json`). What the benchmark suite itself "
            "costs is [its own\nsection](#the-benchmark-suite-itself).\n\nAchieved fraction of catalogue peak:\n\n"
            + _achieved(report))


def _hygiene_evidence(report, q) -> str:
    loops = [c for c in report.crossovers if c.benchmark.startswith("loops.")]
    return (_generic(report, "notebooks", "Per-cell times from the notebook suite:")
            + "\n\nGPU vs CPU time of whole notebooks and unsized kernels on the same machine (above 1: the GPU is "
            f"slower):\n\n{_device_ratios(report)}\n\nLatency-bound loops, where a GPU pays a launch per "
            f"iteration:\n\n{crossover_table(report, loops)}")


def _answers_only(report, q) -> str:
    """A question without a section of its own: each measured machine's answer to it (its evidence rows)."""
    from jaxci.report import decisions

    rows = [[s.family, s.row(q).decision, s.row(q).status] for s in decisions.evidence_sheets(report)]
    return table(["machine", "answer", "status"], rows) if rows else f"Not measured: {q.how}."


#: the evidence section of each question that has one of its own (any other shows each machine's answer)
EVIDENCE = {questions.FP64: _fp64_evidence, questions.CROSSOVER: _crossover_evidence,
            questions.CONCURRENCY: lambda report, q: _concurrency(report),
            questions.SAMPLER: lambda report, q: _nuts(report), questions.ENVIRONMENT: _environment_evidence,
            questions.COST: _cost_evidence, questions.HYGIENE: _hygiene_evidence}


def _family_pin_how(family: str) -> str:
    from jaxci.report import actions

    return (f"- How to pin what is predicted or measured above as slower on the GPU: whole lectures "
            f"{actions.pin_how(family)}; part of a lecture, `jax.default_device(jax.devices('cpu')[0])` around "
            "the code.")


def family_guidance(report) -> list[tuple[str, list[tuple[str, list[str]]]]]:
    """(family title, sections) for every family the decision sheets draw: guidance written for that family."""
    from jaxci.report import decisions
    from jaxci.report import family_guidance as fg

    return [(s.title, _pin_once(fg.sections(report, s.family, s), _family_pin_how(s.family)))
            for s in decisions.sheets(report, report.families, report.audit)]


def evidence_guidance(report) -> list[tuple[str, list[str]]]:
    """The measured machines' own guidance lines (lab and local machines: evidence, never a family's guidance)."""
    from jaxci.report import decisions
    from jaxci.report import family_guidance as fg

    chosen = decisions.families(report, report.families, report.audit)
    return guidance_sections(fg.scoped(report, fg.evidence_machines(report, chosen)))


def guidance_md(report) -> str:
    """Guidance per lecture type for each family the sheets draw; the measured machines' lines stay in findings.md's
    evidence."""
    parts = ["# Guidance for lecture authors", "",
             f"Generated {report.generated} from the same results as findings.md, for each runner family of its "
             "decision sheets: measured on the family where it was, else predicted for it (the runner model), or "
             "published reference. What lab and local machines measured is evidence about their own hardware: "
             "findings.md, Evidence: guidance lines per measured machine.", "",
             answers.headline(report), ""]
    from jaxci.report import author_guide

    parts[2:2] = author_guide.sections() + ["# Evidence", ""]
    for family, sections in family_guidance(report):
        parts += [f"**For {family}**", ""]
        for title, lines in sections:
            parts += [f"## {title}", "", *lines, ""]
    return "\n".join(parts)
