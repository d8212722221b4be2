"""Build time per runner family: the one model of one lecture build's minutes and dollars (the report's questions
6 and 7, the CI audit's tier decision and job timeout all use it).

A build is the sum of the runner model's predicted whole-lecture seconds from the executed audit (each lecture on
the device it is placed on, `placement`: the GPU where jaxci.policy.margins.gpu_wins, else the CPU), priced by
jaxci.policy.jobcost.build_job. There is no second cross-machine predictor: the runner model is the only one.

Input: an audit JSON (`jaxci audit REPO --execute --machine F --format json`) read once as
jaxci.analysis.lecture_record.AuditView, whose lecture records may carry a prediction per family (`predictions`,
each a jaxci.analysis.prediction.LecturePrediction: the runner model asked with what the executed run measured per
jitted call). Three ways to build:

- a CPU family: every lecture on its CPU (the predicted cpu_s);
- a GPU family: each lecture on the GPU where it wins there (jaxci.policy.margins.gpu_wins, the CI audit's rule
  too), else on its CPU;
- a split fleet: the lectures predicted faster on the GPU family's GPU than on the CPU family run there, the rest
  on the CPU family, as two jobs at once (wall time: the longer job).

Dollars = billed seconds (lecture execution + the catalogue's job overhead, EC2's 60 s minimum) x the family's
catalogue price. Everything here is *predicted*; a family without predictions in the audit is *not measured*,
with the command that would measure it. The benchmark suite's own job cost is not a lecture build (findings §6).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from jaxci.analysis.lecture_record import AuditView, LectureRecord

# number, MOST_SECONDS: the one rule for a figure of an audit record
from jaxci.analysis.prediction import CPU, GPU, MOST_SECONDS, LecturePrediction, number  # noqa: F401
from jaxci.policy.margins import gpu_wins

AUDIT_FOR = "jaxci audit LECTURE_REPO --execute --machine {family} --format json > audit.json"


@dataclass
class Build:
    family: str
    seconds: float          # lecture execution, sequential
    low: float
    high: float
    lectures: int
    on_gpu: int = 0         # lectures run on the GPU (a GPU family's faster device)
    missing: list = field(default_factory=list)   # lecture paths without a prediction for this family
    published: Published | None = None             # the family's own published run times, where the audit has them

    def add(self, seconds: float, low: float, high: float, on_gpu: bool) -> None:
        """One more lecture, run on the GPU or not."""
        self.seconds += seconds
        self.low += low
        self.high += high
        self.lectures += 1
        self.on_gpu += on_gpu


@dataclass
class Published:
    """The lectures of a build that carry the family's published run time (a `*.notebooks` repository's Execution
    Statistics, put into the audit by measure/published_builds.py --save-audit): both sums over the same lectures."""

    seconds: float          # published, summed
    predicted: float        # predicted, summed over the same lectures
    lectures: int
    sources: tuple = ()


@dataclass
class Split:
    gpu: Build              # the lectures sent to the GPU family
    cpu: Build              # the rest, on the CPU family
    dollars: float

    @property
    def wall_s(self) -> float:
        return max(self.gpu.seconds, self.cpu.seconds)


def prediction(lecture: LectureRecord, family: str) -> LecturePrediction | None:
    """The lecture's prediction for `family`, None where it has no predicted CPU seconds."""
    pred = lecture.prediction(family)
    return pred if pred is not None and pred.cpu is not None else None


def lecture_seconds(pred: LecturePrediction, device: str) -> tuple[float, float, float] | None:
    """(mid, low, high) predicted seconds of one whole lecture on `device` ("cpu" | "gpu"); a missing band end is
    the middle; None: not predicted."""
    side = pred.side(device)
    return side.band() if side is not None else None


def placement(pred: LecturePrediction, has_gpu: bool) -> str:
    """The device a lecture runs on on a family: its GPU where the one margin says the GPU wins, else its CPU."""
    gpu = pred.gpu.seconds if has_gpu and pred.gpu is not None else None
    return GPU if gpu_wins(pred.cpu.seconds if pred.cpu is not None else None, gpu) else CPU


def _device(pred: LecturePrediction, has_gpu: bool) -> tuple[str, float, float, float]:
    """(device, seconds, low, high) a lecture runs at on the family (`placement`)."""
    device = placement(pred, has_gpu)
    return (device, *seconds_on(pred, device))


def seconds_on(pred: LecturePrediction, device: str) -> tuple[float, float, float]:
    """lecture_seconds where the prediction has them: `prediction` keeps only records with CPU seconds, and
    `placement` puts a lecture on its GPU only where it has GPU seconds."""
    seconds = lecture_seconds(pred, device)
    if seconds is None:
        raise ValueError(f"a prediction without {device} seconds: {pred!r}")
    return seconds


def published_seconds(lecture: LectureRecord, family: str) -> tuple[float, str] | None:
    """(seconds, source) of the family's own published run time of this lecture, when the audit carries one."""
    pub = lecture.published.get(family)
    seconds = pub.seconds if pub is not None else None
    return (seconds, pub.source) if pub is not None and seconds is not None and seconds > 0 else None


