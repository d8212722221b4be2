"""The decision questions' rules: each a function of the family's context that returns an Answer (the registry,
jaxci.report.questions, binds each to its question; jaxci.report.decisions assembles the sheets).

Every row is one decision with where it comes from: *measured* on that family; *predicted* by the runner model
(jaxci.analysis.model, with its band and inputs); or *not measured*, with the command that would measure it. A row
that adds an action (the lectures to pin, the cheaper families) adds it in its own rule, from typed fields of its
answer, never by finding a phrase in another row's sentence.
"""

from __future__ import annotations

import dataclasses

from jaxci.analysis import crossover as cx
from jaxci.analysis import median
from jaxci.analysis.lecture_record import AuditView
from jaxci.report import actions, answers
from jaxci.report import memory_advice as ma
from jaxci.report.question import Answer, Context, Status
from jaxci.report.text import seconds
from jaxci.util import quoting

MEASURED, PREDICTED, NOT_MEASURED = Status.MEASURED, Status.PREDICTED, Status.NOT_MEASURED
DENSE_N = 4096                 # the dense suite's largest size: the FP64 ratio is read there


# ---- the rules, one per question (the registry's `rule`) ---------------------------------------------------

def fp64(ctx: Context) -> Answer:
    return _fp64(ctx.report, ctx.family, ctx.entry)


def crossover(ctx: Context) -> Answer:
    """The break-even size, with the lectures to pin on a GPU family (the audit's placements)."""
    return _then(_crossover(ctx.report, ctx.family, ctx.entry),
                 actions.pins_text(ctx.view, ctx.family, ctx.entry.has_gpu))


def concurrency(ctx: Context) -> Answer:
    return _concurrency(ctx.report, ctx.family, ctx.entry, ctx.view)


def sampler(ctx: Context) -> Answer:
    return _sampler(ctx.report, ctx.family, ctx.entry)


def environment(ctx: Context) -> Answer:
    return _environment(ctx.report, ctx.family, ctx.entry, *ma.kernels(ctx.report, ctx.family, ctx.entry, ctx.view))


def cost(ctx: Context) -> Answer:
    """The build's minutes and dollars, with the cheaper families' prices unless the row already prices its
    partner family."""
    found = _cost(ctx.report, ctx.family, ctx.entry, ctx.view)
    return found if found.prices_alternative else _then(found, actions.cheaper(ctx.report.catalogue, ctx.family))


def hygiene(ctx: Context) -> Answer:
    return _hygiene(ctx.report, ctx.family, ctx.entry, ctx.view)


def _then(answer: Answer, action: str) -> Answer:
    """The answer with one more action after its decision ("" adds nothing)."""
    return dataclasses.replace(answer, decision=f"{answer.decision}; {action}") if action else answer


# ---- what the rules share ----------------------------------------------------------------------------------

def _band(p, fmt=seconds) -> str:
    if p.low is None or p.high is None:
        return ""
    return f"band {fmt(p.low)} .. {fmt(p.high)}"


def _short_inputs(text: str, limit: int = 260) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit].rsplit(" ", 1)[0] + " …"


def _jax(report, machine) -> str:
    versions = sorted({r.jax_version for r in report.records if r.machine == machine})
    return f"JAX {', '.join(versions)}" if versions else "JAX version unknown"


