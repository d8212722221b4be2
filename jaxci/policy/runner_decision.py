"""The runner decision for one audited lecture repository (issue 79): stay on today's family with the pins, move
the whole build to another catalogue family, split it (the lectures that need the GPU on the GPU family, the rest
on a CPU family, two jobs at once) or shard the split's CPU side over N runners. One function, `decide`.

Every option is priced from the same kind of figure: the runner model's prediction of each lecture from its run
here (jaxci.analysis.prediction), its band at least the model's held-out error (jaxci.policy.model_error), over the
same lectures (those predicted on every family in play; the others are counted and named). Published seconds are
shown beside, never mixed into an option. Each job pays its own set-up, SETUP_MIN (the repository's environment
install: about 12 minutes fresh, 7-8 with a conda cache, QuantEcon's own figure in
docs/reference/published-measurements.md), and is billed at its family's catalogue price.

"Needs the GPU" is the one rule of jaxci.policy.margins.gpu_wins on the band ends: the lecture uses JAX and its GPU
band's high end beats its CPU band's low end by the pin margin; a lecture that does not use JAX never needs it.

The rule that takes an option: the cheapest whose wall-time band's high end is no worse than today's build (the
site's published build where the audit carries it, else the stay option's own high end), else stay.
"""

from __future__ import annotations

from dataclasses import dataclass

from jaxci.analysis.lecture_record import AuditView, LectureRecord
from jaxci.policy.builds import lecture_seconds, prediction
from jaxci.policy.margins import gpu_wins
from jaxci.policy.model_error import widened
from jaxci.policy.timeouts import GITHUB_DEFAULT_JOB_MIN

#: one job's set-up in minutes, (low, high): a conda-cached environment .. a fresh one (published-measurements.md)
SETUP_MIN = (7.0, 12.0)
#: the most CPU shards a plan considers: beyond it every shard's set-up outweighs what it takes off the wall
MAX_SHARDS = 8

STAY, MOVE, SPLIT, SHARD = "stay", "move", "split", "shard"
Seconds = tuple[float, float, float]


@dataclass(frozen=True)
class Job:
    """One job of an option: its family, the lectures it runs and their predicted execution seconds (mid, low,
    high); set-up comes on top."""
    family: str
    lectures: tuple[str, ...]
    seconds: Seconds
    device: str = "cpu"                  # "gpu" when any of its lectures runs on the family's GPU


@dataclass(frozen=True)
class Option:
    kind: str
    name: str
    jobs: tuple[Job, ...]
    prices: tuple[float, ...]            # $/hour of each job's family (catalogue)
    limits: tuple[str, ...] = ()         # a free runner's limits this option meets, said

    @property
    def wall_min(self) -> Seconds:
        """(mid, low, high) minutes: the longest job, each job's set-up included (mid: the fresh set-up)."""
        return (max(j.seconds[0] / 60 + SETUP_MIN[1] for j in self.jobs),
                max(j.seconds[1] / 60 + SETUP_MIN[0] for j in self.jobs),
                max(j.seconds[2] / 60 + SETUP_MIN[1] for j in self.jobs))

    @property
    def billed_min(self) -> float:
        """Minutes billed over every job (mid, fresh set-up): what the dollars are."""
        return sum(j.seconds[0] / 60 + SETUP_MIN[1] for j in self.jobs)

    @property
    def dollars(self) -> Seconds:
        """(mid, low, high) $ a build: each job's minutes x its family's price."""
        def cost(i: int, setup: float) -> float:
            return sum((j.seconds[i] / 60 + setup) / 60 * p for j, p in zip(self.jobs, self.prices))
        return cost(0, SETUP_MIN[1]), cost(1, SETUP_MIN[0]), cost(2, SETUP_MIN[1])


@dataclass(frozen=True)
class Decision:
    repository: str
    today: str                           # the family the build runs on
    today_min: float                     # today's build, minutes: published when known, else the stay option's high
    today_kind: str                      # "published" | "predicted"
    options: tuple[Option, ...]
    chosen: Option
    rule: str
    priced: int                          # lectures in every option
    left_out: tuple[str, ...] = ()       # lectures without a prediction on some family in play
    flips: tuple[str, ...] = ()          # lectures whose uncertainty could flip the choice
    measure: str = ""                    # what would measure them


