"""approvals.list: a workspace's requests newest first, by status, in pages; who may see which
follows approvals.get's rule (the requester, or an owner or admin, holding the read scope of
what the request gates). REST and GraphQL."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from persistence.store import Store
from tests.approvals.test_approval_authz import request_edit as request_one
from tests.approvals.test_approval_authz import scoped_key
from tests.approvals.test_approvals import message
from tests.conftest import Tenant, member_of
from tests.documents.conftest import KNOWN, call, result


@pytest.fixture
async def seeded(store: Store, alice: Tenant) -> Tenant:
    await store.documents.writes.insert_many(alice.org_id, KNOWN)
    return alice


async def request_edit(client: httpx.AsyncClient, who: Tenant) -> str:
    """A request, its createdAt a millisecond after the one before (ties are ordered by random
    id, not by when they were made)."""
    await asyncio.sleep(0.002)
    return await request_one(client, who)


def ids(page: dict[str, object]) -> list[str]:
    return [r["id"] for r in page["requests"]]  # type: ignore[attr-defined]


async def listed(client: httpx.AsyncClient, who: Tenant, **args: object) -> dict[str, object]:
    return result(await call(client, who, "approvals.list", dict(args)))


async def test_newest_first_by_status_with_who_decided(
    client: httpx.AsyncClient, store: Store, seeded: Tenant
) -> None:
    carol = await member_of(store, seeded, "carol@example.com")
    first, second, third = [await request_edit(client, carol) for _ in range(3)]
    assert ids(await listed(client, seeded)) == [third, second, first]
    await call(client, seeded, "approvals.reject", {"approvalRequestId": first, "message": "No"})
    approved = await call(client, seeded, "approvals.approve", {"approvalRequestId": second})
    assert approved.status_code == 200, approved.text

    assert ids(await listed(client, seeded)) == [third]
    (rejected,) = (await listed(client, seeded, status="rejected"))["requests"]  # type: ignore[misc]
    assert rejected["id"] == first and rejected["rejectionMessage"] == "No"
    assert rejected["resolvedBy"] == seeded.user_id and rejected["resolvedAt"]
    (executed,) = (await listed(client, seeded, status="executed"))["requests"]  # type: ignore[misc]
    assert executed["id"] == second and executed["resolvedBy"] == seeded.user_id
    assert executed["requestedBy"] == carol.user_id
    assert ids(await listed(client, seeded, status="all")) == [third, second, first]


async def test_pages_follow_the_cursor_and_refuse_another_querys(
    client: httpx.AsyncClient, seeded: Tenant
) -> None:
    made = [await request_edit(client, seeded) for _ in range(5)]
    seen: list[str] = []
    page = await listed(client, seeded, status="all", limit=2)
    while True:
        seen += ids(page)
        if page["nextCursor"] is None:
            break
        page = await listed(client, seeded, status="all", limit=2, cursor=page["nextCursor"])
    assert seen == made[::-1]
    cursor = (await listed(client, seeded, status="all", limit=2))["nextCursor"]
    other = await call(client, seeded, "approvals.list", {"status": "pending", "cursor": cursor})
    assert other.status_code == 400 and "cursor" in message(other)
    forged = await call(client, seeded, "approvals.list", {"cursor": "not-a-cursor"})
    assert forged.status_code == 400 and "cursor" in message(forged)
    for bad in ({"limit": 0}, {"limit": 101}, {"status": "approved-ish"}):
        refused = await call(client, seeded, "approvals.list", bad)
        assert refused.status_code == 400, bad
        assert next(iter(bad)) in message(refused)


async def test_members_see_their_own_and_scopes_hide_what_they_cannot_read(
    client: httpx.AsyncClient, store: Store, seeded: Tenant, bob: Tenant
) -> None:
    carol = await member_of(store, seeded, "carol@example.com")
    erin = await member_of(store, seeded, "erin@example.com")
    carols = await request_edit(client, carol)
    owners = await request_edit(client, seeded)
    assert ids(await listed(client, carol)) == [carols]
    assert ids(await listed(client, erin)) == []
    assert ids(await listed(client, seeded)) == [owners, carols]
    # A credential without the gated call's read scope sees none of its requests.
    currency_only = await scoped_key(store, seeded, ["read_currency"])
    assert ids(await listed(client, currency_only)) == []
    reader = await scoped_key(store, seeded, ["read_documents"])
    assert ids(await listed(client, reader)) == [owners, carols]
    # Another workspace's owner sees none of them.
    assert ids(await listed(client, bob, status="all")) == []


async def test_through_graphql(client: httpx.AsyncClient, store: Store, seeded: Tenant) -> None:
    carol = await member_of(store, seeded, "carol@example.com")
    request_id = await request_edit(client, carol)
    response = await client.post(
        "/v1/graphql",
        json={
            "query": "query { approvalsList(input: {status: pending, limit: 5}) "
            "{ requests { id status title requestedBy capability { slug } } nextCursor } }"
        },
        headers=seeded.headers(),
    )
    body = response.json()
    assert "errors" not in body, body
    page = body["data"]["approvalsList"]
    assert page["nextCursor"] is None
    assert page["requests"] == [
        {
            "id": request_id,
            "status": "pending",
            "title": "Bulk-edit documents",
            "requestedBy": carol.user_id,
            "capability": {"slug": "documents.bulk-edit"},
        }
    ]
