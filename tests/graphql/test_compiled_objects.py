"""Generated completions of plain selections (``app.graphql.compiled_objects``) answer exactly as
the field-by-field completions they replace, and a link's held read (``Link.held``) spares its
resolver only when the root holds its value."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from graphql import (
    GraphQLBoolean,
    GraphQLID,
    GraphQLInt,
    GraphQLNonNull,
    GraphQLScalarType,
    GraphQLString,
)

from app.graphql.compiled_objects import PlainField, compile_object
from app.graphql.graph import GraphSession
from persistence.store import Store
from tests.conftest import Tenant, asgi_client
from tests.documents.conftest import doc
from tests.graphql.helpers import gql


class Refused(Exception):
    """What a completion raises for a value it cannot complete (the executor's ``_NotFast``)."""


def completion(graphql_type: Any) -> Callable[[Any], Any]:
    """A leaf's completion as the executor compiles it: null stays null where allowed."""
    non_null = isinstance(graphql_type, GraphQLNonNull)
    named: GraphQLScalarType = graphql_type.of_type if non_null else graphql_type

    def complete(value: Any) -> Any:
        if value is None:
            if non_null:
                raise Refused
            return None
        return named.serialize(value)

    return complete


class Source:
    def __init__(self, **values: Any) -> None:
        self.__dict__.update(values)


TYPES = [
    GraphQLString,
    GraphQLNonNull(GraphQLString),
    GraphQLID,
    GraphQLNonNull(GraphQLID),
    GraphQLBoolean,
    GraphQLNonNull(GraphQLBoolean),
    GraphQLInt,
]
VALUES = ["text", "", None, 5, 1.5, True, False, 0, 2**40]


def outcome(function: Callable[[], Any]) -> Any:
    try:
        return ("value", function())
    except Exception as exc:
        return ("error", type(exc))


@pytest.mark.parametrize("graphql_type", TYPES, ids=str)
def test_each_value_completes_as_the_field_by_field_completion(graphql_type: Any) -> None:
    field = PlainField("answer", "value", graphql_type, completion(graphql_type))
    compiled = compile_object([field])
    assert compiled is not None
    for value in VALUES:
        source = Source(value=value)
        expected = outcome(lambda s=source: {"answer": field.complete(s.value)})
        assert outcome(lambda s=source: compiled(s)) == expected, (graphql_type, value)


def test_a_selection_keeps_its_names_order_and_aliases() -> None:
    fields = [
        PlainField(alias, attribute, kind, completion(kind))
        for alias, attribute, kind in [
            ("b", "merchant", GraphQLString),
            ("a", "merchant", GraphQLNonNull(GraphQLString)),
            ("archived", "archived", GraphQLBoolean),
            ("size", "size", GraphQLInt),
        ]
    ]
    compiled = compile_object(fields)
    assert compiled is not None
    for merchant, archived, size in itertools.product(["Lidl", 7], [None, True], [None, 3]):
        source = Source(merchant=merchant, archived=archived, size=size)
        answer = compiled(source)
        assert list(answer) == ["b", "a", "archived", "size"]
        assert answer == {f.response_name: f.complete(f.read()(source)) for f in fields}


def test_no_code_from_names_that_are_not_identifiers() -> None:
    """Response names are GraphQL names and quoted; an attribute that is no identifier (or a
    keyword) is never written into code: the caller completes it field by field."""
    quoted = PlainField("x'}; import os; {'", "merchant", GraphQLString, completion(GraphQLString))
    compiled = compile_object([quoted])
    assert compiled is not None and compiled(Source(merchant="Lidl")) == {
        quoted.response_name: "Lidl"
    }
    for attribute in ("not an identifier", "class", "a.b"):
        odd = PlainField("x", attribute, GraphQLString, completion(GraphQLString))
        assert compile_object([odd]) is None


def test_a_held_read_that_refuses_refuses_the_whole_object() -> None:
    def held(source: Any) -> Any:
        if not hasattr(source, "history"):
            raise LookupError("history")
        return source.history

    fields = [
        PlainField("merchant", "merchant", GraphQLString, completion(GraphQLString)),
        PlainField("history", "link_history", GraphQLString, completion(GraphQLString), held),
    ]
    compiled = compile_object(fields)
    assert compiled is not None
    assert compiled(Source(merchant="Lidl", history="kept")) == {
        "merchant": "Lidl",
        "history": "kept",
    }
    with pytest.raises(LookupError):
        compiled(Source(merchant="Lidl"))


NODE_HISTORY = """query($id: ID!) { node(id: $id) { ... on Document {
  merchant editHistory { field oldValue newValue via } } } }"""
CONNECTION_HISTORY = """{ documentsConnection(first: 5) {
  nodes { id merchant editHistory { field oldValue newValue via } } } }"""


async def test_the_edit_history_a_document_holds_is_read_without_its_link(
    store: Store, registry: Any, alice: Tenant, monkeypatch: pytest.MonkeyPatch
) -> None:
    await store.documents.writes.insert_many(alice.org_id, [doc("doc_h1", merchant="Shell")])
    reads: list[str] = []
    original = GraphSession.stored

    async def counted(self: GraphSession, document: Any, field: str) -> Any:
        reads.append(field)
        return await original(self, document, field)

    monkeypatch.setattr(GraphSession, "stored", counted)
    async with asgi_client(store, registry) as service:
        service: httpx.AsyncClient  # type: ignore[no-redef]
        corrected = await service.post(
            "/v1/capabilities/documents.update",
            json={"id": "doc_h1", "merchant": "Shell Select"},
            headers=alice.headers(),
        )
        assert corrected.status_code == 200, corrected.text
        held = [(await gql(service, NODE_HISTORY, {"id": "doc_h1"}, alice.headers())) for _ in "ab"]
        assert reads == []  # node reads the document whole: its history is held
        listed = await gql(service, CONNECTION_HISTORY, headers=alice.headers())
    # A connection reads the fields its nodes select, the history with them.
    assert reads == []
    history = held[0]["data"]["node"]["editHistory"]
    assert history == [
        {
            "field": "merchant",
            "oldValue": "Shell",
            "newValue": "Shell Select",
            "via": "documents.update",
        }
    ]
    assert held[1] == held[0]
    [node] = [n for n in listed["data"]["documentsConnection"]["nodes"] if n["id"] == "doc_h1"]
    assert node["editHistory"] == history
