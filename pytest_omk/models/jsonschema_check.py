"""JSON Schema as the reference applies it: one default Ajv 8 instance (draft-07, strict mode, no formats).

What such an instance refuses to compile can never pass, so it is refused when the file loads, with
the keyword named and why: a keyword draft-07 does not define (``prefixItems``, ``example``,
``x-...``), any ``format`` (no format is registered), a ``$schema`` other than draft-07, ``if``
without ``then``/``else`` (and the reverse), ``additionalItems`` without a tuple ``items``, a schema
the draft-07 meta-schema rejects, or a ``pattern`` that is not a JavaScript ``u``-flag expression.

Validation (:func:`validate`) uses jsonschema's draft-07 keywords with Ajv's differences: the
siblings of ``$ref`` apply, ``pattern``/``patternProperties`` run in V8 with the ``u`` flag, and
references resolve only inside the schema (nothing is ever fetched: the registry has no retrieval).
"""

from __future__ import annotations

import operator
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pytest_omk.js.v8 import JsEngine

DRAFT_07 = "http://json-schema.org/draft-07/schema"

KEYWORDS = frozenset(
    [
        "$id",
        "$schema",
        "$ref",
        "$comment",
        "definitions",
        "$defs",
        "$vocabulary",
        "$async",
        "title",
        "description",
        "default",
        "deprecated",
        "readOnly",
        "writeOnly",
        "examples",
        "contentMediaType",
        "contentEncoding",
        "contentSchema",
        "type",
        "nullable",
        "const",
        "enum",
        "maximum",
        "minimum",
        "exclusiveMaximum",
        "exclusiveMinimum",
        "multipleOf",
        "maxLength",
        "minLength",
        "pattern",
        "maxProperties",
        "minProperties",
        "required",
        "maxItems",
        "minItems",
        "uniqueItems",
        "additionalItems",
        "items",
        "contains",
        "dependencies",
        "propertyNames",
        "additionalProperties",
        "properties",
        "patternProperties",
        "not",
        "anyOf",
        "oneOf",
        "allOf",
        "if",
        "then",
        "else",
    ]
)
"""Keywords a default Ajv 8 instance knows; in strict mode any other one is a compile error."""

_ONE = (
    "additionalItems",
    "contains",
    "propertyNames",
    "additionalProperties",
    "not",
    "if",
    "then",
    "else",
    "contentSchema",
)
_MANY = ("allOf", "anyOf", "oneOf")
_MAPS = ("properties", "patternProperties", "definitions", "$defs")


def _subschemas(schema: dict[str, Any], at: str) -> Iterator[tuple[Any, str]]:
    for key in _ONE:
        if key in schema:
            yield schema[key], f"{at}/{key}"
    for key in _MANY:
        if isinstance(schema.get(key), list):
            yield from ((s, f"{at}/{key}/{i}") for i, s in enumerate(schema[key]))
    items = schema.get("items")
    if isinstance(items, list):
        yield from ((s, f"{at}/items/{i}") for i, s in enumerate(items))
    elif items is not None:
        yield items, f"{at}/items"
    for key in (*_MAPS, "dependencies"):
        if isinstance(schema.get(key), dict):
            for name, sub in schema[key].items():
                if key != "dependencies" or isinstance(sub, dict | bool):
                    yield sub, f"{at}/{key}/{name}"


def _problem_here(schema: dict[str, Any], at: str, js: JsEngine | None) -> str | None:
    for key in schema:
        if key not in KEYWORDS and key != "format":
            return f'unknown keyword "{key}" at {at}: a strict Ajv (the reference\'s validator) refuses the schema'
    if "format" in schema:
        return (
            f'"format" at {at}: the reference\'s Ajv has no formats registered, so any format '
            "makes the schema fail to compile"
        )
    if "if" in schema and "then" not in schema and "else" not in schema:
        return f'"if" without "then" or "else" at {at}: a strict Ajv refuses it'
    for key in ("then", "else"):
        if key in schema and "if" not in schema:
            return f'"{key}" without "if" at {at}: a strict Ajv refuses it'
    if "additionalItems" in schema and not isinstance(schema.get("items"), list):
        return f'"additionalItems" without a tuple "items" at {at}: a strict Ajv refuses it'
    if js is not None:
        patterns = [(schema.get("pattern"), f"{at}/pattern")]
        patterns += [(p, f"{at}/patternProperties") for p in schema.get("patternProperties") or {}]
        for pattern, where in patterns:
            if isinstance(pattern, str) and (error := js.regex_error(pattern, "u")) is not None:
                return f"{where}: not a JavaScript regular expression with the u flag ({error})"
    return None


