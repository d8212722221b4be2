"""How much of a piece of work's wall time the calling (main) thread spends on the CPU: the signal the audit's hooks
record per cell (`busy_s`) to tell host code from JAX work. XLA runs eager and jitted work on its own threads while
the caller waits; Python, NumPy, SciPy and JAX's own dispatch run on the caller.

    .venv/bin/python measure/main_thread_share.py

Prints, per case, wall seconds, the main thread's CPU seconds and their ratio (one warm-up, then one timed run).
"""

import time

import jax
import jax.numpy as jnp
import numpy as np
import scipy.linalg


def share(name: str, work) -> None:
    work()
    wall0, busy0 = time.perf_counter(), time.thread_time()
    out = work()
    if out is not None:
        jax.block_until_ready(out)
    wall, busy = time.perf_counter() - wall0, time.thread_time() - busy0
    print(f"{name:36s} wall {wall:7.3f} s  main thread {busy:7.3f} s  share {busy / wall:.2f}")


def main() -> None:
    big = jax.random.uniform(jax.random.PRNGKey(0), (4_000_000,))
    mid, tiny = jnp.ones(50_000), jnp.ones(10)

    def steps(x, n):
        for _ in range(n):
            x = jnp.where(x > 0.5, x * 0.98, x * 1.01) + 0.001 * jnp.exp(-x) * jnp.cos(x)
        return x

    scan = jax.jit(jax.vmap(lambda k: jax.lax.scan(
        lambda c, t: (0.3 * jnp.exp(jnp.sin(0.01 * t)) * c ** 0.33 + 0.9 * c, None), k, jnp.arange(300.0))[0]))
    square = np.random.default_rng(0).random((1500, 1500))
    share("eager, 4e6 elements x 30 steps", lambda: steps(big, 30))
    share("eager, 5e4 elements x 300 steps", lambda: steps(mid, 300))
    share("eager, 10 elements x 2000 steps", lambda: steps(tiny, 2000))
    share("jitted vmapped scan, 1e6 x 300", lambda: scan(jnp.ones(1_000_000)))
    share("SciPy LU, 1500 x 1500", lambda: scipy.linalg.lu_factor(square) and None)
    share("Python sum(range(3e6))", lambda: sum(range(3_000_000)) and None)


if __name__ == "__main__":
    main()
