"""The schema builder: SDL snapshot, naming, conversion rules and build-time failures."""

from __future__ import annotations

import os
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

import pytest
from pydantic import BaseModel

from app.graphql.builder import GraphQLNameClash, GraphQLSchemaBuildError, build_schema
from resolvers import build_registry
from resolvers.framework.registry import CapabilitySpec, Effect
from tests.graphql.evolution import breaking_changes
from tests.graphql.helpers import test_registry

SNAPSHOT = Path(__file__).with_name("schema.graphql")
UPDATE_ENV = "FINCAP_UPDATE_GRAPHQL_SNAPSHOT"


async def never(*args: Any) -> Any:
    raise AssertionError("the builder must not execute anything")


def spec(
    slug: str, input: type[BaseModel], output: type[BaseModel], effect: Effect = "read"
) -> Any:
    async def handler(ctx: Any, args: Any) -> Any:
        """Test capability."""

    return CapabilitySpec(
        slug=slug,
        handler=handler,
        input=input,
        output=output,
        permissions=("all",),
        effect=effect,
        needs_workspace=False,
    )


def test_sdl_snapshot() -> None:
    """The generated contract; regenerate with FINCAP_UPDATE_GRAPHQL_SNAPSHOT=1 after a review."""
    sdl = build_schema(test_registry(), never).as_str() + "\n"
    if os.environ.get(UPDATE_ENV):
        SNAPSHOT.write_text(sdl, encoding="utf-8")
    assert sdl == SNAPSHOT.read_text(encoding="utf-8"), f"SDL changed: review, then {UPDATE_ENV}=1"


SERVICE_SNAPSHOT = Path(__file__).with_name("service.graphql")
ALLOW_BREAKING_ENV = "FINCAP_ALLOW_BREAKING_GRAPHQL"


def test_service_sdl_snapshot() -> None:
    """The service's whole GraphQL contract (capabilities and graph): a change shows in review."""
    from app.graphql.face import service_schema

    schema = service_schema(build_registry())
    sdl = schema.as_str() + "\n"
    if os.environ.get(UPDATE_ENV):
        # The committed contract is what clients rely on: a breaking change (other than
        # removing what it deprecated) is refused here unless a reviewer allows it.
        broken = breaking_changes(SERVICE_SNAPSHOT.read_text(encoding="utf-8"), schema._schema)
        assert not broken or os.environ.get(ALLOW_BREAKING_ENV), (
            f"breaking changes ({ALLOW_BREAKING_ENV}=1 to accept after review): {broken}"
        )
        SERVICE_SNAPSHOT.write_text(sdl, encoding="utf-8")
    assert sdl == SERVICE_SNAPSHOT.read_text(encoding="utf-8"), (
        f"service SDL changed: review, then {UPDATE_ENV}=1"
    )


def test_every_capability_of_the_service_is_a_field() -> None:
    registry = build_registry()
    schema = build_schema(registry, never)._schema  # the graphql-core schema
    assert schema.query_type is not None
    queries = set(schema.query_type.fields)
    mutations = set(schema.mutation_type.fields) if schema.mutation_type else set()
    assert queries == {s.name for s in registry if s.effect == "read"}
    assert mutations == {s.name for s in registry if s.effect != "read"}


class Out(BaseModel):
    value: int


class Clash(BaseModel):
    value: int


def test_same_name_two_models_fails_with_a_hint() -> None:
    OtherOut = type("Out", (BaseModel,), {"__annotations__": {"other": int}})
    with pytest.raises(GraphQLNameClash, match=r"'Out'.*prefix it with its resource"):
        build_schema([spec("a.one", Clash, Out), spec("a.two", Clash, OtherOut)], never)


def test_input_name_clashing_with_an_output_model_fails() -> None:
    ClashInput = type("ClashInput", (BaseModel,), {"__annotations__": {"x": int}})
    with pytest.raises(GraphQLNameClash, match="ClashInput"):
        build_schema([spec("a.one", Clash, ClashInput)], never)


