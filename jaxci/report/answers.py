"""The answer sheet: the seven questions answered per machine with results, before any evidence.

A maintainer with one minute reads one table per runner family (or lab machine): the answer in words and
numbers, its status (measured / predicted from X / not measured: what run would measure it) and a link to the
evidence below. "Not measured" appears once per question and machine here, never once per cell.
GPU questions are never answered from CPU data: a machine without a GPU says so.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from jaxci.analysis import crossover as cx
from jaxci.analysis import median
from jaxci.report.text import dollars, seconds

MEASURED = "measured"
QUESTIONS = {
    1: ("FP64 penalty", "1. FP64 penalty on the real workload shapes"),
    2: ("GPU break-even size", "2. Size where the GPU breaks even"),
    3: ("Safe concurrency on one GPU", "3. Safe concurrency and memory policy"),
    4: ("Sampler configuration", "4. Sampler configuration"),
    5: ("Standard CI environment", "5. Standard CI environment"),
    6: ("Instance fit (cost)", "6. Instance fit"),
    7: ("Failure hygiene", "7. Failure hygiene"),
}
# what run would measure a missing answer (said once per question and machine)
HOW = {
    1: "run any suite (every suite has float32 and float64 params)",
    2: "run the dense, elementwise and loops suites on a GPU runner family "
       "(`JAXCI_MACHINE=g4dn.2xlarge bash scripts/bench.sh` there) or `scripts/gpu_smoke.py` on a lent GPU",
    3: "run the concurrency suite on a GPU (`asv run --bench '^concurrency\\.'` on a GPU runner family)",
    4: "run the nuts suite (`asv run --bench '^nuts\\.'`)",
    5: "run the compile suite (`asv run --bench '^compile\\.'`)",
    6: "add the machine to env_matrix/machines.toml with a sourced price, or run on a catalogue family",
    7: "run the notebooks suite (`asv run --bench '^notebooks\\.'`)",
}


def slug(heading: str) -> str:
    """The anchor GitHub gives a markdown heading (and the findings page gives its <h*> ids)."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def machine_title(name: str, facts) -> str:
    """How a machine is named to a reader: a lab machine by its GPU, never as a runner family."""
    kind = facts.get("jaxci_kind", "unknown")
    gpu = facts.get("gpu", "no GPU")
    tag = ", synthetic" if is_synthetic(facts) else ""
    if kind == "lab":
        return f"{_lab_label(name, gpu)} (machine `{name}`, {gpu}{tag})"
    hw = gpu if facts.has_gpu else "CPU only"
    if kind == "catalogue":
        return f"runner family {name} ({hw}{tag})"
    return f"{kind} machine {name} ({hw}{tag})"


def _lab_label(name: str, gpu: str) -> str:
    """The catalogue's "lab: H200" where the lab machine is catalogued, else "lab: <recorded GPU>"."""
    from jaxci.catalogue import CatalogueError, machine_label

    try:
        label = machine_label(name)
    except CatalogueError:  # an unreadable catalogue must not hide the results: fall back to the recorded GPU
        label = name
    return label if label.startswith("lab:") else f"lab: {gpu}"


def is_synthetic(facts) -> bool:
    """Result sets written by tests/synth.py say so in machine.json (cpu = "synthetic")."""
    return facts.get("cpu", "") == "synthetic"


@dataclass
class Answer:
    q: int
    answer: str
    status: str          # "measured" | "predicted from ..." | "not measured: ..."

    @property
    def question(self) -> str:
        return QUESTIONS[self.q][0]

    @property
    def evidence(self) -> str:
        return "#" + slug(QUESTIONS[self.q][1])


@dataclass
class Sheet:
    machine: str
    title: str
    has_gpu: bool
    answers: list

    @property
    def not_measured(self) -> int:
        return sum(a.status.startswith("not measured") for a in self.answers)


def _nm(q: int, why: str = "") -> str:
    return f"not measured{': ' + why if why else ''}: {HOW[q]}"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _short(kernel: str) -> str:
    """dense.Dense.time_warm op=matmul -> dense op=matmul."""
    bench, _, rest = kernel.partition(" ")
    parts = bench.split(".")
    return (parts[0] + (" " + rest if rest else "")).strip()


