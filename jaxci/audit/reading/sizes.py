"""Sizes the static scan can prove, each with the chain of evidence that proves it, and loops told apart by
what one step carries.

A `Known` is an integer or a shape (tuple of integers) plus the steps that produced it ("cell 2 line 4:
num_firms = 1_000_000", "default of create_model(n=500)", ...). Anything the scan cannot prove stays None:
sizes are never guessed. A `Loop` is one sequential construct with its trip count and the elements one step
carries (lax loops: the carry; a Python loop: the largest array passed to JAX in its body).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

LATENCY, BULK, NEAR, UNKNOWN = "latency-bound", "bulk", "near crossover", "unknown"


@dataclass(frozen=True)
class Known:
    """A proven integer, shape, or scalar marker, with how it was proven (oldest step first)."""

    value: Any  # int | tuple[int, ...] | float (a scalar, 1 element): each reader tells which it holds
    why: tuple = ()

    @property
    def elements(self) -> int | None:
        if isinstance(self.value, tuple):
            return math.prod(self.value) if all(isinstance(v, int) for v in self.value) else None
        if isinstance(self.value, float):
            return 1
        return None

    def chain(self) -> str:
        return " <- ".join(map(str, reversed(self.why))) if self.why else "literal"

    def plus(self, step: object) -> Known:  # a step: a string, or the scan's lazily rendered step
        return Known(self.value, self.why + (step,))


def join(*parts: Known | None) -> tuple:
    """The evidence of several operands, without repeats, in order."""
    out: list[object] = []
    for p in parts:
        if p is not None:
            out += [w for w in p.why if w not in out]
    return tuple(out)


#: the kinds of a Python loop around JAX calls (the static scan's; the others are lax constructs)
PYTHON_LOOPS = ("Python for loop", "Python while loop")


@dataclass
class Loop:
    """One sequential construct: `kind` is lax.scan / lax.fori_loop / lax.while_loop / Python for / while."""

    kind: str
    cell: int
    line: int
    trips: int | None = None
    trips_why: str = ""
    carry: int | None = None  # elements carried (or touched) per step
    carry_why: str = ""
    what: str = ""  # e.g. "around jitted `update`"
    source: str = "static"  # static | executed
    cls: str = UNKNOWN  # set by classify_loop
    dtype: str = "float32"  # float64 when jax_enable_x64 was already on in the cell that runs it
    func: str = ""  # the function whose body holds the loop (a vmap of it multiplies the carry)
    vmapped: bool = False  # its carry already multiplied by a vmap's axis (once: a second vmap call is not nested)
    jitted: str = ""  # the notebook's own jitted function a Python loop calls first (its carry is that call's argument)

    @property
    def in_python(self) -> bool:
        return self.kind in PYTHON_LOOPS

    def describe(self) -> str:
        trips = f"{self.trips:,} steps" if self.trips is not None else "steps not known"
        carry = f"{self.carry:,} element(s) per step" if self.carry is not None else "carry size not known"
        where = f"cell {self.cell}" + (f" line {self.line}" if self.line else "")
        return f"{where}: {self.kind}{' ' + self.what if self.what else ''} ({trips}, {carry})"

    def evidence(self) -> str:
        parts = [p for p in (f"steps: {self.trips_why}" if self.trips_why else "",
                             f"carry: {self.carry_why}" if self.carry_why else "") if p]
        return "; ".join(parts)

    def as_dict(self) -> dict:
        return {"kind": self.kind, "cell": self.cell, "line": self.line, "trips": self.trips,
                "trips_why": self.trips_why, "carry": self.carry, "carry_why": self.carry_why,
                "what": self.what, "source": self.source, "class": self.cls,
                "dtype": self.dtype}


def classify_loop(loop: Loop, crossover: float, band: float = 10.0) -> str:
    """latency-bound below crossover / band elements per step, bulk at or above the crossover, in between
    near the crossover; unknown when the carry is not known."""
    if loop.carry is None:
        return UNKNOWN
    if loop.carry >= crossover:
        return BULK
    if loop.carry < crossover / band:
        return LATENCY
    return NEAR


@dataclass
class SizeFinding:
    """One array size the scan proved: where, what, how many elements, and the evidence chain."""

    cell: int
    line: int
    what: str
    elements: int
    why: str = ""
    mapped: bool = False  # a vmap's or meshgrid's size (the verdict lists it as mapped work), set where it is found

    def text(self) -> str:
        return f"cell {self.cell} line {self.line}: {self.what} = {self.elements:,} elements" + \
               (f" ({self.why})" if self.why else "")

    def short(self) -> str:
        """The line the report's `sizes` list shows ("cell 2: zeros[1000] = 1,000 elements")."""
        return f"cell {self.cell}: {self.what} = {self.elements:,} elements"


