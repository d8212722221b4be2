"""Running asv from jaxci (the upgrade check and the release history): which asv, and its environment.

asv makes its virtualenvs from `pythonX.Y` on PATH, so this interpreter's bin goes first (a pyenv shim may
not run where that Python is not global); JAX_PLATFORMS is dropped so each benchmark chooses its device.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path


def asv_exe() -> str:
    """The asv installed beside this interpreter, else whatever `asv` PATH finds."""
    beside = Path(sys.executable).with_name("asv")
    return str(beside) if beside.exists() else "asv"


def asv_env(scale: str, backend: str, base: dict | None = None) -> dict:
    """The environment of an asv run at `scale` with `backend`'s pins, from `base` (default: os.environ)."""
    env = dict(os.environ if base is None else base, JAXCI_SCALE=scale, JAXCI_BACKEND=backend)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env.pop("JAX_PLATFORMS", None)
    return env
