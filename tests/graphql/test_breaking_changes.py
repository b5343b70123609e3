"""The breaking-change check: the service's schema against the committed contract."""

from __future__ import annotations

from pathlib import Path

import pytest
from graphql import GraphQLSchema, build_schema, print_schema

from app.graphql.face import service_schema
from resolvers import build_registry
from tests.graphql.evolution import breaking_changes

SNAPSHOT = Path(__file__).with_name("service.graphql")


@pytest.fixture(scope="module")
def contract() -> str:
    return SNAPSHOT.read_text(encoding="utf-8")


def without(sdl: str, type_name: str, field: str) -> GraphQLSchema:
    """The contract with one field of one type removed (a schema a careless change makes)."""
    schema = build_schema(sdl)
    named = schema.type_map[type_name]
    fields = dict(named.fields)  # type: ignore[attr-defined]
    del fields[field]
    named.fields = fields  # type: ignore[attr-defined]
    return build_schema(print_schema(schema))


def test_the_service_breaks_nothing_of_the_committed_contract(contract: str) -> None:
    current = service_schema(build_registry())._schema
    assert breaking_changes(contract, current) == []


def test_a_removed_field_is_reported(contract: str) -> None:
    assert breaking_changes(contract, without(contract, "Document", "merchant")) == [
        "FIELD_REMOVED: Field Document.merchant was removed."
    ]
    found = breaking_changes(contract, without(contract, "Query", "documentsConnection"))
    assert "FIELD_REMOVED: Field Query.documentsConnection was removed." in found


def test_a_type_change_is_reported(contract: str) -> None:
    changed = contract.replace("  totalCount: Int\n", "  totalCount: String\n", 1)
    assert changed != contract
    found = breaking_changes(contract, build_schema(changed))
    assert any(
        line.startswith("FIELD_CHANGED_KIND: Field DocumentConnection.totalCount") for line in found
    )


def test_removing_a_deprecated_field_is_allowed(contract: str) -> None:
    assert "documentsSearch(" in contract and "@deprecated" in contract
    # The deprecated listing goes, and with it what only it led to (its input, its page).
    assert breaking_changes(contract, without(contract, "Query", "documentsSearch")) == []
    assert breaking_changes(contract, without(contract, "Workspace", "documents")) == []
