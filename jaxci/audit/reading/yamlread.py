"""YAML read with line numbers, so every finding can cite `file:line`.

PyYAML's composer keeps a mark on every node; here the node tree becomes plain data plus a table from each
key path (a tuple of mapping keys and list indices) to its key node and value node. Mapping keys stay the
strings written in the file (GitHub's `on:` is not turned into True, as YAML 1.1 would), values are
constructed with the safe constructor. Text edits use the marks; the YAML is never re-dumped.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import yaml

from jaxci.util import safeio


@dataclass
class Doc:
    path: Path
    rel: str                      # path as shown in findings (relative to the repository)
    text: str = ""
    data: object = None
    nodes: dict = field(default_factory=dict)  # key path -> (key node or None, value node)
    error: str | None = None

    def line(self, *keys) -> int | None:
        """1-based line of the key (or list item) at this path; None when absent."""
        hit = self.nodes.get(tuple(keys))
        if hit is None:
            return None
        node = hit[0] or hit[1]
        return node.start_mark.line + 1

    def node(self, *keys):
        hit = self.nodes.get(tuple(keys))
        return hit[1] if hit else None

    def key_node(self, *keys):
        hit = self.nodes.get(tuple(keys))
        return hit[0] if hit else None

    def where(self, *keys) -> str:
        line = self.line(*keys)
        return f"{self.rel}:{line}" if line else self.rel


def _build(node, path, nodes, constructor):
    if isinstance(node, yaml.MappingNode):
        out = {}
        for key_node, value_node in node.value:
            # a merge key stays a plain "<<" key: visible, not emulated
            key = key_node.value if isinstance(key_node, yaml.ScalarNode) else str(key_node.start_mark)
            nodes[path + (key,)] = (key_node, value_node)
            out[key] = _build(value_node, path + (key,), nodes, constructor)
        return out
    if isinstance(node, yaml.SequenceNode):
        out = []
        for i, item in enumerate(node.value):
            nodes[path + (i,)] = (None, item)
            out.append(_build(item, path + (i,), nodes, constructor))
        return out
    return constructor.construct_object(node, deep=True)


def parse(text: str, rel: str, path: Path | None = None) -> Doc:
    """`text` composed within jaxci.util.safeyaml's bounds (size before parsing; nodes, depth and digits while it
    is read; aliases expanded), then built; anything refused becomes doc.error, one line naming file and line."""
    from jaxci.util import safeyaml

    doc = Doc(path=path or Path(rel), rel=rel, text=text)
    try:
        root, constructor = safeyaml.compose(text, rel)
        doc.nodes[()] = (None, root)
        doc.data = _build(root, (), doc.nodes, constructor()) if root is not None else None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{rel}:{mark.line + 1}" if mark is not None else rel
        doc.error = f"{where}: not valid YAML: {_one_line(getattr(exc, 'problem', None) or type(exc).__name__)}"
        doc.data, doc.nodes = None, {}
    except safeio.UnsafeFile as exc:
        doc.error, doc.data, doc.nodes = str(exc), None, {}
    except RecursionError:
        doc.error, doc.data, doc.nodes = f"{rel}: not valid YAML: nested deeper than Python can parse", None, {}
    except ValueError as exc:  # an integer past Python's 4,300 digits, an impossible date: safeio's one wording
        doc.error, doc.data, doc.nodes = f"{rel}: {safeio.unconstructed(exc)}", None, {}
    return doc


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def load(path: Path, rel: str) -> Doc:
    """Read (a regular file, within safeyaml's size limit, checked before parsing) and parse one file; a read or
    parse failure, an alias bomb or a recursive alias becomes doc.error (naming file and line)."""
    from jaxci.util import safeyaml

    try:
        text = safeio.read_text(path, safeyaml.LIMIT)
    except safeio.UnsafeFile as exc:
        return Doc(path=Path(path), rel=rel, error=f"{rel}: cannot read: {exc.reason}")
    return parse(text, rel, Path(path))
