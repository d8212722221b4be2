"""Read one notebook file: .ipynb through nbformat, MyST and other text notebooks through jupytext.

Bounded and link-safe (jaxci.util.safeio); a parse failure says where, never what the file holds.
"""

from __future__ import annotations

import contextlib
import functools
import os
from pathlib import Path

from jaxci.util import safeio
from jaxci.util.jsonschema_import import skip_iri_syntax_checkers

#: what a `load:` file outside the lecture's folder is said with (the audit refuses it; MyST-NB would read it)
LOAD_OUTSIDE = "lies outside the lecture's folder; not read by the audit"
#: the largest notebook read (discovery.LECTURE_LIMIT is this bound)
NOTEBOOK_LIMIT = 64 * 1024 * 1024


class NotebookReadError(Exception):
    """A notebook file that cannot be read or parsed; the message names the file and the cause."""


def read_notebook(path):
    """An .ipynb (nbformat) or a MyST/jupytext text notebook (.md, .py:percent ...) as a NotebookNode."""
    skip_iri_syntax_checkers()
    import nbformat

    path = Path(path)
    try:
        text = safeio.read_bytes(path, NOTEBOOK_LIMIT).decode("utf-8")
    except safeio.UnsafeFile as exc:
        raise NotebookReadError(f"{path}: cannot read: {exc.reason}") from None
    except UnicodeDecodeError as exc:
        raise NotebookReadError(f"{path}: not UTF-8 (byte {exc.start}: {exc.reason})") from None
    try:
        if path.suffix == ".ipynb":
            nb = nbformat.reads(text, as_version=4)
        else:
            import jupytext

            with _whole_notebook_validation(), _fast_yaml():
                nb = jupytext.reads(text, fmt=text_format(path, text))
            load_cell_files(nb, path)
        nbformat.validate(nb)
    except NotebookReadError:
        raise
    except Exception as exc:  # JSON errors, nbformat ValidationError, jupytext format errors
        raise NotebookReadError(f"{path}: malformed notebook: {type(exc).__name__}{read_problem(exc)}") from None
    return nb


def load_cell_files(nb, path: Path) -> None:
    """MyST-NB's `load:` code-cell option, as its reader applies it before execution: the cell's code is the named
    file's text (relative to the notebook's folder), whatever the cell itself holds; the option stays in the cell's
    metadata. A file that cannot be read fails the notebook, as it fails MyST-NB's build."""
    for index, cell in enumerate(nb.cells):
        name = cell.get("metadata", {}).get("load") if cell.cell_type == "code" else None
        if name is not None:
            cell.source = _load_file(path, index, name)


def _load_file(path: Path, index: int, name) -> str:
    """The text of one `load:` file. Only a file inside the lecture's folder (the folder the runner copies for
    the run) is read: a lecture never brings the host's other files into the audit."""
    if not isinstance(name, str) or not name.strip():
        raise NotebookReadError(f"{path}: cell {index}: load: names no file")
    folder = os.path.realpath(path.parent)
    file = os.path.realpath(path.parent / name.strip())
    if not file.startswith(folder.rstrip(os.sep) + os.sep):
        raise NotebookReadError(f"{path}: cell {index}: load: {name.strip()} {LOAD_OUTSIDE}")
    try:
        return safeio.read_text(file, NOTEBOOK_LIMIT)
    except safeio.UnsafeFile as exc:
        raise NotebookReadError(f"{path}: cell {index}: load: {name.strip()} {exc.reason}") from None


def read_problem(exc: BaseException) -> str:
    """Where a notebook failed to parse, never what it holds: the parsers' own messages quote the file's first
    bytes (nbformat's NotJSONError) or the offending value (schema errors), and a lecture that is a link to
    /proc/self/environ or a key must not reach the log or the job summary."""
    import json

    if isinstance(exc, json.JSONDecodeError):
        return f": {exc.msg} at line {exc.lineno} column {exc.colno}"
    where = getattr(exc, "absolute_path", None)
    if where is not None:
        path = "/".join(str(p) for p in where) or "the top level"
        return f": fails the notebook schema at {path} ({getattr(exc, 'validator', '?')})"
    line = getattr(exc, "lineno", None) or getattr(getattr(exc, "problem_mark", None), "line", None)
    return f" (line {line})" if isinstance(line, int) else ""


@contextlib.contextmanager
def _whole_notebook_validation():
    """jupytext builds each cell with nbformat.v4.new_*_cell, which validates the cell against a schema
    fragment with jsonschema: ~70% of reading a MyST lecture. The whole notebook is validated once
    afterwards (nbformat.validate, fastjsonschema) instead, so nothing goes unchecked."""
    from nbformat.v4 import nbbase

    original = getattr(nbbase, "validate", None)
    if original is None:
        yield
        return
    nbbase.validate = lambda node, ref=None: None
    try:
        yield
    finally:
        nbbase.validate = original


@contextlib.contextmanager
def _fast_yaml():
    """jupytext reads front matter and cell options with yaml.safe_load (pure Python); the same safe
    loader in libyaml's C build, when present, reads them identically in a fraction of the time."""
    import yaml

    if not getattr(yaml, "__with_libyaml__", False):
        yield
        return
    originals = yaml.safe_load, yaml.safe_load_all
    yaml.safe_load = lambda stream: yaml.load(stream, Loader=yaml.CSafeLoader)
    yaml.safe_load_all = lambda stream: yaml.load_all(stream, Loader=yaml.CSafeLoader)
    try:
        yield
    finally:
        yaml.safe_load, yaml.safe_load_all = originals


def text_format(path: Path, text: str) -> str:
    """jupytext's format for a text notebook: MyST when it has code-cell directives (jupytext does not
    always guess that from the header), else what the extension says."""
    ext = path.suffix.lstrip(".") or "md"
    if ext == "md" and "{code-cell}" in text:
        return "md:myst"
    return ext


def to_python(source: str) -> str:
    """A code cell's IPython syntax (magics, !shell, help?) as plain Python calls, through IPython's own
    transformer."""
    if not any(mark in source for mark in ("%", "!", "?")):
        return source
    return _ipython_transformer().transform_cell(source)


@functools.cache
def _ipython_transformer():
    from IPython.core.inputtransformer2 import TransformerManager

    return TransformerManager()
