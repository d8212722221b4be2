"""When the GPU wins: the one margin every placement decision uses (question 6's build, the CI audit's tier
decision, the lecture audit's verdicts).

The margin is the runner model's own error on the accelerator/CPU ratio of whole lectures, measured where both
sides of a lecture ran: docs/reference/pin-margin.json (`jaxci accel-score ... --margin-record`), the factor
within which the predicted ratio met the measured one on 80% of the 12 lectures of lecture-python.myst measured on
the TPU machine and its own CPU (2026-12-06/07; no GPU runner has measured both sides of a lecture, so the figure
is the TPU's, carried to the GPU families). A GPU must be predicted (or measured) faster by that factor, not merely
faster: a smaller gain is inside the model's error, and a GPU runner costs several times a CPU runner per hour, so
a near-tie goes to the CPU. The mirror margin (the GPU slower by the factor) is where the audit says "pin to the
CPU" outright; between the two it asks for a measurement. Until 2026-12-07 the factor was 1.2, set by judgement
(tests/test_pin_margin.py holds these figures to the record).
"""

from __future__ import annotations

#: gpu / cpu seconds below this: the GPU wins; above GPU_SLOWER: the CPU wins; between: measure
GPU_FASTER, GPU_SLOWER = 0.73, 1.37


def gpu_wins(cpu_s: float | None, gpu_s: float | None) -> bool:
    """The one rule for "this work runs on the GPU": GPU seconds below GPU_FASTER x CPU seconds (both known)."""
    return cpu_s is not None and gpu_s is not None and gpu_s < GPU_FASTER * cpu_s
