"""Runner tier of a lecture build job: stay on its GPU family, move to a CPU family, or split.

The rule (a stated policy over the lecture audit's own verdicts, not a measurement):
- no executed lecture is "keep on GPU" or "measure": nothing in the build needs a GPU -> move to CPU;
- those lectures are at most SPLIT_SHARE of the executed lectures -> split: build on a CPU family and
  run only those lectures on a GPU (their own job, or the GPU family kept for them);
- otherwise -> stay.
The cheapest catalogue CPU family (RunsOn, no GPU) with at least the job's vCPU count is the CPU choice.
Build time and dollars per catalogue family come from jaxci.analysis.buildtime when the lectures were
executed (their CPU cell seconds, split into JAX-on-GPU, JAX-on-CPU and the rest) and an asv results
directory with the baseline machine is given; otherwise each family shows its catalogue price only and
the build time reads "not measured".
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from jaxci.audit.ci.lectures import KEEP_GPU, MEASURE

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


def _repository(lectures, baseline: str):
    """A buildtime repository description from executed lectures (CPU cell seconds), or None."""
    from jaxci.analysis import buildtime as bt

    run = [f for f in lectures if not f.excluded]
    if not run or any(f.cpu_s is None for f in run):
        return None
    seconds = {"jax_gpu": sum(f.cpu_s for f in run if f.uses_jax and f.recommendation == KEEP_GPU),
               "jax_cpu": sum(f.cpu_s for f in run if f.uses_jax and f.recommendation != KEEP_GPU)}
    total = sum(f.cpu_s for f in run)
    if total <= 0:
        return None
    return bt.repository_from_dict({"name": "this repository", "lectures": len(run), "baseline": baseline,
                                    "build_seconds": total, "seconds": seconds,
                                    "source": "jaxci audit --execute: CPU cell seconds per lecture; lectures "
                                              "the audit keeps on GPU count as jax_gpu, other JAX lectures as "
                                              "jax_cpu, the rest as other (scales as python)"})


def estimates(lectures, catalogue: dict, defaults: dict, records=None, baseline: str | None = None) -> list[TierRow]:
    """Rows per catalogue family: the buildtime estimate when it can be made, else the price only."""
    repo = _repository(lectures, baseline) if baseline and records is not None else None
    if repo is not None:
        from jaxci.analysis import buildtime as bt

        rows = []
        for e in bt.estimate_build(repo, records, catalogue, defaults):
            basis = "; ".join(f"{c}: {f.basis}" for c, f in e.factors.items()) + (
                f". {e.note}" if e.note else "") + (f". Cost: {', '.join(e.inputs)}" if e.inputs else "")
            gpu = bool(catalogue[e.family].has_gpu) if e.family in catalogue else None
            rows.append(TierRow(e.family, gpu, e.price_per_hour, e.build_s, e.dollars, e.label, basis))
        return rows
    why = ("lectures not executed (run with --execute)" if not any(f.measured for f in lectures)
           else "no asv results / baseline machine given (--results DIR --baseline NAME)")
    return [TierRow(m.name, m.has_gpu, m.value("price_per_hour"), None, None, "not measured",
                    f"build time not measured: {why}") for m in catalogue.values()]
