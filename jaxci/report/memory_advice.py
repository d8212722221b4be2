"""Row 3 of the decision sheet where the family's GPU ran no concurrency suite: what a GPU did measure, and no more.

The suite's workers are synthetic (each grows to its own fixed peak), so their peak is the suite's target, never a
lecture's need: a safe N computed from it would be circular. The need comes from the lectures themselves (the
executed audit's per-lecture `peak_memory`, jaxci.audit.runner); the policy is the one a GPU measured keeping
every worker alive, at the largest N it ran, and everything else (other N, other policies, this family) is said
to be unmeasured. The row also names the build tool's setting that bounds how many notebooks run at once.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from jaxci.analysis.concurrency import Survived, never_on_gpu, survived_on_gpu
from jaxci.analysis.lecture_record import PEAK_KEYS, AuditView
from jaxci.policy import concurrency
from jaxci.report.question import Status
from jaxci.util import quoting

#: Published practice (../shared/reference/published-measurements.md), for comparison only: never an input.
PUBLISHED = (("JAX's own CUDA CI", 2048, "2 GB of GPU per test process, platform allocator"),
             ("NVIDIA's JAX-Toolbox", 10240, "preallocation off, at least 10 GB per test"))


@dataclass(frozen=True)
class LecturePeak:
    path: str
    mib: float
    kind: str        # "device" (a GPU's bytes in use) | "live buffers" (JAX's arrays, CPU) | "host RSS"
    platform: str    # the audit run it came from ("cuda", "cpu")


def lecture_peaks(audit: AuditView | None) -> list[LecturePeak]:
    """Each lecture's largest memory figure from an executed audit, the GPU's own where a GPU ran it, else
    JAX's live buffers on the CPU, else host RSS; labelled, largest first."""
    out = []
    for lec in audit.lectures if audit is not None else ():
        best = None
        for platform, run in sorted(lec.runs.items(), key=lambda kv: kv[0] != "cuda"):
            for key, kind in zip(PEAK_KEYS, ("device", "live buffers", "host RSS"), strict=True):
                value = run.peak_mib.get(key)
                if value is not None and value > 0:
                    if kind == "device" and platform not in ("cuda", "gpu"):
                        continue  # a CPU backend's own stats are not a GPU's need
                    best = best or LecturePeak(lec.path, value, kind, platform)
                    break
            if best:
                break
        if best:
            out.append(best)
    return sorted(out, key=lambda p: (p.kind != "device", -p.mib))


def measured_on_gpu(report) -> list[Survived]:
    """The GPU policies the concurrency suite measured keeping every worker alive, most kernels first."""
    return survived_on_gpu(report.concurrency)


def _fit(device_peaks: list, device_mib: float | None, budget: float) -> int | None:
    """How many kernels of the largest lecture's measured GPU peak fit the budget (None: no GPU peak)."""
    if not device_peaks or not device_mib:
        return None
    return math.floor(budget * device_mib / device_peaks[0].mib)


def answers(report, family: str, entry, audit: AuditView | None = None,
            engines=concurrency.ENGINES) -> list[concurrency.Answer]:
    """Question 3 for `family` in each engine's terms (jaxci.policy.concurrency.decide): the family's own GPU
    measurement when it has one, else what any GPU measured, sized by the lectures' measured GPU peak."""
    survived = measured_on_gpu(report)
    survived = [s for s in survived if s.machine == family] or survived
    peaks = [p for p in lecture_peaks(audit) if p.kind == "device"]
    fit = _fit(peaks, entry.value("gpu_memory_mib"), _budget()) if entry.has_gpu else None
    vcpu = entry.value("vcpu")
    return [concurrency.decide(survived, concurrency.Engine(e), has_gpu=entry.has_gpu, family=family,
                               vcpu=vcpu if isinstance(vcpu, int) else None, fit=fit) for e in engines]


def build_engine(report) -> str:
    """The engine the audited repositories build with (their book config: `_config.yml` is Jupyter Book 1.x,
    `myst.yml` mystmd), else nbclient: row 5's jax-env `concurrency` is row 3's answer for that engine."""
    files = [str(((c.audit.get("ci") or {}).get("book") or {}).get("file") or "") for c in report.audits or []]
    if any(f.endswith("_config.yml") for f in files):
        return concurrency.JB1
    if any(f.endswith("myst.yml") for f in files):
        return concurrency.MYSTMD
    return concurrency.NBCLIENT


def kernels(report, family: str, entry, audit: AuditView | None = None) -> tuple[int, str]:
    """(the N row 3 advises for the family on its GPU in the engine the repositories build with, that engine):
    the jax-env action's `concurrency` input, the same number row 3 gives for that engine."""
    engine = build_engine(report)
    if not entry.has_gpu:
        return 1, engine
    answer = answers(report, family, entry, audit, engines=(engine,))[0]
    return answer.concurrency, engine


