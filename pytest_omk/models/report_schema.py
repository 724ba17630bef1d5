"""The JSON Schema of the ``--omk-report`` document, its per-sample part generated from the models.

The ``sample`` definition and the ones it uses (``layerScores``, ``assertionEntry``, ``rubricEntry``,
``executionRecord``, ``calls``, ``repeats``, ``layerStats``, ``runTally``, ``formatRefused``) are
pydantic's rendering of
:class:`~pytest_omk.models.report.SampleRecord`, reshaped into plain JSON Schema: every key the
record always writes is required, the keys written only when set are optional, and every object is
closed. The run's ``config`` and ``summary`` are generated the same way, from
:mod:`pytest_omk.models.report_document`. The document's other parts (its top-level run fields,
variants, comparisons, baseline, coverage) are not modelled yet; they come from
``report_schema_frame.json`` beside this module, written by hand. ``python -m pytest_omk.models.schema_export`` writes the result, ``--check`` verifies the committed copies.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from pytest_omk.models import calibration as calibration_models
from pytest_omk.models import report as models
from pytest_omk.models import report_document as document
from pytest_omk.models import usage
from pytest_omk.models.field_docs import document_fields

RELATIVE_PATH = Path("schemas/report/v1/report.schema.json")
"""Where the schema lives, both below the repository root and inside the ``pytest_omk`` package."""
FRAME = Path(__file__).with_name("report_schema_frame.json")

_NAMES = {
    "SampleRecord": "sample",
    "LayerScores": "layerScores",
    "AssertionEntry": "assertionEntry",
    "RubricEntry": "rubricEntry",
    "ExecutionRecord": "executionRecord",
    "ModelCalls": "calls",
    "CallUsage": "callUsage",
    "RoleUsage": "roleUsage",
    "Repeats": "repeats",
    "LayerStats": "layerStats",
    "RunTally": "runTally",
    "FormatRefused": "formatRefused",
    "ReportConfig": "config",
    "ReportSummary": "summary",
    "SummaryMeans": "summaryMeans",
    "AutoRepeats": "autoRepeats",
    "MutantResult": "mutantResult",
    "Mutation": "mutation",
    "LiveSpend": "liveSpend",
    "BudgetSummary": "budgetSummary",
    "RepeatSummary": "repeatSummary",
    "MutationSummary": "mutationSummary",
    "Calibration": "calibration",
    "Rate": "rate",
    "Disagreement": "disagreement",
}
_MODELS: dict[str, type[BaseModel]] = {
    name: getattr(models, name, None)
    or getattr(usage, name, None)
    or getattr(calibration_models, name, None)
    or getattr(document, name)
    for name in _NAMES
}
_ROOTS: tuple[type[BaseModel], ...] = (
    models.SampleRecord,
    document.ReportConfig,
    document.ReportSummary,
    calibration_models.Calibration,
)
_SECTIONS = {"config": "config", "summary": "summary"}
"""The document's properties that are generated definitions (property name: definition name)."""
_CONSTRAINTS = {"ge": "minimum", "le": "maximum", "gt": "exclusiveMinimum", "lt": "exclusiveMaximum"}


def sample_definitions() -> dict[str, Any]:
    """The ``$defs`` entries generated from the models, under the schema's own names."""
    defs: dict[str, Any] = {}
    document_fields(*_ROOTS)
    for root in _ROOTS:
        raw = root.model_json_schema(mode="validation", ref_template="#/$defs/{model}")
        defs.update(raw.pop("$defs", {}))
        defs[root.__name__] = raw
    text = json.dumps(defs)
    for name, short in _NAMES.items():
        text = text.replace(f'"#/$defs/{name}"', f'"#/$defs/{short}"')
    renamed: dict[str, Any] = json.loads(text)
    return {_NAMES[name]: _closed(renamed[name], _MODELS[name]) for name in _NAMES}


def _closed(schema: dict[str, Any], model: type[BaseModel]) -> dict[str, Any]:
    """One model's object schema: closed, the always-written keys required, plain keywords only."""
    optional = set(getattr(model, "OPTIONAL_KEYS", ()))
    properties = {
        field.alias or name: _plain(schema["properties"][field.alias or name])
        for name, field in model.model_fields.items()
        if not field.exclude
    }
    result: dict[str, Any] = {"type": "object"}
    if schema.get("description"):
        result["description"] = schema["description"]
    result["required"] = [key for key in properties if key not in optional]
    result["additionalProperties"] = False
    result["properties"] = properties
    return result


def _plain(schema: Any) -> Any:
    """Drop pydantic's titles and defaults; spell its constraint names as JSON Schema does."""
    if isinstance(schema, list):
        return [_plain(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    # (No record field is named like a keyword, so property maps can be walked the same way.)
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in ("title", "default"):
            continue
        out[_CONSTRAINTS.get(str(key)) or str(key)] = value if key in ("enum", "const") else _plain(value)
    return out


def build_report_schema() -> dict[str, Any]:
    """The whole report schema: the hand-written frame with the generated definitions."""
    frame: dict[str, Any] = json.loads(FRAME.read_text(encoding="utf-8"))
    properties = frame["properties"]
    # The generated sections keep their place among the document's properties.
    frame["properties"] = {
        key: {"$ref": f"#/$defs/{_SECTIONS[key]}"} if key in _SECTIONS else value
        for key, value in properties.items()
    }
    frame["$defs"] = {**frame["$defs"], **sample_definitions()}
    return frame
