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

#: How many notebooks a lecture build executes at once is the build tool's setting, not the action's input.
#: MyST-NB executes one notebook per Sphinx worker (its docs: "parallel friendly", `sphinx-build -j 4`
#: executes four notebooks at once, since 0.14); jupyter-book 1.x's `jupyter-book build` has no jobs option
#: (jupyter-book/jupyter-book issue 1735) and executes one notebook at a time.
BUILD_TOOL = ("`sphinx-build -j {n}` (MyST-NB executes one notebook per Sphinx process; `jupyter-book build` 1.x "
              "has no jobs option and executes one at a time)")

#: Published practice (../shared/reference/published-measurements.md), for comparison only: never an input.
PUBLISHED = (("JAX's own CUDA CI", 2048, "2 GB of GPU per test process, platform allocator"),
             ("NVIDIA's JAX-Toolbox", 10240, "preallocation off, at least 10 GB per test"))

POLICY_ENV = {"no-prealloc": "XLA_PYTHON_CLIENT_PREALLOCATE=false", "default": "nothing set (JAX preallocates 75%)",
              "platform": "XLA_PYTHON_CLIENT_ALLOCATOR=platform"}


@dataclass(frozen=True)
class LecturePeak:
    path: str
    mib: float
    kind: str        # "device" (a GPU's bytes in use) | "live buffers" (JAX's arrays, CPU) | "host RSS"
    platform: str    # the audit run it came from ("cuda", "cpu")


def lecture_peaks(audit: dict | None) -> list[LecturePeak]:
    """Each lecture's largest memory figure from an executed audit, the GPU's own where a GPU ran it, else
    JAX's live buffers on the CPU, else host RSS; labelled, largest first."""
    out = []
    for lec in (audit or {}).get("lectures", []) or []:
        runs = lec.get("runs") or {}
        best = None
        for platform, run in sorted(runs.items(), key=lambda kv: kv[0] != "cuda"):
            peak = (run or {}).get("peak_memory") or {}
            for key, kind in (("device_peak_mib", "device"), ("live_buffers_mib", "live buffers"),
                              ("host_rss_peak_mib", "host RSS")):
                value = peak.get(key)
                if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
                    if kind == "device" and platform not in ("cuda", "gpu"):
                        continue  # a CPU backend's own stats are not a GPU's need
                    best = best or LecturePeak(str(lec.get("path", "?")), float(value), kind, platform)
                    break
            if best:
                break
        if best:
            out.append(best)
    return sorted(out, key=lambda p: (p.kind != "device", -p.mib))


@dataclass(frozen=True)
class Survived:
    machine: str
    policy: str
    n: int           # the largest N at which every worker lived (and every smaller N measured)
    ran_up_to: int   # the largest N this policy ran at on that GPU


def measured_on_gpu(report) -> list[Survived]:
    """The GPU policies the concurrency suite measured keeping every worker alive, most kernels first."""
    out = []
    for (machine, device, policy), n in report.safe_n.items():
        if device != "gpu" or not n:
            continue
        ran = [c.n_workers for c in report.concurrency if (c.machine, c.device, c.policy) == (machine, device, policy)
               and c.status not in ("skipped", "not measured")]
        out.append(Survived(machine, policy, n, max(ran, default=n)))
    return sorted(out, key=lambda s: (-s.n, s.policy != "no-prealloc", s.machine))


def never_on_gpu(report) -> list[str]:
    """Policies of the suite that no GPU ran (every GPU combination skipped): their advice would be a model's."""
    seen = {c.policy for c in report.concurrency if c.device == "gpu"}
    ran = {c.policy for c in report.concurrency if c.device == "gpu" and c.status not in ("skipped", "not measured")}
    return sorted(seen - ran)


def _fit(device_peaks: list, device_mib: float | None, budget: float) -> int | None:
    """How many kernels of the largest lecture's measured GPU peak fit the budget (None: no GPU peak)."""
    if not device_peaks or not device_mib:
        return None
    return math.floor(budget * device_mib / device_peaks[0].mib)


