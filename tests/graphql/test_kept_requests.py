"""The short way for kept documents (``app.graphql.kept_requests``): taken only when it may be,
and answering every request exactly as strawberry's long way does."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from app.graphql.builder import CapabilitySchema
from persistence.store import Store
from tests.conftest import Tenant, second_workspace
from tests.graphql.helpers import GRAPHQL

ECHO = "query Echo($input: ProbeEchoInput!) { probeEcho(input: $input) { workspaceId role limit } }"
TWO_OPERATIONS = """
query First { workspacesList { currentOrgId } }
query Second($n: Int!) { probeEcho(input: {limit: $n}) { limit } }
"""
MODERN = {"Accept": "application/graphql-response+json"}
# Headers that differ between any two responses (the read budget left counts down: checked
# on its own).
VARYING = {"date", "x-request-id", "server-timing", "x-ratelimit-remaining"}


@pytest.fixture
def long_way(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The texts of the requests strawberry's ``Schema.execute`` ran (the long way)."""
    ran: list[str] = []
    original = CapabilitySchema.execute

    async def counted(self: CapabilitySchema, query: str | None, *args: Any, **kwargs: Any) -> Any:
        ran.append(query or "")
        return await original(self, query, *args, **kwargs)

    monkeypatch.setattr(CapabilitySchema, "execute", counted)
    yield ran


def seen(response: httpx.Response) -> tuple[int, dict[str, str], Any]:
    """What a client sees of a response: status, headers that do not vary, decoded body."""
    headers = {k: v for k, v in response.headers.items() if k not in VARYING}
    return response.status_code, headers, response.json()


async def twice(
    api: httpx.AsyncClient, body: dict[str, Any], headers: dict[str, str]
) -> tuple[httpx.Response, httpx.Response]:
    first = await api.post(GRAPHQL, json=body, headers=headers)
    second = await api.post(GRAPHQL, json=body, headers=headers)
    return first, second


async def test_a_kept_document_runs_the_short_way(
    api: httpx.AsyncClient, alice: Tenant, long_way: list[str]
) -> None:
    body = {"query": ECHO, "variables": {"input": {"limit": 3}}}
    answers = [await api.post(GRAPHQL, json=body, headers=alice.headers()) for _ in range(4)]
    assert long_way == [ECHO]  # the first request kept it; the next three took the short way
    assert answers[0].json() == {
        "data": {"probeEcho": {"workspaceId": alice.org_id, "role": "owner", "limit": 3}}
    }
    assert len({str(seen(answer)) for answer in answers}) == 1
    # Each request, either way, was charged to the key's read budget.
    assert {answer.headers["x-ratelimit-used"] for answer in answers} == {"1"}


@pytest.mark.parametrize(
    ("name", "body", "accept"),
    [
        ("data", {"query": ECHO, "variables": {"input": {"limit": 2}}}, {}),
        (
            "variables of the wrong type",
            {"query": ECHO, "variables": {"input": {"limit": "x"}}},
            {},
        ),
        (
            "the same, asking for the modern media type",
            {"query": ECHO, "variables": {"input": {"limit": "x"}}},
            MODERN,
        ),
        ("an unexpected error, masked", {"query": "{ probeCrash { limit } }"}, {}),
        (
            "the second of two operations",
            {"query": TWO_OPERATIONS, "operationName": "Second", "variables": {"n": 5}},
            MODERN,
        ),
        ("a mutation", {"query": "mutation { samplePurge { purged } }"}, {}),
        (
            "request extensions",
            {"query": "{ workspacesList { currentOrgId } }", "extensions": {"client": "dashboard"}},
            {},
        ),
    ],
)
async def test_the_short_way_answers_as_the_long_way(
    api: httpx.AsyncClient,
    alice: Tenant,
    long_way: list[str],
    name: str,
    body: dict[str, Any],
    accept: dict[str, str],
) -> None:
    first, second = await twice(api, body, {**alice.headers(), **accept})
    assert long_way == [body["query"]], name  # the second request did not run the long way
    assert seen(second) == seen(first), name


async def test_one_failing_field_beside_data_the_short_way(
    api: httpx.AsyncClient, store: Store, alice: Tenant, long_way: list[str]
) -> None:
    await second_workspace(store, alice)  # probeEcho needs a workspace the key does not name
    query = "{ workspacesList { currentOrgId } probeEcho(input: {}) { limit } }"
    first, second = await twice(api, {"query": query}, alice.headers(None))
    assert len(long_way) == 1
    assert seen(second) == seen(first)
    assert second.json()["data"] == {"workspacesList": {"currentOrgId": None}, "probeEcho": None}
    assert second.json()["errors"][0]["path"] == ["probeEcho"]


@pytest.mark.parametrize(
    ("name", "body", "headers", "executed"),
    [
        ("no credential: the document's size is charged first", {"query": ECHO}, None, 2),
        (
            "an operation the document does not have",
            {"query": TWO_OPERATIONS, "operationName": "Third"},
            {},
            2,
        ),
        ("two operations and no name", {"query": TWO_OPERATIONS}, {}, 2),
        ("an invalid document", {"query": "{ nope }"}, {}, 2),
        # Refused by the view before anything executes.
        ("a subscription", {"query": "subscription { documentEvents { type } }"}, {}, 0),
        ("variables that are no object", {"query": ECHO, "variables": [1]}, {}, 0),
    ],
)
async def test_what_the_short_way_leaves_to_the_long_way(
    api: httpx.AsyncClient,
    alice: Tenant,
    long_way: list[str],
    name: str,
    body: dict[str, Any],
    headers: dict[str, str] | None,
    executed: int,
) -> None:
    sent = {**(alice.headers() if headers is not None else {}), **MODERN}
    first, second = await twice(api, body, sent)
    assert seen(second) == seen(first), name
    assert len(long_way) == executed, (name, long_way)
    assert first.status_code in (200, 400), (name, first.text)
