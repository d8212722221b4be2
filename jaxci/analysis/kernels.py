"""The runner model's kernels, one entry each: what `jaxci predict --kernel` offers, what --n means for it, which
suite benchmark measures it, which benchmark its crossover and its compile part are read from, and which model
method answers it whole. The model, the crossover, the CLI's sizes and the benchmarks' names all read this table,
so a new kernel is an entry here and a method on the model (docs/layout.md, "Where a change belongs").
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Size:
    """What --n means for a kernel: the accepted range, the words for it, and whether it must be given."""

    low: int
    high: int
    meaning: str
    required: bool = True


@dataclass(frozen=True)
class Kernel:
    name: str
    size: Size | None = None          # None: the kernel takes no size
    #: (suite benchmark, the case's params it needs) pairs whose records are this kernel's (crossover.kernel_of)
    suite: tuple = ()
    crossover: tuple | None = None    # (benchmark, case) the crossover's sizes are read over
    cold: str | None = None           # compile.CompileColdStart's kernel for its compile part
    host: bool = False                # host work: the family's CPU, warm only
    #: model method answering the kernel whole: (model, family, n, dtype, device, first_call) -> Estimate;
    #: None: the warm call and the compile part (RunnerModel._warm, _first_call)
    answer: Callable | None = None


ORDER = Size(1, 100_000, "matrix order")   # a float64 matrix of 80 GB: the largest catalogue GPU's memory
STEPS = Size(1, 10**9, "loop steps")
DENSE = lambda op: (("dense.Dense.time_warm", (("op", op),)),)  # noqa: E731

REGISTRY = (
    Kernel("matmul", ORDER, DENSE("matmul") + (("dense.DensePrecision.time_warm", ()),),
           crossover=("dense.Dense.time_warm", (("op", "matmul"),)), cold="matmul"),
    Kernel("solve", ORDER, DENSE("solve")),
    Kernel("cholesky", ORDER, DENSE("cholesky")),
    Kernel("elementwise", Size(1, 2**34, "elements"), (("elementwise.Elementwise.time_warm", ()),),
           crossover=("elementwise.Elementwise.time_warm", ()), cold="op_mix"),
    Kernel("dispatch"),
    Kernel("scan", STEPS, cold="scan"),
    Kernel("fori", STEPS),
    Kernel("while", Size(1, 10**9, "loop iterations; default: the benchmark's own count", False)),
    Kernel("kalman_grad", Size(1, 10**9, "time steps; default 96, the benchmark's", False)),
    Kernel("series", answer=lambda m, family, n, dtype, device, first: m._series(family, dtype, device)),
    Kernel("nuts", Size(1, 10**9, "iterations = chains x (warm-up + samples); the incident: 4 x 800"),
           answer=lambda m, family, n, dtype, device, first: m._nuts(family, n, dtype, device)),
    Kernel("numpy_matmul", ORDER, host=True,
           answer=lambda m, family, n, dtype, device, first: m._numpy_matmul(family, n, dtype)),
    Kernel("pure_python", Size(1, 10**12, "loop count of host.PurePython"), host=True,
           answer=lambda m, family, n, dtype, device, first: m._pure_python(family, n)),
    Kernel("backend_start", answer=lambda m, family, n, dtype, device, first: m._backend_start(family, device)),
    Kernel("notebook_start",
           answer=lambda m, family, n, dtype, device, first: m._notebook_start(family, device, first)),
)
KERNEL = {k.name: k for k in REGISTRY}
KERNELS = tuple(KERNEL)
LOOP_KINDS = ("scan", "fori", "while")
COLD_KERNEL = {k.name: k.cold for k in REGISTRY if k.cold}
CROSSOVER_BENCHMARK = {k.name: k.crossover for k in REGISTRY if k.crossover}


def kernel_of(benchmark: str, case: tuple) -> str | None:
    """The model's kernel for a suite benchmark and case (None: the model has no term for it)."""
    params = dict(case)
    for k in REGISTRY:
        if any(b == benchmark and all(params.get(p) == v for p, v in need) for b, need in k.suite):
            return k.name
    return None
