"""The YAML reader: PyYAML's safe loader (libyaml's C parser when available) made to read as js-yaml 4.

The YAML 1.2 core schema (as the format's owner reads it), merge keys, unique keys, YAML 1.1
booleans and dates kept as :class:`~pytest_omk.loading.parsed.AmbiguousScalar` text, aliases bounded
by :mod:`.yaml_nodes`. Line numbers are looked up only when an error needs them. Imported for the
first YAML file of a run (see :func:`~pytest_omk.loading.parse.parse_text`).
"""

from __future__ import annotations

import re
from typing import Any

import yaml

from pytest_omk.errors import SampleFileError, format_path
from pytest_omk.loading.parsed import MAX_DEPTH, AmbiguousScalar, DateScalar, js_number
from pytest_omk.loading.yaml_nodes import check_aliases, path_to_mark

_Loader: type[Any] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

_TAG_MERGE = "tag:yaml.org,2002:merge"
_TAG_YAML11_BOOL = "tag:pytest-omk,2026:yaml11-bool"
_TAG_DATE = "tag:pytest-omk,2026:date"


class _OmkYamlLoader(_Loader):  # type: ignore[misc]
    """Safe loader with the YAML 1.2 core schema (as js-yaml), merge keys and unique keys."""

    def construct_mapping(self, node: Any, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            if key_node.tag == _TAG_MERGE:
                # Keys merged in with ``<<`` may be overridden by the mapping's own keys.
                continue
            key = self.construct_object(key_node, deep=True)
            try:
                duplicate = key in seen
            except TypeError:
                raise yaml.constructor.ConstructorError(
                    None, None, "a mapping key must be a plain value", key_node.start_mark
                ) from None
            if duplicate:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {key!r}", key_node.start_mark
                )
            seen.add(key)
        return super().construct_mapping(node, deep=deep)  # type: ignore[no-any-return]

    def _typed_text(self, node: Any) -> str:
        """The scalar's text, checked against its tag's core-schema form.

        Implicitly typed scalars always match; an explicit tag such as ``!!bool "maybe"`` may not,
        and js-yaml refuses it, so it is an error here too, never a guess.
        """
        text = str(self.construct_scalar(node))
        if not _CORE_FORMS[node.tag].match(text):
            raise yaml.constructor.ConstructorError(
                None, None, f"{text!r} is not a valid !!{node.tag.rsplit(':', 1)[-1]} value", node.start_mark
            )
        return text

    def construct_yaml_null(self, node: Any) -> None:
        self._typed_text(node)

    def construct_yaml_bool(self, node: Any) -> bool:
        return self._typed_text(node) in ("true", "True", "TRUE")

    def construct_yaml_int(self, node: Any) -> int | float:
        text = self._typed_text(node)
        sign = -1 if text.startswith("-") else 1
        digits = text.lstrip("+-")
        base = {"0b": 2, "0o": 8, "0x": 16}.get(digits[:2], 10)
        try:
            value = sign * int(digits[2:] if base != 10 else digits, base)
        except ValueError:
            # Thousands of digits: Python refuses the conversion; JavaScript gets Infinity.
            return sign * float("inf")
        return js_number(value)

    def construct_yaml_float(self, node: Any) -> float:
        text = self._typed_text(node).lower()
        sign = -1.0 if text.startswith("-") else 1.0
        body = text.lstrip("+-")
        if body == ".inf":
            return sign * float("inf")
        if body == ".nan":
            return float("nan")
        return sign * float(body)

    def construct_ambiguous(self, node: Any) -> AmbiguousScalar:
        text = str(self.construct_scalar(node))
        return DateScalar(text) if node.tag == _TAG_DATE else AmbiguousScalar(text)


