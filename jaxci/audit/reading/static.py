"""Static scan of one lecture: what JAX work it does, read from its code cells (ast) and markdown (regex).

No code is executed. IPython syntax (magics, `!shell`) is turned into Python by IPython's own input
transformer, and the bodies of `%time`/`%%time`-style magics are parsed too. Every finding carries the
cell it came from, so a maintainer can check it. Classification into a regime lives in classify.py.

This module holds the entry points (`scan_notebook`, `is_lecture`; `LectureScan`, the record, lives in
scanrecord.py and is re-exported here) and the cell loop; the
layers are markdown.py (prose and front matter), shapes.py (the value / shape evaluator) and visitor.py
(the findings visitor). Findings with structure are records: device pins are `pins.Pin`, sizes are
`sizes.SizeFinding` (stored once; `sizes` renders them as the report's lines).
"""

from __future__ import annotations

import ast
from pathlib import Path

from jaxci.audit.reading.markdown import scan_markdown, timeout_metadata
from jaxci.audit.reading.notebook import to_python
from jaxci.audit.reading.pins import kernelspec_pin
from jaxci.audit.reading.scanrecord import LectureScan
from jaxci.audit.reading.visitor import CodeScan

#: cell tags Jupyter Book (nbclient) tolerates: an expected error, a cell never executed
RAISES_TAG, SKIP_TAG = "raises-exception", "skip-execution"


def scan_notebook(nb, path: str, root: Path | None = None) -> LectureScan:
    """Scan a NotebookNode; never raises for bad cell contents (they become `errors`). `root`: the repository,
    where the kernelspecs its lectures name may live (`pins.kernelspec_pin`)."""
    scan = LectureScan(path)
    kernel = kernelspec_pin(nb.get("metadata"), root)
    if kernel is not None:
        scan.pins.append(kernel)
    scan.timeout_origin, scan.timeout_override, notes = timeout_metadata(nb.get("metadata", {}))
    scan.notes += notes
    code = []
    for index, cell in enumerate(nb.cells):
        if cell.cell_type == "code":
            scan.code_cells += 1
            tree = _code_cell(cell, index, scan)
            if tree is not None:
                code.append((index, tree))
        elif cell.cell_type == "markdown":
            scan_markdown(cell.source, index, scan.gpu_narrative, scan.gpu_shown)
    CodeScan(scan).run(code)
    if scan.errors:
        scan.status = "error"
    return scan


def _code_cell(cell, index: int, scan: LectureScan) -> ast.Module | None:
    """A code cell's tree, honouring the tags the book honours (skipped: not scanned; raises: errors expected)."""
    tags = cell_tags(cell)
    if SKIP_TAG in tags:
        scan.notes.append(f"cell {index}: tagged {SKIP_TAG}: not executed by the book, not scanned")
        return None
    errors = len(scan.errors)
    tree = _parse_cell(cell.source, index, scan)
    if RAISES_TAG in tags and len(scan.errors) > errors:
        scan.notes += [f"{e} (tagged {RAISES_TAG}: expected)" for e in scan.errors[errors:]]
        del scan.errors[errors:]
    return tree


def cell_tags(cell) -> set[str]:
    """A cell's tags (MyST `:tags:` options land in metadata.tags through jupytext)."""
    tags = (cell.get("metadata") or {}).get("tags") or []
    return {str(t) for t in tags} if isinstance(tags, (list, tuple)) else set()


def _parse_cell(source: str, index: int, scan: LectureScan) -> ast.Module | None:
    try:
        return ast.parse(to_python(source))
    except SyntaxError as exc:
        scan.errors.append(f"cell {index} line {exc.lineno}: SyntaxError: {exc.msg}")
    except Exception as exc:  # the IPython transformer on very odd input
        scan.errors.append(f"cell {index}: cannot parse: {type(exc).__name__}: {exc}")
    return None


def is_lecture(path: Path, text: str | None = None) -> bool:
    """A .ipynb, or a .md that is a MyST notebook (has code-cell directives or a kernelspec header)."""
    if path.suffix == ".ipynb":
        return True
    if path.suffix != ".md":
        return False
    if text is None:
        from jaxci.util import safeio

        try:
            text = safeio.read_bytes(path, 64 * 1024 * 1024).decode("utf-8", errors="replace")
        except safeio.UnsafeFile:
            return False
    head = text
    return "{code-cell}" in head or ("kernelspec:" in head[:2000] and head.startswith("---"))
