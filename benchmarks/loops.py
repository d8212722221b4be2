"""loops: a scalar quadratic-map lax.scan, a fori_loop accumulating into an array, a while_loop to convergence.

These are the latency-bound shapes where each iteration is a few tiny device kernels: the scan took
1,340x longer on a T4 than on the runner's CPU (incidents.md). The 1e7-step scan on a slow device is
expected to hit the class timeout: asv then records it as timed out and the run goes on.
"""

import numpy as np

# track_scale is a run fact (the scale this suite ran at), collected by asv from this module
from benchmarks.common import DEVICES, DTYPES, ColdStart, CompileSplit, WarmTime, track_scale  # noqa: F401

SCAN_SIZES = [1_000, 10_000, 100_000, 1_000_000, 10_000_000]
UNROLLS = [1, 8]
FORI_SIZES = [1_000, 10_000, 100_000, 400_000]
CI_MAX_N = 10_000
COMPILE_N = 10_000


def _scan(n, unroll, dtype):
    from benchmarks.kernels import loops

    return loops.scan_fn(n, unroll), (np.asarray(0.3, dtype=dtype),)


def _fori(n, dtype):
    from functools import partial

    from benchmarks.kernels import loops

    return partial(loops.fori_accumulate, n=n), (np.asarray(0.0, dtype=dtype),)


def _while(dtype):
    from benchmarks.kernels import loops

    return loops.power_iteration, loops.power_iteration_inputs(dtype)


class Scan(WarmTime):
    params = [SCAN_SIZES, UNROLLS, DTYPES, DEVICES]
    param_names = ["n", "unroll", "dtype", "device"]
    timeout = 240

    def is_large(self, n, unroll):
        return n > CI_MAX_N

    def build(self, n, unroll, dtype):
        return _scan(n, unroll, dtype)


class ForiAccumulate(WarmTime):
    params = [FORI_SIZES, DTYPES, DEVICES]
    param_names = ["n", "dtype", "device"]
    timeout = 240

    def is_large(self, n):
        return n > CI_MAX_N

    def build(self, n, dtype):
        return _fori(n, dtype)


class WhileConverge(WarmTime):
    params = [DTYPES, DEVICES]
    param_names = ["dtype", "device"]

    def build(self, dtype):
        return _while(dtype)


LOOP_KINDS = ["scan", "fori", "while"]


class LoopsCompile(CompileSplit):
    params = [LOOP_KINDS, DTYPES, DEVICES]
    param_names = ["loop", "dtype", "device"]

    def build(self, loop, dtype):
        if loop == "scan":
            return _scan(COMPILE_N, 1, dtype)
        if loop == "fori":
            return _fori(COMPILE_N, dtype)
        return _while(dtype)


class LoopsColdStart(ColdStart):
    params = LoopsCompile.params
    param_names = LoopsCompile.param_names
    build = LoopsCompile.build
