"""receivedAt as a where-clause field: what was added lately, whatever date it bears (the
overview counts new documents dated outside its range, issue 38 item 5), on REST (search and
count) and in GraphQL's typed filter, which is generated from the same declaration."""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import Any

import httpx
import pytest

from persistence.store import Store
from tests.conftest import Tenant
from tests.documents.conftest import call, doc, result

ARRIVED = [
    # Dated 2019, received this week: the receipt a 12-month overview does not show.
    doc("doc_old_new", docDate=date(2019, 3, 14), receivedAt=datetime(2026, 11, 27, 9, 30)),
    doc("doc_new", docDate=date(2026, 11, 2), receivedAt=datetime(2026, 11, 26, 18, 0)),
    doc("doc_long_ago", docDate=date(2026, 1, 10), receivedAt=datetime(2026, 1, 12, 8, 0)),
    doc("doc_unknown", docDate=date(2018, 5, 1)),  # no time of arrival stored
]
WEEK = {"field": "receivedAt", "op": "gte", "value": "2026-11-21"}


@pytest.fixture
async def arrived(store: Store, alice: Tenant) -> Tenant:
    await store.documents.writes.insert_many(alice.org_id, ARRIVED)
    return alice


async def ids(client: httpx.AsyncClient, tenant: Tenant, where: dict[str, Any]) -> list[str]:
    body = {"useSearch": False, "where": where, "sortBy": "receivedAt", "sortOrder": -1}
    found = result(await call(client, tenant, "documents.search", body))["documents"]
    return [d["id"] for d in found]


async def test_search_and_count_by_when_it_arrived(
    client: httpx.AsyncClient, arrived: Tenant
) -> None:
    assert await ids(client, arrived, {"conditions": [WEEK]}) == ["doc_old_new", "doc_new"]
    # New, and dated before a range: what the overview's line counts.
    before = {"conditions": [WEEK, {"field": "docDate", "op": "lt", "value": "2025-12-01"}]}
    counted = result(await call(client, arrived, "documents.count", {"where": before}))
    assert counted["count"] == 1
    # A time of day is taken too (REST), in UTC.
    evening = {"field": "receivedAt", "op": "gt", "value": "2026-11-26T17:00:00Z"}
    assert await ids(client, arrived, {"conditions": [evening]}) == ["doc_old_new", "doc_new"]
    later = {"field": "receivedAt", "op": "gt", "value": "2026-11-26T19:00:00+00:00"}
    assert await ids(client, arrived, {"conditions": [later]}) == ["doc_old_new"]
    unknown = {"field": "receivedAt", "op": "exists", "value": False}
    assert await ids(client, arrived, {"conditions": [unknown]}) == ["doc_unknown"]


async def test_a_bad_time_is_a_400_naming_the_condition(
    client: httpx.AsyncClient, arrived: Tenant
) -> None:
    where = {"conditions": [WEEK, {"field": "receivedAt", "op": "gte", "value": "last week"}]}
    answer = await call(client, arrived, "documents.count", {"where": where})
    assert answer.status_code == 400, answer.text
    message = answer.json()["error"]["errorMessage"]
    assert "where.conditions[1]" in message and "ISO date" in message


async def test_typed_graphql_filter(client: httpx.AsyncClient, arrived: Tenant) -> None:
    query = """{ documentsConnection(filter: {receivedAt: {gte: "2026-11-21"}},
                 orderBy: [{field: RECEIVED_AT, direction: DESC}], first: 5) {
                 nodes { id receivedAt } } }"""
    answer = await client.post("/v1/graphql", json={"query": query}, headers=arrived.headers())
    assert "errors" not in answer.json(), answer.text
    nodes = answer.json()["data"]["documentsConnection"]["nodes"]
    assert [n["id"] for n in nodes] == ["doc_old_new", "doc_new"]
    received = datetime.fromisoformat(nodes[0]["receivedAt"].replace("Z", "+00:00"))
    assert received.replace(tzinfo=received.tzinfo or UTC) == datetime(
        2026, 11, 27, 9, 30, tzinfo=UTC
    )
