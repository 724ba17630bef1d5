"""Field docstrings reach the JSON Schema only when a generator asks (the plugin loads without them)."""

from __future__ import annotations

import json
import subprocess
import sys

from pydantic import BaseModel

from pytest_omk.models.field_docs import attribute_docstrings, document_fields


class Leaf(BaseModel):
    value: int
    """How much.

    Indented continuation lines are cleaned as ``inspect.cleandoc`` does."""
    plain: str = ""


class Middle(BaseModel):
    leaves: list[Leaf]
    """The leaves, in order."""


class Derived(Middle):
    extra: Leaf | None = None
    """One more (its docstring, and the inherited ones, both count)."""


class Root(BaseModel):
    middle: Middle
    """Where the leaves hang."""


def test_docstrings_under_fields_are_read_with_the_bases() -> None:
    assert attribute_docstrings(Derived) == {
        "leaves": "The leaves, in order.",
        "extra": "One more (its docstring, and the inherited ones, both count).",
    }
    assert (
        attribute_docstrings(Leaf)["value"]
        == "How much.\n\nIndented continuation lines are cleaned as ``inspect.cleandoc`` does."
    )


def test_descriptions_reach_nested_schemas_leaves_first() -> None:
    assert "description" not in Root.model_json_schema()["properties"]["middle"]
    document_fields(Root, Derived)
    schema = Root.model_json_schema()
    assert schema["properties"]["middle"]["description"] == "Where the leaves hang."
    leaf = schema["$defs"]["Leaf"]["properties"]
    assert leaf["value"]["description"].startswith("How much.")
    assert "description" not in leaf["plain"]  # no docstring, no description
    assert Derived.model_json_schema()["properties"]["extra"]["description"].startswith("One more")
    before = json.dumps(Root.model_json_schema())
    document_fields(Root)  # idempotent
    assert json.dumps(Root.model_json_schema()) == before


def test_loading_the_plugin_reads_no_model_source() -> None:
    # pydantic's use_attribute_docstrings parsed every model's source at import; a fresh
    # interpreter shows no description was attached while the plugin loaded.
    code = (
        "import json, pytest_omk.plugin\n"
        "from pytest_omk.models.field_docs import document_fields\n"
        "from pytest_omk.models import SampleSet\n"
        "loaded = SampleSet.model_fields['samples'].description\n"
        "document_fields(SampleSet)\n"
        "print(json.dumps([loaded, SampleSet.model_fields['samples'].description]))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    loaded, documented = json.loads(out)
    assert loaded is None and documented
