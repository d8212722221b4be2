"""findings.md (the seven questions answered from the results) and guidance.md (for lecture authors).

Every number names where it was measured (machine, JAX version, date); missing data reads "not measured";
predicted numbers say "predicted" and carry their inputs.
"""

from __future__ import annotations

from jaxci.analysis import crossover as cx
from jaxci.analysis import median
from jaxci.report.text import NM, dollars, num, pct, seconds, table


def _machines(report) -> str:
    rows = []
    for name, f in sorted(report.machines.items()):
        recs = [r for r in report.records if r.machine == name]
        ok = sum(r.ok for r in recs)
        jax = sorted({f"{r.jax_version} ({r.jax_source})" for r in recs})
        dates = sorted({r.date[:10] for r in recs})
        rows.append([name, f.get("jaxci_kind"), f.get("gpu"), f.get("cpu"), f.get("cpu_cores"), f.get("jaxci_backend"),
                     "; ".join(jax) or NM, ", ".join(dates) or NM, f"{ok} of {len(recs)}"])
    return table(["machine", "kind", "gpu", "cpu", "cores", "backend", "JAX", "date", "measured combos"], rows)


def _crossover_rows(items):
    return [[c.kernel, c.dtype, c.cpu_machine if c.cpu_machine == c.gpu_machine else f"cpu: {c.cpu_machine} / gpu: {c.gpu_machine}",
             c.answer(), ", ".join(f"{n:,}" for n, *_ in c.points) or "—", c.note or c.provenance] for c in items]


def crossover_table(report) -> str:
    return table(["kernel", "dtype", "machine(s)", "crossover (measured)", "sizes used", "provenance / note"],
                 _crossover_rows(report.crossovers))


def predicted_crossover_table(report) -> str:
    rows = []
    for p in report.predicted_crossovers:
        if p.kind == cx.NOT_MEASURED:
            ans = "not predicted"
        elif p.kind == cx.CROSSING:
            ans = f"predicted n ≈ {p.n:,.0f}"
        else:
            ans = f"predicted: {p.kind}"
        meas = p.measured.answer() if p.measured is not None else NM
        rows.append([p.family, p.kernel, p.dtype, ans, meas, p.inputs])
    return table(["family", "kernel", "dtype", "predicted", "measured", "inputs"], rows)


def fp64_table(report) -> str:
    rows = [[s.machine, s.kernel, s.device, f"{s.ratio:.2f}", " ".join(f"{k}={v}" for k, v in s.at.items()) or "—",
             f"{s.low:.2f}–{s.high:.2f} ({s.count})", s.provenance] for s in report.fp64_summary]
    return table(["machine", "kernel", "device", "float64/float32", "at", "range (sizes)", "provenance"], rows)


def _fp64_answer(report) -> str:
    lines = []
    by = {}
    for s in report.fp64_summary:
        by.setdefault((s.machine, s.device), []).append(s.ratio)
    for (machine, device), vals in sorted(by.items()):
        lines.append(f"- {machine} {device}: median float64/float32 time ratio {median(vals):.2f} over {len(vals)} kernels "
                     f"(largest {max(vals):.2f}).")
    if not any(d == "gpu" for _, d in by):
        lines.append("- gpu: not measured (no GPU machine in these results).")
    return "\n".join(lines) or NM


def _concurrency(report) -> str:
    if not report.concurrency:
        return NM + " (no concurrency suite results)."
    rows = [[c.machine, c.device, c.policy, c.n_workers, c.status, num(c.values.get("slowdown")),
             num(c.values.get("peak_mib"), "{:.0f}"), c.provenance or NM] for c in report.concurrency]
    safe = [f"- {m} {d}, policy {p}: largest safe N = {n if n is not None else 'none measured safe'}"
            for (m, d, p), n in sorted(report.safe_n.items())]
    return table(["machine", "device", "policy", "N", "outcome", "slowdown", "peak MiB", "provenance"], rows) + "\n\n" + "\n".join(safe)


def _nuts(report) -> str:
    if not report.nuts:
        return NM + " (no nuts suite results)."
    rows = []
    for row in report.nuts:
        setting = " ".join(f"{k}={v}" for k, v in row.setting)
        for (method, chains), ess in sorted(row.configs.items(), key=str):
            ex = row.extras.get((method, chains), {})
            rows.append([row.machine, setting, method, chains, num(ess), num(ex.get("leapfrog_per_s")),
                         seconds(ex.get("wall_s")), row.provenance])
    best = []
    for row in report.nuts:
        b = row.best
        setting = " ".join(f"{k}={v}" for k, v in row.setting)
        best.append(f"- {row.machine} {setting}: " + (f"best {b[0][0]} x {b[0][1]} chains at {b[1]:.3g} ESS/s" if b else NM))
    return table(["machine", "setting", "chain_method", "chains", "ESS/s", "leapfrog/s", "wall", "provenance"], rows) + "\n\n" + "\n".join(best)