def _fp64(report, m, gpu) -> Answer:
    rows = [s for s in report.fp64_summary if s.machine == m]
    if not rows:
        return Answer(1, "—", _nm(1))
    parts = []
    for device in sorted({s.device for s in rows}):
        rs = [s for s in rows if s.device == device]
        worst = max(rs, key=lambda s: s.ratio)
        parts.append(f"{device}: float64 costs {median([s.ratio for s in rs]):.1f}x float32 time (median of "
                     f"{_plural(len(rs), 'kernel')} at the largest size; "
                     f"worst {worst.ratio:.1f}x, {_short(worst.kernel)})")
    status = MEASURED
    if not gpu:
        parts.append("gpu: no GPU on this machine")
    elif not any(s.device == "gpu" for s in rows):
        status = "measured (cpu only); gpu not measured: " + HOW[1]
    return Answer(1, "; ".join(parts), status)


def _crossing_words(items) -> list[str]:
    out = []
    for c in items:
        if c.kind == cx.CROSSING:
            out.append(f"{_short(c.kernel)} {c.dtype}: GPU faster from n ≈ {c.n:,.0f}")
        elif c.kind == cx.GPU_ALWAYS:
            out.append(f"{_short(c.kernel)} {c.dtype}: GPU faster at every measured size (from n = {c.points[0][0]:,})")
        elif c.kind == cx.GPU_BAND:
            out.append(f"{_short(c.kernel)} {c.dtype}: {c.answer()}")
    tied = [c for c in items if c.kind == cx.WITHIN_NOISE]
    if tied:
        out.append(f"within noise at every measured size: {_plural(len(tied), 'kernel/dtype pair')}")
    slower = [c for c in items if c.kind == cx.NONE_IN_RANGE]
    if slower:
        names = sorted({_short(c.kernel) for c in slower})
        out.append(f"CPU faster at every measured size: {_plural(len(slower), 'kernel/dtype pair')} "
                   f"({', '.join(names[:3])}"
                   f"{', …' if len(names) > 3 else ''})")
    return out


def _breakeven(report, m, gpu) -> Answer:
    own = [c for c in report.crossovers if c.cpu_machine == m and c.gpu_machine == m and c.kind != cx.NOT_MEASURED]
    across = [c for c in report.crossovers if c.cpu_machine == m and c.gpu_machine != m and c.kind != cx.NOT_MEASURED]
    if gpu and own:
        words = _crossing_words(own)
        return Answer(2, "; ".join(words[:4]) + ("; more below" if len(words) > 4 else ""), MEASURED)
    if across:
        by = {}
        for c in across:
            by.setdefault(c.gpu_machine, []).append(c)
        jax = lambda mm: ", ".join(sorted({r.jax_version for r in report.records if r.machine == mm})) or "?"
        words = [f"this CPU (JAX {jax(m)}) vs {g}'s GPU (JAX {jax(g)}), two machines: "
                 + "; ".join(_crossing_words(cs)[:3]) for g, cs in sorted(by.items())]
        return Answer(2, " | ".join(words), "measured on two machines (this cpu line vs another machine's gpu line; "
                      "not one runner)")
    pred = [p for p in report.predicted_crossovers if p.family == m and p.kind == cx.CROSSING]
    if pred:
        p = min(pred, key=lambda p: p.n)
        return Answer(2, f"{_short(p.kernel)} {p.dtype}: GPU faster from n ≈ {p.n:,.0f} (and {len(pred) - 1} more)",
                      f"predicted from {p.inputs}")
    why = "no gpu line measured on this machine" if gpu else "no GPU in these results for this machine"
    if not gpu and not any(f.has_gpu for f in report.machines.values()):
        why = "these results hold no GPU"
    return Answer(2, "—", _nm(2, why))


