"""The guidance lines per lecture type, built from measured results (and the labelled model): the line builders
that findings.md's evidence section and each family's own guidance (family_guidance) both use. Every line says
measured, predicted, published or not measured, and names its machine. Kept apart from findings so that
family_guidance can use them without importing findings (which imports family_guidance)."""

from __future__ import annotations

from jaxci.analysis import crossover as cx
from jaxci.analysis import median, slowest_cells
from jaxci.report import questions
from jaxci.report.text import seconds

PIN_HOW = ("- How to pin what is measured above as slower on the GPU: "
           "`jax.default_device(jax.devices('cpu')[0])` around the code, or "
           "`JAX_PLATFORMS=cpu` for the lecture.")
#: how a line that moves code to the CPU ends (the pin how-to follows the first such line)
PIN_CODE, RUN_ON_CPU = "pin this code to the CPU.", "run it on the CPU."
_VERSIONS: dict = {}


class PinLine(str):
    """A guidance line that moves code to the CPU: the pin how-to follows the first one. The kind is the line's
    type, set where it is written, never read back from its words."""


def says_pin(line: str) -> bool:
    return isinstance(line, PinLine)


def _where(c) -> str:
    if c.cpu_machine == c.gpu_machine:
        return f"on {c.gpu_machine}"
    jax = lambda m: ", ".join(_VERSIONS.get(m, ["JAX ?"]))
    return (f"{c.gpu_machine} gpu ({jax(c.gpu_machine)}) vs {c.cpu_machine} cpu ({jax(c.cpu_machine)}): "
            "two machines" + ("" if jax(c.gpu_machine) == jax(c.cpu_machine) else " and two JAX versions"))


def _gpu_advice(report, prefixes=("",)) -> list[str]:
    lines = []
    for c in report.crossovers:
        if not c.benchmark.startswith(prefixes):
            continue
        if c.kind == cx.CROSSING:
            lines.append(f"- **{c.kernel}** ({c.dtype}): the GPU wins from n ≈ {c.n:,.0f} ({_where(c)}; measured).")
        elif c.kind == cx.GPU_ALWAYS:
            lines.append(f"- **{c.kernel}** ({c.dtype}): the GPU wins at every measured size "
                         f"from n = {c.points[0][0]:,} "
                         f"({_where(c)}; measured).")
        elif c.kind == cx.GPU_BAND:
            lines.append(f"- **{c.kernel}** ({c.dtype}): {c.answer()} ({_where(c)}; measured).")
    return lines


def _cpu_advice(report, prefixes=("",), ratios=True) -> list[str]:
    lines: list = []
    for c in report.crossovers:
        if c.kind == cx.NONE_IN_RANGE and c.points and c.benchmark.startswith(prefixes):
            worst = max(g / cpu for _, cpu, g in c.points)
            lines.append(PinLine(f"- **{c.kernel}** ({c.dtype}): the CPU is faster at every measured size "
                                 f"up to n = {c.points[-1][0]:,} "
                                 f"(GPU up to {worst:.1f}x slower, {_where(c)}; measured): {PIN_CODE}"))
    for d in report.device_ratios if ratios else ():
        if d.verdict == cx.CPU_FASTER and d.benchmark.startswith(prefixes):
            what = " ".join(f"{k}={v}" for k, v in d.params)
            lines.append(PinLine(f"- **{d.benchmark} {what}**: {d.ratio:.1f}x slower on the GPU than on the CPU "
                                 f"(on {d.machine}; measured): {RUN_ON_CPU}"))
    return lines


def _predicted_gpu(report, prefixes, limit=3) -> list[str]:
    rows = [p for p in report.predicted_crossovers if p.kind == cx.CROSSING and p.measured is None
            and p.benchmark.startswith(prefixes)]
    out = [f"- predicted (model, not measured) for {p.family}: **{p.kernel}** ({p.dtype}) "
           f"GPU faster from n ≈ {p.n:,.0f}; "
           "inputs in findings.md §2." for p in sorted(rows, key=lambda p: (p.family, p.kernel, p.dtype))[:limit]]
    if len(rows) > limit:
        out.append(f"- {len(rows) - limit} more predicted crossovers in findings.md §2.")
    return out


def _published(fragment: str) -> str:
    return f"- published reference (docs/reference/incidents.md, not a measurement here): {fragment}"


BIG, SEQ = ("dense.", "elementwise."), ("loops.", "kalman.")
SCAN_PUBLISHED = _published("a scalar `lax.scan` ran about 1,340x slower on a T4 than on the runner's CPU at "
                            "n = 10,000,000.")
PREALLOCATE_PUBLISHED = _published("three kernels sharing a T4 with JAX's default 75% preallocation: one aborted "
                                   "with no traceback; `XLA_PYTHON_CLIENT_PREALLOCATE=false` was the fix applied.")


def measured_large(report) -> list[str]:
    return _gpu_advice(report, BIG) + _cpu_advice(report, BIG, ratios=False)


def measured_small(report) -> list[str]:
    return _cpu_advice(report, SEQ) + _gpu_advice(report, SEQ) + [
        f"- {s.machine}: {s.kernel} costs {s.ratio:.1f}x in float64 on the GPU (measured)."
        for s in report.fp64_summary if s.device == "gpu"]


def measured_nuts(report) -> list[str]:
    out = []
    for row in report.nuts:
        if row.best:
            (method, chains), ess = row.best
            setting = " ".join(f"{k}={v}" for k, v in row.setting)
            out.append(f"- {row.machine} {setting}: `chain_method='{method}'` with {chains} chains gave the most "
                       f"effective samples per second ({ess:.3g}; measured).")
    return out