def _fp64(report, family, entry) -> Answer:
    dev = "gpu" if entry.has_gpu else "cpu"
    rows = [s for s in report.fp64_summary if s.machine == family and s.device == dev]
    if rows:
        r = median([s.ratio for s in rows])
        return Answer(f"{dev} float64 costs {r:.1f}x float32 (median of {len(rows)} kernels)",
                      MEASURED, f"on {family}, {_jax(report, family)}", number=f"float64 {r:.1f}x float32")
    p64 = report.model.predict(family, "matmul", DENSE_N, "float64", dev)
    p32 = report.model.predict(family, "matmul", DENSE_N, "float32", dev)
    if not (p64 and p32):
        return Answer("—", NOT_MEASURED, f"{p64.reason or p32.reason}; measure: "
                      f"`JAXCI_MACHINE={family} bash scripts/bench.sh` on {family}")
    ratio = p64.seconds / p32.seconds
    lo, hi = p64.low / p32.high, p64.high / p32.low
    what = f"float64 matmul at n = {DENSE_N:,} ≈ {ratio:.0f}x float32 ({lo:.0f}-{hi:.0f}x)"
    if dev == "gpu":
        fp32, fp64 = entry.value("gpu_fp32_tflops"), entry.value("gpu_fp64_tflops")
        peak = f", FP64:FP32 peak 1:{fp32 / fp64:.0f} (catalogue)" if fp32 and fp64 else ""
        cpu64 = report.model.predict(family, "matmul", DENSE_N, "float64", "cpu")
        overlap = cpu64 and None not in (cpu64.low, cpu64.high, p64.low, p64.high) and \
            cpu64.low <= p64.high and p64.low <= cpu64.high
        cpu_s = cpu64.seconds if cpu64 else None
        figures = (f" (float64 matmul at n = {DENSE_N:,}: {seconds(cpu_s)} on its CPU vs {seconds(p64.seconds)} on "
                   "its GPU)" if cpu_s is not None else "")
        answer = actions.float64_default(cpu_s, p64.seconds, bool(overlap), figures)
        text = f"{answer}; keep GPU lectures float32 (`jax_enable_x64` off): {what}{peak}"
    else:
        text = (f"{actions.float64_default(None, None, False)}: float64 is affordable on this CPU, keep "
                f"`jax_enable_x64` where a lecture needs it ({what})")
    return Answer(text, PREDICTED, f"{_band(p64)} (float64); inputs: {_short_inputs(p64.inputs)}",
                  sources=p64.sources | p32.sources,
                  number=f"float64 {ratio:.0f}x float32 (matmul n = {DENSE_N:,})")


def _crossover(report, family, entry) -> Answer:
    if not entry.has_gpu:
        gpu = next((p for p in report.predicted_crossovers if p.family == "g4dn.2xlarge" and p.kind == cx.CROSSING
                    and p.benchmark.startswith("dense.") and p.dtype == "float32"), None)
        extra = (f"; a GPU family pays for dense work from about n ≈ {gpu.n:,.0f} (predicted for g4dn.2xlarge, "
                 "its own CPU vs its GPU)") if gpu else ""
        return Answer(f"no GPU: every lecture runs on the CPU (`JAX_PLATFORMS=cpu`){extra}",
                      PREDICTED if gpu else MEASURED, "catalogue: no GPU on this family"
                      + (f"; inputs: {_short_inputs(gpu.inputs, 160)}" if gpu else ""))
    own = [c for c in report.crossovers if c.cpu_machine == c.gpu_machine == family and c.kind == cx.CROSSING]
    if own:
        c = min(own, key=lambda c: c.n)
        return Answer(
            f"GPU for {answers._short(c.kernel)} {c.dtype} from n ≈ {c.n:,.0f}; smaller arrays and "
            "scalar loops on the CPU", MEASURED, f"on {family}, {_jax(report, family)}", number=f"n ≈ {c.n:,.0f}")
    pred = [p for p in report.predicted_crossovers if p.family == family and p.kind == cx.CROSSING]
    if not pred:
        return Answer("—", NOT_MEASURED, f"no GPU line to predict from: `JAXCI_MACHINE={family} bash "
                      "scripts/bench.sh` on the family")
    dense = [p for p in pred if p.benchmark.startswith("dense.") and p.dtype == "float32"] or pred
    p = min(dense, key=lambda p: p.n)
    band = (f"band n ≈ {p.low:,.0f} .. {p.high:,.0f}" if p.low and p.high else
            f"band from n ≈ {p.low:,.0f}, no latest crossing in range" if p.low else "")
    ew = next((q for q in pred if q.benchmark.startswith("elementwise.") and q.dtype == "float32"), None)
    more = f"; elementwise maps from n ≈ {ew.n:,.0f} elements" if ew else ""
    basis = "; ".join(x for x in (band, f"inputs: {_short_inputs(p.inputs)}") if x)
    return Answer(f"GPU for {answers._short(p.kernel)} {p.dtype} from n ≈ {p.n:,.0f}{more}; below that "
                  "and for scalar loops, pin to the CPU", PREDICTED, basis, sources=p.sources,
                  number=f"n ≈ {p.n:,.0f}")


