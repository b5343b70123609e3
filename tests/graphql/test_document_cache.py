"""Documents kept parsed and validated by their text (``app.graphql.document_cache``): a repeat
skips the parser, the limit count and the validation rules and answers alike; another text
is parsed and validated anew; errors are kept with their document; the cache is bounded."""

from __future__ import annotations

from typing import Any

import pytest
import strawberry.schema.schema as strawberry_schema

import app.graphql.limits as limits
from app.graphql.builder import build_schema
from app.graphql.limits import Limits
from app.host.config import Settings
from app.host.main import create_app
from tests.graphql.helpers import test_registry


class Calls:
    """Counts the parser, strawberry's validation and our limits' count, then calls them."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.parse = self.validate = self.limits = 0
        parse, validate = strawberry_schema.parse, strawberry_schema.validate_document
        counts = limits.expanded_counts

        def counted_parse(*args: Any, **kwargs: Any) -> Any:
            self.parse += 1
            return parse(*args, **kwargs)

        def counted_validate(*args: Any, **kwargs: Any) -> Any:
            self.validate += 1
            return validate(*args, **kwargs)

        def counted_limits(*args: Any, **kwargs: Any) -> Any:
            self.limits += 1
            return counts(*args, **kwargs)

        monkeypatch.setattr(strawberry_schema, "parse", counted_parse)
        monkeypatch.setattr(strawberry_schema, "validate_document", counted_validate)
        monkeypatch.setattr(limits, "expanded_counts", counted_limits)

    def seen(self) -> tuple[int, int, int]:
        return self.parse, self.validate, self.limits


async def never(*args: object) -> None:
    raise AssertionError("not executed")


def schema_of(limits: Limits) -> Any:
    return build_schema(test_registry(), never, limits)  # type: ignore[arg-type]


QUERY = "{ __typename }"
OTHER = "{ __schema { queryType { name } } }"


async def test_a_repeated_document_skips_parsing_and_validation(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls = Calls(monkeypatch)
    schema = schema_of(Limits())
    first = await schema.execute(QUERY)
    assert first.errors is None and first.data == {"__typename": "Query"}
    assert calls.seen() == (1, 1, 1)
    again = await schema.execute(QUERY)
    assert again.errors is None and again.data == first.data
    assert calls.seen() == (1, 1, 1), "a kept document is neither parsed nor validated again"
    assert (schema.documents.hits, len(schema.documents)) == (1, 1)

    # Another text is another document: parsed, counted and validated.
    other = await schema.execute(OTHER)
    assert other.errors is None and other.data == {"__schema": {"queryType": {"name": "Query"}}}
    assert calls.seen() == (2, 2, 2)


async def test_a_kept_invalid_document_gives_the_same_errors_without_validating(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls = Calls(monkeypatch)
    schema = schema_of(Limits(max_depth=1))
    deep = "{ workspacesList { workspaces { id } } }"
    unknown = "{ noSuchField }"
    for query, message in (
        (deep, "exceeds maximum operation depth of 1"),
        (unknown, "Cannot query field 'noSuchField'"),
    ):
        first = await schema.execute(query)
        assert first.errors and message in first.errors[0].message
        seen = calls.seen()
        again = await schema.execute(query)
        assert [e.message for e in again.errors or []] == [e.message for e in first.errors]
        assert calls.seen() == seen, query

    # A document over the expansion limits is refused by our count, then from the cache.
    aliases = "{ " + " ".join(f"a{i}: __typename" for i in range(Limits().max_aliases + 1)) + " }"
    over = await schema.execute(aliases)
    assert over.errors and "aliases found" in over.errors[0].message
    seen = calls.seen()
    assert (await schema.execute(aliases)).errors == over.errors
    assert calls.seen() == seen


async def test_a_document_that_does_not_parse_is_not_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = Calls(monkeypatch)
    schema = schema_of(Limits())
    for _ in range(2):
        result = await schema.execute("{ unclosed ")
        assert result.errors and "Syntax Error" in result.errors[0].message
    assert calls.parse == 2 and len(schema.documents) == 0


async def test_the_cache_is_bounded_least_recently_used_first(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls = Calls(monkeypatch)
    schema = schema_of(Limits(document_cache=2))
    texts = ["{ __typename }", "{ a: __typename }", "{ b: __typename }"]
    for text in texts[:2]:
        await schema.execute(text)
    await schema.execute(texts[0])  # now the most recently used
    await schema.execute(texts[2])  # drops texts[1]
    assert len(schema.documents) == 2
    parsed = calls.parse
    await schema.execute(texts[0])
    assert calls.parse == parsed
    await schema.execute(texts[1])
    assert calls.parse == parsed + 1, "the dropped document is parsed again"

    off = schema_of(Limits(document_cache=0))
    for _ in range(2):
        await off.execute(QUERY)
    assert len(off.documents) == 0


def test_the_served_schema_takes_its_size_from_the_setting() -> None:
    app = create_app(Settings(graphql_document_cache=3))
    faces = [route.endpoint for route in app.routes if getattr(route, "path", "") == "/v1/graphql"]
    assert faces and faces[0].schema.documents.maxsize == 3
