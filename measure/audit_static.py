"""Time `jaxci audit` (static scan) on a generated repository of N lectures (default 150); goal < 10 s.

    .venv/bin/python measure/audit_static.py [--lectures 150] [--cells 30] [--repeat 3]

Each generated lecture is a MyST notebook of --cells cells (half markdown, half code) cycling through the
patterns the audit classifies (float64 scan, Python loop over a jitted step, NUTS, grid, large arrays,
NumPy only, sizes bound through a factory and NamedTuple fields into a bulk fori_loop, a Python loop and a
vmap over a shape tuple), with a Jupyter Book _config.yml on top. Reports the wall time of the whole command (a fresh
interpreter, as CI runs it) with its CPU time (user + sys: on a loaded machine the wall time includes
waiting for a core), and of the in-process scan alone.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HEADER = "---\njupytext:\n  text_representation:\n    extension: .md\n    format_name: myst\nkernelspec:\n" \
         "  display_name: Python 3\n  language: python\n  name: python3\n---\n\n"
PATTERNS = [
    "import jax\nimport jax.numpy as jnp\njax.config.update('jax_enable_x64', True)\n\n"
    "def step(c, _):\n    return 0.5 * c + 1.0, c\n\n_, xs = jax.lax.scan(step, 0.0, None, length=50_000)",
    "from jax import jit\nimport jax.numpy as jnp\n\n@jit\ndef f(x):\n    return x * 0.9 + 1\n\n"
    "x = jnp.zeros(4)\nfor t in range(1_000):\n    x = f(x)",
    "import numpyro\nimport numpyro.distributions as dist\nfrom numpyro.infer import MCMC, NUTS\n\n"
    "def model():\n    numpyro.sample('a', dist.Normal(0, 1))\n\n"
    "mcmc = MCMC(NUTS(model), num_warmup=200, num_samples=200, num_chains=2, chain_method='sequential')",
    "import jax.numpy as jnp\ng = jnp.linspace(0, 1, 300)\nX, Y = jnp.meshgrid(g, g)\nZ = jnp.exp(-X**2 - Y**2)",
    "import jax.numpy as jnp\nn = 4_000\na = jnp.ones((n, n))\nb = jnp.sin(a) ** 2 + jnp.cos(a) ** 2",
    "import numpy as np\nx = np.linspace(0, 1, 1_000)\ny = np.cumsum(x)\nprint(y[-1])",
    # sizes bound to names: a factory's defaults, NamedTuple fields, a bulk fori_loop over a million agents
    "from typing import NamedTuple\nimport jax\nimport jax.numpy as jnp\n\nclass Model(NamedTuple):\n"
    "    n: int = 1_000_000\n    T: int = 500\n\ndef create_model(n=1_000_000, T=500):\n    return Model(n=n, T=T)\n\n"
    "m = create_model()\nx0 = jnp.ones(m.n)\nx = jax.lax.fori_loop(0, m.T, lambda t, x: 0.9 * x + 0.1, x0)",
    # a Python loop around a jitted step on a shape tuple, and a vmap over a known axis
    "import jax\nimport jax.numpy as jnp\nM, T = 200_000, 300\nshape = (M,)\n"
    "w = jax.random.uniform(jax.random.PRNGKey(0), shape=shape)\nstep = jax.jit(lambda w: 1.01 * w)\n"
    "for t in range(T):\n    w = step(w)\nbest = jax.vmap(lambda y: y ** 2)(w)",
]


def lecture(i: int, cells: int) -> str:
    parts = [HEADER, f"# Generated lecture {i}\n\n"]
    for c in range(cells // 2):
        parts.append(f"Paragraph {c} of lecture {i}: a few sentences of narrative about the model, the "
                     f"parameters and what the next cell computes, as lectures have between code cells.\n\n")
        code = PATTERNS[i % len(PATTERNS)] if c % 3 == 0 else f"value_{c} = {c} * 2\nprint(value_{c})"
        parts.append("```{code-cell} ipython3\n" + code + "\n```\n\n")
    return "".join(parts)


def generate(root: Path, n: int, cells: int) -> None:
    (root / "_config.yml").write_text("execute:\n  execute_notebooks: cache\n  timeout: 600\n")
    for i in range(n):
        folder = root / f"part{i % 5}"
        folder.mkdir(exist_ok=True)
        (folder / f"lecture_{i:03d}.md").write_text(lecture(i, cells))


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--lectures", type=int, default=150)
    p.add_argument("--cells", type=int, default=30)
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        generate(root, args.lectures, args.cells)
        jaxci = str(Path(sys.executable).with_name("jaxci"))
        command, cpu = [], []
        for _ in range(args.repeat):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            proc = subprocess.run([jaxci, "audit", str(root), "--format", "json", "--output", str(root / "a.json")],
                                  capture_output=True, text=True)
            command.append(time.perf_counter() - start)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
            if proc.returncode:
                print(proc.stderr, file=sys.stderr)
                return 1
        from jaxci.audit import repo

        scan = []
        for _ in range(args.repeat):
            start = time.perf_counter()
            verdicts = repo.audit_static(root)
            scan.append(time.perf_counter() - start)
        counts = {}
        for v in verdicts:
            counts[v.regime] = counts.get(v.regime, 0) + 1
    print(f"lectures: {args.lectures} x {args.cells} cells; regimes: {counts}")
    print(f"jaxci audit (fresh interpreter), {args.repeat} runs: median {statistics.median(command):.2f} s "
          f"(min {min(command):.2f}, max {max(command):.2f}); CPU time (user+sys) median "
          f"{statistics.median(cpu):.2f} s: what it takes when it has a core to itself")
    print(f"in-process scan, {args.repeat} runs: median {statistics.median(scan):.2f} s "
          f"(min {min(scan):.2f}, max {max(scan):.2f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
