"""The records the kernel's hooks write per cell and the judging reads: a lax loop, a jitted call signature, the
cell's eager work and a library sampler's run.

Standard library only, nothing from jaxci: the runner ships this module's source into the kernel ahead of the hooks
(kernel._kernel_setup_code), so both sides build and read the same classes. On the wire and on disk (run caches,
audit JSON) a record is its `asdict()`; `read` also takes the positional lists that saved audits and caches
hold, so they stay readable.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace


def _from_fields(cls, raw):
    """A record from its asdict(): the keys that are its fields (a key it does not know is ignored); a record
    already of `cls` is itself."""
    if isinstance(raw, cls):
        return raw
    return cls(**{f.name: raw[f.name] for f in fields(cls) if f.name in raw})


#: TracedLoop.count of a loop whose trips the hooks counted by running its trace again (jit_calls.Called.count)
COUNTED = "counted"


@dataclass
class TracedLoop:
    """One lax loop: `kind` (lax.scan, lax.fori_loop, lax.while_loop), `trips` (None: not known at trace time; a
    count may make it a mean of turns) and `carry` (elements carried per turn)."""

    kind: str
    trips: float | None
    carry: int | None
    times: int = 1  # a cell's loop: the times it was noted (at top level: the times it ran)
    within: str = ""  # a cell's loop: the jitted function whose trace noted it ("" at top level)
    count: str | None = None  # a call's loop of unknown trips: COUNTED, or "not counted: <why>"

    @property
    def counted(self) -> bool:
        return self.count == COUNTED

    @property
    def top_level(self) -> bool:
        return not self.within

    @classmethod
    def read(cls, raw) -> TracedLoop:
        """A loop from its asdict(), or from the positional forms written before: a cell's [kind, trips, carry,
        times, within], a call's [kind, trips, carry] with the count's label fourth."""
        if isinstance(raw, (cls, dict)):
            return _from_fields(cls, raw)
        kind, trips, carry, *rest = raw
        if rest and isinstance(rest[0], str):
            return cls(kind, trips, carry, count=rest[0])
        return cls(kind, trips, carry, *rest[:2])


@dataclass
class JitCall:
    """One jitted function's argument signature called from notebook code in a cell: what it is (its largest
    argument, XLA's cost analysis of its executable, the loops its trace held, `placed="cpu"` where the notebook
    places it on the CPU) and what the cell spent on it (calls; `first_s` the compiling call and `compile_s` its
    compile part; `warm_s` the call after; `wall_s` the calls timed on the slow path)."""

    name: str = ""
    elements: int = 0
    largest: int = 0
    dtype: str = ""
    loops: list[TracedLoop] = field(default_factory=list)
    placed: str | None = None
    flops: float | None = None
    bytes: float | None = None
    transcendentals: float | None = None
    fusions: int | None = None
    calls: int = 1
    wall_s: float = 0.0
    first_s: float | None = None
    compile_s: float | None = None
    warm_s: float | None = None

    def __post_init__(self):
        self.loops = [TracedLoop.read(loop) for loop in self.loops or []]

    def opened(self) -> JitCall:
        """A cell's entry for this signature: what it is, nothing spent yet (its loops shared, so a count reaches
        every entry of the signature)."""
        copy = replace(self, calls=0, wall_s=0.0, first_s=None, compile_s=None, warm_s=None)
        copy.loops = self.loops
        return copy

    @classmethod
    def read(cls, raw) -> JitCall:
        """A call from its asdict() (keys it does not know are ignored)."""
        return _from_fields(cls, raw)


@dataclass(order=True)
class EagerSize:
    """One size class of a cell's eager ops (a power of two of the operand's elements, per dtype): the largest
    operand's elements in it and its ops. Ordered by its fields, largest first."""

    largest: int
    ops: int
    dtype: str = ""

    @classmethod
    def read(cls, raw) -> EagerSize:
        """A size class from its asdict() or the positional [largest, ops, dtype] saved runs hold."""
        return cls(*raw[:3]) if isinstance(raw, (list, tuple)) else _from_fields(cls, raw)


@dataclass
class EagerWork:
    """A cell's un-jitted primitives (jnp outside jit): `ops` counted, `s` seconds inside them, and `sizes` per size
    class, largest first (the first ops of a cell are read in full, the rest only counted and timed)."""

    ops: int = 0
    s: float = 0.0
    sizes: list[EagerSize] = field(default_factory=list)

    def __post_init__(self):
        self.sizes = [EagerSize.read(size) for size in self.sizes or []]

    @property
    def biggest(self) -> EagerSize | None:
        """The size class of the largest operand (then the most ops); None when no op was read in full."""
        return max(self.sizes, default=None)

    @classmethod
    def read(cls, raw) -> EagerWork | None:
        """Eager work from its asdict() (keys it does not know are ignored); None stays None."""
        return None if raw is None else _from_fields(cls, raw)


@dataclass
class SamplerRun:
    """One library sampler run started in a cell (numpyro's `MCMC.run`): its seconds waited for (compiles
    included), chains, warm-up and samples, and for HMC / NUTS the collected iterations' leapfrog steps (their sum,
    count and largest, and `leapfrog_lockstep`: per iteration the most any chain took, summed; None: not counted)."""

    what: str = ""
    s: float = 0.0
    chains: int | None = None
    warmup: int | None = None
    samples: int | None = None
    chain_method: str | None = None
    leapfrog: int | None = None
    leapfrog_iterations: int | None = None
    leapfrog_max: int | None = None
    leapfrog_lockstep: int | None = None

    @property
    def vectorized(self) -> bool:
        """Vectorized chains run their leapfrog loops in lockstep."""
        return self.chain_method == "vectorized" and int(self.chains or 1) > 1

    @classmethod
    def read(cls, raw) -> SamplerRun:
        """A run from its asdict() (keys it does not know are ignored)."""
        return _from_fields(cls, raw)
