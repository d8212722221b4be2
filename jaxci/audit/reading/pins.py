"""Device pins: where a lecture chooses the platform JAX runs on, read as the platforms it names, in order.

JAX initialises the platforms of `JAX_PLATFORMS` / `jax_platforms` in the order given and makes the first
one that comes up the default, so `cuda,cpu` is GPU first (not pinned) while `cpu` (or `cpu,cuda`) runs on
the CPU. A lecture is pinned to the CPU when a setting's first platform is `cpu`; an empty
`CUDA_VISIBLE_DEVICES` (or -1) hides every GPU, which leaves JAX the CPU. A value the scan cannot read (a
name, a call) names no platform and pins nothing. The record keeps the text the report has always shown.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

from jaxci.audit.reading.shapes import _ordered
from jaxci.util import safeio

#: settings whose value is a comma-separated list of platforms (the first that initialises is the default)
PLATFORM_LISTS = {"JAX_PLATFORMS", "JAX_PLATFORM_NAME", "jax_platforms", "jax_platform_name"}
HIDE_GPUS = {"", "-1"}
#: where a lecture repository keeps the kernelspecs its lectures name (what `jaxci audit --emit-config` writes)
REPO_KERNELS = "_jaxci/kernels"
#: the environment settings of a kernelspec that choose JAX's platform
KERNEL_ENV = ("JAX_PLATFORMS", "JAX_PLATFORM_NAME", "CUDA_VISIBLE_DEVICES")
#: a kernelspec's name as Jupyter allows it (it names a folder)
KERNEL_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")


@dataclass(frozen=True)
class Pin:
    """One setting that chooses JAX's platform: where, which platforms in order (lower case), and its text."""

    cell: int
    line: int
    platforms: tuple[str, ...]  # () when the value is not a literal the scan can read
    what: str  # as shown: "JAX_PLATFORMS=cpu", "config jax_platforms=cuda,cpu", "jax.devices(cpu)"
    setting: str = ""  # what chose it, as data: the call ("jax.devices") or the config or environment key

    @property
    def pinned_cpu(self) -> bool:
        return bool(self.platforms) and self.platforms[0] == "cpu"

    def text(self) -> str:
        return f"cell {self.cell}: {self.what}"

    def as_dict(self) -> dict:
        return {"cell": self.cell, "line": self.line, "platforms": list(self.platforms), "what": self.what,
                "pinned_cpu": self.pinned_cpu}


def split_platforms(value: str) -> tuple[str, ...]:
    """'cuda, CPU' -> ('cuda', 'cpu'); quotes around the whole value (a shell or %env line) are dropped."""
    items = (p.strip().strip("'\"").strip().lower() for p in value.strip().strip("'\"").split(","))
    return tuple(p for p in items if p)


def env_platforms(key: str, value: str) -> tuple[str, ...]:
    """The platforms an environment setting leaves JAX (key is JAX_PLATFORMS, JAX_PLATFORM_NAME or
    CUDA_VISIBLE_DEVICES)."""
    if key == "CUDA_VISIBLE_DEVICES":
        return ("cpu",) if value.strip().strip("'\"").strip() in HIDE_GPUS else ()
    return split_platforms(value)


def node_platforms(node) -> tuple[str, ...]:
    """The platforms an expression names: a literal string is split on commas; otherwise the string
    literals inside it in source order (`jax.devices("cpu")[0]` -> ('cpu',)); nothing readable -> ()."""
    if node is None:
        return ()
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return split_platforms(node.value)
    found: list[str] = []
    for n in _ordered(node):
        if isinstance(n, ast.Constant) and isinstance(n.value, str):
            found += [p for p in split_platforms(n.value) if p not in found]
    return tuple(found)


def kernelspec_pin(metadata, root: Path | None = None) -> Pin | None:
    """The lecture's kernelspec, where its kernel starts with a platform setting (`env` of its kernel.json: the
    repository's own under REPO_KERNELS, else the one installed here): a pin from the first cell on."""
    spec = (metadata or {}).get("kernelspec") if isinstance(metadata, dict) else None
    name = spec.get("name") if isinstance(spec, dict) else None
    if not isinstance(name, str) or not KERNEL_NAME.fullmatch(name):
        return None
    env = _kernel_env(name, root)
    for key in KERNEL_ENV:
        if isinstance(env.get(key), str):
            return Pin(0, 0, env_platforms(key, env[key]), f"kernelspec {name}: {key}={env[key]}", key)
    return None


def _kernel_env(name: str, root: Path | None) -> dict:
    """The `env` of the kernelspec `name`: the repository's copy first, else the installed one ({}: none)."""
    if root is not None:
        try:
            spec = safeio.load_json(Path(root) / REPO_KERNELS / name / "kernel.json", safeio.MIB)
            env = spec.get("env") if isinstance(spec, dict) else None
            return env if isinstance(env, dict) else {}
        except (OSError, ValueError):
            pass
    try:
        from jupyter_client.kernelspec import KernelSpecManager

        env = KernelSpecManager().get_kernel_spec(name).env
        return env if isinstance(env, dict) else {}
    except Exception:  # not installed, or no jupyter_client: the kernelspec pins nothing we can read
        return {}
