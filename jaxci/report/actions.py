"""What a maintainer applies from the decision sheet, spelled out: which lectures to pin and how, whether float64
lectures default to the CPU, every variable the jax-env action sets, and the cheaper families' prices.

A pin is per lecture (the lecture's own Jupyter kernel, whose kernel.json sets JAX_PLATFORMS=cpu: `jaxci audit
--emit-config` writes both), never `JAX_PLATFORMS=cpu` for the whole job, which would take the GPU from the
lectures that win on it. Which lectures: the audit's per-lecture predictions for the family, placed by the one
margin (jaxci.policy.builds.placement); without an audit, the command that gives them.
"""

from __future__ import annotations

from jaxci.analysis.lecture_record import AuditView
from jaxci.audit.writing.emit import KERNEL  # the kernel --emit-config writes and pins lectures to
from jaxci.policy import builds
from jaxci.util import quoting

CACHE_DIR = "$RUNNER_TEMP/jax-compilation-cache"   # where the jax-env action keeps the compilation cache


def pin_how(family: str) -> str:
    return (f"each on its own: the lecture's `kernelspec.name: {KERNEL}` (a kernel whose kernel.json sets "
            f"`JAX_PLATFORMS=cpu`; `jaxci audit LECTURE_REPO --machine {family} --emit-config FILE` writes both), "
            "not `JAX_PLATFORMS=cpu` for the whole job")


def pin_short() -> str:
    return f"per lecture (`kernelspec.name: {KERNEL}`, row 2), not `JAX_PLATFORMS=cpu` for the job"


def placements(audit: AuditView | None, family: str, has_gpu: bool) -> dict[str, list[str]]:
    """JAX lectures by where they run on the family: "cpu", "gpu", or "unknown" (no prediction for it).
    A lecture the audit judged for this family, or for a family with the same CPU and GPU models
    (`catalogue.same_hardware`), is placed by its verdict (`pinning.placement`, the rule of the audit's own pin
    list); one judged for other hardware, by the one pin rule on its predicted seconds on this one
    (jaxci.policy.placement: a pin only where the GPU's whole band is above the CPU's by the margin)."""
    from jaxci.audit.judging import pinning
    from jaxci.catalogue import CatalogueError, load_catalogue, same_hardware
    from jaxci.policy import placement, wholebuild

    try:
        catalogue = load_catalogue()
    except CatalogueError:
        catalogue = {}
    out: dict[str, list[str]] = {"cpu": [], "gpu": [], "unknown": []}
    for lec in audit.lectures if audit is not None else ():
        if lec.uses_jax is False:
            continue
        pred = lec.prediction(family)
        path = lec.path
        if lec.uses_jax is None:   # no scan: whether it is JAX work at all is unknown
            out["unknown"].append(path)
            continue
        judged = lec.family or ""
        if has_gpu and judged and same_hardware(judged, family, catalogue):
            out[pinning.placement(lec.recommendation or "", True)].append(path)
        elif pred is not None and pred.cpu is not None:
            found = wholebuild.placed(lec, family, None, "", has_gpu)  # the one pin rule (either stays put)
            out["cpu" if found.device == placement.CPU else "gpu" if found.device else "unknown"].append(path)
        else:
            out["unknown"].append(path)
    return out


def _names(paths: list[str], limit: int = 8) -> str:
    shown = ", ".join(quoting.code(p) for p in paths[:limit])  # a name holding a backtick stays one span
    return shown + (f" and {len(paths) - limit} more" if len(paths) > limit else "")


