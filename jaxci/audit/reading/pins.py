"""Device pins: where a lecture chooses the platform JAX runs on, read as the platforms it names, in order.

JAX initialises the platforms of `JAX_PLATFORMS` / `jax_platforms` in the order given and makes the first
one that comes up the default, so `cuda,cpu` is GPU first (not pinned) while `cpu` (or `cpu,cuda`) runs on
the CPU. A lecture is pinned to the CPU when a setting's first platform is `cpu`; an empty
`CUDA_VISIBLE_DEVICES` (or -1) hides every GPU, which leaves JAX the CPU. A value the scan cannot read (a
name, a call) names no platform and pins nothing. The record keeps the text the report has always shown.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

#: settings whose value is a comma-separated list of platforms (the first that initialises is the default)
PLATFORM_LISTS = {"JAX_PLATFORMS", "JAX_PLATFORM_NAME", "jax_platforms", "jax_platform_name"}
HIDE_GPUS = {"", "-1"}


@dataclass(frozen=True)
class Pin:
    """One setting that chooses JAX's platform: where, which platforms in order (lower case), and its text."""

    cell: int
    line: int
    platforms: tuple[str, ...]  # () when the value is not a literal the scan can read
    what: str  # as shown: "JAX_PLATFORMS=cpu", "config jax_platforms=cuda,cpu", "jax.devices(cpu)"

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
    for n in _in_order(node):
        if isinstance(n, ast.Constant) and isinstance(n.value, str):
            found += [p for p in split_platforms(n.value) if p not in found]
    return tuple(found)


def _in_order(node):
    yield node
    for child in ast.iter_child_nodes(node):
        yield from _in_order(child)
