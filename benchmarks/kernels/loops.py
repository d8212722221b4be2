"""Sequential loops: where a GPU pays a kernel launch per iteration and loses to the CPU."""

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np

R = 3.7  # logistic-map parameter: chaotic but bounded in (0, 1)


def quadratic_map(x0, n: int, unroll: int = 1):
    """x_{t+1} = R x_t (1 - x_t) as a lax.scan, keeping the whole path (as the incident lecture did)."""

    def step(x, _):
        x_next = R * x * (1.0 - x)
        return x_next, x_next

    _, path = jax.lax.scan(step, x0, None, length=n, unroll=unroll)
    return path


def quadratic_map_numpy(x0: float, n: int, dtype: str):
    out = np.empty(n, dtype=dtype)
    x = np.asarray(x0, dtype=dtype)
    r, one = np.asarray(R, dtype=dtype), np.asarray(1.0, dtype=dtype)
    for t in range(n):
        x = r * x * (one - x)
        out[t] = x
    return out


def fori_accumulate(x0, n: int):
    """Write one element per iteration into a preallocated array (dynamic-update-slice in the body)."""

    def body(i, carry):
        out, x = carry
        x = 0.5 * x + 1.0
        return out.at[i].set(x), x

    out = jnp.zeros(n, dtype=x0.dtype)
    out, _ = jax.lax.fori_loop(0, n, body, (out, x0))
    return out


def fori_accumulate_numpy(x0: float, n: int, dtype: str):
    out = np.empty(n, dtype=dtype)
    x = np.asarray(x0, dtype=dtype)
    for i in range(n):
        x = np.asarray(0.5, dtype=dtype) * x + np.asarray(1.0, dtype=dtype)
        out[i] = x
    return out


def power_iteration(a, v0, tol=1e-6, max_iter=10_000):
    """Iterate v <- A v / |A v| on a small matrix until the step is below tol: a scalar test per iteration."""

    def cond(state):
        _, delta, i = state
        return (delta > tol) & (i < max_iter)

    def body(state):
        v, _, i = state
        w = a @ v
        w = w / jnp.linalg.norm(w)
        return w, jnp.linalg.norm(w - v), i + 1

    v, _, iterations = jax.lax.while_loop(cond, body, (v0, jnp.asarray(jnp.inf, v0.dtype), 0))
    return v, iterations


def power_iteration_inputs(dtype: str, k: int = 25, seed: int = 0):
    """A 25x25 symmetric matrix with a clear dominant eigenvalue, and a start vector."""
    rng = np.random.default_rng(seed)
    q, _ = np.linalg.qr(rng.standard_normal((k, k)))
    eig = np.linspace(0.1, 0.9, k)
    eig[-1] = 1.0
    a = (q * eig) @ q.T
    return a.astype(dtype), np.full(k, 1 / np.sqrt(k), dtype=dtype)


def scan_fn(n: int, unroll: int):
    return partial(quadratic_map, n=n, unroll=unroll)
