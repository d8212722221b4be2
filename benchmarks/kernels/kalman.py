"""Linear-Gaussian state-space log-likelihood: a sequential Kalman filter (lax.scan) and a parallel-in-time
one (lax.associative_scan, Sarkka and Garcia-Fernandez 2021), both functions of 18 scalar parameters.

The model, for t = 1..T with a k-dimensional state and 4 observables:
    x_1 ~ N(0, I),   x_{t+1} = F x_t + w_t, w_t ~ N(0, Q),   y_t = H x_t + d + e_t, e_t ~ N(0, R).
`system(theta, k)` maps the 18 unconstrained parameters to (F, Q, H, R, d); the same map serves JAX and
NumPy (`xp`), so the NumPy/SciPy reference filter and the simulator share the model, not the filter.
The gradient of `loglik` with respect to theta is what NUTS evaluates at every leapfrog step.
"""

import jax
import jax.numpy as jnp
import numpy as np

N_OBS = 4
N_PARAMS = 18
VARIANTS = ["sequential", "parallel"]

#: A stable, well-identified point used to simulate data and to evaluate the benchmarks.
THETA_TRUE = np.array(
    [np.arctanh(0.8 / 0.9), 0.5, 0.3, -0.2,   # transition: persistence, its decay over states, sub/super diagonal
     0.0, -0.3, -0.5, -0.7,                    # log loadings of the 4 observables
     -1.0, -1.2, -0.8, -1.1,                   # log observation noise sd
     0.5, -0.2, 0.1, 0.0,                      # observation intercepts
     -0.7, 0.4])                               # log state noise sd, its decay over states


def _softplus(x, xp):
    return xp.logaddexp(0.0, x)


def system(theta, k: int, xp=jnp):
    """(F, Q, H, R, d) from the 18 parameters. |F| has row sums below 1, so the state is stationary."""
    i = xp.arange(k) / k
    phi = 0.9 * xp.tanh(theta[0]) * xp.exp(-_softplus(theta[1], xp) * i)
    sub, sup = 0.05 * xp.tanh(theta[2]), 0.05 * xp.tanh(theta[3])
    F = xp.diag(phi) + sub * xp.eye(k, k=-1) + sup * xp.eye(k, k=1)
    q = xp.exp(2 * theta[16]) * xp.exp(-_softplus(theta[17], xp) * i)
    Q = xp.diag(q)
    # Each observable loads on one cosine pattern over the state (a DCT-II row), so they differ for any k.
    j = xp.arange(N_OBS)[:, None]
    basis = xp.cos(np.pi * (j + 0.5) * (xp.arange(k)[None, :] + 0.5) / k)
    H = xp.exp(theta[4:8])[:, None] * basis
    R = xp.diag(xp.exp(2 * theta[8:12]))
    d = theta[12:16]
    return tuple(xp.asarray(m, dtype=theta.dtype) for m in (F, Q, H, R, d))  # no silent float64 promotion


def _gauss_logpdf(v, S):
    """log N(v; 0, S) for one innovation v (4,) and its covariance S (4, 4)."""
    L = jnp.linalg.cholesky(S)
    z = jax.scipy.linalg.solve_triangular(L, v, lower=True)
    return -0.5 * (z @ z) - jnp.sum(jnp.log(jnp.diag(L))) - 0.5 * v.shape[-1] * np.log(2 * np.pi)


def loglik_sequential(theta, y, k: int):
    """Prediction-error decomposition, one filter step per lax.scan iteration (tiny ops, T launches)."""
    F, Q, H, R, d = system(theta, k)
    eye = jnp.eye(k, dtype=y.dtype)

    def step(carry, yt):
        m, P = carry  # predicted moments of x_t given y_1..y_{t-1}
        v = yt - H @ m - d
        S = H @ P @ H.T + R
        K = jnp.linalg.solve(S, H @ P).T  # P H^T S^{-1}, S and P symmetric
        m_f = m + K @ v
        P_f = P - K @ S @ K.T
        P_next = F @ P_f @ F.T + Q
        return (F @ m_f, 0.5 * (P_next + P_next.T)), _gauss_logpdf(v, S)

    _, terms = jax.lax.scan(step, (jnp.zeros(k, y.dtype), eye), y)
    return jnp.sum(terms)


def _filter_elements(theta, y, k):
    """Per-step elements (A, b, C, eta, J) of the parallel filter (Sarkka and Garcia-Fernandez 2021, sec. IV)."""
    F, Q, H, R, d = system(theta, k)
    eye = jnp.eye(k, dtype=y.dtype)
    r = y - d

    # t = 1: conditioned on the prior x_1 ~ N(0, I) directly.
    S1 = H @ H.T + R
    K1 = jnp.linalg.solve(S1, H).T
    A1 = jnp.zeros((k, k), y.dtype)
    b1 = K1 @ r[0]
    C1 = eye - K1 @ S1 @ K1.T

    # t > 1: the transition from an unknown x_{t-1}, conditioned on y_t.
    S = H @ Q @ H.T + R
    K = jnp.linalg.solve(S, H @ Q).T
    IKH = eye - K @ H
    A = IKH @ F
    b = r[1:] @ K.T
    C = IKH @ Q
    HF = H @ F
    eta = r @ jnp.linalg.solve(S, HF)  # (T, k): F^T H^T S^{-1} (y_t - d), also needed at t = 1
    J = HF.T @ jnp.linalg.solve(S, HF)

    T = y.shape[0]
    As = jnp.concatenate([A1[None], jnp.broadcast_to(A, (T - 1, k, k))])
    bs = jnp.concatenate([b1[None], b])
    Cs = jnp.concatenate([C1[None], jnp.broadcast_to(C, (T - 1, k, k))])
    Js = jnp.broadcast_to(J, (T, k, k))
    return (As, bs, Cs, eta, Js), (F, Q, H, R, d)


