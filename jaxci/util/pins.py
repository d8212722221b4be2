"""The one writer of env_matrix/<backend>/requirements.txt: move the JAX pin of a requirements text.

The upgrade check moves jax and jaxlib to a new release and keeps numpyro; the release history also drops
jaxlib for a release that has none of its own number and re-pins (or drops) numpyro. Both go through
`pin_jax`, so the two never disagree on what a pin line is.
"""

from __future__ import annotations

KEEP = "keep"  # leave numpyro's line as it is


def _bare(line: str) -> str:
    """The package of a requirements line ("jax[cuda13]==1 # x" -> "jax"); "" for comments and blanks."""
    return line.split("#", 1)[0].split("==", 1)[0].split("[", 1)[0].strip().lower()


def pin_jax(text: str, version: str, *, jaxlib: bool = True, numpyro: str | None = KEEP) -> str:
    """`text` with jax (and its extra) moved to `version`; jaxlib moved too, or dropped with `jaxlib=False`;
    numpyro kept (KEEP), pinned to a version, or dropped (None). Comments and other lines stay.
    Raises ValueError when the text has no jax pin to move."""
    lines, moved = [], False
    for line in text.splitlines():
        bare = _bare(line)
        if bare == "jax":
            name = line.split("#", 1)[0].split("==", 1)[0].strip()
            lines.append(f"{name}=={version}")
            moved = True
        elif bare == "jaxlib":
            if jaxlib:
                lines.append(f"jaxlib=={version}")
        elif bare == "numpyro" and numpyro != KEEP:
            if numpyro:
                lines.append(f"numpyro=={numpyro}")
        else:
            lines.append(line)
    if not moved:
        raise ValueError("no jax pin line to move")
    return "\n".join(lines) + "\n"
