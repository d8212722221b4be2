"""jaxci: the tooling around the jax-ci-bench asv suite (machines, results, findings, advice, audits)."""

from pathlib import Path

__version__ = "0.1.0"

#: The repository root when jaxci runs from a checkout (env_matrix/ lives there, not in the wheel).
REPO_ROOT = Path(__file__).resolve().parent.parent
