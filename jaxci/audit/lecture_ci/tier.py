"""Runner tier of a lecture build job: stay on its GPU family, move to a CPU family, or split.

The rule (a stated policy over the lecture audit's own verdicts, not a measurement):
- no executed lecture is "keep on GPU" or "measure": nothing in the build needs a GPU -> move to CPU;
- those lectures are at most SPLIT_SHARE of the executed lectures -> split: build on a CPU family and
  run only those lectures on a GPU (their own job, or the GPU family kept for them);
- otherwise -> stay.
The cheapest catalogue CPU family (RunsOn, no GPU) with at least the job's vCPU count is the CPU choice.
Build time and dollars per catalogue family come from the one build model, jaxci.policy.builds: the runner
model's predicted seconds of every executed lecture on the family (each on the device the one margin places it
on), priced by jaxci.policy.jobcost.build_job; a family without a prediction for every executed lecture shows its
catalogue price only and the build time reads "not measured".
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from jaxci.audit.lecture_ci.lectures import KEEP_GPU, MEASURE

SPLIT_SHARE = 0.25
STAY, MOVE, SPLIT = "stay", "move to CPU", "split"


@dataclass
class TierRow:
    """One catalogue family's build estimate for a tier decision (build_s and dollars None when not estimated)."""

    family: str
    gpu: bool | None
    price_per_hour: float | None
    build_s: float | None
    dollars: float | None
    label: str                   # "measured" | "predicted" | "not measured"
    basis: str


@dataclass
class Tier:
    job: str                     # file:line of the job
    family: str | None
    gpu: bool
    recommendation: str
    reason: str
    label: str                   # "static verdicts" | "measured" | "predicted" | ...
    cpu_family: str | None = None
    inputs: dict = field(default_factory=dict)
    rows: list[TierRow] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {**self.__dict__, "rows": [asdict(r) for r in self.rows]}


def is_gpu(label, catalogue: dict) -> bool:
    if label is None or label.kind != "runs-on":
        return False
    family = (label.family or "").split("+")[0]
    if family in catalogue:
        return catalogue[family].has_gpu
    return "gpu" in (label.image or "").lower() or family.startswith(("g4", "g5", "g6", "p3", "p4", "p5"))


def cpu_family(family: str | None, catalogue: dict) -> str | None:
    """The cheapest RunsOn CPU family with at least the vCPU of `family` (else the largest)."""
    want = catalogue[family].value("vcpu") if family in catalogue else None
    cpus = [m for m in catalogue.values() if m.runner == "runs-on" and not m.has_gpu and m.value("price_per_hour")]
    if not cpus:
        return None
    fits = [m for m in cpus if want is None or (m.value("vcpu") or 0) >= want]
    if fits:
        return min(fits, key=lambda m: m.value("price_per_hour")).name
    return max(cpus, key=lambda m: m.value("vcpu") or 0).name


def recommend(lectures) -> tuple[str, str, dict]:
    """The static rule. Its counts say what they rest on: "N of M executed lectures" only when lectures ran
    (--execute), else "N of M lectures in the build (static verdicts: nothing executed)"."""
    run = [f for f in lectures if not f.excluded]
    keep = [f.path for f in run if f.recommendation == KEEP_GPU]
    measure = [f.path for f in run if f.recommendation == MEASURE]
    jax = [f for f in run if f.uses_jax]
    executed = sum(1 for f in run if f.executed or f.measured)
    inputs = {"lectures_in_build": len(run), "executed": executed, "jax_lectures": len(jax),
              "keep_on_gpu": len(keep), "measure": len(measure), "split_share": SPLIT_SHARE}
    of = (f"of {len(run)} executed lectures" if executed == len(run) and run else
          f"of {len(run)} lectures in the build ({executed} executed; the others: static verdicts)" if executed else
          f"of {len(run)} lectures in the build (static verdicts: nothing executed)")
    need = len(keep) + len(measure)
    if need == 0:
        return MOVE, (f"none {of} needs a GPU ({len(jax)} use JAX; the lecture audit pins every one to CPU)"), inputs
    if need <= SPLIT_SHARE * len(run):
        names = ", ".join((keep + measure)[:5]) + (" ..." if need > 5 else "")
        return SPLIT, (f"{need} {of} may gain from a GPU ({len(keep)} keep on GPU, {len(measure)} to measure: "
                       f"{names}); the rest run at least as well on a CPU"), inputs
    return STAY, f"{need} {of} keep or may need the GPU", inputs


