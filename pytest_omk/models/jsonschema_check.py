"""Load-time check that a ``json_schema`` assertion carries a usable JSON Schema."""

from __future__ import annotations

from typing import Any

DEFAULT_DRAFT = "http://json-schema.org/draft-07/schema#"


def validator_class(schema: dict[str, Any]) -> Any:
    """The jsonschema validator class for ``schema``: its ``$schema`` draft, else draft-07 (as Ajv)."""
    import jsonschema.validators

    draft7 = jsonschema.validators.Draft7Validator
    uri = schema.get("$schema")
    if uri is None:
        return draft7
    if not isinstance(uri, str):
        raise ValueError('"$schema" must be a string URI')
    v = jsonschema.validators
    for cls in (v.Draft3Validator, v.Draft4Validator, v.Draft6Validator, v.Draft7Validator,
                v.Draft201909Validator, v.Draft202012Validator):
        if str(cls.META_SCHEMA.get("$schema", cls.META_SCHEMA.get("$id", ""))).rstrip("#") == uri.rstrip("#"):
            return cls
    raise ValueError(f"unknown JSON Schema dialect {uri!r}")


def check_schema(schema: dict[str, Any]) -> None:
    """Raise ``ValueError`` naming the problem when ``schema`` is not a valid JSON Schema."""
    import jsonschema.exceptions

    cls = validator_class(schema)
    try:
        cls.check_schema(schema)
    except jsonschema.exceptions.SchemaError as exc:
        where = "/".join(str(p) for p in exc.absolute_path) or "(root)"
        raise ValueError(f"invalid JSON Schema at {where}: {exc.message}") from None