def _cold(report) -> str:
    rows = [[c.machine, c.suite, " ".join(f"{k}={v}" for k, v in c.params.items()), seconds(c.first_call),
             seconds(c.compile), f"{c.share:.0%}", c.provenance] for c in report.cold]
    return table(["machine", "suite", "params", "cold first call", "compile (trace+lower+backend)", "compile share", "provenance"], rows)


def _generic(report, suite: str, what: str) -> str:
    recs = report.suite_records(suite)
    if not recs:
        return f"{NM} (no {suite} suite results)."
    rows = [[r.machine, r.benchmark, " ".join(f"{k}={v}" for k, v in r.params.items()),
             (num(r.value) + " " + r.unit) if r.ok else r.status, r.provenance()] for r in recs]
    return f"{what}\n\n" + table(["machine", "benchmark", "params", "value", "provenance"], rows)


def _device_ratios(report) -> str:
    rows = [[d.machine, d.benchmark, " ".join(f"{k}={v}" for k, v in d.params) or "—", seconds(d.cpu), seconds(d.gpu),
             f"{d.ratio:.2f}", "pin to CPU" if d.ratio > 1 else "GPU helps", d.provenance] for d in report.device_ratios]
    return table(["machine", "benchmark", "params", "cpu", "gpu", "gpu/cpu", "verdict", "provenance"], rows)


def _costs(report) -> str:
    rows = []
    for c in report.costs:
        suites = ", ".join(f"{s} {dollars(d)}" for s, d in sorted(c.suite_dollars().items())) or "—"
        label = c.label if c.label != "measured" else f"measured ({c.scale} scale)"
        if c.label == "predicted":
            label = f"predicted ({c.scale} scale)"
        rows.append([c.family, num(c.price_per_hour, "${:.4g}/h"), label, seconds(c.suite_seconds), dollars(c.job_dollars),
                     suites, dollars(c.predicted_job_dollars) if c.label == "measured" else "—", pct(c.error), c.inputs])
    return table(["family", "price", "label", "suite time", "job $", "per workload", "predicted job $", "error", "inputs"], rows)


def _achieved(report) -> str:
    rows = [[a.machine, a.benchmark.split(".")[0], " ".join(f"{k}={v}" for k, v in a.params.items()), seconds(a.seconds),
             f"{a.rate:.3g} {a.unit}", num(a.peak, "{:.4g}"), "—" if a.fraction is None else f"{a.fraction:.1%}",
             a.note if a.peak is None else a.peak_key] for a in report.achieved]
    return table(["machine", "kernel", "params", "time", "achieved", "catalogue peak", "fraction", "peak source"], rows)


def _incidents(report) -> str:
    if not report.incidents:
        return "No incident figures found (docs/reference/incidents.md)."
    rows = [[i["what"], i["family"], i["device"], seconds(i["incident_s"]),
             ("predicted " + seconds(i["predicted_s"])) if i["predicted_s"] is not None else "not predicted", i["inputs"]]
            for i in report.incidents]
    return ("Published incident timings beside this model's predictions: an outside check only, never an input.\n\n"
            + table(["incident", "family", "device", "published", "model", "inputs"], rows))


def _runtimes(report, limit_per_family=None) -> str:
    rows = []
    for p in report.runtimes:
        if p.seconds is None and p.measured is None:
            continue
        rows.append([p.family, p.kernel, p.dtype, p.device, f"{p.n:,}",
                     ("predicted " + seconds(p.seconds)) if p.seconds is not None else "not predicted",
                     seconds(p.measured), pct(p.error)])
    return table(["family", "kernel", "dtype", "device", "n", "predicted", "measured", "error"], rows)


def findings_md(report) -> str:
    errors = "\n".join(f"- {e}" for e in report.errors) or "- none"
    loops = [c for c in report.crossovers if c.benchmark.startswith("loops.")]
    return f"""# Findings

Generated {report.generated} by `jaxci report {report.results_dir}` from asv results. Every number below was
measured on the machine, JAX version and date named beside it; "not measured" means there are no results for it;
"predicted" numbers come from the model in docs/findings.md and list their inputs.

## Machines

{_machines(report)}

Problems reading the results (those files or cells are left out, the rest is used):

{errors}

## 1. FP64 penalty on the real workload shapes

{_fp64_answer(report)}

{fp64_table(report)}

## 2. Size where the GPU breaks even

Measured: where the gpu median becomes faster than the cpu median, interpolated on a log scale between measured sizes.

{crossover_table(report)}

Predicted for runner families (labelled, with inputs; a measured crossover stands beside it when one exists):

{predicted_crossover_table(report)}

{_incidents(report)}

## 3. Safe concurrency and memory policy

{_concurrency(report)}

## 4. Sampler configuration

{_nuts(report)}

## 5. Standard CI environment

Compile share of a cold first call (compile seconds from jax.monitoring in one fresh process, first call in another):

{_cold(report)}

{_generic(report, "compile", "Compile suite (persistent compilation cache):")}

## 6. Instance fit

Cost per runner family (job = catalogue overhead + asv suite wall time, billed with the catalogue minimum):

{_costs(report)}

Achieved fraction of catalogue peak:

{_achieved(report)}

## 7. Failure hygiene

{_generic(report, "notebooks", "Per-cell times from the notebook suite:")}

GPU vs CPU time of whole notebooks and unsized kernels on the same machine (above 1: the GPU is slower):

{_device_ratios(report)}

Latency-bound loops, where a GPU pays a launch per iteration:

{table(["kernel", "dtype", "machine(s)", "crossover (measured)", "sizes used", "provenance / note"], _crossover_rows(loops))}
"""