def _concurrency(report, family, entry, audit: AuditView | None = None) -> Answer:
    """Question 3 through the one rule (jaxci.policy.concurrency.decide), in each engine's terms: the family's own
    measurement when it has one, else the policy a GPU measured surviving, sized by the lectures' own measured need
    (memory_advice): never from the suite's synthetic worker peak."""
    found = ma.answers(report, family, entry, audit)
    if not entry.has_gpu:
        return Answer("no GPU: no device-memory policy; parallel notebooks are bounded by the "
                      f"{entry.value('vcpu') or '?'} vCPUs and RAM: " + ma.engine_text(found), NOT_MEASURED,
                      f"measure: `asv run --bench '^concurrency\\.' --machine {family}` on the family")
    if any(s.machine == family for s in ma.measured_on_gpu(report)):  # the family measured its own
        a = found[0]
        return Answer(
            f"policy `{a.policy}`: up to {a.n} notebooks at once: " + ma.engine_text(found), MEASURED,
            f"on {family}, {_jax(report, family)}; `jaxci env --machine {family} --kernels {a.n} "
            f"--results {report.results_dir}`", number=f"{a.n} notebooks at once")
    text, status, basis = ma.unmeasured_gpu(report, family, entry, found, audit, jax=lambda m: _jax(report, m))
    number = f"{found[0].n} notebooks at once" if found else ""
    return Answer(text, status, basis, number=number)


def _sampler(report, family, entry) -> Answer:
    cmd = f"`asv run --bench '^nuts\\.' --machine {family}` (full scale) on the family"
    own = _chain_rows(report, family)
    if own:
        best, table = _chain_methods(own)
        where = "; ".join(f"on the {d.upper()} `chain_method='{m}'` with {c} chains ({e:.3g} ESS/s)"
                          for d, ((m, c), e) in best.items())
        number = "; ".join(f"{d.upper()} {e:.3g} ESS/s" for d, (_, e) in best.items())
        return Answer(where, MEASURED, f"on {family}: {table}", number=number)
    machines = sorted({r.machine for r in report.nuts if r.machine != family and _chain_rows(report, r.machine)})
    seen = "; chain method not decided: no machine measured one"
    if machines:
        best, table = _chain_methods(_chain_rows(report, machines[0]))
        methods = {mc for mc, _ in best.values()}
        decided = (f"chain method `{next(iter(methods))[0]}` with {next(iter(methods))[1]} chains: the best on every "
                   f"device measured" if len(methods) == 1 else "chain method: the best differs by device")
        seen = (f"; measured on {machines[0]} ({_jax(report, machines[0])}, the small model, not the lecture's): "
                f"{table}; {decided}")
    predicted = _nuts_device(report, family, entry)
    if predicted:
        text = predicted[0] + (f"; {decided}" if machines else "")
        return Answer(text, PREDICTED, f"{predicted[1]}{seen}; measure {cmd}", sources=predicted[3],
                      number=predicted[2])
    p = report.model.predict(family, "nuts", NUTS_ITERATIONS, "float64", "gpu" if entry.has_gpu else "cpu")
    why = p.reason.split(";")[0] if not p else ""
    return Answer(
        "not decided for this family: keep the lecture's own setting until measured", NOT_MEASURED,
        f"measure: {cmd}{seen}" + (f"; model: {why}" if why else ""))


def _chain_rows(report, machine: str) -> list:
    """The machine's measured NUTS rows (at least 100 draws: a stable ESS/s)."""
    return [r for r in report.nuts if r.machine == machine and r.best and dict(r.setting).get("draws", 0) >= 100]


def _chain_methods(rows) -> tuple[dict, str]:
    """(device -> the best (chain method, chains) and its ESS/s, the measured table as one line: per device and
    setting, every configuration's ESS/s, best first)."""
    best: dict = {}
    parts: list = []
    for r in sorted(rows, key=lambda r: str(r.setting)):
        setting = dict(r.setting)
        device = setting.get("device", "?")
        if device not in best or r.best[1] > best[device][1]:
            best[device] = r.best
        cells = sorted(((v, m, c) for (m, c), v in r.configs.items() if v is not None), reverse=True)
        parts.append(f"{device.upper()} ({setting.get('model')}, {setting.get('dtype')}, {setting.get('draws')} "
                     f"draws): " + ", ".join(f"{m} x{c} {v:.3g}" for v, m, c in cells) + " ESS/s")
    return best, "; ".join(parts)


