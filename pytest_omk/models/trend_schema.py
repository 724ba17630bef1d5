"""The JSON Schema of ``render --history --json`` (``pytest-omk.trend/v1``), generated from the models.

Pydantic's rendering of :class:`pytest_omk.models.history.TrendDocument` with the field docstrings
as descriptions, pydantic's titles dropped and its constraint names spelled as JSON Schema spells
them. Every object is closed and every key required (``null`` where a value can be missing).
``python -m pytest_omk.models.schema_export`` writes it beside the report's schema.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pytest_omk.models.field_docs import document_fields
from pytest_omk.models.history import TREND_SCHEMA_VERSION, TrendDocument

RELATIVE_PATH = Path("schemas/trend/v1/trend.schema.json")
"""Where the schema lives, both below the repository root and inside the ``pytest_omk`` package."""
SCHEMA_ID = "https://pytest-omk.dev/schemas/trend/v1/trend.schema.json"
_CONSTRAINTS = {"ge": "minimum", "le": "maximum", "gt": "exclusiveMinimum", "lt": "exclusiveMaximum"}


def _plain(schema: Any, *, names: bool = False) -> Any:
    """Without pydantic's titles and defaults (``names``: ``schema`` maps property names)."""
    if isinstance(schema, list):
        return [_plain(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    if names:
        return {key: _plain(value) for key, value in schema.items()}
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in ("title", "default"):
            continue
        if key in ("enum", "const"):
            out[key] = value
        else:
            out[_CONSTRAINTS.get(str(key), str(key))] = _plain(value, names=key in ("properties", "$defs"))
    return out


def build_trend_schema() -> dict[str, Any]:
    """The trend document's JSON Schema (draft 2020-12)."""
    document_fields(TrendDocument)
    raw = TrendDocument.model_json_schema(mode="serialization", ref_template="#/$defs/{model}")
    defs = raw.pop("$defs", {})
    body = _plain(raw)
    body.pop("description", None)
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        "title": f"pytest-omk trend across runs ({TREND_SCHEMA_VERSION})",
        "description": (
            "What python -m pytest_omk render --history ... --json PATH writes: the runs in startedAt "
            "order, the sample sets they ran, each sample's state and per-run outcome and composite, "
            "and each layer's sliding comparison."
        ),
        **body,
        "$defs": _plain(dict(sorted(defs.items())), names=True),
    }
