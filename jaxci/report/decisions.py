"""The decision sheet per catalogue family: the seven questions as seven decisions a maintainer can apply.

One sheet per runner family (`jaxci report --family NAME`, repeatable; by default the catalogue families the
results or the audit name, else g4dn.2xlarge and c7i.2xlarge). Every row is one decision, with where it comes
from: *measured* on that family; *predicted* by the runner model (jaxci.analysis.model, with its band and inputs);
or *not measured*, with the command that would measure it. Lab and local machines are evidence (below the sheets),
never a sheet's headline: a row that uses another machine's measurement names it, with its JAX version.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from jaxci.analysis import crossover as cx
from jaxci.analysis import median
from jaxci.report import answers
from jaxci.report.text import seconds

DEFAULT_FAMILIES = ("g4dn.2xlarge", "c7i.2xlarge")
MEASURED, PREDICTED, NOT_MEASURED = "measured", "predicted", "not measured"
DENSE_N = 4096                 # the dense suite's largest size: the FP64 ratio is read there
TIMEOUT_MARGIN = 3.0           # per-cell timeout = slowest real-lecture cell x 3, rounded up to a minute
MIN_TIMEOUT_S = 60             # never advise a per-cell timeout under a minute
UNMEASURED_TIMEOUT_S = 600     # jaxci env's default until the lectures' cells are measured
JOB_SETUP_MIN = 10             # checkout, install, cache restore: minutes added to a measured build
UNMEASURED_JOB_MIN = 90        # job timeout-minutes until a build is measured
AUDIT_CMD = "jaxci audit LECTURE_REPO --execute --format json > audit.json"


@dataclass
class Decision:
    q: int
    decision: str              # what to do (markdown inline)
    status: str                # measured | predicted | not measured
    basis: str                 # band and inputs, the machine measured on, or the command that would measure it

    @property
    def question(self) -> str:
        return answers.QUESTIONS[self.q][0]


@dataclass
class FamilySheet:
    family: str
    title: str
    price: float | None
    has_gpu: bool
    rows: list = field(default_factory=list)


def families(report, chosen=None, audit=None) -> list[str]:
    """The families to draw sheets for: those asked for, else those the results (or the audit) name, else the
    defaults (g4dn.2xlarge first)."""
    cat = report.catalogue
    if chosen:
        return list(dict.fromkeys(chosen))
    named = [m for m in report.machines if m in cat and not cat[m].is_lab]
    named += [f for f in (audit or {}).get("families", []) if f in cat]
    named = sorted(dict.fromkeys(named), key=lambda f: (not cat[f].has_gpu, f != "g4dn.2xlarge", f))
    return named or list(DEFAULT_FAMILIES)


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


def _measured_here(report, family) -> bool:
    return any(r.machine == family for r in report.records)


# ---- the seven rows ----------------------------------------------------------------------------------------

def _fp64(report, family, entry) -> Decision:
    dev = "gpu" if entry.has_gpu else "cpu"
    rows = [s for s in report.fp64_summary if s.machine == family and s.device == dev]
    if rows:
        r = median([s.ratio for s in rows])
        return Decision(1, f"{dev} float64 costs {r:.1f}x float32 (median of {len(rows)} kernels)",
                        MEASURED, f"on {family}, {_jax(report, family)}")
    p64 = report.model.predict(family, "matmul", DENSE_N, "float64", dev)
    p32 = report.model.predict(family, "matmul", DENSE_N, "float32", dev)
    if not (p64 and p32):
        return Decision(1, "—", NOT_MEASURED, f"{p64.reason or p32.reason}; measure: "
                        f"`JAXCI_MACHINE={family} bash scripts/bench.sh` on {family}")
    ratio = p64.seconds / p32.seconds
    lo, hi = p64.low / p32.high, p64.high / p32.low
    what = f"float64 matmul at n = {DENSE_N:,} ≈ {ratio:.0f}x float32 ({lo:.0f}-{hi:.0f}x)"
    if dev == "gpu":
        fp32, fp64 = entry.value("gpu_fp32_tflops"), entry.value("gpu_fp64_tflops")
        peak = f"; FP64:FP32 peak 1:{fp32 / fp64:.0f} (catalogue)" if fp32 and fp64 else ""
        cpu64 = report.model.predict(family, "matmul", DENSE_N, "float64", "cpu")
        where = ("run float64 lectures on its CPU (predicted faster there: "
                 f"{seconds(cpu64.seconds)} vs {seconds(p64.seconds)})" if cpu64 and cpu64.seconds < p64.seconds
                 else "float64 still fastest on its GPU, at that cost")
        text = f"keep GPU lectures float32 (`jax_enable_x64` off); {where}: {what}{peak}"
    else:
        text = f"float64 is affordable on this CPU: keep `jax_enable_x64` where a lecture needs it ({what})"
    return Decision(1, text, PREDICTED, f"{_band(p64)} (float64); inputs: {_short_inputs(p64.inputs)}")


def _crossover(report, family, entry) -> Decision:
    if not entry.has_gpu:
        gpu = next((p for p in report.predicted_crossovers if p.family == "g4dn.2xlarge" and p.kind == cx.CROSSING
                    and p.benchmark.startswith("dense.") and p.dtype == "float32"), None)
        extra = (f"; a GPU family pays for dense work from about n ≈ {gpu.n:,.0f} (predicted for g4dn.2xlarge, "
                 "its own CPU vs its GPU)") if gpu else ""
        return Decision(2, f"no GPU: every lecture runs on the CPU (`JAX_PLATFORMS=cpu`){extra}",
                        PREDICTED if gpu else MEASURED, "catalogue: no GPU on this family"
                        + (f"; inputs: {_short_inputs(gpu.inputs, 160)}" if gpu else ""))
    own = [c for c in report.crossovers if c.cpu_machine == c.gpu_machine == family and c.kind == cx.CROSSING]
    if own:
        c = min(own, key=lambda c: c.n)
        return Decision(2, f"GPU for {answers._short(c.kernel)} {c.dtype} from n ≈ {c.n:,.0f}; smaller arrays and "
                        "scalar loops on the CPU", MEASURED, f"on {family}, {_jax(report, family)}")
    pred = [p for p in report.predicted_crossovers if p.family == family and p.kind == cx.CROSSING]
    if not pred:
        return Decision(2, "—", NOT_MEASURED, f"no GPU line to predict from: `JAXCI_MACHINE={family} bash "
                        "scripts/bench.sh` on the family")
    dense = [p for p in pred if p.benchmark.startswith("dense.") and p.dtype == "float32"] or pred
    p = min(dense, key=lambda p: p.n)
    band = (f"band n ≈ {p.low:,.0f} .. {p.high:,.0f}" if p.low and p.high else
            f"band from n ≈ {p.low:,.0f}, no latest crossing in range" if p.low else "")
    ew = next((q for q in pred if q.benchmark.startswith("elementwise.") and q.dtype == "float32"), None)
    more = f"; elementwise maps from n ≈ {ew.n:,.0f} elements" if ew else ""
    return Decision(2, f"GPU for {answers._short(p.kernel)} {p.dtype} from n ≈ {p.n:,.0f}{more}; below that "
                    "and for scalar loops, pin to the CPU", PREDICTED, f"{band}; inputs: {_short_inputs(p.inputs)}")


def _concurrency(report, family, entry) -> Decision:
    if not entry.has_gpu:
        return Decision(3, "no GPU: no device-memory policy; parallel notebooks are bounded by the "
                        f"{entry.value('vcpu') or '?'} vCPUs and RAM", NOT_MEASURED,
                        f"measure: `asv run --bench '^concurrency\\.' --machine {family}` on the family")
    safe = {p: n for (m, d, p), n in report.safe_n.items() if m == family and d == "gpu" and n}
    if safe:
        p, n = max(safe.items(), key=lambda kv: kv[1])
        return Decision(3, f"policy `{p}`: up to {n} notebooks at once", MEASURED,
                        f"on {family}, {_jax(report, family)}; `jaxci env --machine {family} --kernels {n} "
                        f"--results {report.results_dir}`")
    peaks = [(c.values.get("peak_mib"), c.machine) for c in report.concurrency
             if c.device == "gpu" and c.values.get("peak_mib")]
    device_mib = entry.value("gpu_memory_mib")
    if not peaks or not device_mib:
        return Decision(3, "—", NOT_MEASURED, f"measure: `asv run --bench '^concurrency\\.' --machine {family}` "
                        "on the family")
    from jaxci.catalogue import load_policies
    from jaxci.ci.envadvice import recommend

    peak, src = max(peaks)
    policies, budget = load_policies()
    advice = recommend(3, peak_mib=peak, device_mib=device_mib, budget=budget, policies=policies,
                       cache_dir="~/.cache/jax")
    n = advice.safe_kernels or 1
    cmd = f"`jaxci env --machine {family} --kernels {n} --peak-mib {math.ceil(peak)}`"
    text = (f"at most {n} notebooks at once, each `XLA_PYTHON_CLIENT_PREALLOCATE=true` with "
            f"`XLA_PYTHON_CLIENT_MEM_FRACTION={advice.safe_fraction:.2f}`: {cmd}")
    return Decision(3, text, PREDICTED, f"peak {peak:,.0f} MiB per kernel measured on {src} ({_jax(report, src)}, "
                    f"another machine) x N within {budget:.2f} of {device_mib:,} MiB (catalogue); the fraction "
                    "policy has no GPU run: predicted by the memory model, not measured")


def _sampler(report, family, entry) -> Decision:
    cmd = f"`asv run --bench '^nuts\\.' --machine {family}` (full scale) on the family"
    rows = [r for r in report.nuts if r.machine == family and r.best and dict(r.setting).get("draws", 0) >= 100]
    if rows:
        r = max(rows, key=lambda r: r.best[1])
        (method, chains), ess = r.best
        return Decision(4, f"`chain_method='{method}'` with {chains} chains ({ess:.3g} ESS/s)", MEASURED,
                        f"on {family}: {' '.join(f'{k}={v}' for k, v in r.setting)}")
    other = [r for r in report.nuts if r.best and r.machine != family and dict(r.setting).get("draws", 0) >= 100]
    seen = ""
    if other:
        r = max(other, key=lambda r: r.best[1])
        (method, chains), ess = r.best
        setting = dict(r.setting)
        seen = (f"; elsewhere only the small {setting.get('model')} model was measured ({r.machine}, "
                f"{_jax(report, r.machine)}: {method} with {chains} chains, {ess:.3g} ESS/s): not the lecture model")
    p = report.model.predict(family, "nuts", 2000, "float64", "gpu" if entry.has_gpu else "cpu")
    why = p.reason.split(";")[0] if not p else ""
    return Decision(4, "not decided for this family: keep the lecture's own setting until measured", NOT_MEASURED,
                    f"measure: {cmd}{seen}" + (f"; model: {why}" if why else ""))


def _environment(report, family, entry) -> Decision:
    dev = "gpu" if entry.has_gpu else "cpu"
    cmd = f"`jaxci env --machine {family}`"
    env = ("the jax-env action (" + cmd + "): `JAX_COMPILATION_CACHE_DIR` kept between builds with "
           "`JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS=0` and `..._MIN_ENTRY_SIZE_BYTES=-1`")
    saved = [r for r in report.suite_records("compile") if r.ok and r.method == "track_compile_saved_s"
             and r.params.get("dtype") == "float32"]
    here = [r for r in saved if r.machine == family]
    if here:
        r = max(here, key=lambda r: r.value)
        return Decision(5, env, MEASURED, f"the cache saved {seconds(r.value)} on a fresh-jit series on {family}")
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
        return Decision(5, env, NOT_MEASURED, f"measure: `asv run --bench '^compile\\.' --machine {family}`")
    return Decision(5, env, PREDICTED, "; ".join(basis))


def lecture_times(audit: dict | None) -> dict:
    """From an audit JSON (`jaxci audit --execute --format json`): per lecture, its measured whole seconds and
    slowest cell per platform, and the predicted seconds per family where the audit gives them."""
    out = {}
    for lec in (audit or {}).get("lectures", []):
        runs = lec.get("runs") or {}
        measured = {}
        for platform, run in runs.items():
            cells = [c.get("wall_s") for c in run.get("cells", []) if isinstance(c.get("wall_s"), (int, float))]
            whole = run.get("wall_s") if isinstance(run.get("wall_s"), (int, float)) else (sum(cells) or None)
            if whole is not None:
                measured[platform] = (whole, max(cells) if cells else None, run.get("status", "ok"))
        predicted = lec.get("predicted") or {}
        out[lec.get("path", "?")] = {"measured": measured, "predicted": predicted, "status": lec.get("status")}
    return out


def _build_minutes(times: dict, family, entry):
    """(minutes, slowest cell s, how) of one sequential build on the family, measured or predicted; or None."""
    platform = "gpu" if entry.has_gpu else "cpu"
    total, slowest, n, how = 0.0, 0.0, 0, None
    for lec in times.values():
        pred = lec["predicted"].get(family) if isinstance(lec["predicted"], dict) else None
        if isinstance(pred, dict) and isinstance(pred.get("seconds"), (int, float)):
            total += pred["seconds"]
            slowest = max(slowest, pred.get("slowest_cell_s") or 0)
            how = how or PREDICTED
        elif platform in lec["measured"] or "cpu" in lec["measured"]:
            whole, cell, _ = lec["measured"].get(platform) or lec["measured"]["cpu"]
            total += whole
            slowest = max(slowest, cell or 0)
            how = MEASURED if how in (None, MEASURED) else how
        n += 1
    return (total / 60, slowest, how, n) if how else None


def _cost(report, family, entry, times) -> Decision:
    price = entry.value("price_per_hour")
    built = _build_minutes(times, family, entry) if times else None
    if built is None:
        return Decision(6, f"${price:.3f}/h: decide once a lecture build is timed" if price is not None else "—",
                        NOT_MEASURED, f"measure: `{AUDIT_CMD}` on {family}, then `jaxci report RESULTS --audit "
                        "audit.json`")
    minutes, _, how, n = built
    dollars = minutes / 60 * (price or 0)
    return Decision(6, f"one sequential build of {n} lectures ≈ {minutes:.1f} min ≈ ${dollars:.2f} at "
                    f"${price:.3f}/h", how, "the audit's executed run (its machine, not necessarily this family)"
                    if how == MEASURED else "the audit's per-lecture predictions (runner model)")


def _hygiene(report, family, entry, times) -> Decision:
    built = _build_minutes(times, family, entry) if times else None
    gate = ("fail once: `jaxci failures record --cache DIR --out known-failures.json` after the gating build; "
            "other builders run `jaxci failures skip --known known-failures.json --cache DIR` (skips a known "
            "failure until its notebook changes)")
    if built and built[1] > 0:
        minutes, slowest, how, _ = built
        cell = max(MIN_TIMEOUT_S, math.ceil(slowest * TIMEOUT_MARGIN / 60) * 60)
        job = math.ceil(minutes * 1.5) + JOB_SETUP_MIN
        return Decision(7, f"per-cell `timeout: {cell}` s; job `timeout-minutes: {job}`; {gate}", how,
                        f"rule: {TIMEOUT_MARGIN:g} x slowest real-lecture cell ({slowest:.1f} s), rounded up to a "
                        f"minute, at least {MIN_TIMEOUT_S} s; job: 1.5 x the build ({minutes:.1f} min) + "
                        f"{JOB_SETUP_MIN} min setup; raise a slow lecture's own timeout in its execution metadata")
    return Decision(7, f"per-cell `timeout: {UNMEASURED_TIMEOUT_S}` s; job `timeout-minutes: {UNMEASURED_JOB_MIN}`; "
                    f"{gate}", NOT_MEASURED, f"defaults until the lectures are timed: `{AUDIT_CMD}` on {family}, "
                    f"then `jaxci report RESULTS --audit audit.json` (rule: {TIMEOUT_MARGIN:g} x slowest cell, "
                    f"at least {MIN_TIMEOUT_S} s); fixture notebooks never size a timeout")


def sheet(report, family, times=None) -> FamilySheet:
    entry = report.catalogue.get(family)
    if entry is None:
        from jaxci.catalogue import load_catalogue

        entry = load_catalogue(include_lab=True)[family]
    price = entry.value("price_per_hour")
    hw = entry.value("gpu_model") if entry.has_gpu else "CPU only"
    measured = "measured here" if _measured_here(report, family) else "not measured here: predicted and defaults"
    title = (f"{family} ({hw}, {entry.value('vcpu') or '?'} vCPU, "
             f"{f'${price:.3f}/h' if price is not None else 'no price'}; {measured})")
    rows = [_fp64(report, family, entry), _crossover(report, family, entry), _concurrency(report, family, entry),
            _sampler(report, family, entry), _environment(report, family, entry),
            _cost(report, family, entry, times), _hygiene(report, family, entry, times)]
    return FamilySheet(family, title, price, entry.has_gpu, rows)


def sheets(report, chosen=None, audit=None) -> list[FamilySheet]:
    times = lecture_times(audit) if audit else None
    return [sheet(report, f, times) for f in families(report, chosen, audit)]


def sheet_md(s: FamilySheet) -> str:
    from jaxci.report.text import table

    rows = [[d.q, d.question, d.decision, d.status, d.basis] for d in s.rows]
    return f"### Decision sheet: {s.title}\n\n" + table(["#", "question", "decision", "status", "from"], rows)


def sheets_md(report, chosen=None, audit=None) -> str:
    return "\n\n".join(sheet_md(s) for s in sheets(report, chosen, audit)) + "\n"


def regressions(report) -> list:
    """Each regression between consecutive JAX releases once: the largest step per (machine, benchmark, from, to)."""
    groups: dict = {}
    for s in report.release_steps:
        if s.kind != "regression":
            continue
        key = (s.machine, s.benchmark, s.before, s.after)
        if key not in groups or s.ratio > groups[key].ratio:
            groups[key] = s
    return sorted(groups.values(), key=lambda s: -s.ratio)


def reproduce(step) -> str:
    return f"asv compare jax-v{step.before} jax-v{step.after} --machine {step.machine}"


def regressions_md(report, limit: int = 6) -> str:
    from jaxci.report.text import table

    steps = regressions(report)
    if not steps:
        return ""
    rows = [[s.machine, s.benchmark.replace(".time_warm", ""), f"{s.before} -> {s.after}", f"x{s.ratio:.3g}",
             s.undone_in or f"not yet (still at {s.last})", f"`{reproduce(s)}`"] for s in steps[:limit]]
    more = f"\n\n{len(steps) - limit} more below (Regressions across JAX releases)." if len(steps) > limit else ""
    return table(["machine", "kernel", "release", "ratio", "undone in", "reproduce"], rows) + more + "\n"
