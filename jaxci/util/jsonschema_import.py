"""jsonschema without its rfc3987-syntax checkers, in the processes that read or run notebooks.

nbformat validates notebooks with jsonschema, and jsonschema imports rfc3987-syntax at its own import when it is
installed (jupyter-events asks for `jsonschema[format-nongpl]`, which installs it): that import builds ~35 lark
parsers, 1.5-2.5 s of every such process on the 2-core VM (`import rfc3987_syntax` alone), for the "iri" formats
that no notebook schema uses (python-jsonschema/jsonschema#1428). A None entry in sys.modules makes that one
import fail, and jsonschema skips a checker whose import fails. This project's own .venv does not install it
(scripts/uv-overrides.txt); the skip serves the environments that have it, such as a lecture repository's.
"""

from __future__ import annotations

import sys


def skip_iri_syntax_checkers() -> None:
    """Before the first jsonschema import of this process; a no-op once jsonschema is imported."""
    if "jsonschema" not in sys.modules:
        sys.modules.setdefault("rfc3987_syntax", None)  # type: ignore[arg-type]  # None: "not importable"
