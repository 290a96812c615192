"""One way to read YAML (set files, the suite file) and one wording for a file that fails.

:func:`load_yaml` is ``yaml.safe_load`` with two refusals, both raised as
:class:`yaml.YAMLError` with the line and column, so callers keep their own error type:

* **duplicate keys** in a mapping (YAML forbids them; PyYAML keeps the last one silently).
  Keys are compared as written (tag and text); merge keys (``<<``) are not counted, so a
  key may override a merged one.
* **alias bombs** ("billion laughs"): PyYAML shares an aliased node instead of copying it,
  so loading is quick, but anything that walks the result (validation, an error message
  quoting it) meets every alias expanded, and nine nested levels of ten are 10**9 nodes.
  Every alias therefore costs the number of nodes it stands for, fully expanded (memoised
  per node, so counting is linear in the file), and a document whose aliases add more than
  :data:`MAX_ALIAS_NODES` nodes in total is refused at the alias that crosses the bound,
  before anything is constructed.  A ten-level bomb stops at its fifth level, in
  milliseconds.  An alias to a collection that contains it (a recursive structure) is
  refused too.  Documents without aliases are never limited (their size is the file's).
* **deep nesting**: PyYAML composes recursively, so a document nested some hundreds of
  levels deep (``[[[[...``) would end in a ``RecursionError``.  A collection nested more
  than :data:`MAX_DEPTH` levels deep, aliases expanded, is refused at the node that
  crosses the bound, naming the keys above it; no goldeneval file needs more than a few.
* **integers Python will not convert** (more than ``sys.get_int_max_str_digits()``
  digits): refused with their line and column instead of a ``ValueError``.
"""

from __future__ import annotations

import sys
from typing import Any

import yaml
from yaml.composer import ComposerError
from yaml.constructor import ConstructorError
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from goldeneval.core.errors import one_line

__all__ = ["MAX_ALIAS_NODES", "MAX_DEPTH", "UnsafeYAMLError", "describe_yaml_error", "load_yaml"]

MAX_ALIAS_NODES = 100_000
"""Most nodes all the aliases of one document may add when expanded."""
MAX_DEPTH = 100
"""Deepest nesting of a document (the document's own node is level 1), aliases expanded."""
MAX_PROBLEM = 200
"""Longest parser problem an error message quotes."""
_MERGE_TAG = "tag:yaml.org,2002:merge"


class UnsafeYAMLError(yaml.MarkedYAMLError):
    """Well-formed YAML that goldeneval refuses to expand (an alias bomb, a recursive alias)."""


