"""Where each check of a sample is in its file: the line of every assertion (``assert-set``
children included) and rubric dimension, for reports that point at the failing check.

Read once per file, and only when a check failed (a green run never pays for it): YAML through
the composed node graph (which keeps each node's position), JSON through a small scanner over the
text (Python's parser keeps none). The file was validated when it was collected, so the scanner can
assume well-formed JSON; a file that changed since, or cannot be read, gives no lines, never an error.
"""

from __future__ import annotations

import bisect
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


class FileLines:
    """The check lines of one file's samples, each read when first asked for.

    JSON: the ``samples`` array's items are found once (C speed), then only the samples asked for
    are walked. YAML: the whole file's parse events are read at the first question.
    """

    def __init__(self, text: str, *, yaml_format: bool) -> None:
        self._yaml: list[SampleLines] | None = None
        self._text = text
        self._json: _JsonWalk | None = None
        self._items: list[int] | None = None
        self._is_yaml = yaml_format

    def sample(self, index: int) -> SampleLines | None:
        """The lines of the sample at ``index`` in the file's ``samples`` array (``None``: unknown)."""
        if self._is_yaml:
            if self._yaml is None:
                self._yaml = _yaml_lines(self._text)
            return self._yaml[index] if index < len(self._yaml) else None
        if self._json is None:
            self._json = _JsonWalk(self._text)
            self._items = _json_samples(self._json)
        assert self._items is not None
        if index >= len(self._items):
            return None
        try:
            return self._json.sample(self._items[index])
        except (ValueError, IndexError):
            return None


def check_lines(text: str, *, yaml_format: bool) -> list[SampleLines]:
    """Each sample's check lines, by the sample's index in the file's ``samples`` array."""
    lines = FileLines(text, yaml_format=yaml_format)
    found: list[SampleLines] = []
    while (sample := lines.sample(len(found))) is not None:
        found.append(sample)
    return found


# --- one skeleton for both formats --------------------------------------------------------------


@dataclass(frozen=True)
class _Node:
    """A value's line, and for a container its children (a dict by key, a list by index)."""

    line: int
    value: Any = None


class _Skeleton:
    """Builds the containers' skeleton from a stream of parse events, each with its line.

    Scalars are kept only as lines: nothing of the values is needed, and not building them keeps
    a large file's pass short. A mapping's entry takes its key's line.
    """

    def __init__(self) -> None:
        self.root: _Node | None = None
        self._stack: list[tuple[Any, list[Any]]] = []
        """Each open container and its pending key (``[None]`` until a mapping's key is read)."""

    def value(self, line: int, container: Any = None) -> None:
        """A value starts at ``line``: a scalar, or a new container (``{}`` or ``[]``) to fill."""
        if not self._stack:
            self.root = _Node(line, container)
        else:
            parent, pending = self._stack[-1]
            if isinstance(parent, list):
                parent.append(_Node(line, container))
            elif pending[0] is None:
                pending[0] = line  # a key (its text is given to ``key``)
                return
            else:
                name, key_line = pending[1], pending[0]
                parent[name] = _Node(key_line, container)
                pending[0] = None
        if container is not None:
            self._stack.append((container, [None, None]))

    def key(self, name: str, line: int) -> None:
        """The next mapping key, read as text (JSON's strings, YAML's scalars)."""
        pending = self._stack[-1][1]
        pending[0], pending[1] = line, name

    def wants_key(self) -> bool:
        """Whether the next scalar is a mapping's key."""
        return bool(self._stack) and isinstance(self._stack[-1][0], dict) and self._stack[-1][1][0] is None

    def close(self) -> None:
        self._stack.pop()


# --- YAML ----------------------------------------------------------------------------------------


