"""Where a cell's error came from, as fields (never parsed back out of prose): the exception's name and the
installed packages its traceback passes through.

The traceback is IPython's (coloured text frames, `File /…/site-packages/plotly/io/_kaleido.py:120, in …`): only
the package names of frames under a site-packages or dist-packages folder are kept, outermost first, each once.
Nothing of the lecture's code or of the exception's message is kept here (jaxci.audit.judging.failure reads these
fields to tell a harness failure from the lecture's own).
"""

from __future__ import annotations

import re

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_FRAME = re.compile(r"[/\\](?:site|dist)-packages[/\\]([A-Za-z_][A-Za-z0-9_]*)")
#: the most package names kept for one error
MAX_PACKAGES = 20


def error_output(cell) -> dict | None:
    """The cell's first error output (nbformat), or None."""
    for output in cell.get("outputs", []):
        if output.get("output_type") == "error":
            return output
    return None


def error_name(output: dict) -> str | None:
    """The exception's class name ('URLError'), when it is a name."""
    name = output.get("ename")
    return name if isinstance(name, str) and re.fullmatch(r"[A-Za-z_][\w.]{0,199}", name) else None


def traceback_packages(output: dict) -> list[str]:
    """The installed packages the traceback's frames lie in, outermost first, each once."""
    frames = output.get("traceback")
    text = _ANSI.sub("", "\n".join(f for f in frames if isinstance(f, str))) if isinstance(frames, list) else ""
    return list(dict.fromkeys(_FRAME.findall(text)))[:MAX_PACKAGES]
