"""Where one lecture runs on a GPU family: the one pin rule behind the audit's pin list, its --emit-config patch,
the whole-build accounting and the maintainers' report (so they can never disagree).

Each side of a lecture is its seconds with a band and where they come from. The GPU side is the lecture's
published run time on the family (or on a family with the same GPU and CPU model: the same hardware) where the
site's own build published one, else the runner model's prediction; the CPU side is the prediction (a build that
ran on the GPU publishes no CPU seconds). Published seconds win over a prediction because they are the very
build being judged. The lecture is pinned to the CPU only when the GPU's whole band lies above the CPU's whole
band by the margin (jaxci.policy.margins), kept on the GPU only when it lies below by the margin, and "either"
where the bands overlap: an overlap is inside what we know, and a pin changes a page, so it needs a clear win.
Seconds both devices pay (the fresh kernel's start) are taken off both sides first: they decide nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

from jaxci.analysis.prediction import CPU, GPU, LecturePrediction
from jaxci.policy.margins import GPU_FASTER, GPU_SLOWER

#: where a lecture is placed: CPU, GPU (jaxci.analysis.prediction's sides), or either
EITHER = "either"
#: a lecture's recommendation as the audit records it (jaxci.audit.judging.classify's are these constants; "either"
#: is EITHER): the whole build and the CI audit read audit records by them
KEEP_GPU, PIN_CPU, MEASURE = "keep on GPU", "pin to CPU", "measure"
PREDICTED, PUBLISHED = "predicted", "published"
#: the audit's regime of a lecture with little work (jaxci.audit.judging.classify.TRIVIAL is this constant)
TRIVIAL = "trivial"


def narrative_of(gpu_shown, regime: str) -> str:
    """Why a lecture's purpose is to show the GPU backend, or '': it prints jax.devices() / default_backend() /
    the platform or runs nvidia-smi (the scan's gpu_shown: its narrative that shows the backend, never prose about
    GPU speed) and has little work (the trivial regime). Pinning such a lecture makes it print the CPU and teach the
    wrong thing: never pinned."""
    hits = [n for n in (gpu_shown or []) if isinstance(n, str)]
    return "; ".join(hits[:2]) if hits and regime == TRIVIAL else ""


@dataclass(frozen=True)
class Side:
    """One device's seconds for a whole lecture, its band, and what they rest on."""

    seconds: float
    low: float
    high: float
    basis: str          # PREDICTED or PUBLISHED
    source: str = ""    # the published record (repository@commit, family) or the model's family

    def less(self, shared: float) -> Side:
        """The side without seconds both devices pay."""
        seconds, low, high = (max(x - shared, 0.0) for x in (self.seconds, self.low, self.high))
        return Side(seconds, low, high, self.basis, self.source)

    def text(self) -> str:
        if self.basis == PUBLISHED:
            return f"{self.seconds:,.1f} s published ({self.source})"
        return f"{self.seconds:,.1f} s predicted (band {self.low:,.1f}-{self.high:,.1f})"


def decide(cpu: Side, gpu: Side) -> str:
    """CPU when the GPU's whole band is at least GPU_SLOWER x the CPU's top, GPU when its whole band is at most
    GPU_FASTER x the CPU's bottom, EITHER where they overlap."""
    if gpu.low >= GPU_SLOWER * cpu.high:
        return CPU
    if gpu.high <= GPU_FASTER * cpu.low:
        return GPU
    return EITHER


def reason(device: str, cpu: Side, gpu: Side, family: str, shared: float = 0.0) -> str:
    """One sentence naming both sides as whole-lecture seconds (what the page and the patch print), their sources,
    the ratio without the start-up both pay, and the margin."""
    verdict = {CPU: "pin to the CPU", GPU: "keep on the GPU", EITHER: "either (the bands overlap)"}[device]
    bare_cpu, bare_gpu = cpu.less(shared).seconds, gpu.less(shared).seconds
    ratio = bare_gpu / bare_cpu if bare_cpu > 0 else float("inf")
    both = f"; without the fresh kernel's {shared:.2g} s both pay" if shared else ""
    return (f"{verdict} on {family}: GPU {gpu.text()} vs CPU {cpu.text()}{both}, GPU/CPU {ratio:.2f}; margin: pin "
            f"when the GPU's whole band is at least {GPU_SLOWER:g}x the CPU's top, keep on the GPU when at most "
            f"{GPU_FASTER:g}x its bottom, either between")


def predicted_side(pred: LecturePrediction | None, device: str, family: str) -> Side | None:
    """A prediction's side on `device` with its band (an end beyond the middle: the middle), None where it has
    none."""
    side = pred.side(device) if pred is not None else None
    if side is None:
        return None
    mid, low, high = side.band()
    return Side(mid, min(low, mid), max(high, mid), PREDICTED, f"runner model for {family}")


def published_side(seconds: float | None, source: str) -> Side | None:
    return None if seconds is None else Side(seconds, seconds, seconds, PUBLISHED, source)


def published_for(published, family: str, catalogue: dict):
    """The published build when it ran on `family` or on the same hardware, else None."""
    from jaxci.catalogue import same_hardware

    return published if published is not None and same_hardware(published.family, family, catalogue) else None


@dataclass(frozen=True)
class Placement:
    path: str
    device: str | None      # CPU, GPU, EITHER; None: not predicted (the static verdict stands)
    cpu: Side | None        # whole-lecture seconds (the shared start-up included)
    gpu: Side | None
    why: str


def place(path: str, pred: LecturePrediction | None, published_s: float | None, source: str,
          family: str) -> Placement:
    """One lecture on one GPU family from its prediction and its published seconds (None: none)."""
    cpu = predicted_side(pred, CPU, family)
    gpu = published_side(published_s, source) or predicted_side(pred, GPU, family)
    if cpu is None:
        if gpu is not None and gpu.basis == PUBLISHED:  # the build ran it: no pin without a CPU predicted faster
            return Placement(path, EITHER, None, gpu, f"either on {family}: GPU {gpu.text()}; the CPU is not "
                             "predicted (no run here): a pin needs the CPU predicted faster")
        return Placement(path, None, None, gpu, "not predicted: the static verdict stands")
    if gpu is None:
        return Placement(path, None, cpu, None, "no GPU side: the static verdict stands")
    shared = (pred.overhead_s if pred is not None else None) or 0.0
    device = decide(cpu.less(shared), gpu.less(shared))
    return Placement(path, device, cpu, gpu, reason(device, cpu, gpu, family, shared))