def _yaml_lines(text: str) -> list[SampleLines]:
    """Parse events (libyaml's when available), not the composed graph: a fifth of the time."""
    import yaml

    loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    skeleton = _Skeleton()
    starts = (yaml.MappingStartEvent, yaml.SequenceStartEvent)
    ends = (yaml.MappingEndEvent, yaml.SequenceEndEvent)
    try:
        for event in yaml.parse(text.removeprefix("\ufeff"), Loader=loader):
            mark: Any = event.start_mark
            line = mark.line + 1
            if isinstance(event, yaml.ScalarEvent):
                if skeleton.wants_key():
                    skeleton.key(str(event.value), line)
                else:
                    skeleton.value(line)
            elif isinstance(event, starts):
                skeleton.value(line, {} if isinstance(event, yaml.MappingStartEvent) else [])
            elif isinstance(event, ends):
                skeleton.close()
            elif isinstance(event, yaml.AliasEvent):
                skeleton.value(line)
    except (yaml.YAMLError, IndexError):
        return []
    return _from_skeleton(skeleton.root)


# --- JSON ----------------------------------------------------------------------------------------

_SPACE = re.compile(r"[ \t\n\r]*")


class _JsonWalk:
    """Walks only the containers on the way to the checks; every other value is skipped by the
    standard library's C decoder (``raw_decode`` from its first character), so a large file's long
    prompts and outputs cost C time, not a Python loop over their tokens."""

    def __init__(self, text: str) -> None:
        import json

        self.text = text
        self._decode = json.JSONDecoder().raw_decode
        self._newlines = [m.start() for m in re.finditer("\n", text)]

    def line(self, offset: int) -> int:
        return bisect.bisect_left(self._newlines, offset) + 1

    def space(self, at: int) -> int:
        return _SPACE.match(self.text, at).end()  # type: ignore[union-attr]

    def _skip(self, at: int) -> int:
        return int(self._decode(self.text, at)[1])

    def entries(self, at: int) -> dict[str, tuple[int, int]]:
        """An object's members: key -> (the key's offset, the value's offset)."""
        found: dict[str, tuple[int, int]] = {}
        if self.text[at] != "{":
            return found
        at = self.space(at + 1)
        while self.text[at] != "}":
            key, after = self._decode(self.text, at)
            value = self.space(self.space(after) + 1)  # past the colon
            found.setdefault(str(key), (at, value))
            at = self.space(self._skip(value))
            if self.text[at] == ",":
                at = self.space(at + 1)
        return found

    def items(self, at: int) -> list[int]:
        """An array's items' offsets."""
        found: list[int] = []
        if self.text[at] != "[":
            return found
        at = self.space(at + 1)
        while self.text[at] != "]":
            found.append(at)
            at = self.space(self._skip(at))
            if self.text[at] == ",":
                at = self.space(at + 1)
        return found

    def check(self, at: int) -> CheckLine:
        children = self.entries(at).get("children")
        nested = [self.check(child) for child in self.items(children[1])] if children else []
        return CheckLine(self.line(at), nested)

    def sample(self, at: int) -> SampleLines:
        members = self.entries(at)
        assertions, rubric = members.get("assertions"), members.get("rubric")
        return SampleLines(
            [self.check(item) for item in self.items(assertions[1])] if assertions else [],
            {name: self.line(key) for name, (key, _) in self.entries(rubric[1]).items()} if rubric else {},
        )


def _json_samples(walk: _JsonWalk) -> list[int]:
    """The offsets of the ``samples`` array's items (none when the text is not as validated)."""
    try:
        samples = walk.entries(walk.space(0)).get("samples")
        return walk.items(samples[1]) if samples else []
    except (ValueError, IndexError):
        return []


def _from_skeleton(root: _Node | None) -> list[SampleLines]:
    samples = _get(root, "samples")
    if samples is None or not isinstance(samples.value, list):
        return []
    result = []
    for sample in samples.value:
        assertions, rubric = _get(sample, "assertions"), _get(sample, "rubric")
        result.append(
            SampleLines(
                [_check(a) for a in assertions.value]
                if assertions and isinstance(assertions.value, list)
                else [],
                {name: node.line for name, node in rubric.value.items()}
                if rubric and isinstance(rubric.value, dict)
                else {},
            )
        )
    return result


def _get(node: _Node | None, key: str) -> _Node | None:
    if node is None or not isinstance(node.value, dict):
        return None
    found: _Node | None = node.value.get(key)
    return found


def _check(node: _Node) -> CheckLine:
    children = _get(node, "children")
    nested = [_check(c) for c in children.value] if children and isinstance(children.value, list) else []
    return CheckLine(node.line, nested)