def ajv_problem(schema: Any, js: JsEngine | None = None, at: str = "#") -> str | None:
    """Why a default strict Ajv 8 would refuse to compile ``schema``, or ``None``."""
    if not isinstance(schema, dict):
        return None
    if at == "#" and "$schema" in schema:
        uri = schema["$schema"]
        if not isinstance(uri, str) or uri.rstrip("#") != DRAFT_07:
            return (
                f'unknown JSON Schema dialect: "$schema" is {uri!r}, but the reference validates '
                f'with draft-07 only ("{DRAFT_07}#"), any other dialect fails to compile'
            )
    found = _problem_here(schema, at, js)
    if found is not None:
        return found
    for sub, where in _subschemas(schema, at):
        found = ajv_problem(sub, js, where)
        if found is not None:
            return found
    return None


def check_schema(schema: dict[str, Any], js: JsEngine | None = None) -> None:
    """Raise ``ValueError`` naming the problem when the reference's Ajv could never use ``schema``."""
    import jsonschema.exceptions
    import jsonschema.validators

    draft7 = jsonschema.validators.Draft7Validator
    # The meta-schema without its "format": "regex" checks (Python's re); patterns are V8's below.
    error = jsonschema.exceptions.best_match(draft7(draft7.META_SCHEMA).iter_errors(schema))
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "(root)"
        raise ValueError(f"invalid JSON Schema at {where}: {error.message}")
    problem = ajv_problem(schema, js)
    if problem is not None:
        raise ValueError(f"{problem}; the assertion could never pass")


def _ajv_keywords(js: JsEngine) -> dict[str, Any]:
    """The keywords whose patterns Ajv matches with JavaScript's ``u`` semantics."""
    import jsonschema

    def pattern(validator: Any, wanted: str, instance: Any, schema: Any) -> Iterator[Any]:
        if validator.is_type(instance, "string") and js.search(wanted, "u", instance) is None:
            yield jsonschema.ValidationError(f"{instance!r} does not match {wanted!r}")

    def pattern_properties(
        validator: Any, patterns: dict[str, Any], instance: Any, schema: Any
    ) -> Iterator[Any]:
        if not validator.is_type(instance, "object"):
            return
        for wanted, sub in patterns.items():
            for key, value in instance.items():
                if js.search(wanted, "u", key) is not None:
                    yield from validator.descend(value, sub, path=key, schema_path=wanted)

    def additional_properties(validator: Any, extra: Any, instance: Any, schema: Any) -> Iterator[Any]:
        if not validator.is_type(instance, "object"):
            return
        known = set(schema.get("properties", {}))
        patterns = list(schema.get("patternProperties", {}))
        others = [k for k in instance if k not in known and not any(js.search(p, "u", k) for p in patterns)]
        if extra is False and others:
            yield jsonschema.ValidationError(
                f"additional properties are not allowed ({', '.join(map(repr, others))})"
            )
        elif isinstance(extra, dict):
            for key in others:
                yield from validator.descend(instance[key], extra, path=key)

    return {
        "pattern": pattern,
        "patternProperties": pattern_properties,
        "additionalProperties": additional_properties,
    }


def validator_for(schema: dict[str, Any], js: JsEngine) -> Any:
    """A draft-07 validator of ``schema`` with Ajv's semantics (see the module docstring)."""
    import jsonschema.validators
    import referencing
    import referencing.jsonschema

    draft7 = jsonschema.validators.Draft7Validator
    cls = jsonschema.validators.create(
        meta_schema=draft7.META_SCHEMA,
        validators={**draft7.VALIDATORS, **_ajv_keywords(js)},
        type_checker=draft7.TYPE_CHECKER,
        format_checker=None,  # type: ignore[arg-type]
        id_of=draft7.ID_OF,  # type: ignore[arg-type]
        # Ajv applies the keywords beside "$ref" too; jsonschema's draft-07 would ignore them.
        applicable_validators=operator.methodcaller("items"),
    )
    resource = referencing.jsonschema.DRAFT7.create_resource(schema)
    # An empty registry with no retrieval: a reference outside the schema is never fetched.
    registry: Any = referencing.Registry().with_resource("", resource)
    return cls(schema, registry=registry)
