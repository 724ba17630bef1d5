"""Field docstrings become JSON Schema descriptions when a schema is generated (no pytest here).

Every model documents its fields with a docstring under each one. pydantic can read those by
itself (``use_attribute_docstrings``), but it finds and parses every model's source file when the
class is created: a fifth of the time it takes to load the plugin, paid by every pytest run,
including runs without a single sample. Only the schema generators need the descriptions, so they
ask for them here, and the models are rebuilt with them (leaves first, so that a model's schema
embeds its children's new ones).
"""

from __future__ import annotations

import ast
import inspect
import textwrap
import typing
from collections.abc import Iterator
from typing import Any

from pydantic import BaseModel


def document_fields(*roots: type[BaseModel]) -> None:
    """Give every field reachable from ``roots`` its docstring as description (idempotent)."""
    rebuilt: set[type[BaseModel]] = set()
    for model in _children_first(roots):
        docs = attribute_docstrings(model)
        changed = False
        for name, field in model.model_fields.items():
            if field.description is None and name in docs:
                field.description = docs[name]
                changed = True
        if changed or any(child in rebuilt for child in _children(model)):
            model.model_rebuild(force=True)
            rebuilt.add(model)


def attribute_docstrings(model: type[BaseModel]) -> dict[str, str]:
    """The docstring under each annotated attribute of ``model`` and of its model bases."""
    docs: dict[str, str] = {}
    for klass in reversed(model.__mro__):
        if isinstance(klass, type) and issubclass(klass, BaseModel) and klass is not BaseModel:
            docs.update(_own_docstrings(klass))
    return docs


def _own_docstrings(klass: type) -> dict[str, str]:
    try:
        source = textwrap.dedent(inspect.getsource(klass))
    except (OSError, TypeError):  # no source (an interactive or generated class): no descriptions
        return {}
    [node] = ast.parse(source).body
    assert isinstance(node, ast.ClassDef)
    docs: dict[str, str] = {}
    for statement, following in zip(node.body, node.body[1:], strict=False):
        if (
            isinstance(statement, ast.AnnAssign)
            and isinstance(statement.target, ast.Name)
            and isinstance(following, ast.Expr)
            and isinstance(following.value, ast.Constant)
            and isinstance(following.value.value, str)
        ):
            docs[statement.target.id] = inspect.cleandoc(following.value.value)
    return docs


def _children(model: type[BaseModel]) -> set[type[BaseModel]]:
    """The models the fields of ``model`` hold (through lists, unions, ``Annotated`` ...)."""
    found: set[type[BaseModel]] = set()
    for field in model.model_fields.values():
        found.update(_models_in(field.annotation))
    found.discard(model)
    return found


def _models_in(annotation: Any) -> Iterator[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        yield annotation
    for argument in typing.get_args(annotation):
        yield from _models_in(argument)


def _children_first(roots: tuple[type[BaseModel], ...]) -> list[type[BaseModel]]:
    ordered: list[type[BaseModel]] = []
    seen: set[type[BaseModel]] = set()

    def visit(model: type[BaseModel]) -> None:
        if model in seen:
            return
        seen.add(model)
        for child in sorted(_children(model), key=lambda m: m.__qualname__):
            visit(child)
        ordered.append(model)

    for root in roots:
        visit(root)
    return ordered
