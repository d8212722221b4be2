"""YAML that a pull request or a user controls (workflows, `_config.yml`, `myst.yml`, front matter): the one
reader, bounded before and while it parses.

PyYAML's pure-Python composer is slow (about 10 µs a node) and recursive, and its int() of a scalar fails past
Python's 4,300-digit limit, so three bounds hold here, each refused as UnsafeFile naming the file (and line):

- size, checked before a character is parsed: at most LIMIT (a large book config or workflow is a few KiB);
- nodes and depth, counted while the document is composed (so a flat list of millions of items stops at the
  NODES-th node, and nesting stops at DEPTH, far below Python's recursion limit); aliases expanded are then
  counted by safeio (an alias bomb, a recursive alias);
- integers: at most INT_DIGITS digits (a 5,000-digit `timeout-minutes` is refused with its line, not a
  ValueError traceback).
Pure Python (PyYAML).
"""

from __future__ import annotations

from pathlib import Path

from jaxci.util import safeio
from jaxci.util.safeio import UnsafeFile

#: the largest YAML document read (bytes): configs and workflows are a few KiB; PyYAML composes ~100 KiB/s
LIMIT = 1024 * 1024
#: the most nodes composed (before aliases are expanded; safeio.YAML_NODES bounds them after)
NODES = safeio.YAML_NODES
#: the deepest nesting of mappings and lists (a workflow nests about 8 deep)
DEPTH = 64
#: the most digits of an integer scalar (a count or a number of minutes has a few)
INT_DIGITS = 100


def _line(node_or_mark) -> str:
    mark = getattr(node_or_mark, "start_mark", node_or_mark)
    return f"line {mark.line + 1}: " if mark is not None else ""


def _classes():
    """(Loader, Constructor): PyYAML's safe ones with the bounds above (built once, PyYAML imported lazily)."""
    import yaml

    class Constructor(yaml.constructor.SafeConstructor):
        """The safe constructor; an integer of more than INT_DIGITS digits is refused."""

        source = "YAML"

        def construct_yaml_int(self, node):
            digits = sum(c.isdigit() for c in str(node.value))
            if digits > INT_DIGITS:
                raise UnsafeFile(self.source, f"{_line(node)}an integer of {digits:,} digits (at most {INT_DIGITS})")
            return super().construct_yaml_int(node)

    Constructor.add_constructor("tag:yaml.org,2002:int", Constructor.construct_yaml_int)

    class Loader(yaml.reader.Reader, yaml.scanner.Scanner, yaml.parser.Parser, yaml.composer.Composer,
                 Constructor, yaml.resolver.Resolver):
        """PyYAML's SafeLoader with the bounded constructor, counting nodes and depth while it composes."""

        max_nodes = NODES

        def __init__(self, stream):
            yaml.reader.Reader.__init__(self, stream)
            yaml.scanner.Scanner.__init__(self)
            yaml.parser.Parser.__init__(self)
            yaml.composer.Composer.__init__(self)
            Constructor.__init__(self)
            yaml.resolver.Resolver.__init__(self)
            self.nodes = self.depth = 0

        def compose_node(self, parent, index):
            self.nodes += 1
            self.depth += 1
            try:
                if self.nodes > self.max_nodes:
                    raise UnsafeFile(self.source, f"{_line(self.peek_event())}more than {self.max_nodes:,} YAML "
                                                  "nodes")
                if self.depth > DEPTH:
                    raise UnsafeFile(self.source, f"{_line(self.peek_event())}YAML nested more than {DEPTH} deep")
                return super().compose_node(parent, index)
            finally:
                self.depth -= 1

    return Loader, Constructor


_CLASSES: list = []


def _bound(source, max_nodes: int):
    if not _CLASSES:
        _CLASSES.extend(_classes())
    loader, constructor = _CLASSES
    # a subclass per call carries the source into messages without a shared mutable attribute
    return (type("Loader", (loader,), {"source": str(source), "max_nodes": max_nodes}),
            type("Constructor", (constructor,), {"source": str(source)}))


def _sized(text: str, source) -> None:
    if len(text) > LIMIT:
        raise UnsafeFile(source, f"{len(text):,} characters of YAML, over the limit of {LIMIT:,}")


def compose(text: str, source="YAML", max_nodes: int = NODES):
    """The composed node tree of `text` (None when empty), within every bound; with its constructor class,
    for readers that keep the nodes (line numbers): `root, constructor = compose(...)`."""
    _sized(text, source)
    loader_class, constructor = _bound(source, max_nodes)
    loader = loader_class(text)
    try:
        root = loader.get_single_node()
    finally:
        loader.dispose()
    safeio.check_yaml_node(root, source, max_nodes)  # aliases expanded: an alias bomb or a recursive alias
    return root, constructor


def parse(text: str, source="YAML", max_nodes: int = NODES):
    """`text` as plain data (the safe loader's), within every bound; UnsafeFile for a refused document and for
    a syntax error (with its line)."""
    import yaml

    try:
        root, constructor = compose(text, source, max_nodes)
        return None if root is None else constructor().construct_document(root)
    except RecursionError:  # not reached within DEPTH; kept so no traceback can come of a lower limit
        raise UnsafeFile(source, "YAML nested deeper than Python can parse") from None
    except yaml.YAMLError as exc:
        raise UnsafeFile(source, syntax_error(exc)) from None
    except ValueError as exc:  # a value the constructor cannot build (a date of month 13)
        raise UnsafeFile(source, safeio.unconstructed(exc)) from None


def syntax_error(exc) -> str:
    """PyYAML's error as one line: where and the problem (its message spans several lines)."""
    mark = getattr(exc, "problem_mark", None)
    where = f" at line {mark.line + 1}" if mark is not None else ""
    problem = getattr(exc, "problem", None) or (str(exc).splitlines() or [type(exc).__name__])[0]
    return f"not valid YAML{where} ({problem})"


def load(path: str | Path, *, links: bool = True):
    """A regular YAML file of at most LIMIT bytes, parsed within every bound."""
    return parse(safeio.read_text(path, LIMIT, links=links), path)
