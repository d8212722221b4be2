"""When the GPU wins: the one margin every placement decision uses (question 6's build, the CI audit's tier
decision, the lecture audit's verdicts).

The GPU must be predicted (or measured) at least 20% faster, not merely faster: a smaller gain is inside the
runner model's own error on whole lectures (its crossovers move up to 1.68x between recaptures of the same CPU,
docs/runner-model.md), and a GPU runner costs several times a CPU runner per hour, so a near-tie goes to the
CPU. The mirror margin (GPU 20% slower) is where the audit says "pin to the CPU" outright; between the two it
asks for a measurement.
"""

from __future__ import annotations

#: gpu / cpu seconds below this: the GPU wins; above GPU_SLOWER: the CPU wins; between: measure
GPU_FASTER, GPU_SLOWER = 0.8, 1.2


def gpu_wins(cpu_s: float | None, gpu_s: float | None) -> bool:
    """The one rule for "this work runs on the GPU": GPU seconds below GPU_FASTER x CPU seconds (both known)."""
    return cpu_s is not None and gpu_s is not None and gpu_s < GPU_FASTER * cpu_s