def test_enum_name_clashing_with_a_model_fails() -> None:
    class Thing(BaseModel):
        kind: Literal["a", "b"]

    ThingKind = type("ThingKind", (BaseModel,), {"__annotations__": {"x": int}})
    with pytest.raises(GraphQLNameClash, match="ThingKind"):
        build_schema([spec("a.one", Clash, Thing), spec("a.two", Clash, ThingKind)], never)


def test_built_in_scalar_names_are_reserved() -> None:
    DateTime = type("DateTime", (BaseModel,), {"__annotations__": {"x": datetime}})
    with pytest.raises(GraphQLNameClash, match="built-in"):
        build_schema([spec("a.one", Clash, DateTime)], never)


def test_unsupported_annotation_fails_naming_the_field() -> None:
    class Odd(BaseModel):
        either: int | str

    with pytest.raises(GraphQLSchemaBuildError, match=r"Odd\.either: union"):
        build_schema([spec("a.one", Clash, Odd)], never)


def test_literal_values_colliding_after_renaming_fail() -> None:
    class Ops(BaseModel):
        op: Literal["not-in", "not_in"]

    with pytest.raises(GraphQLSchemaBuildError, match="both become the GraphQL enum value"):
        build_schema([spec("a.one", Ops, Out)], never)


class Tree(BaseModel):
    name: str
    children: list[Tree] = []


async def test_recursive_models_become_recursive_types() -> None:
    Tree.model_rebuild()

    async def execute(spec: Any, arguments: dict[str, Any], info: Any) -> BaseModel:
        return Tree.model_validate(arguments)

    schema = build_schema([spec("tree.echo", Tree, Tree)], execute)
    sdl = schema.as_str()
    assert "children: [TreeInput!]! = []" in sdl and "children: [Tree!]!" in sdl
    result = await schema.execute(
        '{ treeEcho(input: {name: "a", children: [{name: "b", children: [{name: "c"}]}]}) '
        "{ name children { name children { name } } } }"
    )
    assert result.errors is None
    assert result.data == {
        "treeEcho": {"name": "a", "children": [{"name": "b", "children": [{"name": "c"}]}]}
    }


def test_a_registry_without_reads_fails() -> None:
    with pytest.raises(GraphQLSchemaBuildError, match="at least one Query field"):
        build_schema([spec("a.one", Clash, Out, effect="write")], never)


def test_no_schema_name_leaks_python_spelling() -> None:
    """Types, fields, arguments, input fields and enum values use the REST words: ``and``, ``in``,
    never a keyword-dodging ``and_`` / ``in_`` a GraphQL author would have to learn."""
    from graphql import (
        GraphQLEnumType,
        GraphQLInputObjectType,
        GraphQLInterfaceType,
        GraphQLObjectType,
    )

    from app.graphql.face import service_schema

    schema = service_schema(build_registry())._schema
    names: list[str] = []
    for type_name, graphql_type in schema.type_map.items():
        if type_name.startswith("__"):
            continue
        names.append(type_name)
        if isinstance(graphql_type, GraphQLEnumType):
            names += [f"{type_name}.{value}" for value in graphql_type.values]
        if isinstance(graphql_type, (GraphQLObjectType, GraphQLInterfaceType)):
            for field_name, field in graphql_type.fields.items():
                names.append(f"{type_name}.{field_name}")
                names += [f"{type_name}.{field_name}({arg})" for arg in field.args]
        if isinstance(graphql_type, GraphQLInputObjectType):
            names += [f"{type_name}.{field_name}" for field_name in graphql_type.fields]
    assert len(names) > 500  # the walk saw the whole schema
    leaked = [name for name in names if name.rstrip(")").endswith("_")]
    assert leaked == []
    logic = schema.type_map["WhereClauseLogic"]
    assert isinstance(logic, GraphQLEnumType) and set(logic.values) == {"and", "or", "nor"}


def test_a_value_graphql_cannot_spell_is_refused_at_build() -> None:
    class Odd(BaseModel):
        flag: Literal["null", "set"]

    with pytest.raises(GraphQLSchemaBuildError, match="no GraphQL enum spelling"):
        build_schema([spec("a.one", Odd, Out)], never)
