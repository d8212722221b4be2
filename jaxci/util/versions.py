"""JAX release numbers: the one pattern and the one sort key that history, the release watch and the
release analysis share (a release like 0.4.26 or 0.12.0.1; pre-releases and local versions are not releases)."""

from __future__ import annotations

import re

RELEASE = re.compile(r"^[0-9]{1,6}(\.[0-9]{1,6}){1,3}$")


def release_key(version: str) -> tuple[int, ...]:
    """The numeric sort key of a release ('0.11.1' -> (0, 11, 1)); () for anything that is not a release."""
    return tuple(int(p) for p in version.split(".")) if RELEASE.fullmatch(version) else ()
