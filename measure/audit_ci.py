"""Time the whole `jaxci audit` (lectures + CI, no --execute) on a generated 150-lecture repository; goal < 15 s.

    .venv/bin/python measure/audit_ci.py [--lectures 150] [--cells 30] [--repeat 3]

The lectures are generated here (MyST notebooks of --cells cells, half markdown, half code, cycling through the
patterns the lecture audit classifies: float64 scan, Python loop over a jitted step, NUTS, grid, large arrays,
NumPy only, sizes bound through a factory and NamedTuple fields, a vmap over a shape tuple; a Jupyter Book
_config.yml on top; once measure/audit_static.py, which timed the static scan alone: the split below reports it);
the CI part is the findings fixture of tests/fixtures/ci_repos/findings_gpu (its workflow and environment.yml), so
every CI rule runs. Reports the wall time of the whole command in a fresh interpreter (as CI runs it), the
in-process split between the lecture scan and the CI part, the number of CI findings, and whether the emitted
patch passes `git apply --check`.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
CI_FIXTURE = HERE.parent / "tests" / "fixtures" / "ci_repos" / "findings_gpu"


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
    """One generated MyST lecture: narrative paragraphs and code cells, every third one a classified pattern."""
    parts = [HEADER, f"# Generated lecture {i}\n\n"]
    for c in range(cells // 2):
        parts.append(f"Paragraph {c} of lecture {i}: a few sentences of narrative about the model, the "
                     f"parameters and what the next cell computes, as lectures have between code cells.\n\n")
        code = PATTERNS[i % len(PATTERNS)] if c % 3 == 0 else f"value_{c} = {c} * 2\nprint(value_{c})"
        parts.append("```{code-cell} ipython3\n" + code + "\n```\n\n")
    return "".join(parts)


def generate_lectures(root: Path, n: int, cells: int) -> None:
    """`n` generated lectures in five part folders, under a Jupyter Book _config.yml."""
    (root / "_config.yml").write_text("execute:\n  execute_notebooks: cache\n  timeout: 600\n")
    for i in range(n):
        folder = root / f"part{i % 5}"
        folder.mkdir(exist_ok=True)
        (folder / f"lecture_{i:03d}.md").write_text(lecture(i, cells))


def generate(root: Path, lectures: int = 150, cells: int = 30) -> None:
    """A lecture repository of `lectures` generated lectures with the findings fixture's CI files."""
    generate_lectures(root, lectures, cells)
    shutil.copytree(CI_FIXTURE / ".github", root / ".github")
    shutil.copy(CI_FIXTURE / "environment.yml", root / "environment.yml")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--lectures", type=int, default=150)
    p.add_argument("--cells", type=int, default=30)
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args()
    jaxci = str(Path(sys.executable).with_name("jaxci"))
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "repo"
        root.mkdir()
        generate(root, args.lectures, args.cells)
        times = []
        for _ in range(args.repeat):
            start = time.perf_counter()
            proc = subprocess.run([jaxci, "audit", str(root), "--format", "json", "--output", str(Path(tmp) / "a.json"),
                                   "--ci-patch", str(Path(tmp) / "ci.diff")], capture_output=True, text=True)
            times.append(time.perf_counter() - start)
            if proc.returncode not in (0, 1):
                print(proc.stderr, file=sys.stderr)
                return 1
        import json

        sys.path.insert(0, str(HERE.parent))
        from jaxci.audit.lecture_ci import audit_ci, lectures

        start = time.perf_counter()
        facts = lectures.audit_lectures(root)
        lecture_s = time.perf_counter() - start
        ci = []
        for _ in range(args.repeat):
            start = time.perf_counter()
            audit_ci(root, facts).patch()
            ci.append(time.perf_counter() - start)
        data = json.loads((Path(tmp) / "a.json").read_text())
        from jaxci.util.git import GitError, git

        git(root, "init", "-q")
        try:
            git(root, "apply", "--check", str(Path(tmp) / "ci.diff"))
            applies = "ok"
        except GitError as exc:
            applies = f"FAILED: {exc}"
    kinds = sorted({f["kind"] for f in data["ci"]["findings"]})
    print(f"lectures: {args.lectures} x {args.cells} cells; "
          f"CI findings: {len(data['ci']['findings'])} ({', '.join(kinds)})")
    print(f"jaxci audit lectures + CI (fresh interpreter), {args.repeat} runs: median {statistics.median(times):.2f} s "
          f"(min {min(times):.2f}, max {max(times):.2f}); goal < 15 s")
    print(f"in process: lecture scan {lecture_s:.2f} s (1 run); CI part alone median {statistics.median(ci):.3f} s")
    print(f"patch: git apply --check {applies}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