def _combine(earlier, later):
    """The associative operator on filtering elements, batched over a leading axis."""
    Ai, bi, Ci, etai, Ji = earlier
    Aj, bj, Cj, etaj, Jj = later
    eye = jnp.eye(Ai.shape[-1], dtype=Ai.dtype)
    mT = lambda x: jnp.swapaxes(x, -1, -2)
    mv = lambda a, v: jnp.einsum("...ij,...j->...i", a, v)
    # Aj (I + Ci Jj)^{-1}  and  Ai^T (I + Jj Ci)^{-1}, as right-solves stacked into ONE batched solve: two
    # independent batched LU solves in one program deadlock the XLA CPU runtime of jaxlib 0.10.2 on a
    # 2-core machine once k is about 50 (reproduced with two plain jnp.linalg.solve calls).
    lhs = jnp.stack([mT(eye + Ci @ Jj), mT(eye + Jj @ Ci)])
    rhs = jnp.stack([mT(Aj), Ai])
    G, Gt = mT(jnp.linalg.solve(lhs, rhs))
    A = G @ Ai
    b = mv(G, bi + mv(Ci, etaj)) + bj
    C = G @ Ci @ mT(Aj) + Cj
    eta = mv(Gt, etaj - mv(Jj, bi)) + etai
    J = Gt @ Jj @ Ai + Ji
    return A, b, 0.5 * (C + mT(C)), eta, 0.5 * (J + mT(J))


def loglik_parallel(theta, y, k: int):
    """Filtered moments by associative_scan (log T depth), then every innovation density at once."""
    elems, (F, Q, H, R, d) = _filter_elements(theta, y, k)
    _, m_f, P_f, _, _ = jax.lax.associative_scan(_combine, elems)
    # Predicted moments of x_t: the prior at t = 1, one transition from the filtered x_{t-1} after.
    m_pred = jnp.concatenate([jnp.zeros((1, k), y.dtype), m_f[:-1] @ F.T])
    P_pred = jnp.concatenate([jnp.eye(k, dtype=y.dtype)[None], F @ P_f[:-1] @ F.T + Q])
    v = y - m_pred @ H.T - d
    S = H @ P_pred @ H.T + R
    return jnp.sum(jax.vmap(_gauss_logpdf)(v, S))


LOGLIK = {"sequential": loglik_sequential, "parallel": loglik_parallel}


def loglik_fn(variant: str, k: int):
    """theta, y -> log-likelihood for a state dimension k (static: it fixes the array shapes)."""
    if variant not in LOGLIK:
        raise ValueError(f"Kalman variant {variant!r}: expected one of {VARIANTS}")
    fn = LOGLIK[variant]
    return lambda theta, y: fn(theta, y, k)


def grad_fn(variant: str, k: int):
    """theta, y -> d loglik / d theta (18,): the per-leapfrog-step work of NUTS on this model."""
    return jax.grad(loglik_fn(variant, k))


# ---- NumPy/SciPy side: data and the reference filter ------------------------------------------------


def simulate(theta, k: int, T: int, seed: int = 0) -> np.ndarray:
    """Observations y (T, 4) drawn from the model at theta (float64)."""
    rng = np.random.default_rng(seed)
    F, Q, H, R, d = system(np.asarray(theta, float), k, xp=np)
    x = rng.standard_normal(k)
    ys = np.empty((T, N_OBS))
    for t in range(T):
        ys[t] = H @ x + d + rng.multivariate_normal(np.zeros(N_OBS), R)
        x = F @ x + rng.multivariate_normal(np.zeros(k), Q)
    return ys


def loglik_reference(theta, y, k: int) -> float:
    """The textbook Kalman filter in float64 NumPy, densities from scipy.stats (the tests' reference)."""
    from scipy.stats import multivariate_normal

    F, Q, H, R, d = system(np.asarray(theta, float), k, xp=np)
    m, P, total = np.zeros(k), np.eye(k), 0.0
    for yt in np.asarray(y, float):
        S = H @ P @ H.T + R
        total += multivariate_normal(mean=H @ m + d, cov=S).logpdf(yt)
        K = P @ H.T @ np.linalg.inv(S)
        m, P = m + K @ (yt - H @ m - d), P - K @ S @ K.T
        m, P = F @ m, F @ P @ F.T + Q
    return float(total)


def loglik_joint(theta, y, k: int) -> float:
    """The same likelihood as one multivariate normal over all T*4 observations (no filter at all)."""
    from scipy.stats import multivariate_normal

    F, Q, H, R, d = system(np.asarray(theta, float), k, xp=np)
    T = len(y)
    covs = [np.eye(k)]  # Var(x_t)
    for _ in range(T - 1):
        covs.append(F @ covs[-1] @ F.T + Q)
    big = np.zeros((T * N_OBS, T * N_OBS))
    for s in range(T):
        for t in range(s, T):
            cross = np.linalg.matrix_power(F, t - s) @ covs[s]  # Cov(x_t, x_s), t >= s
            block = H @ cross @ H.T + (R if s == t else 0)
            big[t * N_OBS:(t + 1) * N_OBS, s * N_OBS:(s + 1) * N_OBS] = block
            big[s * N_OBS:(s + 1) * N_OBS, t * N_OBS:(t + 1) * N_OBS] = block.T
    return float(multivariate_normal(mean=np.tile(d, T), cov=big).logpdf(np.asarray(y, float).ravel()))


def inputs(k: int, T: int, dtype: str, seed: int = 0):
    """(theta, y) host arrays in dtype: the data are simulated at THETA_TRUE."""
    return THETA_TRUE.astype(dtype), simulate(THETA_TRUE, k, T, seed).astype(dtype)