#: the incident's NUTS run (docs/reference/incidents.md, incident 2): 4 chains x (400 warm-up + 400 samples)
NUTS_ITERATIONS = 4 * 800


def _nuts_device(report, family, entry) -> tuple[str, str, str, frozenset] | None:
    """Which device the incident-shaped NUTS run belongs on, from the runner model's predictions on the
    family's CPU and GPU (float64): (decision, basis, number, sources); None when the model cannot predict the CPU
    side."""
    cpu = report.model.predict(family, "nuts", NUTS_ITERATIONS, "float64", "cpu")
    if not cpu:
        return None
    gpu = report.model.predict(family, "nuts", NUTS_ITERATIONS, "float64", "gpu") if entry.has_gpu else None
    shape = "the incident's model (k = 11, 96 quarters, 4 chains x 800 iterations, float64)"
    basis = f"{shape}: CPU {seconds(cpu.seconds)} ({_band(cpu)})"
    number = f"CPU {seconds(cpu.seconds)}" + (f" vs GPU {seconds(gpu.seconds)}" if gpu else "")
    if not gpu:
        return (f"NUTS on the CPU: predicted {seconds(cpu.seconds)} for {shape}",
                basis + f"; inputs: {_short_inputs(cpu.inputs, 200)}", number, cpu.sources)
    sources = cpu.sources | gpu.sources
    basis += f", GPU {seconds(gpu.seconds)} ({_band(gpu)}); inputs: {_short_inputs(gpu.inputs, 200)}"
    if cpu.high is not None and gpu.low is not None and cpu.high < gpu.low:
        return (f"pin NUTS lectures shaped like the incident's to the CPU, {actions.pin_short()}: predicted "
                f"{seconds(cpu.seconds)} on its CPU against {seconds(gpu.seconds)} on its GPU; a lecture whose own "
                "published GPU seconds beat its predicted CPU seconds stays (the one pin rule, row 2)", basis, number,
                sources)
    if gpu.high is not None and cpu.low is not None and gpu.high < cpu.low:
        return (f"NUTS on the GPU: predicted {seconds(gpu.seconds)} against {seconds(cpu.seconds)} on its CPU", basis,
                number, sources)
    return (f"either device: the predicted bands overlap (CPU {seconds(cpu.seconds)}, GPU {seconds(gpu.seconds)})",
            basis, number, sources)


def _environment(report, family, entry, kernels: int = 1, engine: str = "") -> Answer:
    """The jax-env action with the inputs row 3 advises for the engine the repositories build with, and every
    variable it then sets (jaxci env's own)."""
    from jaxci.policy.concurrency import ENGINE_NAMES

    dev = "gpu" if entry.has_gpu else "cpu"
    env = actions.env_text(family, entry.has_gpu, kernels, entry.value("gpu_memory_mib"))
    if engine and entry.has_gpu:
        env += f" (`concurrency` as row 3 gives it for {ENGINE_NAMES[engine]}, the audited repositories' engine)"
    saved = [r for r in report.suite_records("compile") if r.ok and r.method == "track_compile_saved_s"
             and r.params.get("dtype") == "float32" and r.params.get("device") == dev]   # never a TPU's for a GPU
    here = [r for r in saved if r.machine == family]
    if here:
        r = max(here, key=lambda r: r.value)
        return Answer(
            env, MEASURED, f"the cache saved {seconds(r.value)} on a fresh-jit series on {family}",
            number=f"cache saves {seconds(r.value)}")
    p = report.model.predict(family, "matmul", 1000, "float32", dev, compile_only=True)
    basis = []
    if p:
        basis.append(f"predicted compile {seconds(p.seconds)} per fresh jit ({_band(p)}); inputs: "
                     f"{_short_inputs(p.inputs, 160)}")
    if saved:
        r = max(saved, key=lambda r: r.value)
        basis.append(f"cache saving measured on {r.machine} ({r.params.get('device')}, {_jax(report, r.machine)}, "
                     f"another machine): {seconds(r.value)}")
    if not basis:
        return Answer(env, NOT_MEASURED, f"measure: `asv run --bench '^compile\\.' --machine {family}`")
    return Answer(env, PREDICTED, "; ".join(basis), sources=p.sources if p else frozenset(),
                  number=f"compile {seconds(p.seconds)} per fresh jit" if p else "")


