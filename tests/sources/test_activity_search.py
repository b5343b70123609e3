"""activity.search on the in-memory store: the spec's parameters and limits, text and alias
matching, statuses, pages, tenant scoping, REST and GraphQL."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import httpx
import pytest

from persistence.store import Store
from tests.conftest import Tenant
from tests.graphql.helpers import gql


async def search(client: httpx.AsyncClient, tenant: Tenant, **body: Any) -> httpx.Response:
    return await client.post(
        "/v1/capabilities/activity.search", json=body, headers=tenant.headers()
    )


async def seed(store: Store, tenant: Tenant) -> dict[str, str]:
    """Items of every source, oldest first, one minute apart."""
    record = await store.inbound_addresses.get_or_create(tenant.org_id)
    alias = record["alias"]
    items = [
        (
            "upload",
            "processed",
            {"fileName": "aldi-receipt.jpg", "uploadedBy": tenant.user_id},
            "Extracted ALDI, 23.10 EUR",
            None,
        ),
        (
            "inbound-email",
            "processed",
            {
                "from": "billing@northwind.test",
                "subject": "Invoice INV-42",
                "alias": alias,
                "address": f"{alias}@inbound.localhost",
                "snippet": "Your invoice is attached",
            },
            "Extracted Northwind Consulting GmbH, 1190.00 EUR",
            "<inv-42@northwind.test>",
        ),
        (
            "inbound-email",
            "skipped",
            {"from": "friend@example.org", "subject": "Lunch?", "alias": alias},
            "The message has no PDF or image attachment and its text shows no amount",
            "<lunch@example.org>",
        ),
        (
            "whatsapp",
            "failed",
            {"from": "+4915123456789", "caption": "taxi to the airport"},
            "The media could not be downloaded: Graph answered HTTP 404",
            "wamid.1",
        ),
        (
            "email",
            "warning",
            {"from": "shop@contoso.test", "subject": "Contoso order"},
            "Possible duplicate of doc_1",
            "<order@contoso.test>",
        ),
    ]
    ids: dict[str, str] = {}
    for source, status, details, reasoning, message_id in items:
        item = await store.activity.create(
            tenant.org_id,
            source,
            [],
            details,
            status=status,
            reasoning=reasoning,
            message_id=message_id,
        )
        ids[source + ":" + status] = item["_id"]
    # Spread the creation times so the order is unambiguous.
    for minutes, activity_id in enumerate(ids.values()):
        item = await store.activity.get(tenant.org_id, activity_id)
        assert item is not None
        await store.db["activity"].update_one(
            {"_id": activity_id},
            {"$set": {"createdAt": item["createdAt"] + timedelta(minutes=minutes)}},
        )
    ids["alias"] = alias
    return ids


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "query"),
        ({"query": "a"}, "query"),
        ({"query": "ab", "limit": 0}, "limit"),
        ({"query": "ab", "limit": 51}, "limit"),
        ({"query": "ab", "page": 0}, "page"),
        ({"query": "ab", "providerResultLimit": 0}, "providerResultLimit"),
        ({"query": "ab", "providerResultLimit": 101}, "providerResultLimit"),
        ({"query": "ab", "sourceTypes": ["fax"]}, "sourceTypes"),
        ({"query": "ab", "statuses": ["done"]}, "statuses"),
        ({"query": "ab", "includeSourceDetails": "yes"}, "includeSourceDetails"),
        ({"query": "ab", "extra": 1}, "extra"),
    ],
)
async def test_parameters_are_checked_as_the_spec_says(
    client: httpx.AsyncClient, alice: Tenant, body: dict[str, Any], field: str
) -> None:
    response = await search(client, alice, **body)
    assert response.status_code == 400, response.text
    assert field in response.json()["error"]["errorMessage"]


async def test_defaults_and_text_matching(
    client: httpx.AsyncClient, store: Store, alice: Tenant
) -> None:
    await seed(store, alice)
    response = await search(client, alice, query="northwind")
    assert response.status_code == 200, response.text
    result = response.json()["data"]["result"]
    assert result["page"] == 1 and result["limit"] == 10 and result["total"] == 1
    assert result["providers"] == []  # no connected mailbox
    item = result["items"][0]
    assert item["sourceType"] == "inbound-email" and item["status"] == "processed"
    assert item["reasoning"].startswith("Extracted Northwind")
    assert item["messageId"] == "<inv-42@northwind.test>" and item["documentIds"] == []
    assert item["source"]["subject"] == "Invoice INV-42"
    assert item["source"]["sender"] == "billing@northwind.test"
    assert item["source"]["snippet"] == "Your invoice is attached"
    assert item["createdAt"] and item["updatedAt"]
    # Matching is literal and case-insensitive: regex characters are not patterns.
    assert (await search(client, alice, query="INV-4.")).json()["data"]["result"]["total"] == 0
    assert (await search(client, alice, query="inv-42")).json()["data"]["result"]["total"] == 1
    # The reasoning is searched too, and a file name, and a caption.
    for query, source in [
        ("duplicate", "email"),
        ("aldi-receipt", "upload"),
        ("airport", "whatsapp"),
    ]:
        found = (await search(client, alice, query=query)).json()["data"]["result"]
        assert [i["sourceType"] for i in found["items"]] == [source], query


async def test_inbound_email_is_matched_by_alias(
    client: httpx.AsyncClient, store: Store, alice: Tenant
) -> None:
    ids = await seed(store, alice)
    for query in (ids["alias"], f"{ids['alias']}@inbound.localhost"):
        found = (await search(client, alice, query=query)).json()["data"]["result"]
        assert found["total"] == 2, query
        assert {i["sourceType"] for i in found["items"]} == {"inbound-email"}
        assert found["items"][0]["status"] == "skipped"  # newest first
    # A rotated alias still finds what arrived at it.
    await store.inbound_addresses.rotate(alice.org_id)
    assert (await search(client, alice, query=ids["alias"])).json()["data"]["result"]["total"] == 2


async def test_sources_statuses_and_pages(
    client: httpx.AsyncClient, store: Store, alice: Tenant
) -> None:
    await seed(store, alice)
    # "e" alone is too short; ".test" matches four items' senders, newest first.
    everything = (await search(client, alice, query=".test", limit=2)).json()["data"]["result"]
    assert everything["total"] == 2 and everything["hasMore"] is False
    broad = (await search(client, alice, query="ex", limit=2)).json()["data"]["result"]
    assert broad["total"] >= 3 and broad["hasMore"] is True and len(broad["items"]) == 2
    second = (await search(client, alice, query="ex", limit=2, page=2)).json()["data"]["result"]
    first_ids = {i["id"] for i in broad["items"]}
    assert not first_ids & {i["id"] for i in second["items"]}
    only = (
        await search(client, alice, query="ex", sourceTypes=["inbound-email"], statuses=["skipped"])
    ).json()["data"]["result"]
    assert [(i["sourceType"], i["status"]) for i in only["items"]] == [("inbound-email", "skipped")]
    bare = (await search(client, alice, query="northwind", includeSourceDetails=False)).json()
    assert bare["data"]["result"]["items"][0]["source"] is None


async def test_another_workspace_sees_nothing(
    client: httpx.AsyncClient, store: Store, alice: Tenant, bob: Tenant
) -> None:
    ids = await seed(store, alice)
    for query in ("northwind", ids["alias"], "airport"):
        assert (await search(client, bob, query=query)).json()["data"]["result"]["total"] == 0


async def test_graphql_face(client: httpx.AsyncClient, store: Store, alice: Tenant) -> None:
    await seed(store, alice)
    body = await gql(
        client,
        'query { activitySearch(input: {query: "northwind", statuses: [processed]}) '
        "{ total page limit hasMore items { sourceType status reasoning source { subject } } } }",
        headers=alice.headers(),
    )
    result = body["data"]["activitySearch"]
    assert result["total"] == 1 and result["limit"] == 10
    assert result["items"][0]["source"]["subject"] == "Invoice INV-42"
    bad = await gql(
        client, 'query { activitySearch(input: {query: "x"}) { total } }', headers=alice.headers()
    )
    assert bad["errors"][0]["extensions"]["code"] == "BAD_REQUEST"