def _sides(lec: LectureRecord, family: str) -> tuple[Seconds, Seconds] | None:
    """(CPU, GPU) predicted seconds (mid, low, high) of a JAX lecture on `family`; None for a lecture that does not
    use JAX or lacks either side."""
    pred = prediction(lec, family) if lec.uses_jax else None
    cpu = lecture_seconds(pred, "cpu") if pred is not None else None
    gpu = lecture_seconds(pred, "gpu") if pred is not None and pred.gpu is not None else None
    return (cpu, gpu) if cpu is not None and gpu is not None else None


def needs_gpu(lec: LectureRecord, family: str) -> bool:
    """The one rule (margins.gpu_wins) on the band ends: the GPU's slowest beats the CPU's fastest."""
    sides = _sides(lec, family)
    return sides is not None and gpu_wins(sides[0][1], sides[1][2])


def borderline(lec: LectureRecord, family: str) -> bool:
    """A JAX lecture whose GPU middle wins over its CPU middle while the bands do not: its place could flip with a
    measurement."""
    sides = _sides(lec, family)
    return sides is not None and gpu_wins(sides[0][0], sides[1][0]) and not needs_gpu(lec, family)


def _seconds(lec: LectureRecord, family: str, device: str) -> Seconds:
    pred = prediction(lec, family)
    found = widened(lecture_seconds(pred, device)) if pred is not None else None
    if found is None:
        raise KeyError(f"{lec.path}: no {device} prediction for {family}")
    return found


def _summed(parts: list[Seconds]) -> Seconds:
    return (sum(p[0] for p in parts), sum(p[1] for p in parts), sum(p[2] for p in parts))


def _job(family: str, lectures: list[LectureRecord], device_of) -> Job:
    parts = [_seconds(lec, family, device_of(lec)) for lec in lectures]
    device = "gpu" if any(device_of(lec) == "gpu" for lec in lectures) else "cpu"
    return Job(family, tuple(lec.path for lec in lectures), _summed(parts), device)


def _on(family: str, has_gpu: bool):
    """Each lecture's device on `family`: its GPU where it needs it, else its CPU."""
    return lambda lec: "gpu" if has_gpu and needs_gpu(lec, family) else "cpu"


def shards(family: str, lectures: list[LectureRecord], n: int) -> list[Job]:
    """`lectures` over `n` runners of `family` on their CPUs, longest first onto the least loaded (LPT): each
    shard's predicted seconds."""
    timed = sorted(((_seconds(lec, family, "cpu"), lec) for lec in lectures), key=lambda t: (-t[0][0], t[1].path))
    bins: list[list] = [[] for _ in range(n)]
    for seconds, lec in timed:
        min(bins, key=lambda b: sum(s[0] for s, _ in b)).append((seconds, lec))
    return [Job(family, tuple(lec.path for _, lec in b), _summed([s for s, _ in b])) for b in bins if b]


def _limits(jobs: list[Job], catalogue: dict) -> tuple[str, ...]:
    """GitHub's job limit (policy.timeouts.GITHUB_DEFAULT_JOB_MIN) where a hosted job's band could pass it."""
    return tuple(f"{job.family}'s job could pass GitHub's {GITHUB_DEFAULT_JOB_MIN / 60:g}-hour limit" for job in jobs
                 if catalogue[job.family].runner == "github"
                 and job.seconds[2] / 60 + SETUP_MIN[1] > GITHUB_DEFAULT_JOB_MIN)


def _option(kind: str, name: str, jobs: list[Job], catalogue: dict) -> Option:
    prices = tuple(float(catalogue[j.family].value("price_per_hour") or 0.0) for j in jobs)
    return Option(kind, name, tuple(jobs), prices, _limits(jobs, catalogue))