def _cost(report, family, entry, audit: AuditView | None) -> Answer:
    from jaxci.policy import builds as buildcost

    price = entry.value("price_per_hour")
    if audit is None and report.audits:  # the committed audits of real repositories (audits/)
        from jaxci.report.repo_builds import cost_row

        committed = cost_row(report, family, entry)
        if committed is not None:
            text, basis, number = committed
            return Answer(text, PREDICTED, basis, number=number)
    build = buildcost.family_build(audit, family, entry.has_gpu) if audit is not None else None
    if audit is None or build is None or price is None:   # audit named again: the type checker reads it so
        return _cost_without_audit(report, family, entry, price)
    own = buildcost.job_dollars(build.seconds, entry)
    gpu_part = f", {build.on_gpu} on its GPU" if entry.has_gpu else ""
    text = (f"one build of {build.lectures} lectures{gpu_part} ≈ {build.seconds / 60:.1f} min "
            f"({build.low / 60:.1f}-{build.high / 60:.1f}) ≈ ${own:.2f}")
    if build.published:
        pub = build.published
        text += (f"; published on {family}: {pub.seconds / 60:.1f} min for {pub.lectures} of these lectures "
                 f"(predicted {pub.predicted / 60:.1f} min for the same, x{pub.predicted / pub.seconds:.2f}; "
                 f"{', '.join(pub.sources) or 'source not named'})")
    other = buildcost.partner(audit, report.catalogue, family)
    if other:
        o_entry = report.catalogue[other]
        gpu_f, cpu_f = (family, other) if entry.has_gpu else (other, family)
        alone = buildcost.family_build(audit, other, o_entry.has_gpu)
        if alone is not None:  # `partner` names a family with predictions: it has a build
            alone_usd = buildcost.job_dollars(alone.seconds, o_entry)
            text += f"; {other} alone ≈ {alone.seconds / 60:.1f} min ≈ ${alone_usd:.2f}"
        split = buildcost.split_build(audit, gpu_f, cpu_f, report.catalogue)
        if split:
            text += (f"; split ({split.gpu.lectures} GPU-faster lecture(s) on {gpu_f}, {split.cpu.lectures} on "
                     f"{cpu_f}, two jobs) ≈ {split.wall_s / 60:.1f} min wall ≈ ${split.dollars:.2f}")
    missing = f"; {len(build.missing)} lecture(s) without a prediction left out" if build.missing else ""
    basis = (f"the audit's per-lecture predictions for {family} (runner model, from its executed run; each "
             f"lecture on its faster device); band = sum of the lecture bands; ${price:.3f}/h catalogue + "
             f"{buildcost.overhead_minutes():g} min job overhead per job (catalogue planning figure){missing}")
    return Answer(text, PREDICTED, basis, number=f"{build.seconds / 60:.1f} min ≈ ${own:.2f}",
                  prices_alternative=bool(other))


