"""Work measured on this CPU moved to another device by a measured ratio: a library sampler's runs (their leapfrog
steps priced as loop turns where the hooks counted them, else the latency-bound GPU / CPU ratio) and a cell's
eager work (the elementwise speed-up at its largest operand). Each adds its part to a prediction's Sum
(jaxci.audit.judging.predicted).
"""

from __future__ import annotations

import math

from jaxci.audit.judging import leapfrog


def dtype_of(text: str) -> str:
    """A recorded dtype ('float64', 'f64[3]', '') as the model's float64 or float32."""
    return "float64" if "64" in (text or "") else "float32"


def sampler_time(view, total, cell, seconds: float, dtype: str, device: str) -> None:
    """A library sampler's measured CPU seconds (its compiles left out) on another device. On a GPU, the runs whose
    leapfrog steps the hooks counted take the `leapfrog` part: their steps priced as loop turns on the device
    (jaxci.audit.judging.leapfrog), the CPU seconds dropped. The rest keeps `sampler`, by the ratio below."""
    runs = [r for r in cell.samplers or [] if r.s > 0]
    counted = [r for r in runs if leapfrog.serial_steps(r)]
    priced = leapfrog.price(view, counted, dtype, device) if counted and device != "cpu" else None
    if priced:
        mid, low, high, text = priced
        total.seconds("leapfrog", mid, low, high)
        total.inputs.append(f"library sampler's {seconds:.3g} CPU s, on {device}: {text}")
        seconds *= sum(r.s for r in runs if r not in counted) / sum(r.s for r in runs)
    if seconds > 0:
        _sampler_by_ratio(view, total, seconds, dtype, device)


def _sampler_by_ratio(view, total, seconds: float, dtype: str, device: str) -> None:
    """A sampler run with no leapfrog count. A NUTS chain is a while loop of leapfrog steps, each a gradient: a
    chain of small ops, latency-bound on the GPU (a launch per op, a wait per loop turn). How much slower than the
    CPU lies between two measured latency-bound GPU / CPU ratios: a warm tiny op's dispatch floor (the CPU pays
    Python's dispatch per op: the GPU's smallest handicap) and the scalar scan's per-step cost (XLA runs that loop
    on the CPU as native code of a few ns a step: the largest). A leapfrog's ops run compiled but one by one on the
    CPU, between the two: band from one to the other, geometric middle."""
    ratio = _latency_ratio(view, dtype, device)
    if ratio is None:
        total.missing.append(f"library sampler ({seconds:.3g} s on the CPU): no latency-bound GPU / CPU ratios")
        total.seconds("sampler", seconds)
        return
    mid, low, high, inputs = ratio
    total.seconds("sampler", seconds * mid, seconds * low, seconds * high)
    total.inputs.append(f"library sampler's {seconds:.3g} CPU s x {mid:.3g} ({low:.3g}..{high:.3g}), latency-bound "
                        f"{device} / cpu: {inputs}")


def _latency_ratio(view, dtype: str, device: str):
    """(mid, low, high, inputs) of the two `device` / CPU ratios _sampler names, or None without both."""
    g, c = view.call("dispatch", None, dtype, device), view.call("dispatch", None, dtype, "cpu")
    steps = [view.step("scan", dtype, dev) for dev in (device, "cpu")]
    if not (g and c and c.seconds > 0 and all(s and s.value and s.value > 0 for s in steps)):
        return None
    floor, step = g.seconds / c.seconds, steps[0].value / steps[1].value
    low, high = min(floor, step), max(floor, step)
    return (math.sqrt(low * high), low, high,
            f"dispatch floor {g.seconds * 1e6:.3g} / {c.seconds * 1e6:.3g} µs, scalar scan step "
            f"{steps[0].value * 1e6:.3g} / {steps[1].value * 1e6:.3g} µs")


def eager_time(view, total, cell, device: str, float64: bool, rest: float) -> None:
    """A cell's eager work on the GPU: its measured CPU seconds (less its top-level loops' predicted CPU time; most
    eager jnp calls run in JAX's C++ dispatch, which no hook counts) moved by the family's elementwise speed-up at
    the cell's largest eager operand: band from all of it moving (low) to none of it (high: host work, NumPy), the
    geometric middle between."""
    biggest = cell.eager.biggest if cell.eager else None
    largest, dtype = (biggest.largest, biggest.dtype) if biggest else (1, "")
    dtype = dtype_of(dtype) if float64 else "float32"
    n = max(int(largest), _uncalled_carry(cell), 1)
    c, g = view.call("elementwise", n, dtype, "cpu"), view.call("elementwise", n, dtype, device)
    if not (c and g):
        total.missing.append(c.reason or g.reason)
        return
    low = rest * min(g.seconds / c.seconds, 1.0)
    total.seconds("eager", math.sqrt(low * rest), low, rest)


def _uncalled_carry(cell) -> int:
    """The largest carry of a loop traced inside a jitted function that no call entry of the cell timed (a vmap of
    a jitted function dispatches as one batched primitive: a loop vmapped over many draws is seen as one eager op
    on a few elements): the cell's seconds are that loop's bulk work, so they move by the
    speed-up at its carry; 0 when there is none."""
    called = {e.name for e in cell.calls or []}
    return max([int(loop.carry or 0) for loop in cell.loops or [] if loop.within and loop.within not in called],
               default=0)
