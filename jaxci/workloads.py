"""Workloads the harness runs in its workers (each in a fresh interpreter with its environment already set).

`lecture_like` imitates a lecture notebook's kernel: device memory grows in steps to a peak, with some
compute at each step, so N workers at once contend for the device's memory and for its cores.
JAX is imported inside the function: the memory-policy variables must be in place before that.
"""

from __future__ import annotations

import sys
import time

#: (peak_mib, steps, matmul_n, reps) per scale: about 3 GiB at full scale, small in CI.
SCALES = {"full": (3072, 8, 2048, 10), "ci": (64, 4, 256, 5)}


def lecture_like(peak_mib: float, steps: int, matmul_n: int, reps: int, platform: str = "cpu") -> dict:
    """Grow live device memory in `steps` equal float32 blocks to `peak_mib`; at each step run `reps`
    matmuls of size `matmul_n` and block. Returns the live bytes held at the peak, the step times and
    checks (`checksum` = 0 + 1 + ... + steps-1, `trace` = matmul_n)."""
    import jax
    import jax.numpy as jnp

    device = jax.devices(platform)[0]
    block_elems = int(peak_mib * 2**20 / steps) // 4
    step = jax.jit(lambda a: a @ a)  # the identity stays the identity: the trace checks the work
    a = jax.device_put(jnp.eye(matmul_n, dtype=jnp.float32), device)
    blocks, step_s = [], []
    for i in range(steps):
        t0 = time.perf_counter()
        blocks.append(jax.block_until_ready(jnp.full((block_elems,), float(i), jnp.float32, device=device)))
        for _ in range(reps):
            a = step(a)
        jax.block_until_ready(a)
        step_s.append(time.perf_counter() - t0)
        live = sum(b.nbytes for b in blocks)
        print(f"lecture_like step {i + 1}/{steps}: {live / 2**20:.1f} MiB live", file=sys.stderr, flush=True)
    checksum = float(sum(float(b[-1]) for b in blocks))  # reads every block back: all stayed alive
    return {"live_bytes": int(sum(b.nbytes for b in blocks)), "step_s": step_s, "checksum": checksum,
            "trace": float(jnp.trace(a))}
