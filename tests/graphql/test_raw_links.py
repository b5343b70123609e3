"""Links resolved from graphql-core's coerced arguments (app/graphql/raw_links.py) receive the
same plain data strawberry's conversion gave them: enums as values, nested filters, lists,
explicit nulls, absent arguments absent."""

from __future__ import annotations

from typing import Any

import pytest
from graphql import graphql
from strawberry import UNSET
from strawberry.types.arguments import convert_arguments
from strawberry.types.field import StrawberryField

from app.graphql.builder import to_arguments
from app.graphql.face import service_schema
from app.graphql.raw_links import link_of, raw_resolver
from resolvers import build_registry

CALLS = [
    (
        "documentsConnection",
        """{ documentsConnection(first: 3, after: null,
               filter: {amount: {gte: "10"}, docType: {nin: [REFUND, OTHER]},
                        or: [{category: {eq: "Meals"}}, {merchant: {startsWith: "sh"}}],
                        not: {paymentStatus: {in: [UNPAID]}}},
               orderBy: [{field: AMOUNT, direction: DESC}, {field: ID}]) { totalCount } }""",
    ),
    (
        "documentsAggregate",
        """{ documentsAggregate(groupBy: [MONTH, CATEGORY], fillGaps: true,
               filter: {docDate: {gte: "2024-01-01", lt: "2024-07-01"}}) { totalCount } }""",
    ),
    ("node", '{ node(id: "RG9jdW1lbnQ6ZG9jXzE=") { id } }'),
]


@pytest.fixture(scope="module")
def schema() -> Any:
    return service_schema(build_registry())


def test_every_link_with_arguments_is_resolved_directly(schema: Any) -> None:
    query = schema._schema.query_type
    for name in ("node", "nodes", "documentsConnection", "documentsAggregate"):
        field = query.fields[name]
        link = link_of(field.extensions["strawberry-definition"])
        assert link is not None, name
        direct = raw_resolver(link, field.extensions["strawberry-definition"], object, to_arguments)
        assert field.resolve.__qualname__ == direct.__qualname__, name


@pytest.mark.parametrize(("name", "query"), CALLS, ids=[name for name, _ in CALLS])
async def test_arguments_are_what_strawberrys_conversion_gives(
    schema: Any, name: str, query: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    field = schema._schema.query_type.fields[name]
    received: list[dict[str, Any]] = []

    async def spy(_source: Any, _info: Any, **given: Any) -> None:
        received.append(given)

    monkeypatch.setattr(field, "resolve", spy)
    outcome = await graphql(schema._schema, query)
    assert not outcome.errors, outcome.errors
    (given,) = received
    definition: StrawberryField = field.extensions["strawberry-definition"]
    converted = convert_arguments(
        given, definition.arguments, schema.schema_converter.scalar_registry, schema.config
    )
    strawberrys = {
        key: to_arguments(value) for key, value in converted.items() if value is not UNSET
    }
    direct = {key: to_arguments(value) for key, value in given.items()}
    assert direct == strawberrys
    flat = repr(direct)
    assert "<" not in flat, flat  # no enum member (or other object) left in the plain data