def _concurrency(report, m, gpu) -> Answer:
    if not gpu:
        return Answer(3, "no GPU on this machine (CPU results never answer a GPU question)", _nm(3, "needs a GPU"))
    safe = {p: n for (mm, d, p), n in report.safe_n.items() if mm == m and d == "gpu"}
    if not safe:
        return Answer(3, "—", _nm(3))
    def first_death(policy):
        dead = [c for c in report.concurrency if (c.machine, c.device, c.policy) == (m, "gpu", policy)
                and c.status.endswith("died")]
        return min(dead, key=lambda c: c.n_workers) if dead else None

    words = []
    for p, n in sorted(safe.items(), key=lambda kv: -(kv[1] or 0)):
        said = (f"up to N = {n} {'kernel' if n == 1 else 'kernels'} at once, no worker lost" if n is not None
                else "a worker died at the smallest N")
        death = first_death(p)
        if death is not None and n is not None:
            said += f" (N = {death.n_workers}: {death.status})"
        words.append(f"policy {p}: {said}")
    return Answer(3, "; ".join(words), MEASURED)


def _sampler(report, m, gpu) -> Answer:
    rows = [r for r in report.nuts if r.machine == m]
    best = [(r, r.best) for r in rows if r.best]
    if not best:
        recs = [r for r in report.suite_records("nuts") if r.machine == m and r.method.endswith("ess_per_s")]
        skipped, failed = sum(r.status == "skipped" for r in recs), sum(r.status == "failed" for r in recs)
        why = "no nuts result" if not recs else (f"{skipped} nuts combinations skipped "
                                                  "(large cases at CI scale, or n/a here)"
                                                  + (f", {failed} failed" if failed else ""))
        return Answer(4, "—", _nm(4, why))
    words = []
    for r, ((method, chains), ess) in best:
        setting = " ".join(str(v) for _, v in r.setting)
        words.append(f"{setting}: chain_method={method} with {chains} chains, {ess:.3g} ESS/s")
    missing = [" ".join(f"{k}={v}" for k, v in r.setting) for r in rows if not r.best]
    status = MEASURED + (f" (not measured: {len(missing)} other setting(s), every combination skipped or failed, "
                         f"e.g. {missing[0]})" if missing else "")
    return Answer(4, "; ".join(words[:3]), status)


def _environment(report, m, gpu) -> Answer:
    shares = [c.share for c in report.cold if c.machine == m and c.share is not None]  # None: not comparable
    words = []
    if shares:
        words.append(f"compile is {median(shares):.0%} of a cold first call (median of {len(shares)} kernels): "
                     "keep JAX's persistent compilation cache between builds")
    cache = {r.method: r for r in report.suite_records("compile") if r.machine == m and r.ok
             and r.benchmark.startswith("compile.PersistentCache") and r.params.get("dtype") == "float32"}
    if "track_cold_s" in cache and "track_warm_s" in cache:
        words.append(f"persistent cache: {seconds(cache['track_cold_s'].value)} cold -> "
                     f"{seconds(cache['track_warm_s'].value)} warm "
                     f"({cache['track_cold_s'].params.get('device')}, float32)")
    if gpu:
        safe = [n for (mm, d, _), n in report.safe_n.items() if mm == m and d == "gpu" and n]
        if safe:
            words.append(f"`jaxci env --machine {m} --kernels {max(safe)} --results {report.results_dir}` gives the "
                         "memory settings")
    if not words:
        return Answer(5, "—", _nm(5))
    return Answer(5, "; ".join(words), MEASURED)


def _cost(report, m, gpu) -> Answer:
    row = next((c for c in report.costs if c.family == m), None)
    if row is None or row.job_dollars is None:
        why = "no catalogue price for this machine" if row is None else row.inputs
        return Answer(6, "—", _nm(6, why))
    scale = f" ({row.scale} scale)" if row.scale in ("ci", "full") else ""
    answer = (f"one bench job{scale} ≈ {dollars(row.job_dollars)} (suite {seconds(row.suite_seconds)} + "
              f"{seconds(row.overhead_s)} overhead at ${row.price_per_hour:.4g}/h)")
    others = [c for c in report.costs if c.family != m and c.job_dollars is not None and c.has_gpu != row.has_gpu]
    if others:
        cheapest = min(others, key=lambda c: c.job_dollars)
        answer += (f"; cheapest {'CPU-only' if row.has_gpu else 'GPU'} family: {cheapest.family} "
                   f"{dollars(cheapest.job_dollars)} ({cheapest.label})")
    status = MEASURED if row.label == "measured" else f"predicted from {row.inputs}"
    return Answer(6, answer, status)