# The YAML 1.2 core schema as js-yaml 4 resolves it (checked in this order), plus the two kinds of
# ambiguous plain scalars. PyYAML's own resolvers (YAML 1.1) are dropped entirely.
_IMPLICIT: list[tuple[str, str, str]] = [
    ("tag:yaml.org,2002:null", r"~|null|Null|NULL|", "~nN"),
    ("tag:yaml.org,2002:bool", r"true|True|TRUE|false|False|FALSE", "tTfF"),
    ("tag:yaml.org,2002:int", r"[-+]?(?:0b[01]+|0o[0-7]+|0x[0-9a-fA-F]+|[0-9]+)", "-+0123456789"),
    (
        "tag:yaml.org,2002:float",
        r"[-+]?[0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?|\.[0-9]+(?:[eE][-+]?[0-9]+)?"
        r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)",
        "-+0123456789.",
    ),
    (_TAG_MERGE, r"<<", "<"),
    (_TAG_YAML11_BOOL, r"yes|Yes|YES|no|No|NO|on|On|ON|off|Off|OFF", "yYnNoO"),
    (
        _TAG_DATE,
        r"[0-9]{4}-[0-9]{2}-[0-9]{2}"
        r"|[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:[Tt]|[ \t]+)[0-9]{1,2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]*)?"
        r"(?:[ \t]*(?:Z|[-+][0-9]{1,2}(?::[0-9]{2})?))?",
        "0123456789",
    ),
]
# Each tag's whole-scalar form: what an untagged scalar is resolved by, and what an explicitly
# tagged one is checked against (``_typed_text``).
_CORE_FORMS: dict[str, re.Pattern[str]] = {
    tag: re.compile(f"^(?:{pattern})$") for tag, pattern, _ in _IMPLICIT
}
_OmkYamlLoader.yaml_implicit_resolvers = {}
for _tag, _, _first in _IMPLICIT:
    _OmkYamlLoader.add_implicit_resolver(_tag, _CORE_FORMS[_tag], list(_first))
# An empty plain scalar (``key:``) has no first character; PyYAML looks it up under "".
_OmkYamlLoader.add_implicit_resolver("tag:yaml.org,2002:null", re.compile("^$"), [""])
_OmkYamlLoader.add_constructor("tag:yaml.org,2002:null", _OmkYamlLoader.construct_yaml_null)
_OmkYamlLoader.add_constructor("tag:yaml.org,2002:bool", _OmkYamlLoader.construct_yaml_bool)
_OmkYamlLoader.add_constructor("tag:yaml.org,2002:int", _OmkYamlLoader.construct_yaml_int)
_OmkYamlLoader.add_constructor("tag:yaml.org,2002:float", _OmkYamlLoader.construct_yaml_float)
_OmkYamlLoader.add_constructor(_TAG_YAML11_BOOL, _OmkYamlLoader.construct_ambiguous)
_OmkYamlLoader.add_constructor(_TAG_DATE, _OmkYamlLoader.construct_ambiguous)


def parse_yaml(text: str, path: str) -> Any:
    """Parse YAML ``text`` (from ``path``) with the format's rules: no duplicate keys, limited aliases."""
    text = text.removeprefix("\ufeff")
    loader = _OmkYamlLoader(text)
    node: Any = None
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        if "&" in text:  # no alias without an anchor: skip the walk for the usual anchor-free file
            check_aliases(node, path)
        return loader.construct_document(node)
    except yaml.reader.ReaderError as exc:
        char = exc.character if isinstance(exc.character, int) else ord(str(exc.character)[:1] or "\0")
        raise SampleFileError(
            path,
            f"invalid YAML: character U+{char:04X} is not allowed ({exc.reason})",
            line=text.count("\n", 0, exc.position) + 1,
        ) from None
    except yaml.MarkedYAMLError as exc:
        mark, reason = _yaml_mark(exc)
        if "nesting depth" in reason:  # libyaml >= 0.2.5 stops at 1,000 levels: say what we say below it
            reason = f"data nests deeper than {MAX_DEPTH} levels"
        where = None
        if mark is not None and node is not None:
            at = path_to_mark(node, mark)
            where = format_path(at) if at else None
        line, column = (mark.line + 1, mark.column + 1) if mark is not None else (None, None)
        raise SampleFileError(
            path, f"invalid YAML: {reason}", where=where, line=line, column=column
        ) from None
    except yaml.YAMLError as exc:
        raise SampleFileError(path, f"invalid YAML: {exc}") from None
    except RecursionError:
        raise SampleFileError(path, f"YAML nests deeper than {MAX_DEPTH} levels") from None
    finally:
        loader.dispose()


def _yaml_mark(exc: yaml.MarkedYAMLError) -> tuple[Any, str]:
    """Where a YAML syntax error is, and why, as the parser saw it.

    A token left open (a quote, a flow sequence) is reported where it starts, the parser's
    ``context_mark``: the problem mark is only where the parser gave up, often lines later. Other
    errors (a bad indentation inside a block mapping, say) are reported where they were found.
    """
    problem = exc.problem or exc.context or "invalid YAML"
    start, found = exc.context_mark, exc.problem_mark
    left_open = (exc.context or "").startswith(("while scanning", "while parsing a flow"))
    if (
        left_open
        and start is not None
        and found is not None
        and (start.line, start.column) != (found.line, found.column)
    ):
        noticed = f"line {found.line + 1}, column {found.column + 1}"
        return start, f"{problem} ({exc.context} that starts here; noticed at {noticed})"
    return found or start, problem
