"""Walks over a composed YAML node graph: alias limits, and where a node is (path or line).

The composed graph shares a node wherever an alias refers to it, so these walks see a file's real
size however large the expanded document would be; they run before construction (aliases) or only
when an error needs a location (paths and lines).
"""

from __future__ import annotations

from typing import Any

import yaml

from pytest_omk.errors import SampleFileError

_COMPOSER: type[Any] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

MAX_ALIAS_USES = 10_000
"""Most alias references (``*name``, including ``<<: *name``) a YAML file may contain."""
MAX_ALIAS_EXPANSION = 100_000
"""Most nodes that aliases may add to a YAML document once expanded."""


def _children(node: Any) -> list[Any]:
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def _node_error(path: str, node: Any, reason: str) -> SampleFileError:
    """An ``invalid YAML`` error at the line of a composed ``node``."""
    return SampleFileError(path, f"invalid YAML: {reason}", line=node.start_mark.line + 1)


def check_aliases(root: Any, path: str) -> None:
    """Reject recursive aliases and aliases that blow the document up (the "billion laughs").

    The composed node graph shares a node wherever an alias refers to it, so it stays small however
    large the expanded document would be. Its expanded size is computed here, memoised per node, in
    time linear in the number of distinct nodes.
    """
    sizes: dict[int, int] = {}
    on_path: set[int] = set()
    references = 0
    stack: list[tuple[Any, bool]] = [(root, False)]
    while stack:
        node, finished = stack.pop()
        key = id(node)
        if finished:
            on_path.discard(key)
            sizes[key] = 1 + sum(sizes[id(child)] for child in _children(node))
            if sizes[key] - len(sizes) > MAX_ALIAS_EXPANSION:
                raise _node_error(
                    path, node, f"aliases expand the document by more than {MAX_ALIAS_EXPANSION:,} nodes"
                )
            continue
        if key in sizes:
            references += 1
            if references > MAX_ALIAS_USES:
                raise _node_error(path, node, f"more than {MAX_ALIAS_USES:,} alias references")
            continue
        if key in on_path:
            raise _node_error(path, node, "an alias refers to a node that contains it")
        on_path.add(key)
        stack.append((node, True))
        stack.extend((child, False) for child in reversed(_children(node)))


def path_to_mark(root: Any, mark: Any) -> list[str | int] | None:
    """The JSON path of the mapping key or node that starts at ``mark`` (for construction errors,
    such as a duplicate key, that know where they are in the text but not in the document)."""
    stack: list[tuple[Any, list[str | int]]] = [(root, [])]
    while stack:
        node, at = stack.pop()
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                name = getattr(key, "value", None)
                here = [*at, name] if isinstance(name, str) else at
                if key.start_mark.index == mark.index:
                    return here
                stack.append((value, here))
        elif isinstance(node, yaml.SequenceNode):
            stack.extend((child, [*at, i]) for i, child in enumerate(node.value))
        elif node.start_mark.index == mark.index:
            return at
    return None


def yaml_line_of(text: str, json_path: list[str | int]) -> int | None:
    """The 1-based line of the YAML node at ``json_path`` (or its deepest existing ancestor).

    A mapping entry is located by its key's line, so ``rubric`` points at ``rubric:`` rather than at
    the first dimension below it.
    """
    try:
        # libyaml's composer where available, as the parse that already accepted this text used
        # (yaml_parse): the same marks, at a fifteenth of the pure-Python composer's cost.
        node = yaml.compose(text.removeprefix("\ufeff"), Loader=_COMPOSER)
    except yaml.YAMLError:
        return None
    if node is None:
        return None
    line: int = node.start_mark.line + 1
    for part in json_path:
        if isinstance(node, yaml.MappingNode) and isinstance(part, str):
            entry = next(((k, v) for k, v in node.value if getattr(k, "value", None) == part), None)
            if entry is None:
                # A missing key: point at the mapping that lacks it.
                return line
            line = entry[0].start_mark.line + 1
            node = entry[1]
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
            node = node.value[part]
            line = node.start_mark.line + 1
        else:
            break
    return line
