"""Where each check of a sample is in its file: the line of every assertion (``assert-set``
children included) and rubric dimension, for reports that point at the failing check.

Read once per file, and only when a check failed (a green run never pays for it): YAML through
the composed node graph (which keeps each node's position), JSON through a small scanner over the
text (Python's parser keeps none). The file was validated when it was collected, so the scanner can
assume well-formed JSON; a file that changed since, or cannot be read, gives no lines, never an error.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class CheckLine:
    """The 1-based line of one assertion, and its ``children``'s when it is an ``assert-set``."""

    line: int
    children: list[CheckLine] = field(default_factory=list)


@dataclass(frozen=True)
class SampleLines:
    """The lines of one sample's checks: its assertions by index, its rubric dimensions by name."""

    assertions: list[CheckLine] = field(default_factory=list)
    rubric: dict[str, int] = field(default_factory=dict)

    def assertion(self, index: int, at: Sequence[int] = ()) -> int | None:
        """The line of assertion ``index``, or of its child at the index path ``at`` (nested sets);
        the deepest line known when the path goes further than the file does."""
        if index >= len(self.assertions):
            return None
        node = self.assertions[index]
        for child in at:
            if child >= len(node.children):
                break
            node = node.children[child]
        return node.line


def check_lines(text: str, *, yaml_format: bool) -> list[SampleLines]:
    """Each sample's check lines, by the sample's index in the file's ``samples`` array."""
    return _yaml_lines(text) if yaml_format else _json_lines(text)


# --- YAML ----------------------------------------------------------------------------------------


def _yaml_lines(text: str) -> list[SampleLines]:
    import yaml

    loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        root = yaml.compose(text.removeprefix("\ufeff"), Loader=loader)
    except yaml.YAMLError:
        return []
    samples = _entry(root, "samples")
    if not isinstance(samples, yaml.SequenceNode):
        return []
    return [_yaml_sample(node) for node in samples.value]


def _entry(node: Any, key: str) -> Any:
    import yaml

    if not isinstance(node, yaml.MappingNode):
        return None
    return next((value for k, value in node.value if getattr(k, "value", None) == key), None)


def _yaml_check(node: Any) -> CheckLine:
    import yaml

    children = _entry(node, "children")
    nested = [_yaml_check(child) for child in children.value] if isinstance(children, yaml.SequenceNode) else []
    return CheckLine(node.start_mark.line + 1, nested)


def _yaml_sample(node: Any) -> SampleLines:
    import yaml

    assertions = _entry(node, "assertions")
    rubric = _entry(node, "rubric")
    return SampleLines(
        [_yaml_check(a) for a in assertions.value] if isinstance(assertions, yaml.SequenceNode) else [],
        {str(k.value): k.start_mark.line + 1 for k, _ in rubric.value} if isinstance(rubric, yaml.MappingNode) else {},
    )


# --- JSON ----------------------------------------------------------------------------------------

# Strings first (their text may hold any punctuation), then structure, then any other literal.
_TOKEN = re.compile(r'"(?:[^"\\\n]|\\.)*"|[{}\[\],:]|[^\s{}\[\],:"]+')


class _Frame:
    """One open container while scanning: its node, and the key or index its next value takes."""

    __slots__ = ("index", "key", "node", "wants_key")

    def __init__(self, node: Any) -> None:
        self.node = node
        self.key: str | None = None
        self.index = 0
        self.wants_key = isinstance(node, dict)


def _json_lines(text: str) -> list[SampleLines]:
    """Scan the text once, building a skeleton of the containers with the line each starts on;
    then read the checks' lines off the skeleton as the YAML walk does off its nodes."""
    import json

    root: Any = None
    stack: list[_Frame] = []
    line, position = 1, 0
    for match in _TOKEN.finditer(text):
        start = match.start()
        line += text.count("\n", position, start)
        position = start
        token = match.group()
        top = stack[-1] if stack else None
        if token in ",:":
            if token == "," and top is not None:
                top.wants_key = isinstance(top.node, dict)
                top.index += 1
            continue
        if token in "}]":
            stack.pop()
            continue
        if top is not None and top.wants_key:
            try:
                top.key = json.loads(token)
            except ValueError:
                return []
            top.node[top.key] = _Node(line)  # the entry's line is its key's
            top.wants_key = False
            continue
        value: Any = {} if token == "{" else [] if token == "[" else None
        here = _Node(line, value)
        if top is None:
            root = here
        elif isinstance(top.node, dict):
            top.node[top.key] = _Node(top.node[top.key].line, value)
        else:
            top.node.append(here)
        if value is not None:
            stack.append(_Frame(value))
    return _from_skeleton(root)


@dataclass(frozen=True)
class _Node:
    line: int
    value: Any = None


def _from_skeleton(root: _Node | None) -> list[SampleLines]:
    samples = _get(root, "samples")
    if samples is None or not isinstance(samples.value, list):
        return []
    result = []
    for sample in samples.value:
        assertions, rubric = _get(sample, "assertions"), _get(sample, "rubric")
        result.append(
            SampleLines(
                [_json_check(a) for a in assertions.value] if assertions and isinstance(assertions.value, list) else [],
                {name: node.line for name, node in rubric.value.items()} if rubric and isinstance(rubric.value, dict) else {},
            )
        )
    return result


def _get(node: _Node | None, key: str) -> _Node | None:
    if node is None or not isinstance(node.value, dict):
        return None
    found: _Node | None = node.value.get(key)
    return found


def _json_check(node: _Node) -> CheckLine:
    children = _get(node, "children")
    nested = [_json_check(c) for c in children.value] if children and isinstance(children.value, list) else []
    return CheckLine(node.line, nested)
