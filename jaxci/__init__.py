"""jaxci: the tooling around the jax-ci-bench asv suite (machines, results, findings, advice, audits).

Where a change belongs:

- top level, the **runtime**: `harness`, `workloads`, `jaxmon`, `nvml`, `catalogue`. Benchmarks import these
  inside asv's environments, per benchmarked commit, by these exact paths (the import lines inside a
  benchmark's setup are part of its asv version), so they stay few, small and stable, and nothing else is added
  at the top level. `cli` is the dispatcher of the `jaxci` console script.
- `commands/`: one thin module per command (parse arguments, call the library, print, exit code).
- `machines/`: registering this machine with asv (with NVML's facts) and asv configuration copies.
- `results/`: the one adapter of asv's result format (`records`), capture import, release history, upgrade check.
- `capture/`: the GPU capture run on a lent machine (plan, scheduler, asv plugin, packing).
- `workflows/`: what this repository's workflows (and a lecture CI's jax-env action) call: workflow inputs, job
  plan, run status, collect, job cost, env advice, fail once, the release watch. Not the audit of another
  repository's CI, which is `audit/lecture_ci/`.
- `analysis/`: what we compute from results: pure functions over records (no JAX, no I/O).
- `modeldata/`: the runner model's inputs read from this repository's files (fixed costs, calibration).
- `policy/`: what we advise: one function per rule (GPU-wins margin, timeouts, build time and cost per
  family) that every command calls.
- `report/`: the findings and decision sheets rendered from analysis and policy (no JAX).
- `audit/`: a lecture repository's static scan, instrumented execution and the audit of its CI (`lecture_ci/`).
- `traces/`: jax.profiler traces run in this process outside asv (`jaxci profile`); not the `measure/` scripts.
- `util/`: shared checks and helpers with no project knowledge: input validation, git, pins, process trees.

Library modules never import `jaxci.commands` and hold no argparse. The layers and each package's import rules are
contracts in pyproject.toml ([tool.importlinter], `lint-imports`); tests/test_layout.py enforces the rest.
"""

from pathlib import Path

__version__ = "0.1.0"

#: The repository root when jaxci runs from a checkout (env_matrix/ lives there, not in the wheel).
REPO_ROOT = Path(__file__).resolve().parent.parent