def pins_text(audit: AuditView | None, family: str, has_gpu: bool) -> str:
    """Which lectures to pin to the CPU on a GPU family, and how; the command that tells, without an audit."""
    if not has_gpu:
        return ""
    if audit is None:
        return (f"which lectures to pin: `{builds.AUDIT_FOR.format(family=family)}`, then `jaxci report RESULTS "
                f"--audit audit.json`; pin {pin_how(family)}")
    where = placements(audit, family, has_gpu)
    parts = []
    if where["cpu"]:
        parts.append(f"pin {len(where['cpu'])} lecture(s) to the CPU ({_names(where['cpu'])}), {pin_how(family)}")
    else:
        parts.append("no lecture to pin to the CPU")
    if where["gpu"]:
        parts.append(f"{len(where['gpu'])} stay on the GPU ({_names(where['gpu'], 4)})")
    if where["unknown"]:
        parts.append(f"{len(where['unknown'])} without a prediction for {family} (not decided: "
                     f"{_names(where['unknown'], 4)})")
    return "; ".join(parts) + " (the audit's predictions for the family, the one pin rule)"


def float64_default(cpu_s: float | None, gpu_s: float | None, overlap: bool, figures: str = "") -> str:
    """The direct answer to "should float64 lectures default to the CPU" from float64 seconds on each device."""
    from jaxci.policy.margins import gpu_wins

    if gpu_s is None:
        return "float64 lectures default to the CPU: yes (no GPU)"
    if cpu_s is None:
        return "float64 lectures default to the CPU: not predicted"
    if gpu_wins(cpu_s, gpu_s):
        return "float64 lectures default to the CPU: no, the GPU wins even in float64 at the largest size"
    why = "as fast there (bands overlap)" if overlap else "faster there"
    return (f"float64 lectures default to the CPU: no blanket default; each lecture goes where its own prediction "
            f"(its float64 work included) is faster, as `jaxci audit` places it; the CPU is {why} "
            f"for float64 at the largest size{figures}; pin those it places on the CPU {pin_short()}")


def action_env(family: str, has_gpu: bool, kernels: int, device_mib: float | None) -> dict[str, str]:
    """Every variable the jax-env action writes to $GITHUB_ENV for these inputs (its one `jaxci env` call)."""
    from jaxci.catalogue import load_policies
    from jaxci.workflows.envadvice import recommend

    policies, budget = load_policies()
    advice = recommend(max(1, kernels), device_mib=device_mib if has_gpu else None, pin_cpu=not has_gpu,
                       budget=budget, policies=policies, cache_dir=CACHE_DIR)
    return advice.env


def env_text(family: str, has_gpu: bool, kernels: int, device_mib: float | None) -> str:
    if has_gpu and device_mib is None:  # a GPU whose memory neither the catalogue nor machine.json records
        return (f"the jax-env action (`with: {{machine: {family}}}`): its memory settings need the GPU's memory, "
                "which neither the catalogue nor the machine's record gives (not measured)")
    env = action_env(family, has_gpu, kernels, device_mib)
    inputs = f"machine: {family}, concurrency: {kernels}" + ("" if has_gpu else ", pin-cpu: true")
    return (f"the jax-env action (`with: {{{inputs}}}`) sets " + ", ".join(f"`{k}={v}`" for k, v in env.items())
            + "; it restores and saves the cache directory between builds (actions/cache)")


def cheaper(catalogue: dict, family: str) -> str:
    """The catalogue families cheaper per hour than `family`: the cheapest of each kind (GPU, CPU only)."""
    entry = catalogue.get(family)
    price = entry.value("price_per_hour") if entry else None
    if price is None:
        return ""
    rows = [(e.value("price_per_hour"), f, e) for f, e in catalogue.items()
            if f != family and not e.is_lab and e.value("price_per_hour") is not None
            and e.value("price_per_hour") < price]
    best: dict = {}
    for p, f, e in sorted(rows, key=lambda r: (r[0], r[1])):
        best.setdefault(e.has_gpu, (p, f, e))
    if not best:
        return f"no catalogue family is cheaper per hour than {family}"
    shown = [f"{f} ${p:.3f}/h ({e.value('gpu_model') if e.has_gpu else 'CPU only'}, {e.value('vcpu') or '?'} vCPU)"
             for p, f, e in sorted(best.values(), key=lambda r: r[0])]
    return f"cheaper per hour: {', '.join(shown)} (catalogue)"