def whole_row(m, build, defaults: dict) -> TierRow:
    """A family's row from its whole build (jaxci.policy.wholebuild, the figure audit.json's `build` block, the
    report and the sheet's row 6 give): every lecture at its published seconds on the family's hardware or its
    prediction, after the patch; lectures with neither are named, not priced."""
    from jaxci.policy import wholebuild
    from jaxci.policy.jobcost import build_job

    mid = build.after_s[0]
    counts = build.counts
    label = "predicted" if counts[wholebuild.EXECUTED] else "published"
    missing = f"; {len(build.unpriced)} with neither, left out" if build.unpriced else ""
    return TierRow(m.name, m.has_gpu, m.value("price_per_hour"), mid, build_job(m, mid, defaults)[1], label,
                   f"the whole build on {m.name} after the patch (jaxci.policy.wholebuild): "
                   f"{counts[wholebuild.PUBLISHED]} lectures at their published seconds, "
                   f"{counts[wholebuild.EXECUTED]} predicted from their runs"
                   f"{missing}; priced by jaxci.policy.jobcost.build_job")


def estimates(lectures, catalogue: dict, defaults: dict, whole: dict | None = None) -> list[TierRow]:
    """Rows per catalogue family: its whole build where the audit gave one (`whole`: family -> WholeBuild), else
    the predicted build (jaxci.policy.builds) where every executed lecture has a prediction for it, else the price
    only."""
    from jaxci.policy import builds
    from jaxci.policy.jobcost import build_job

    run = [f for f in lectures if not f.excluded and f.executed]
    rows = []
    for m in catalogue.values():
        if whole and m.name in whole:
            rows.append(whole_row(m, whole[m.name], defaults))
            continue
        preds = [f.predicted.get(m.name) for f in run]
        if run and all(p and builds.lecture_seconds(p, "cpu") for p in preds):
            build_s = sum(builds.seconds_on(p, builds.placement(p, m.has_gpu))[0] for p in preds if p)
            dollars = build_job(m, build_s, defaults)[1]
            on_gpu = sum(builds.placement(p, m.has_gpu) == "gpu" for p in preds)
            rows.append(TierRow(m.name, m.has_gpu, m.value("price_per_hour"), build_s, dollars, "predicted",
                                f"{len(run)} executed lectures' predicted seconds on {m.name} ({on_gpu} on its GPU, "
                                "jaxci.policy.builds), priced by jaxci.policy.jobcost.build_job"))
            continue
        why = ("lectures not executed (run with --execute)" if not run else
               f"not every executed lecture has a prediction for {m.name} (--execute with --results)")
        rows.append(TierRow(m.name, m.has_gpu, m.value("price_per_hour"), None, None, "not measured",
                            f"build time not measured: {why}"))
    return rows


def whole_build_minutes(build, family: str):
    """(minutes, label, basis) of a job's build from the whole build on its family (jaxci.policy.wholebuild: every
    lecture priced, from its published seconds or its run here): the slower of the build as published and after
    the patch at the high end of its band; None when there is none or a lecture is left unpriced (then a job's
    limit would rest on part of the build)."""
    if build is None or not build.lectures or build.unpriced:
        return None
    _, _, after_high = build.after_s
    as_published = build.published.total_s if build.published is not None else 0.0
    published = (f"{as_published / 60:.1f} min as published ({build.published.source}), "
                 if build.published is not None else "")
    return max(after_high, as_published) / 60, "predicted", (
        f"the whole build on {family} (jaxci.policy.wholebuild, the audit's `build` block): {published}"
        f"{after_high / 60:.1f} min after the patch at the high end of its band; the slower taken")