def measured_safe(report) -> list[str]:
    return [f"- {m} (gpu): policy `{p}` kept every worker alive up to N = {n} (measured)."
            for (m, d, p), n in sorted(report.safe_n.items()) if n is not None and d == "gpu"]


def _large_lines(report, no_gpu) -> list[str]:
    large = measured_large(report) + _predicted_gpu(report, BIG)
    return large or [no_gpu or "- GPU: no dense or elementwise kernel measured on both devices yet."]


def _small_lines(report, no_gpu) -> list[str]:
    return measured_small(report) or [no_gpu or "- GPU: no loop or Kalman kernel measured on both devices yet.",
                                      SCAN_PUBLISHED]


def _nuts_lines(report, gpu_machines) -> list[str]:
    nuts = measured_nuts(report)
    if not any(dict(r.setting).get("device") == "gpu" and r.best for r in report.nuts):
        nuts.append(("- GPU: not measured (no GPU in these results)." if not gpu_machines else
                     "- GPU: no nuts configuration measured on a GPU (skipped or failed).") + " " +
                    _published("a small float64 NUTS model exceeded a 2,400 s cell timeout on a T4 "
                               "and took 157 s on a laptop CPU.")[2:])
    return nuts


def _compile_lines(report, fallback: bool = True) -> list[str]:
    """The measured compile lines; none measured: the not-measured line (`fallback`), else []."""
    compiles = []
    for m in sorted({c.machine for c in report.cold}):
        shares = [c.share for c in report.cold if c.machine == m and c.share is not None]
        if not shares:
            continue
        compiles.append(f"- {m}: compile is {median(shares):.0%} of a cold first call "
                        f"(median of {len(shares)} kernels; measured): "
                        "cache compilations (`JAX_COMPILATION_CACHE_DIR`, the jax-env action) "
                        "and avoid re-jitting in loops.")
    for r in report.suite_records("compile"):
        if r.ok and r.method == "track_compile_saved_s" and r.params.get("dtype") == "float32":
            compiles.append(f"- {r.machine} ({r.params.get('device')}): the persistent cache saved {seconds(r.value)} "
                            "on a lecture-like series of fresh jits (measured).")
    return compiles or ([f"- not measured: {questions.ENVIRONMENT.how}."] if fallback else [])


def _safe_lines(report) -> list[str]:
    unmeasured = f"- GPU: not measured: {questions.CONCURRENCY.how}; CPU results never answer this."
    return measured_safe(report) or [unmeasured, PREALLOCATE_PUBLISHED]


def _whole_lines(report) -> list[str]:
    basis = slowest_cells.timeout_basis(report.records)  # whole-cell / whole-notebook wall times only
    fixture = (f"- The suite's fixture notebooks (CI-scale, not lectures): slowest whole time {basis.seconds:.3g} s "
               f"on {basis.machine} (measured). Fixture times never size a timeout." if basis.seconds is not None
               else "- The suite's fixture notebooks: no whole time measured.")
    timeout = [fixture, "- Per-cell timeout: not measured on real lectures in these results; it, the job "
               "`timeout-minutes` and fail-once are the decision sheet's row 7 (rule: 3x "
               "the slowest real-lecture cell, at least 60 s; a failed notebook is never cached by jupyter-cache and "
               "runs again in every build unless `jaxci failures` skips it)."]
    return _cpu_advice(report, ("notebooks.",)) + timeout


def note_versions(report) -> None:
    """The JAX versions per machine that `_where` names (from the whole report, whatever the scope)."""
    _VERSIONS.clear()
    for r in report.records:
        _VERSIONS.setdefault(r.machine, set()).add(f"JAX {r.jax_version}")
    _VERSIONS.update({m: sorted(v) for m, v in _VERSIONS.items()})


def _pin_once(sections: list, how: str = PIN_HOW) -> list:
    """The pin how-to once, after the first line that says to pin something to the CPU."""
    for _, lines in sections:
        at = next((i for i, line in enumerate(lines) if says_pin(line)), None)
        if at is not None:
            lines.insert(at + 1, how)
            break
    return sections


def guidance_sections(report) -> list[tuple[str, list[str]]]:
    """Guidance per lecture type from the measured machines (the evidence section's: a family's own guidance is
    family_guidance); each line names the machine it was measured on, or says 'predicted' / 'published'.
    GPU lines come only from gpu measurements (or the labelled model); CPU data never answers a GPU question."""
    note_versions(report)
    gpu_machines = [m for m, f in report.machines.items() if f.has_gpu]
    no_gpu = f"- GPU: not measured (no GPU in these results): {questions.CROSSOVER.how}." if not gpu_machines else None
    out, seen, pinned = [], set(), False
    for title, lines in [("Large-array lectures (matmul, solves, elementwise maps over big arrays)",
                          _large_lines(report, no_gpu)),
                         ("Small float64 sequential lectures (scalar loops, Kalman filters, iterations to convergence)",
                          _small_lines(report, no_gpu)),
                         ("NUTS lectures (numpyro)", _nuts_lines(report, gpu_machines)),
                         ("Lectures with many fresh compiles", _compile_lines(report)),
                         ("Several kernels at once (parallel notebook execution on one GPU)", _safe_lines(report)),
                         ("Whole notebooks and timeouts", _whole_lines(report))]:
        kept = [line for line in lines if line not in seen]  # each line once in the whole guidance
        seen.update(kept)
        if not pinned and any(says_pin(line) for line in kept):
            kept.append(PIN_HOW)  # the how-to once, where the first pin line is
            pinned = True
        out.append((title, kept or ["- Nothing measured for this lecture type."]))
    return out