def measured_gpu(machine: str) -> str:
    """The GPU a concurrency figure was measured on, by its model ('NVIDIA H200 (a lab machine)'), never a lab
    machine's name (guidance names the family's hardware, and lab machines are evidence only)."""
    from jaxci.catalogue import CatalogueError, load_catalogue

    try:
        entry = load_catalogue(include_lab=True).get(machine)  # the report's catalogue holds runner families only
    except CatalogueError:
        entry = None
    model = entry.value("gpu_model") if entry is not None else None
    if entry is None or not model:
        return "another machine's GPU"
    return f"{model} ({'a lab machine' if entry.is_lab else machine})"


def engine_text(answers_: list[concurrency.Answer]) -> str:
    """Each engine's setting for the answer's N, then how each keeps JAX lectures serial beside CPU-only ones."""
    names = concurrency.ENGINE_NAMES
    settings = "; ".join(f"{names[a.engine]}: {a.setting}" + (f", jax-env `concurrency: {a.concurrency}`"
                                                              if a.policy else "") for a in answers_)
    splits = "; ".join(f"{names[a.engine]}: {a.split}" for a in answers_ if a.split)
    return settings + (f". JAX lectures serial on the GPU while CPU-only ones fan out: {splits}" if splits else "")


def unmeasured_gpu(report, family: str, entry, found: list[concurrency.Answer], audit: AuditView | None = None,
                   jax=str):
    """(decision, status, basis) for a GPU family with no concurrency run of its own, from its `answers`.
    `jax(machine)` names the JAX version a machine measured with."""
    from jaxci.policy import builds as buildcost

    device_mib = entry.value("gpu_memory_mib")
    audit_cmd = buildcost.AUDIT_FOR.format(family=family)
    survived = measured_on_gpu(report)
    peaks = lecture_peaks(audit)
    device_peaks = [p for p in peaks if p.kind == "device"]
    published = _published(device_mib)
    best = concurrency.best(survived)
    if best is None:  # no GPU measured a policy keeping every worker alive
        return ("one notebook at a time until a GPU measures more: " + engine_text(found), Status.NOT_MEASURED,
                f"{found[0].evidence}{published}")
    n = found[0].n
    mine = entry.value("gpu_model") or "GPU"
    decision = (f"`{found[0].env}` (policy `{best.policy}`), at most {n} notebook(s) at once, as measured on "
                f"{measured_gpu(best.machine)}, not on this family's {mine}: " + engine_text(found))
    others = [f"`{s.policy}` up to N = {s.n} of {s.ran_up_to} run" for s in survived if s is not best]
    measured = (f"measured: `{best.policy}` kept every worker alive up to N = {best.n} on {best.machine} "
                f"({jax(best.machine)}; the suite ran it up to N = {best.ran_up_to}"
                + (f"; {', '.join(others)}" if others else "")
                + "), with synthetic workers whose peak is the suite's own target, not a lecture's need")
    never = never_on_gpu(report.concurrency)
    unmeasured = (f"not measured: this family's GPU, N above {best.ran_up_to}"
                  + (f", policies never run on a GPU ({', '.join(never)}: offered only as not measured)"
                     if never else "") + f"; measure: {concurrency.MEASURE.format(family=family)}")
    budget = _budget()
    fit = _fit(device_peaks, device_mib, budget)
    if device_peaks:
        top = device_peaks[0]
        need = (f"lectures' own need: {top.mib:,.0f} MiB device memory in use at peak ({quoting.code(top.path)}, "
                f"the audit's {top.platform} run; largest of {len(device_peaks)})")
        if fit is not None:
            need += f"; {fit} such kernel(s) fit {budget:.2f} of {device_mib:,.0f} MiB (catalogue)"
        status = Status.PREDICTED
    elif peaks:
        top = peaks[0]
        need = (f"lectures' own need: not measured on a GPU; on the CPU the largest is {top.mib:,.0f} MiB of "
                f"{top.kind} ({quoting.code(top.path)}), which is not a GPU's need (no CUDA context or XLA workspace "
                f"in it): `{audit_cmd}` on a GPU runner")
        status = Status.NOT_MEASURED
    else:
        need = f"lectures' own need: not measured: `{audit_cmd}`, then `jaxci report RESULTS --audit audit.json`"
        status = Status.NOT_MEASURED
    return decision, status, "; ".join((measured, need, unmeasured)) + published


def _budget() -> float:
    from jaxci.catalogue import load_policies

    return load_policies()[1]


def _published(device_mib: float | None) -> str:
    """Published practice at this GPU's memory, for comparison (never an input)."""
    if not device_mib:
        return ""
    parts = [f"{who} ({rule}): {math.floor(device_mib / per)} on this GPU" for who, per, rule in PUBLISHED]
    return "; published practice (published-measurements.md): " + "; ".join(parts)