def _advised(best: Survived | None, fit: int | None) -> int:
    if best is None:
        return 1
    return best.n if fit is None else max(1, min(best.n, fit))


def kernels(report, family: str, entry, audit=None) -> int:
    """The N row 3 advises for the family (what the jax-env action's `concurrency` input should be)."""
    if not entry.has_gpu:
        return 1
    own = [n for (m, d, _), n in report.safe_n.items() if m == family and d == "gpu" and n]
    if own:
        return max(own)
    from jaxci.catalogue import load_policies

    _, budget = load_policies()
    survived = measured_on_gpu(report)
    peaks = [p for p in lecture_peaks(audit) if p.kind == "device"]
    return _advised(survived[0] if survived else None, _fit(peaks, entry.value("gpu_memory_mib"), budget))


def unmeasured_gpu(report, family: str, device_mib: float | None, budget: float, audit=None, jax=str):
    """(decision, status, basis) for a GPU family with no concurrency run of its own. `jax(machine)` names the
    JAX version a machine measured with."""
    from jaxci.policy import builds as buildcost

    audit_cmd = buildcost.AUDIT_FOR.format(family=family)
    measure = f"`asv run --bench '^concurrency\\.' --machine {family}` on the family"
    survived = measured_on_gpu(report)
    peaks = lecture_peaks(audit)
    device_peaks = [p for p in peaks if p.kind == "device"]
    published = _published(device_mib)
    if not survived:
        return ("one notebook at a time until a GPU measures more: " + BUILD_TOOL.format(n=1), "not measured",
                f"no GPU policy measured keeping every worker alive; measure: {measure}{published}")
    best = survived[0]
    fit = _fit(device_peaks, device_mib, budget)
    n = _advised(best, fit)
    env = POLICY_ENV.get(best.policy, f"policy `{best.policy}`")
    decision = (f"`{env}` (policy `{best.policy}`), at most {n} notebook(s) at once: {BUILD_TOOL.format(n=n)}, "
                f"and the jax-env action's `concurrency: {n}`")
    others = [f"`{s.policy}` up to N = {s.n} of {s.ran_up_to} run" for s in survived[1:]]
    measured = (f"measured: `{best.policy}` kept every worker alive up to N = {best.n} on {best.machine} "
                f"({jax(best.machine)}; the suite ran it up to N = {best.ran_up_to}"
                + (f"; {', '.join(others)}" if others else "")
                + "), with synthetic workers whose peak is the suite's own target, not a lecture's need")
    never = never_on_gpu(report)
    unmeasured = (f"not measured: this family's GPU, N above {best.ran_up_to}"
                  + (f", policies never run on a GPU ({', '.join(never)})" if never else "")
                  + f"; measure: {measure}")
    if device_peaks:
        top = device_peaks[0]
        need = (f"lectures' own need: {top.mib:,.0f} MiB device memory in use at peak ({top.path}, the audit's "
                f"{top.platform} run; largest of {len(device_peaks)})")
        if fit is not None:
            need += f"; {fit} such kernel(s) fit {budget:.2f} of {device_mib:,.0f} MiB (catalogue)"
        status = "predicted"
    elif peaks:
        top = peaks[0]
        need = (f"lectures' own need: not measured on a GPU; on the CPU the largest is {top.mib:,.0f} MiB of "
                f"{top.kind} ({top.path}), which is not a GPU's need (no CUDA context or XLA workspace in it): "
                f"`{audit_cmd}` on a GPU runner")
        status = "not measured"
    else:
        need = f"lectures' own need: not measured: `{audit_cmd}`, then `jaxci report RESULTS --audit audit.json`"
        status = "not measured"
    return decision, status, "; ".join((measured, need, unmeasured)) + published


def _published(device_mib: float | None) -> str:
    """Published practice at this GPU's memory, for comparison (never an input)."""
    if not device_mib:
        return ""
    parts = [f"{who} ({rule}): {math.floor(device_mib / per)} on this GPU" for who, per, rule in PUBLISHED]
    return "; published practice (published-measurements.md): " + "; ".join(parts)
