"""What a CPU pin changes on the lecture's own page, so that --emit-config's patch keeps the pages true.

- A pinned lecture that includes a note saying it was built with a GPU (a MyST `{include}` of a file whose text
  names the GPU) gets this project's own note instead: the page would otherwise say something false.
- A pinned lecture that samples (numpyro, jax.random) prints other draws on the CPU: its outputs are named.
- A lecture that installs JAX itself during the build (`!pip install ... jax` in a code cell) undoes the
  workflow's JAX pin for everything after it: the line is flagged, with where it is.
Pure text rules (no regex over what a pull request controls: lines are split and compared).
"""

from __future__ import annotations

from pathlib import Path

#: what a pinned lecture says instead of a GPU note (this project's wording)
CPU_NOTE = ("```{admonition} Built on the CPU\n:class: note\n\n"
            "When this site is built, this lecture's JAX code runs on the CPU: on the build's GPU runner it "
            "finishes sooner there (measured and predicted by jaxci audit). It runs on a GPU too.\n```\n")
INCLUDE = "```{include}"
#: the largest included file read to decide whether it is a GPU note
NOTE_LIMIT = 64 * 1024


def _names_gpu(path: Path) -> bool:
    from jaxci.util import safeio

    try:
        text = safeio.read_text(path, NOTE_LIMIT)
    except (OSError, ValueError):
        return False
    return "GPU" in text


def gpu_notes(text: str, folder: Path) -> list[tuple[int, int, str]]:
    """(first line index, line count, included path) of each `{include}` block whose file names the GPU."""
    lines = text.splitlines()
    found = []
    for i, line in enumerate(lines):
        if not line.startswith(INCLUDE):
            continue
        target = line[len(INCLUDE):].strip()
        end = next((j for j in range(i + 1, min(i + 4, len(lines))) if lines[j].strip() == "```"), None)
        if target and end is not None and _names_gpu(folder / target):
            found.append((i, end - i + 1, target))
    return found


def without_gpu_notes(text: str, folder: Path) -> tuple[str, list[str]]:
    """The lecture's text with each GPU note replaced by CPU_NOTE, and the included paths replaced."""
    notes = gpu_notes(text, folder)
    if not notes:
        return text, []
    lines = text.splitlines(keepends=True)
    for start, count, _ in reversed(notes):
        lines[start:start + count] = [CPU_NOTE]
    return "".join(lines), [target for _, _, target in notes]


def samples(scan) -> bool:
    """The lecture samples with numpyro (NUTS and the like): pinned, its printed draws and summaries change."""
    return bool(scan.uses_numpyro or scan.nuts)


def jax_installs(text: str) -> list[tuple[int, str]]:
    """(line number, line) of each in-notebook `pip install` that installs JAX without pinning it."""
    out = []
    for number, line in enumerate(text.splitlines(), 1):
        words = line.strip().lstrip("!%").split()
        if words[:2] != ["pip", "install"]:
            continue
        packages = [w for w in words[2:] if not w.startswith("-")]
        if any(_unpinned_jax(p.strip("\"'")) for p in packages):
            out.append((number, line.strip()))
    return out


def _unpinned_jax(spec: str) -> bool:
    name = spec.split("[", 1)[0].split("=", 1)[0].split(">", 1)[0].split("<", 1)[0].lower()
    return name in ("jax", "jaxlib") and "==" not in spec