def _hygiene(report, m, gpu) -> Answer:
    from jaxci.analysis.timeouts import timeout_basis

    words = []
    basis = timeout_basis([r for r in report.suite_records("notebooks") if r.machine == m])
    nbs = basis.seconds is not None
    if nbs:
        words.append(f"slowest fixture {basis.what} {seconds(basis.seconds)} ({basis.params.get('device')}; CI-scale "
                     "fixtures never size a timeout: the decision sheet's row 7 does)")
    pins = [d for d in report.device_ratios if d.machine == m and d.verdict == cx.CPU_FASTER]  # noise margin
    if pins:
        worst = max(pins, key=lambda d: d.ratio)
        what = " ".join(f"{k}={v}" for k, v in worst.params)
        words.append(f"pin to CPU: {len(pins)} notebook(s)/kernel(s) slower on the GPU (worst {worst.ratio:.1f}x, "
                     f"{worst.benchmark.split('.')[0]} {what})")
    if gpu:
        loops = [c for c in report.crossovers if c.cpu_machine == m == c.gpu_machine
                 and c.benchmark.startswith("loops.") and c.kind == cx.NONE_IN_RANGE]
        if loops:
            words.append(f"{len(loops)} loop kernel/dtype pairs never faster on the GPU: pin scalar loops to the CPU")
    if not words:
        return Answer(7, "—", _nm(7))
    return Answer(7, "; ".join(words), MEASURED)


BUILDERS = (_fp64, _breakeven, _concurrency, _sampler, _environment, _cost, _hygiene)


def sheets(report) -> list[Sheet]:
    """One sheet per machine with results: GPU machines first (they answer the most), then by name."""
    out = []
    for name, facts in sorted(report.machines.items(), key=lambda kv: (not kv[1].has_gpu, kv[0])):
        if not any(r.machine == name for r in report.records):
            continue
        out.append(Sheet(name, machine_title(name, facts), facts.has_gpu,
                         [b(report, name, facts.has_gpu) for b in BUILDERS]))
    return out


def headline(report) -> str:
    """One sentence that says, before anything else, what these results can and cannot answer."""
    gpus = [n for n, f in report.machines.items() if f.has_gpu]
    synth = sorted(n for n, f in report.machines.items() if is_synthetic(f))
    lead = f"SYNTHETIC results ({', '.join(synth)}: made by tests/synth.py, not measurements). " if synth else ""
    if not report.machines:
        return "These results hold no machine: nothing is measured yet."
    if not gpus:
        return (lead + "These results hold no GPU: the GPU questions (2 break-even, 3 concurrency, GPU FP64) are not "
                "measured yet; every GPU line below says so, never inferred from CPU data.")
    return lead + (f"These results hold {len(gpus)} GPU machine(s) ({', '.join(sorted(gpus))}) and "
                   f"{len(report.machines) - len(gpus)} without a GPU.")


def sheet_md(sheet: Sheet) -> str:
    from jaxci.report.text import table

    rows = [[a.q, a.question, a.answer, a.status, f"[evidence]({a.evidence})"] for a in sheet.answers]
    return f"### {sheet.title}\n\n" + table(["#", "question", "answer", "status", "evidence"], rows)


def summary_lines(report, limit_machines: int = 3, width: int = 150) -> list[str]:
    """The terminal summary (scripts/bench.sh): at most 3 machines x 8 lines, each line cut to `width`."""
    import textwrap

    out = textwrap.wrap(headline(report), width)
    ss = sheets(report)
    for s in ss[:limit_machines]:
        out.append(f"{s.title}:")
        for a in s.answers:
            text = (a.answer if a.answer != "—"
                    else a.status.replace(": " + HOW[a.q], "") + " (how to measure it: findings.md)")
            tag = "" if a.answer == "—" else (" [predicted]" if a.status.startswith("predicted") else "")
            line = f"  {a.q} {a.question}: {text}{tag}"
            out.append(line if len(line) <= width else line[: width - 1] + "…")
    if len(ss) > limit_machines:
        out.append(f"(and {len(ss) - limit_machines} more machine(s): see findings.md)")
    return out
