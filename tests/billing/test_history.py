"""billing.listHistory: the caller's own account only, keyset pages with signed cursors."""

from __future__ import annotations

import base64
from datetime import timedelta
from typing import Any

from engines.billing.plans import default_catalog
from persistence.store import Store
from resolvers.services.auth import accounts
from resolvers.services.billing import subscriptions
from tests.billing.conftest import START, Billed
from tests.conftest import Tenant

HISTORY_QUERY = """
query($input: ListBillingHistoryInput!) {
  billingListHistory(input: $input) {
    entries { id kind total currency issuedAt lines { kind amount } }
    hasMore
    nextCursor
  }
}
"""


async def charges(store: Store, tenant: Tenant, count: int, label: str) -> list[str]:
    """``count`` one-off charges; every third pair shares its issue time (ties by id)."""
    ids = []
    for index in range(count):
        issued = START + timedelta(hours=index - index % 3)
        entry = await subscriptions.add_charge(
            store,
            default_catalog(),
            tenant.user_id,
            100 + index,
            f"{label} {index}",
            issued,
            tenant.org_id,
        )
        ids.append(entry["_id"])
    return ids


async def rest_pages(billed: Billed, tenant: Tenant, limit: int, org: str | None) -> list[str]:
    seen: list[str] = []
    body: dict[str, Any] = {"limit": limit}
    while True:
        page = await billed.ok("billing.listHistory", body, tenant.headers(org=org))
        assert len(page["entries"]) <= limit
        seen += [entry["id"] for entry in page["entries"]]
        if not page["hasMore"]:
            assert page["nextCursor"] is None
            return seen
        body = {"limit": limit, "startingAfter": page["nextCursor"]}


async def test_pages_cover_the_history_newest_first_without_gaps_or_repeats(
    billed: Billed, store: Store, alice: Tenant, bob: Tenant
) -> None:
    mine = await charges(store, alice, 23, "Alice")
    await charges(store, bob, 5, "Bob")
    expected = [
        entry["_id"]
        for entry in sorted(
            await store.db["billing_ledger"].find({"userId": alice.user_id}).to_list(None),
            key=lambda entry: (entry["issuedAt"], entry["_id"]),
            reverse=True,
        )
    ]
    assert sorted(expected) == sorted(mine)
    for limit in (1, 5, 7, 23, 100):
        assert await rest_pages(billed, alice, limit, "self") == expected, limit
    assert await rest_pages(billed, alice, 4, None) == expected  # no workspace needed

    # GraphQL walks the same pages.
    seen: list[str] = []
    variables: dict[str, Any] = {"input": {"limit": 6}}
    while True:
        body = await billed.gql(HISTORY_QUERY, alice.headers(), variables)
        assert "errors" not in body, body
        page = body["data"]["billingListHistory"]
        seen += [entry["id"] for entry in page["entries"]]
        if not page["hasMore"]:
            break
        variables = {"input": {"limit": 6, "startingAfter": page["nextCursor"]}}
    assert seen == expected
    first = (await billed.ok("billing.listHistory", {"limit": 1}, alice.headers()))["entries"][0]
    assert first["kind"] == "charge" and first["lines"][0]["kind"] == "charge"
    assert first["total"] == first["lines"][0]["amount"]


async def test_a_new_entry_between_pages_neither_repeats_nor_hides_older_ones(
    billed: Billed, store: Store, alice: Tenant
) -> None:
    older = await charges(store, alice, 6, "Old")
    page = await billed.ok("billing.listHistory", {"limit": 3}, alice.headers())
    await subscriptions.add_charge(
        store, default_catalog(), alice.user_id, 999, "New", START + timedelta(days=9)
    )
    rest = await billed.ok(
        "billing.listHistory",
        {"limit": 100, "startingAfter": page["nextCursor"]},
        alice.headers(),
    )
    seen = [entry["id"] for entry in page["entries"] + rest["entries"]]
    assert sorted(seen) == sorted(older) and len(seen) == len(set(seen))


