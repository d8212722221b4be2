"""The tier decision with numbers: predicted build time and dollars per build for each way of running a
repository's build on the catalogue families, the cheapest that keeps every GPU-winning lecture fast, and the
GPU-hours a year before and after.

Inputs are the executed audit's lecture facts (jaxci.audit.lecture_ci.lectures): per lecture the runner model's
predicted seconds of the whole lecture on each family's CPU and GPU (`predicted[family]`, a
jaxci.analysis.prediction.LecturePrediction: each side's seconds and band, jaxci.audit.judging.predicted; its
host code moved to the family's host by the host factor h where the family publishes a single-thread probe,
else as measured here: jaxci.audit.judging.host).

Options (a build job costs (catalogue job overhead + build), billed by jaxci.policy.jobcost's rule, x its price):
- CPU alone on a CPU family C: every lecture on C's CPU;
- GPU as is on a GPU family G: every JAX lecture on G's GPU (no pins: the build before the recommendation);
- GPU with pins on G: the lectures that win on G's GPU stay there, the others pinned to G's CPU;
- split C + G: the lectures that win on G's GPU in a job on G, the rest in a job on C (wall: the longer job).
A lecture wins on a GPU when its predicted GPU seconds are below GPU_FASTER x its CPU seconds on that family
(the one margin, jaxci.policy.margins.gpu_wins: the report's question 6 uses it too).
An option keeps every GPU-winning lecture fast when each lecture
that wins on the build job's GPU family runs on a GPU in it. The cheapest such option is recommended (lab
machines have no price: shown, never chosen). Jobs are priced by jaxci.policy.jobcost.build_job, as the report's
question 6 prices them. GPU-hours count the GPU family's whole job (overhead included).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from jaxci.policy import builds
from jaxci.policy.jobcost import build_job
from jaxci.policy.margins import GPU_FASTER, gpu_wins

CPU_ALONE, GPU_AS_IS, GPU_PINS, SPLIT = "CPU alone", "GPU as is", "GPU with pins", "split"
PREDICTED = "predicted"


@dataclass
class Option:
    kind: str
    families: list                 # [C], [G] or [C, G]
    build_s: float                 # wall of the build (the longer job of a split)
    build_high_s: float            # the same at the high end of every predicted band
    jobs_s: dict                   # family -> job seconds (overhead + its build)
    dollars: float | None          # None: a family without a price (lab)
    gpu_hours: float               # GPU-runner hours per build
    on_gpu: list                   # lectures that run on a GPU
    keeps_fast: bool

    @property
    def name(self) -> str:
        return f"{self.kind}: {' + '.join(self.families)}"


@dataclass
class JobDecision:
    job: str                       # file:line of the build job
    family: str | None             # its family as written
    options: list = field(default_factory=list)
    chosen: Option | None = None
    before: Option | None = None   # the job as it is written (its family, no pins)
    gpu_winning: list = field(default_factory=list)
    narrative: list = field(default_factory=list)
    builds_per_year: int | None = None
    missing: list = field(default_factory=list)   # lectures or families without a prediction
    rule: str = ""

    @property
    def gpu_hours_year(self) -> tuple[float | None, float | None]:
        if not self.builds_per_year or self.before is None or self.chosen is None:
            return None, None
        return self.before.gpu_hours * self.builds_per_year, self.chosen.gpu_hours * self.builds_per_year

    def shown(self) -> list:
        """The options worth a table row: the choice, the job as written, every option on the job's family, the
        cheapest of each kind, and the lab GPUs with pins (an in-house box); as_dict keeps them all."""
        cheapest: dict = {}
        for o in self.options:
            if o.dollars is not None and (o.kind not in cheapest or o.dollars < cheapest[o.kind].dollars):
                cheapest[o.kind] = o
        keep = [o for o in self.options if o is self.chosen or o is self.before or self.family in o.families
                or o in cheapest.values() or (o.kind == GPU_PINS and o.dollars is None)]
        return sorted(keep, key=lambda o: (o.dollars is None, o.dollars or 0.0, o.build_s))

    def as_dict(self) -> dict:
        before, after = self.gpu_hours_year
        return {"job": self.job, "family": self.family, "label": "predicted", "rule": self.rule,
                "options": [{**asdict(o), "name": o.name} for o in self.options],
                "chosen": self.chosen.name if self.chosen else None,
                "before": self.before.name if self.before else None, "gpu_winning": self.gpu_winning,
                "narrative": self.narrative, "builds_per_year": self.builds_per_year,
                "gpu_hours_per_year_before": before, "gpu_hours_per_year_after": after, "missing": self.missing}


def _times(f, family: str) -> tuple[float, float, float | None, float | None] | None:
    """(cpu, cpu high, gpu, gpu high) seconds of one whole lecture on `family` (jaxci.policy.builds, the one
    build-time model the report's question 6 uses too); None if not predicted."""
    p = f.predicted.get(family)
    cpu = builds.lecture_seconds(p, "cpu") if p else None
    if cpu is None:
        return None
    gpu = builds.lecture_seconds(p, "gpu")
    return cpu[0], cpu[2], (gpu[0] if gpu else None), (gpu[2] if gpu else None)


def _on(f, family: str, device: str) -> tuple[float, float]:
    """(seconds, high) of one lecture on `family`'s `device`: an option places a lecture only where it is
    predicted (its family covered, its GPU side known for a GPU)."""
    t = _times(f, family)
    mid, high = (None, None) if t is None else (t[2], t[3]) if device == "gpu" else (t[0], t[1])
    if mid is None or high is None:
        raise ValueError(f"{f.path}: not predicted on {family}'s {device}")
    return mid, high


def wins_on_gpu(f, family: str) -> bool:
    t = _times(f, family)
    return bool(f.uses_jax and t and gpu_wins(t[0], t[2]))


def _option(kind, placement: dict, catalogue, defaults, winning: set) -> Option:
    """placement: family -> [(lecture, device)] with device 'cpu' or 'gpu'."""
    builds, highs, jobs, gpu_hours, on_gpu = {}, {}, {}, 0.0, []
    dollars: float | None = 0.0
    for fam, items in placement.items():
        mid = high = 0.0
        for f, device in items:
            seconds, seconds_high = _on(f, fam, device)
            mid += seconds
            high += seconds_high
            if device == "gpu" and f.uses_jax:
                on_gpu.append(f.path)
        builds[fam], highs[fam] = mid, high
        jobs[fam], cost = build_job(catalogue[fam], mid, defaults)
        dollars = None if cost is None or dollars is None else dollars + cost
        if catalogue[fam].has_gpu:
            gpu_hours += jobs[fam] / 3600
    return Option(kind, list(placement), max(builds.values()), max(highs.values()), jobs, dollars, gpu_hours,
                  sorted(on_gpu), winning <= set(on_gpu))


def decide(lectures, job: str, family: str | None, catalogue: dict, defaults: dict,
           builds_per_year: int | None = None) -> JobDecision | None:
    """The decision for one build job, or None when no executed lecture has a prediction."""
    from jaxci.audit.lecture_ci.tier import cpu_family

    run = [f for f in lectures if not f.excluded and f.executed]
    if not run or not any(f.predicted for f in run):
        return None
    d = JobDecision(job, family, builds_per_year=builds_per_year, narrative=[f.path for f in run if f.narrative])
    covered = [n for n in catalogue if all(_times(f, n) is not None for f in run)]
    d.missing = [f.path for f in run if not f.predicted] + [f"{n}: not predicted for every lecture"
                                                           for n in catalogue if n not in covered]
    gpus = [n for n in covered if catalogue[n].has_gpu
            and all((t := _times(f, n)) is not None and t[2] is not None for f in run)]
    cpus = [n for n in covered if not catalogue[n].has_gpu and not catalogue[n].is_lab]  # lab CPUs: build VMs
    judge = family if family in gpus else None
    winning = {f.path for f in run if judge and wins_on_gpu(f, judge)}
    d.gpu_winning = sorted(winning)
    for c in cpus:
        d.options.append(_option(CPU_ALONE, {c: [(f, "cpu") for f in run]}, catalogue, defaults, winning))
    pair_cpu = cpu_family(family, catalogue)
    pair_cpu = pair_cpu if pair_cpu in cpus else (cpus[0] if cpus else None)
    for g in gpus:
        d.options.append(_option(GPU_AS_IS, {g: [(f, "gpu" if f.uses_jax else "cpu") for f in run]}, catalogue,
                                 defaults, winning))
        d.options.append(_option(GPU_PINS, {g: [(f, "gpu" if wins_on_gpu(f, g) or f.narrative else "cpu")
                                                for f in run]}, catalogue, defaults, winning))
        fast = [f for f in run if wins_on_gpu(f, g) or f.narrative]
        if pair_cpu and fast and len(fast) < len(run):
            d.options.append(_option(SPLIT, {pair_cpu: [(f, "cpu") for f in run if f not in fast],
                                             g: [(f, "gpu") for f in fast]}, catalogue, defaults, winning))
    d.before = next((o for o in d.options if o.families == [family] and o.kind in (GPU_AS_IS, CPU_ALONE)), None)
    fit = [o for o in d.options if o.keeps_fast and o.dollars is not None]
    d.chosen = min(fit, key=lambda o: (o.dollars, o.build_s), default=None)
    d.rule = ("cheapest option (dollars per build) in which every lecture predicted to win on "
              + (f"{judge}'s GPU (its JAX work's GPU seconds below {GPU_FASTER:g} x its CPU seconds) runs on a GPU"
                 if judge else
                 f"the job's GPU runs on a GPU; {family or 'this job'} is not a GPU family with predictions, so no "
                 "lecture is held to a GPU"))
    return d
