"""Whether a lecture is pinned to the CPU kernel: the one rule the audit's pin list and the decision sheet share.

A lecture judged for a family is placed by its verdict on that family: "pin to CPU" puts it on the CPU kernel,
"keep on GPU" on the GPU; any other verdict (measure, either) leaves it undecided. A lecture that does not use
JAX or numpyro has nothing to pin.
"""

from __future__ import annotations

from jaxci.audit.judging import classify

CPU, GPU, UNKNOWN, NONE = "cpu", "gpu", "unknown", "none"


def placement(recommendation: str, uses_jax: bool) -> str:
    """cpu (pin it to the CPU kernel), gpu, unknown (not decided), or none (no JAX: nothing to pin)."""
    if not uses_jax:
        return NONE
    return {classify.PIN_CPU: CPU, classify.KEEP_GPU: GPU}.get(recommendation, UNKNOWN)