class _BoundedSafeLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` that refuses duplicate keys and aliases past :data:`MAX_ALIAS_NODES`."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._expanded: dict[int, int] = {}
        self._depths: dict[int, int] = {}
        self._alias_nodes = 0
        self._path: list[str] = []
        """The keys (and item positions) above the node being composed."""

    def compose_document(self) -> Node | None:
        self._expanded, self._depths, self._alias_nodes, self._path = {}, {}, 0, []
        node: Node | None = super().compose_document()
        self._expanded, self._depths = {}, {}
        return node

    def compose_node(self, parent: Node | None, index: Any) -> Node | None:
        event: yaml.Event = self.peek_event()  # type: ignore[no-untyped-call]  # untyped in types-PyYAML
        if not self.check_event(yaml.AliasEvent):
            self._path.append(_step(parent, index))
            try:
                if len(self._path) > MAX_DEPTH:
                    raise self._too_deep(event)
                return super().compose_node(parent, index)
            finally:
                self._path.pop()
        target = super().compose_node(parent, index)
        if target is None:  # pragma: no cover - PyYAML returns the anchored node or raises
            return None
        self._alias_nodes += self._expanded_size(target, event)
        if len(self._path) + self._depths[id(target)] > MAX_DEPTH:
            raise self._too_deep(event)
        if self._alias_nodes > MAX_ALIAS_NODES:
            raise UnsafeYAMLError(
                None,
                None,
                f"aliases expand to more than {MAX_ALIAS_NODES} nodes at alias {_alias_name(event)} "
                "(an alias bomb?); write the repeated values out",
                event.start_mark,  # type: ignore[arg-type]  # the stubs type the C parser's marks apart
            )
        return target

    def _too_deep(self, event: yaml.Event) -> UnsafeYAMLError:
        where = ".".join([step for step in self._path if step][:3])  # the first keys name the field
        return UnsafeYAMLError(
            None,
            None,
            f"nested more than {MAX_DEPTH} levels deep" + (f" under {one_line(where, 80)!r}" if where else ""),
            event.start_mark,  # type: ignore[arg-type]
        )

    def _expanded_size(self, root: Node, alias: yaml.Event) -> int:
        """Nodes ``root`` stands for with every alias in it expanded (memoised by node)."""
        stack: list[tuple[Node, bool]] = [(root, False)]
        while stack:
            node, children_done = stack.pop()
            if id(node) in self._expanded:
                continue
            if node.end_mark is None:  # still being composed: the alias is inside its own target
                raise UnsafeYAMLError(
                    None,
                    None,
                    f"recursive alias {_alias_name(alias)} (a collection that contains itself)",
                    alias.start_mark,  # type: ignore[arg-type]
                )
            children = _children(node)
            if children_done or not children:
                self._expanded[id(node)] = 1 + sum(self._expanded[id(child)] for child in children)
                self._depths[id(node)] = 1 + max((self._depths[id(child)] for child in children), default=0)
                continue
            stack.append((node, True))
            stack.extend((child, False) for child in children if id(child) not in self._expanded)
        return self._expanded[id(root)]

    def construct_yaml_int(self, node: ScalarNode) -> int:
        try:
            value: int = super().construct_yaml_int(node)
        except ValueError:  # more digits than int() converts
            raise ConstructorError(
                None,
                None,
                f"an integer of {len(node.value)} characters, longer than the "
                f"{sys.get_int_max_str_digits()} digits Python reads",
                node.start_mark,
            ) from None
        return value

    def construct_yaml_timestamp(self, node: ScalarNode) -> Any:
        """A date YAML's pattern matches but the calendar refuses (``2001-13-45``) is a value
        error at its line, not a crash."""
        try:
            return super().construct_yaml_timestamp(node)
        except (ValueError, OverflowError) as exc:
            raise ConstructorError(
                None, None, f"{node.value!r} is not a valid date or time ({exc})", node.start_mark
            ) from None

    def compose_mapping_node(self, anchor: Any) -> MappingNode:
        node: MappingNode = super().compose_mapping_node(anchor)
        first: dict[tuple[str, str], Node] = {}
        for key_node, _ in node.value:
            if not isinstance(key_node, ScalarNode) or key_node.tag == _MERGE_TAG:
                continue
            key = (key_node.tag, key_node.value)
            if key in first:
                raise ComposerError(
                    None,
                    None,
                    f"duplicate key {one_line(repr(key_node.value), 80)} "
                    f"(first at line {first[key].start_mark.line + 1}); keys of a mapping must be unique",
                    key_node.start_mark,
                )
            first[key] = key_node
        return node


_BoundedSafeLoader.add_constructor("tag:yaml.org,2002:int", _BoundedSafeLoader.construct_yaml_int)
_BoundedSafeLoader.add_constructor("tag:yaml.org,2002:timestamp", _BoundedSafeLoader.construct_yaml_timestamp)


def _step(parent: Node | None, index: Any) -> str:
    """How the path names a node: its key (a mapping's value), position (an item), or nothing."""
    if isinstance(index, ScalarNode):
        return str(index.value)
    if isinstance(index, int) and isinstance(parent, SequenceNode):
        return str(index)
    return ""


def _alias_name(event: yaml.Event) -> str:
    return "*" + one_line(str(getattr(event, "anchor", "")), 40)


def _children(node: Node) -> list[Node]:
    if isinstance(node, SequenceNode):
        return list(node.value)
    if isinstance(node, MappingNode):
        return [part for pair in node.value for part in pair]
    return []


def load_yaml(text: str) -> Any:
    """Parse one YAML document like ``yaml.safe_load``, refusing duplicate keys and alias bombs.

    Raises :class:`yaml.YAMLError` (``UnsafeYAMLError`` for a refused alias); describe it
    with :func:`describe_yaml_error`.
    """
    loader = _BoundedSafeLoader(text)
    try:
        return loader.get_single_data()
    except RecursionError:  # pragma: no cover - MAX_DEPTH stops nesting well before the limit
        raise UnsafeYAMLError(None, None, "nested too deeply to read", None) from None
    finally:
        loader.dispose()


def describe_yaml_error(exc: yaml.YAMLError) -> str:
    """``malformed YAML at line L, column C: <problem>`` (the location when the parser knows
    it); ``unsafe YAML ...`` for a refused alias.  The problem is capped to one short line."""
    mark = getattr(exc, "problem_mark", None)
    where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
    problem = getattr(exc, "problem", None) or str(exc)
    kind = "unsafe YAML" if isinstance(exc, UnsafeYAMLError) else "malformed YAML"
    return f"{kind}{where}: {one_line(problem, MAX_PROBLEM)}"
