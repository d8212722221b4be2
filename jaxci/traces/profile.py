"""`jaxci profile KERNEL`: run a pathological kernel under jax.profiler and read the trace without TensorBoard.

Kernels: `scan` (the long scalar lax.scan), `kalman-grad` (the incident's Kalman gradient, k = 11, T = 96),
`nuts` (one short NUTS run on the incident's state-space model). The kernel is compiled and run once
before tracing; then one call is traced into a temporary directory and the `.xplane.pb` is read with
`jax.profiler.ProfileData`. From device planes (`/device:...`) it reports device-busy time (the union of
kernel intervals), the traced wall time, the gap fraction (1 - busy / wall) and device ops per loop
iteration. A CPU-only trace has no device plane: the report then says that device timings are not
available and lists what the host plane holds (XLA CPU thunks, runtime and Python events); it never
estimates device figures. Tracing disables GPU command buffers and adds overhead, so these numbers are
diagnostics: they never feed the benchmark history.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from jaxci import REPO_ROOT

KERNELS = ("scan", "kalman-grad", "nuts")
DEFAULT_N = {"scan": 100_000, "kalman-grad": 96, "nuts": 10}
NOT_AVAILABLE = "device timings not available: the trace has no device plane (CPU backend)"
# Lines of a device plane that summarise others rather than record kernels.
DERIVED_LINES = ("XLA Modules", "XLA TraceMe", "Steps", "Launch Stats", "Framework Name Scope", "Source code")


# The profiler's own Python frames, left out of the host figures.
OWN_FRAMES = ("$profiler.py", "$contextlib.py", "$profile.py")


class ProfileError(ValueError):
    pass


def _prepare(kernel: str, n: int, dtype: str):
    """(run, iterations, what one iteration is): run() performs one warm call and waits for it."""
    import jax
    import numpy as np

    if kernel == "scan":
        from benchmarks.kernels import loops

        fn = jax.jit(lambda x0: loops.quadratic_map(x0, n))
        x0 = jax.device_put(np.asarray(0.3, dtype=dtype))
        return (lambda: jax.block_until_ready(fn(x0))), n, "scan step"
    if kernel == "kalman-grad":
        from benchmarks.kernels import kalman

        fn = jax.jit(kalman.grad_fn("sequential", 11))
        args = jax.device_put(kalman.inputs(11, n, dtype))
        return (lambda: jax.block_until_ready(fn(*args))), n, "filter step (forward and backward pass)"
    if kernel == "nuts":
        from benchmarks.kernels import nuts_models

        class Sampler:
            """One sampling run per call; `state` keeps the last run's counts (its leapfrog steps)."""

            def __init__(self):
                self.state: dict = {}

            def __call__(self):
                self.state = nuts_models.run("statespace", "sequential", 1, num_warmup=n, num_samples=n, dtype=dtype)

        return Sampler(), None, "leapfrog step"
    raise ProfileError(f"kernel {kernel!r}: expected one of {KERNELS}")


def _intervals_union(intervals) -> float:
    total, end = 0.0, None
    for start, stop in sorted(intervals):
        if end is None or start > end:
            total += stop - start
            end = stop
        elif stop > end:
            total += stop - end
            end = stop
    return total


def summarize(planes, wall_s: float, iterations: int | None) -> dict:
    """Figures from the planes of one trace: a plain function of (name, lines) data, so it tests without JAX.

    `planes` is an iterable of objects with .name and .lines; lines have .name and .events; events have
    .name, .start_ns, .duration_ns and .stats (pairs). A device plane is one whose name starts '/device:'.
    """
    device_events: list = []
    host: Counter[str] = Counter()
    host_time: Counter[str] = Counter()
    xla_ops, xla_op_ns = 0, 0.0
    for plane in planes:
        if plane.name.startswith("/device:"):
            lines = [line for line in plane.lines if line.name not in DERIVED_LINES]
            streams = [line for line in lines if line.name.startswith("Stream")]
            for line in streams or lines:
                device_events += [(e.start_ns, e.start_ns + e.duration_ns, e.name) for e in line.events]
        elif plane.name.startswith("/host:"):
            for line in plane.lines:
                for e in line.events:
                    if e.name.startswith("end: ") or any(own in e.name for own in OWN_FRAMES):
                        continue
                    host[e.name] += 1
                    host_time[e.name] += e.duration_ns
                    if "hlo_op" in dict(e.stats):
                        xla_ops += 1
                        xla_op_ns += e.duration_ns
    out: dict = {"wall_s": wall_s, "iterations": iterations,
           "host": {"events": sum(host.values()), "xla_cpu_ops": xla_ops, "xla_cpu_op_s": xla_op_ns * 1e-9,
                    "top": [{"name": name, "count": host[name], "seconds": ns * 1e-9}
                            for name, ns in host_time.most_common(8)],
                    "xla_cpu_ops_per_iteration": xla_ops / iterations if iterations else None}}
    if not device_events:
        out.update(device_timings=False, note=NOT_AVAILABLE)
        return out
    busy = _intervals_union((start, stop) for start, stop, _ in device_events) * 1e-9
    per_kernel: Counter[str] = Counter()
    per_kernel_ns: Counter[str] = Counter()
    for start, stop, name in device_events:
        per_kernel[name] += 1
        per_kernel_ns[name] += stop - start
    out.update(device_timings=True, device_ops=len(device_events), device_busy_s=busy,
               gap_fraction=max(0.0, 1.0 - busy / wall_s) if wall_s > 0 else None,
               device_ops_per_iteration=len(device_events) / iterations if iterations else None,
               mean_op_s=busy / len(device_events),
               device_top=[{"name": name, "count": per_kernel[name], "seconds": ns * 1e-9,
                            "mean_s": ns * 1e-9 / per_kernel[name]} for name, ns in per_kernel_ns.most_common(8)])
    return out