async def test_another_owners_history_is_never_visible(
    billed: Billed, store: Store, alice: Tenant, bob: Tenant
) -> None:
    alice_ids = await charges(store, alice, 4, "Alice")
    bob_ids = await charges(store, bob, 2, "Bob")
    # Bob is even an admin of Alice's workspace, and acts in it.
    await store.workspaces.add_member(alice.org_id, bob.user_id, "admin")
    for headers in (bob.headers(org=alice.org_id), bob.headers(), bob.headers(org=None)):
        page = await billed.ok("billing.listHistory", {}, headers)
        assert sorted(entry["id"] for entry in page["entries"]) == sorted(bob_ids)
        body = await billed.gql(HISTORY_QUERY, headers, {"input": {}})
        ids = {entry["id"] for entry in body["data"]["billingListHistory"]["entries"]}
        assert ids == set(bob_ids) and not ids & set(alice_ids)
    # A cursor of Alice's pages is refused for Bob (it is bound to its owner), not replayed.
    cursor = (await billed.ok("billing.listHistory", {"limit": 1}, alice.headers()))["nextCursor"]
    replay = await billed.call(
        "billing.listHistory", {"startingAfter": cursor}, bob.headers(org=alice.org_id)
    )
    assert replay.status_code == 400
    assert "cursor" in replay.json()["error"]["errorMessage"]


async def test_a_cursor_the_server_did_not_make_is_a_400(
    billed: Billed, store: Store, alice: Tenant
) -> None:
    await charges(store, alice, 3, "Alice")
    cursor = (await billed.ok("billing.listHistory", {"limit": 1}, alice.headers()))["nextCursor"]
    forged = base64.urlsafe_b64encode(b'{"v":{"$d":"2030-01-01"},"id":"z","q":"x"}').decode()
    flipped = cursor[:-2] + ("A" if cursor[-2] != "A" else "B") + cursor[-1]
    for bad in ("not-a-cursor", forged, flipped, cursor + "x"):
        response = await billed.call("billing.listHistory", {"startingAfter": bad}, alice.headers())
        assert response.status_code == 400, bad
        assert response.json()["error"]["errorMessage"].startswith("cursor:")
    # Through GraphQL too.
    gql = await billed.gql(HISTORY_QUERY, alice.headers(), {"input": {"startingAfter": "nope"}})
    assert gql["errors"][0]["extensions"]["code"] == "BAD_REQUEST"


async def test_a_key_restricted_to_one_workspace_sees_that_workspaces_entries_only(
    billed: Billed, store: Store, alice: Tenant
) -> None:
    second = await accounts.create_workspace(store, "alice@example.com", "Alice Two")
    in_first = await charges(store, alice, 3, "First")
    other = Tenant(alice.user_id, second["orgId"], alice.api_key)
    in_second = await charges(store, other, 2, "Second")
    account_wide = await subscriptions.add_charge(
        store, default_catalog(), alice.user_id, 500, "Account-wide", START
    )
    key = await accounts.create_key(store, "alice@example.com", restrict_to=second["orgId"])
    restricted = {"Authorization": f"Bearer {key['apiKey']}"}
    page = await billed.ok("billing.listHistory", {"limit": 1}, restricted)
    seen = [page["entries"][0]["id"]]
    page = await billed.ok("billing.listHistory", {"startingAfter": page["nextCursor"]}, restricted)
    seen += [entry["id"] for entry in page["entries"]]
    assert sorted(seen) == sorted(in_second)
    everything = await billed.ok("billing.listHistory", {}, alice.headers(org=None))
    assert {entry["id"] for entry in everything["entries"]} == {
        *in_first,
        *in_second,
        account_wide["_id"],
    }
    # The unrestricted key's cursor does not page the restricted view.
    cursor = (await billed.ok("billing.listHistory", {"limit": 1}, alice.headers()))["nextCursor"]
    refused = await billed.call("billing.listHistory", {"startingAfter": cursor}, restricted)
    assert refused.status_code == 400