def options(today: str, catalogue: dict, lectures: list[LectureRecord]) -> list[Option]:
    """Every option over `lectures` (each predicted on every runner family): stay, move to each family, and per
    CPU family a split and its best shard plan."""
    runners = [n for n, e in catalogue.items() if not e.is_lab]
    gpu_today = catalogue[today].has_gpu
    stay = _option(STAY, f"stay on {today}", [_job(today, lectures, _on(today, gpu_today))], catalogue)
    out = [stay]
    for family in runners:
        if family != today:
            out.append(_option(MOVE, f"move to {family}",
                               [_job(family, lectures, _on(family, catalogue[family].has_gpu))], catalogue))
    if not gpu_today:   # a CPU build: its own runners, sharded
        return out + [_best_shards(today, [], lectures, catalogue, f"{len(lectures)} over {{n}} x {today}")]
    gpu_side = [lec for lec in lectures if needs_gpu(lec, today)]
    cpu_side = [lec for lec in lectures if not needs_gpu(lec, today)]
    for family in (f for f in runners if not catalogue[f].has_gpu):
        head = [_job(today, gpu_side, lambda _: "gpu")] if gpu_side else []
        out.append(_option(SPLIT, f"split: {len(gpu_side)} on {today}'s GPU, {len(cpu_side)} on {family}",
                           head + [_job(family, cpu_side, lambda _: "cpu")], catalogue))
        out.append(_best_shards(family, head, cpu_side, catalogue,
                                f"{len(gpu_side)} on {today}'s GPU, {len(cpu_side)} over {{n}} x {family}"))
    return out


def _best_shards(family: str, head: list[Job], lectures: list[LectureRecord], catalogue: dict, name: str) -> Option:
    """The shard plan of `lectures` over N runners of `family` (beside the jobs of `head`) with the fewest shards
    whose wall time is within 5% of the best N up to MAX_SHARDS: past it a shard's set-up buys nothing."""
    plans = [_option(SHARD, "shard: " + name.format(n=n), head + shards(family, lectures, n), catalogue)
             for n in range(2, MAX_SHARDS + 1)]
    best = min(p.wall_min[0] for p in plans)
    return next(p for p in plans if p.wall_min[0] <= 1.05 * best)


def decide(audit: AuditView, repository: str, today: str, catalogue: dict,
           published_min: float | None) -> Decision | None:
    """The decision: every option over the lectures predicted on every runner family, and the one the rule takes;
    None when no lecture is predicted on every family (no option can be priced)."""
    runners = [n for n, e in catalogue.items() if not e.is_lab]
    priced = [lec for lec in audit.lectures if all(prediction(lec, f) is not None for f in runners)]
    if not priced:
        return None
    left = tuple(lec.path for lec in audit.lectures if lec not in priced)
    found = options(today, catalogue, priced)
    stay = found[0]
    limit, kind = (published_min, "published") if published_min else (stay.wall_min[2], "predicted")
    fits = [o for o in found if o.wall_min[2] <= limit and not o.limits]
    chosen = min(fits, key=lambda o: (o.dollars[0], o.wall_min[0])) if fits else stay
    rule = (f"the cheapest option whose wall-time band's high end is at most today's build ({limit:.1f} min, {kind})"
            + ("" if fits else "; none is: stay"))
    flips = tuple(sorted(lec.path for lec in priced if borderline(lec, today)))
    measure = (f"each run on both devices of a {today} runner (`jaxci audit REPO --execute --only NAMES "
               f"--machine {today}` there: the audit runs the CPU and the GPU side)" if flips else "")
    return Decision(repository, today, limit, kind, tuple(found), chosen, rule, len(priced), left, flips, measure)


def published_minutes(published, family: str) -> float | None:
    """Today's build in minutes from the site's published build (jaxci.policy.published_build), when it ran on
    `family`'s hardware; None otherwise (then today is the stay option's predicted band's high end)."""
    return published.total_s / 60 if published is not None and published.family == family else None


def as_dict(d: Decision) -> dict:
    """The decision as the audit's `runner_decision` block and `jaxci runner-decision --format json` write it."""
    return {"repository": d.repository, "today": d.today, "today_min": d.today_min, "today_kind": d.today_kind,
            "chosen": d.chosen.name, "kind": d.chosen.kind, "rule": d.rule, "priced": d.priced,
            "left_out": list(d.left_out), "flips": list(d.flips),
            "options": [{"kind": o.kind, "name": o.name, "wall_min": list(o.wall_min), "billed_min": o.billed_min,
                         "dollars": list(o.dollars), "jobs": [[j.family, len(j.lectures), *j.seconds] for j in o.jobs],
                         "limits": list(o.limits)} for o in d.options]}