def profile(kernel: str, device: str = "cpu", dtype: str = "float32", n: int | None = None,
            trace_out: Path | None = None, trace_max_bytes: int = 4 * 2**20) -> dict:
    """Compile and warm the kernel, trace one call, summarise the trace (JAX starts here, on `device` only).
    With `trace_out`, the trace (.xplane.pb) is kept there when it is at most `trace_max_bytes`."""
    if kernel not in KERNELS:
        raise ProfileError(f"kernel {kernel!r}: expected one of {KERNELS}")
    if device not in ("cpu", "gpu", "tpu"):
        raise ProfileError(f"--device {device!r}: expected cpu, gpu or tpu")
    n = DEFAULT_N[kernel] if n is None else n
    if n < 1:
        raise ProfileError(f"--n {n}: must be at least 1")
    if "jax" not in sys.modules:
        from jaxci.accel import platform_for

        os.environ["JAX_PLATFORMS"] = platform_for(device)
    repo = str(REPO_ROOT)
    if repo not in sys.path:
        sys.path.insert(0, repo)  # benchmarks/ lives beside the package in a checkout
    import jax

    jax.config.update("jax_enable_x64", dtype == "float64")
    try:
        run, iterations, per = _prepare(kernel, n, dtype)
    except ModuleNotFoundError as exc:
        raise ProfileError(f"{exc}: jaxci profile runs the kernels in benchmarks/ of a jax-ci-bench checkout") from exc
    run()  # compile and warm outside the trace
    from jaxci.jaxmon import CompileClock

    clock = CompileClock().install()
    with tempfile.TemporaryDirectory(prefix="jaxci-profile-") as tmp:
        with jax.profiler.trace(tmp):
            start = time.perf_counter()
            run()
            wall = time.perf_counter() - start
        files = sorted(Path(tmp).rglob("*.xplane.pb"))
        if not files:
            raise ProfileError(f"jax.profiler wrote no .xplane.pb under {tmp}")
        data = jax.profiler.ProfileData.from_file(str(files[-1]))
        kept = _keep_trace(files[-1], trace_out, trace_max_bytes)
        if kernel == "nuts":
            iterations = run.state["leapfrog_steps"]
        summary = summarize(data.planes, wall, iterations)
    summary.update(kernel=kernel, device=device, dtype=dtype, n=n, per_iteration=per,
                   platform=jax.devices()[0].platform, jax_version=jax.__version__,
                   compile_s_in_trace=clock.total, trace=kept)
    return summary


def _keep_trace(trace: Path, dest: Path | None, max_bytes: int) -> str | None:
    """Copy the trace to `dest` when asked and small enough; what was done, for the summary."""
    if dest is None:
        return None
    size = trace.stat().st_size
    if size > max_bytes:
        return f"not kept: {size:,} bytes, over {max_bytes:,}"
    from jaxci.util import safewrite

    dest.parent.mkdir(parents=True, exist_ok=True)
    safewrite.copy_file(trace, dest, limit=max_bytes)  # --trace-out: never through a link, a FIFO or a device
    return str(dest)


def render(s: dict) -> str:
    lines = [f"profile {s['kernel']} (n={s['n']}, {s['dtype']}, {s['platform']}, jax {s['jax_version']})",
             f"  traced wall time      {s['wall_s']:.6f} s"]
    if s["compile_s_in_trace"]:
        lines.append(f"  compile inside trace  {s['compile_s_in_trace']:.3f} s (numpyro re-jits on every run)")
    if s["device_timings"]:
        lines += [f"  device busy           {s['device_busy_s']:.6f} s",
                  f"  gap fraction          {s['gap_fraction']:.3f}",
                  f"  device ops            {s['device_ops']} ({s['mean_op_s'] * 1e6:.2f} us each on average)"]
        if s["device_ops_per_iteration"] is not None:
            lines.append(f"  device ops / {s['per_iteration']}: {s['device_ops_per_iteration']:.2f}")
    else:
        lines.append(f"  {s['note']}")
    host = s["host"]
    lines.append(f"  host events           {host['events']} ({host['xla_cpu_ops']} XLA CPU ops, "
                 f"{host['xla_cpu_op_s']:.6f} s in them)")
    if host["xla_cpu_ops_per_iteration"] is not None:
        lines.append(f"  XLA CPU ops / {s['per_iteration']}: {host['xla_cpu_ops_per_iteration']:.2f} "
                     "(host thunks; a loop run inside one thunk shows as one op)")
    for item in host["top"]:
        lines.append(f"    {item['seconds']:10.6f} s  x{item['count']:<6d} {item['name'][:70]}")
    lines.append("  (diagnostic only: tracing changes timings; profiles never enter the benchmark history)")
    return "\n".join(lines)
