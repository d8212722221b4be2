"""Published measurements on a family's hardware: the runner model's third kind of input.

Beside our own asv records (measured) and sourced catalogue figures, a term may come from a figure someone else
measured on the family's hardware and published (the T4 runner's own table in incidents.md; achieved GEMM and
copy rates in published-measurements.md). Each one carries its source, and the model labels it
"published (source)" in every prediction's inputs, and as a `published` source in its `sources`
(jaxci.analysis.provenance). The nearest evidence wins: measured on the family, else
published on its hardware, else carried from another machine.

`figures` names the published figures an input was derived from, so a leave-one-out score can drop every input
that used the figure it scores (`jaxci published-score`). Nothing here reads a file.
"""

from __future__ import annotations

from dataclasses import dataclass

from jaxci.analysis.primitives import Band

# term names (what the value is; its unit)
GEMM_RATE = "gemm_rate"          # achieved FLOP/s of a large matmul on a precision path (key: "fp32" / "tf32")
BANDWIDTH = "bandwidth"          # achieved bytes/s of a large device-memory stream
COMPILE = "compile"              # seconds a first call costs over its warm call (key: kernel; n: its size)
SERIES = "series_compile"        # seconds the fresh-jit series costs over its five warm calls
SCAN_STEP = "scan_step"          # seconds per step of a scalar lax.scan (key: "" ; n: the steps it was read at)
HOST_PYTHON = "host_python"      # seconds of the pure-Python 10M integer sum (the host single-thread figure)
HOST_RATIO = "host_ratio"        # seconds of the same lecture work on `where`'s host over `key`'s (a published range)
CPU_GEMM = "cpu_gemm_rate"       # achieved FLOP/s of a JAX matmul on the CPU
CPU_ELEM = "cpu_elem_rate"       # op-mix elements/s on the CPU
NUMPY_GEMM = "numpy_gemm_rate"   # NumPy (BLAS) matmul FLOP/s
CASE_WARM = "case_warm"          # seconds of one published case, warm (key: kernel; n: its size): no spread
CASE_FIRST = "case_first"        # seconds of one published case's first call, compile included: no spread
#: terms that grow with the CPU's core count: a figure published on one family holds only there, never on another
#: family with the same CPU model and fewer or more vCPUs (the rest are single-thread or device-side)
PER_CORES = frozenset({CPU_GEMM, CPU_ELEM, NUMPY_GEMM, CASE_WARM, CASE_FIRST})


@dataclass(frozen=True)
class Evidence:
    """One published input: `where` is a catalogue family (host-side terms) or a GPU model (device terms, e.g.
    "Tesla T4", matched by the catalogue's gpu_model)."""
    where: str
    device: str
    term: str
    value: Band
    source: str
    key: str = ""
    dtype: str = "float32"
    n: int | None = None
    figures: frozenset = frozenset()
    kind: str = "published"  # "predicted": derived from published figures by a stated rule (host_speed)

    def label(self) -> str:
        return f"{self.kind} ({self.source})"


def select(evidence, where: tuple, device: str, term: str, key: str = "", dtype: str | None = None) -> list:
    """The inputs of one term on one family's hardware (`where`: the family and its GPU model)."""
    return [e for e in evidence if e.where in where and e.device == device and e.term == term
            and e.key == key and (dtype is None or e.dtype == dtype)]


def without(evidence, figure: str) -> list:
    """Every input not derived from `figure` (the leave-one-out model of that figure)."""
    return [e for e in evidence if figure not in e.figures]
