"""What every term of the runner model returns, and what it raises where it cannot estimate."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from jaxci.analysis import evidence as E
from jaxci.analysis.primitives import Band


class Unpredictable(Exception):
    """Raised inside the model where a term cannot be estimated; its text is the prediction's reason. `needs`: the
    suite benchmark whose results would let the term be estimated ("" where no measurement would)."""

    def __init__(self, why: str, needs: str = ""):
        super().__init__(why)
        self.needs = needs


def measure_command(needs: str, machine: str) -> str:
    """The asv command that measures the benchmark class of `needs` ("dense.Dense.time_warm") on a machine."""
    cls = needs.rsplit(".", 1)[0] if needs.count(".") >= 2 else needs
    return f"asv run --bench '^{re.escape(cls)}\\.' --machine {machine}"


@dataclass
class Estimate:
    """A term's seconds (a Band), the inputs it came from (jaxci.analysis.provenance.Input, each with its sources;
    a plain sentence is the model's own rule) and the equation used."""

    band: Band
    inputs: list = field(default_factory=list)
    basis: str = ""


def others_first(family: str, refs: list[str], missing: Unpredictable) -> tuple[list[str], str]:
    """The reference machines other than the family, else the family alone (said); `missing` raised without any."""
    others = [m for m in refs if m != family]
    if others:
        return others, ""
    if refs:
        return refs, " [calibrated on this family itself: not an independent check]"
    raise missing


def geo(a: float, b: float) -> float:
    return math.sqrt(a * b)


def fmt_published(e) -> str:
    """A published input's value in its unit."""
    v = e.value
    if e.term in (E.GEMM_RATE, E.CPU_GEMM, E.NUMPY_GEMM):
        return f"{v.mid / 1e12:.3g} TFLOP/s ({v.low / 1e12:.3g}-{v.high / 1e12:.3g}) {e.key}".rstrip()
    if e.term == E.BANDWIDTH:
        return f"{v.mid / 1e9:.3g} GB/s"
    if e.term == E.CPU_ELEM:
        return f"{v.mid / 1e6:.3g} M elements/s"
    if e.term == E.SCAN_STEP:
        return f"{v.mid * 1e9:.3g} ns per step" + (f" (read at n={e.n:,})" if e.n else "")
    return f"{v.mid:.3g} s" + (f" at n={e.n:,}" if e.n else "")
