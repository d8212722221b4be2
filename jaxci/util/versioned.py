"""The one reader of this project's versioned JSON data files (a published build, the published figures, the
notebook fixed costs): bounded and link-safe (util.safeio), of one format, of this jaxci's version, else one line
naming the file and the command that writes the version it reads."""

from __future__ import annotations

from pathlib import Path


def load(path: str | Path, fmt: str, version: int, limit: int, error: type[Exception], remedy: str,
         kind: str = "file") -> dict:
    """The JSON object at `path` whose "format" is `fmt` and "version" is `version`; `error(one line)` otherwise
    (`remedy`: what writes the current version, said after "this jaxci reads N: ")."""
    from jaxci.util import safeio

    try:
        doc = safeio.load_json(path, limit)
    except (OSError, ValueError) as exc:
        text = " ".join(str(exc).split())
        raise error(text if str(path) in text else f"{path}: {text}") from None
    if not isinstance(doc, dict) or doc.get("format") != fmt:
        raise error(f"{path}: not a {fmt} {kind}")
    found = doc.get("version")
    if type(found) is not int or found != version:  # `true` is no version 1, nor 1.0 a version
        raise error(f"{path}: {fmt} version {found!r}, this jaxci reads {version}: {remedy}")
    return doc
