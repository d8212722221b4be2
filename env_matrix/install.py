"""asv's install step: install the benchmarked commit's wheel with the JAX pins for this machine's backend.

asv runs this with the environment's own Python, from the checkout of the commit being benchmarked, so the
pins installed are that commit's pins: a JAX upgrade is one commit, and history follows JAX releases.
Backend: $JAXCI_BACKEND if set (cpu | cuda13 | tpu, checked), else cuda13 when an NVIDIA GPU is visible, tpu on a
TPU (jaxci.accel), else cpu.
Installer: uv where PATH has it (scripts/setup-venv.sh puts it in .venv, and jaxci's asv runs put .venv/bin first),
else pip; an offline install (PIP_NO_INDEX, wheels from PIP_FIND_LINKS: jaxci.results.upgrade) is always pip's.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # this commit's jaxci, importable before it is installed

from jaxci.catalogue import CatalogueError, pin_file, read_pins  # noqa: E402
from jaxci.nvml import gpu_present  # noqa: E402
from jaxci.util.validate import InputError  # noqa: E402
from jaxci.util.validate import backend as checked_backend  # noqa: E402


def choose_backend() -> str:
    """JAXCI_BACKEND when set (refused unless a backend of env_matrix/), else by what NVML and jaxci.accel see."""
    from jaxci.accel import accelerator_platform

    chosen = checked_backend(os.environ.get("JAXCI_BACKEND"))
    return chosen or ("cuda13" if gpu_present() else "tpu" if accelerator_platform() == "tpu" else "cpu")


def installer(environ=os.environ) -> tuple[str, list[str]]:
    """(name, install command) for this environment's Python: uv (its cache makes a reinstalled pin a copy, where
    pip unpacks and compiles the wheel again), else pip; pip alone reads the offline settings of PIP_*."""
    uv = None if environ.get("PIP_NO_INDEX") else shutil.which("uv", path=environ.get("PATH"))
    if uv:
        return "uv", [uv, "pip", "install", "--python", sys.executable, "--compile-bytecode", "--link-mode", "copy"]
    return "pip", [sys.executable, "-m", "pip", "install"]


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: install.py WHEEL_FILE", file=sys.stderr)
        return 2
    try:
        backend = choose_backend()
        pins = read_pins(backend, HERE)
    except (CatalogueError, InputError) as exc:
        print(f"jaxci install: {exc}", file=sys.stderr)
        return 2
    requirements = pin_file(backend, HERE)
    tool, install = installer()
    cmd = install + ["-r", str(requirements), f"{argv[0]}[bench,audit]"]
    print(f"jaxci install: backend {backend}, jax=={pins['jax']} from {requirements}, by {tool}", flush=True)
    result = subprocess.run(cmd)
    if result.returncode:
        print(f"jaxci install: installing the {backend} pins from {requirements} failed "
              f"({tool} exit {result.returncode}); is jax=={pins['jax']} available for Python "
              f"{sys.version_info.major}.{sys.version_info.minor} on this platform?", file=sys.stderr)
    return result.returncode


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