def _gpu_advice(report) -> list[str]:
    lines = []
    for c in report.crossovers:
        if c.kind == cx.CROSSING:
            lines.append(f"- **{c.kernel}** ({c.dtype}): the GPU wins from n ≈ {c.n:,.0f} "
                         f"({'on ' + c.gpu_machine if c.cpu_machine == c.gpu_machine else c.gpu_machine + ' gpu vs ' + c.cpu_machine + ' cpu'}; {c.provenance}).")
        elif c.kind == cx.GPU_ALWAYS:
            lines.append(f"- **{c.kernel}** ({c.dtype}): the GPU wins at every measured size from n = {c.points[0][0]:,} ({c.provenance}).")
    return lines or ["- not measured: no result set has both a cpu and a gpu line of the same kernel yet."]


def _cpu_advice(report) -> list[str]:
    lines = []
    for c in report.crossovers:
        if c.kind == cx.NONE_IN_RANGE and c.points:
            worst = max(g / cpu for _, cpu, g in c.points)
            lines.append(f"- **{c.kernel}** ({c.dtype}): the CPU is faster at every measured size up to n = {c.points[-1][0]:,} "
                         f"(GPU up to {worst:.1f}x slower; {c.provenance}): pin this code to the CPU "
                         "(`jax.default_device(jax.devices('cpu')[0])` or `JAX_PLATFORMS=cpu` for the lecture).")
    for d in report.device_ratios:
        if d.ratio > 1:
            what = " ".join(f"{k}={v}" for k, v in d.params)
            lines.append(f"- **{d.benchmark} {what}**: {d.ratio:.1f}x slower on the GPU than on the CPU "
                         f"({d.provenance}): run it on the CPU.")
    return lines or ["- not measured: no kernel or notebook has been measured slower on the GPU than on the CPU yet."]


def guidance_md(report) -> str:
    fp64 = [s for s in report.fp64_summary if s.device == "gpu"]
    fp64_lines = [f"- {s.machine}: {s.kernel} costs {s.ratio:.1f}x in float64 ({s.provenance})." for s in fp64] or \
        ["- not measured on a GPU yet: keep float64 only where the lecture needs it, and measure."]
    nuts = []
    for row in report.nuts:
        b = row.best
        setting = " ".join(f"{k}={v}" for k, v in row.setting)
        nuts.append(f"- {row.machine} {setting}: " + (f"`chain_method='{b[0][0]}'` with {b[0][1]} chains gave the most "
                    f"effective samples per second ({b[1]:.3g}; {row.provenance})." if b else NM))
    safe = [f"- {m} ({d}): policy `{p}` kept every worker alive up to N = {n}." for (m, d, p), n in sorted(report.safe_n.items())
            if n is not None] or ["- not measured: run the concurrency suite on the GPU runner before raising notebook parallelism."]
    cells = [r for r in report.suite_records("notebooks") if r.ok and r.unit == "seconds"]
    slowest = max(cells, key=lambda r: r.value) if cells else None
    timeout = ([f"- The slowest measured notebook result is {seconds(slowest.value)} ({slowest.benchmark} "
                f"{' '.join(f'{k}={v}' for k, v in slowest.params.items())}, {slowest.provenance()}). "
                "Rule used here: a per-cell timeout of 3x the slowest measured notebook time on the slowest family you build on, "
                "and a job `timeout-minutes`, so a pathological cell fails fast instead of burning the runner."]
               if slowest else ["- not measured (no notebooks suite results): set a per-cell timeout and a job "
                                "`timeout-minutes` anyway; a failed notebook is never cached and is re-executed by every build."])
    return "\n".join([
        "# Guidance for lecture authors", "",
        f"Generated {report.generated} from the same results as findings.md; each line names where it was measured.", "",
        "## When the GPU helps", "", *_gpu_advice(report), "",
        "## When to pin a lecture or a function to the CPU", "", *_cpu_advice(report), "",
        "## Float64", "", *fp64_lines, "",
        "## Sampler settings", "", *(nuts or ["- not measured (no nuts suite results)."]), "",
        "## Several notebooks on one GPU", "", *safe, "",
        "## Timeouts", "", *timeout, ""])
