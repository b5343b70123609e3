"""Everything the explorer's Docs pane shows is described: every type, field, argument, input
field and enum value of the service's schema, from the pydantic models' descriptions and the
contract's vocabularies (``schema.value_meanings``)."""

from __future__ import annotations

from typing import Literal, get_args

import pytest
from graphql import (
    GraphQLEnumType,
    GraphQLInputObjectType,
    GraphQLInterfaceType,
    GraphQLObjectType,
    GraphQLSchema,
)

from app.graphql.face import service_schema
from domain.documents import DocType
from resolvers import build_registry
from schema.documents import Document
from schema.value_meanings import _vocabulary, meaning_of

# graphql-core's own scalars are described by the GraphQL specification, not by fincap.
BUILT_IN = {"String", "Int", "Float", "Boolean", "ID"}


@pytest.fixture(scope="module")
def schema() -> GraphQLSchema:
    built: GraphQLSchema = service_schema(build_registry())._schema
    return built


def undescribed(schema: GraphQLSchema) -> list[str]:
    """Every place of ``schema`` a reader would find without a description."""
    missing: list[str] = []
    for name, kind in schema.type_map.items():
        if name.startswith("__") or name in BUILT_IN:
            continue
        if not (kind.description or "").strip():
            missing.append(f"type {name}")
        if isinstance(kind, GraphQLObjectType | GraphQLInterfaceType | GraphQLInputObjectType):
            for field_name, field in kind.fields.items():
                if not (field.description or "").strip():
                    missing.append(f"field {name}.{field_name}")
                for arg_name, arg in getattr(field, "args", {}).items():
                    if not (arg.description or "").strip():
                        missing.append(f"argument {name}.{field_name}({arg_name})")
        if isinstance(kind, GraphQLEnumType):
            for value_name, value in kind.values.items():
                if not (value.description or "").strip():
                    missing.append(f"enum value {name}.{value_name}")
    return missing


def test_every_type_field_argument_and_enum_value_is_described(schema: GraphQLSchema) -> None:
    assert undescribed(schema) == []


def test_the_walk_finds_what_is_missing(schema: GraphQLSchema) -> None:
    """The check itself: a schema with blanks is reported, place by place."""
    document = schema.type_map["Document"]
    doc_type = schema.type_map["DocumentDocType"]
    assert isinstance(document, GraphQLObjectType) and isinstance(doc_type, GraphQLEnumType)
    field, value = document.fields["merchant"], doc_type.values["receipt"]
    saved = field.description, value.description
    field.description, value.description = None, ""
    try:
        assert undescribed(schema) == [
            "field Document.merchant",
            "enum value DocumentDocType.receipt",
        ]
    finally:
        field.description, value.description = saved


def test_enum_values_say_what_the_contract_says(schema: GraphQLSchema) -> None:
    doc_type = schema.type_map["DocumentDocType"]
    assert isinstance(doc_type, GraphQLEnumType)
    assert doc_type.values["receipt"].description == meaning_of(get_args(DocType), "receipt")
    # A vocabulary of document field names: each value is described as the field is.
    sort_by = schema.type_map["SearchDocumentsSortBy"]
    assert isinstance(sort_by, GraphQLEnumType)
    assert sort_by.values["docDate"].description == Document.model_fields["docDate"].description
    # A gated capability's status gains approval_required, described like everywhere else.
    send = schema.type_map["SendResultStatus"]
    assert isinstance(send, GraphQLEnumType)
    assert "approval" in (send.values["approval_required"].description or "")
    assert "dry run" in (send.values["preview"].description or "")


def test_a_vocabulary_must_describe_exactly_its_values() -> None:
    with pytest.raises(ValueError, match="do not match"):
        _vocabulary(Literal["a", "b"], {"a": "A"})
    with pytest.raises(ValueError, match="do not match"):
        _vocabulary(Literal["a"], {"a": "A", "b": "B"})
    assert meaning_of(("no", "such"), "no") is None