def _cost_without_audit(report, family, entry, price) -> Answer:
    """Row 6 before any audit: the build published on the family's own hardware (a labelled published measurement,
    priced), and which families' CPUs the runner model cannot tell apart."""
    from jaxci.policy import builds as buildcost

    command = buildcost.AUDIT_FOR.format(family=family)
    hourly = f"${price:.3f}/h" if price is not None else "no catalogue price"
    twins = buildcost.cpu_twins(report.model, report.catalogue, family)
    alike = (f"; the runner model cannot tell this family's CPU from {', '.join(twins)} (the same CPU inputs: "
             f"physical cores, no sourced clock or vector width to separate them), so CPU lecture minutes would be "
             "predicted alike" if twins else "")
    pub = buildcost.published_build(entry)
    measure = (f"for your repository: `{command}`, then `jaxci report RESULTS --audit audit.json`; the benchmark "
               "suite's own job cost is [a separate section](#the-benchmark-suite-itself)")
    if pub is None:
        return Answer(f"{hourly}: lecture build minutes not measured on this family{alike}", NOT_MEASURED,
                      f"not measured: no build published on {family}; {measure}")
    dollars = buildcost.job_dollars(pub.seconds, entry) if price is not None else None
    count = f"{pub.notebooks} notebooks" if pub.notebooks else "a lecture site"
    text = (f"{hourly}: a published build of {count} executed in {pub.seconds / 60:.0f} min on this family"
            + (f" ≈ ${dollars:.2f} with the job overhead" if dollars is not None else "")
            + f" (notebook execution only, one at a time){alike}")
    return Answer(text, MEASURED, number=f"{pub.seconds / 60:.0f} min (published)",
                  basis=f"published, not measured here: {pub.source}; job overhead "
                  f"{buildcost.overhead_minutes():g} min (catalogue planning figure); {measure}")


def _hygiene(report, family, entry, audit: AuditView | None) -> Answer:
    """Row 7 by the one timeout rule (jaxci.policy.timeouts.from_audit): per-lecture `execution: timeout:` for the
    timed lectures that need more than they have, the book's own value kept unless every lecture is timed, the
    job's timeout-minutes from the same predicted build; nothing lowered without a measurement."""
    from jaxci.catalogue import catalogue_defaults
    from jaxci.policy import builds, timeouts

    gate = "by engine: " + "; ".join(timeouts.engine_hygiene(e) for e in timeouts.FAIL_ONCE)
    view = audit if audit is not None else AuditView()
    advice = timeouts.from_audit(view, family, entry.has_gpu, catalogue_defaults())
    own = (f"own `{advice.book_current_s:g}` s ({quoting.cell(advice.book_origin)})" if advice.book_current_s
           else "own value")
    measure = f"`{builds.AUDIT_FOR.format(family=family)}`, then `jaxci report RESULTS --audit audit.json`"
    if not advice.lectures:
        return Answer(
            f"per-cell: keep the repository's {own}; job: keep its own `timeout-minutes`; {gate}",
            NOT_MEASURED, f"no lecture timed, and no advice lowers a timeout without a measurement of "
            f"the lecture it would cut: {measure} (rule: {timeouts.rule_text()}, at the high end of "
            "the lecture's predicted band on the family); fixture notebooks never size a timeout")
    predicted = any(builds.prediction(lec, family) for lec in view.lectures)
    if advice.book_s is not None and advice.book_s != advice.book_current_s:
        book = f"book-wide `timeout: {advice.book_s}` s (every lecture timed; the repository has its {own})"
        per = []
    else:
        book = f"book-wide: keep the repository's {own}"
        per = advice.raised if advice.book_current_s is not None else advice.lectures
    lectures = "; ".join(f"{quoting.code(t.path)}: `execution: timeout: {t.seconds}` in its front matter" for t in per)
    job = (f"job `timeout-minutes: {advice.job_minutes}`" if advice.job_minutes is not None else
           f"job: keep its own `timeout-minutes` ({len(advice.job_missing)} lecture(s) without a prediction for "
           f"{family}: the build is not predicted whole)")
    text = "; ".join(x for x in (lectures, book, job, gate) if x)
    worst = max(advice.lectures, key=lambda t: t.slowest_high_s)
    unmeasured = (f"; not timed, so never cut: {', '.join(quoting.code(p) for p in advice.unmeasured)}"
                  if advice.unmeasured else "")
    basis = (f"rule: {timeouts.rule_text()}, the cell at the high end of the lecture's predicted band on {family} "
             f"(slowest: {quoting.code(worst.path)} {worst.slowest_high_s:,.0f} s -> {worst.seconds:,} s); job: "
             f"ceil((overhead + the predicted build's high end) x margin) (jaxci.workflows.jobcost.job_timeout)"
             f"{unmeasured}")
    number = (f"job timeout-minutes {advice.job_minutes}" if advice.job_minutes is not None else
              f"slowest cell {worst.slowest_high_s:,.0f} s -> timeout {worst.seconds:,} s")
    return Answer(text, PREDICTED if predicted else MEASURED, basis, number=number)