def family_build(audit: AuditView, family: str, has_gpu: bool) -> Build | None:
    """One sequential build on `family` from the audit's predictions; None when it has none for the family.
    Where lectures carry the family's published run time, `published` sums it beside their predicted seconds."""
    build = Build(family, 0.0, 0.0, 0.0, 0)
    pub_s, pub_pred, pub_n, sources = 0.0, 0.0, 0, []
    for lec in audit.lectures:
        pred = prediction(lec, family)
        if pred is None:
            build.missing.append(lec.path)
            continue
        device, mid, low, high = _device(pred, has_gpu)
        build.add(mid, low, high, device == "gpu")
        pub = published_seconds(lec, family)
        if pub:
            pub_s, pub_pred, pub_n = pub_s + pub[0], pub_pred + mid, pub_n + 1
            sources += [pub[1]] if pub[1] and pub[1] not in sources else []
    if pub_n:
        build.published = Published(pub_s, pub_pred, pub_n, tuple(sources))
    return build if build.lectures else None


def split_build(audit: AuditView, gpu_family: str, cpu_family: str, catalogue: dict) -> Split | None:
    """GPU-faster lectures on the GPU family, the rest on the CPU family (both need a prediction per lecture)."""
    gpu, cpu = Build(gpu_family, 0.0, 0.0, 0.0, 0), Build(cpu_family, 0.0, 0.0, 0.0, 0)
    for lec in audit.lectures:
        on_gpu, on_cpu = prediction(lec, gpu_family), prediction(lec, cpu_family)
        if on_gpu is None or on_cpu is None:
            continue
        device, mid, low, high = _device(on_gpu, True)
        cpu_mid = seconds_on(on_cpu, CPU)[0]
        side = gpu if device == GPU and gpu_wins(cpu_mid, mid) else cpu
        if side is cpu:
            mid, low, high = seconds_on(on_cpu, CPU)
        side.add(mid, low, high, side is gpu)
    if not gpu.lectures or not cpu.lectures:
        return None  # no lecture gains from the GPU (or none runs on the CPU): a split is one family
    return Split(gpu, cpu, job_dollars(gpu.seconds, catalogue[gpu_family])
                 + job_dollars(cpu.seconds, catalogue[cpu_family]))


def job_dollars(execution_s: float, entry) -> float:
    """One build job's dollars on a catalogue entry (jaxci.policy.jobcost.build_job: the CI audit's tier decision
    prices its options with the same function); 0 where there is no price."""
    from jaxci.catalogue import catalogue_defaults
    from jaxci.policy.jobcost import build_job

    return build_job(entry, execution_s, catalogue_defaults())[1] or 0.0


def overhead_minutes() -> float:
    from jaxci.catalogue import CatalogueError, catalogue_defaults

    value = catalogue_defaults()["job_overhead_minutes"].value
    if value is None:
        raise CatalogueError("machines.toml [defaults] needs a sourced job_overhead_minutes")
    return float(value)


def partner(audit: AuditView, catalogue: dict, family: str) -> str | None:
    """The family a split pairs `family` with: the cheapest family of the other kind with predictions."""
    entry = catalogue[family]
    others = [f for f in audit.families() if f in catalogue and f != family and catalogue[f].has_gpu != entry.has_gpu
              and catalogue[f].value("price_per_hour") is not None
              and family_build(audit, f, catalogue[f].has_gpu) is not None]
    return min(others, key=lambda f: (catalogue[f].value("price_per_hour"), f), default=None)


@dataclass(frozen=True)
class PublishedBuild:
    """A whole lecture build published on the family's own hardware (the catalogue's `published_build_s`)."""

    seconds: float
    notebooks: int | None
    source: str


def published_build(entry) -> PublishedBuild | None:
    """The catalogue's published build on this family (notebook execution summed), or None."""
    fig = entry.figures.get("published_build_s")
    if fig is None or fig.value is None:
        return None
    return PublishedBuild(float(fig.value), entry.value("published_build_notebooks"), fig.source)


#: the CPU cases two families are told apart by: a BLAS-bound op, a bandwidth-bound map, a scalar loop, and the
#: interpreter's single-thread speed (the host probe every notebook's host work is scaled by)
CPU_CASES = (("matmul", 4096, "float32"), ("elementwise", 50_000_000, "float32"), ("scan", 100_000, "float64"),
             ("pure_python", 10_000_000, "float64"))
#: predictions closer than this (relative) on every case are the same to a maintainer: the model's bands are wider
ALIKE = 0.02


def _cpu_seconds(model, family: str) -> tuple:
    """The model's seconds for CPU_CASES on the family's CPU (None where it cannot predict), once per model."""
    memo = model.__dict__.setdefault("_cpu_case_seconds", {})
    if family not in memo:
        memo[family] = tuple(p.seconds if p else None for p in
                             (model.predict(family, kernel, n, dtype, "cpu") for kernel, n, dtype in CPU_CASES))
    return memo[family]


def cpu_twins(model, catalogue: dict, family: str) -> list[str]:
    """The catalogue families whose CPU the runner model predicts as `family`'s (within ALIKE) on every CPU case,
    the host probe included: their CPU inputs (physical cores, single-thread scores, published figures on the
    family) barely differ, so the model cannot tell them apart."""
    mine = _cpu_seconds(model, family)
    if None in mine:
        return []
    alike = []
    for f, e in catalogue.items():
        theirs = _cpu_seconds(model, f) if f != family and not e.is_lab else (None,)
        if None not in theirs and all(abs(a - b) <= ALIKE * max(a, b) for a, b in zip(mine, theirs)):
            alike.append(f)
    return sorted(alike)

