"""Who may change a saved rule: its author, or an owner or admin (threats checklist: a member
must not change what another member or the owner set up)."""

from __future__ import annotations

import httpx

from persistence.store import Store
from tests.conftest import Tenant, member_of
from tests.rules.test_notifications import execute


async def test_only_the_author_or_a_manager_changes_a_rule(
    client: httpx.AsyncClient, store: Store, alice: Tenant
) -> None:
    carol = await member_of(store, alice, "carol@example.com", "member")
    dave = await member_of(store, alice, "dave@example.com", "admin")
    owners = (await execute(client, alice, "Categorize all Uber receipts as Travel"))["rule"]["id"]
    hers = (await execute(client, carol, "Categorize all Bolt receipts as Travel"))["rule"]["id"]

    for slug in ("rules.disable", "rules.enable", "rules.delete"):
        refused = await client.post(
            f"/v1/capabilities/{slug}", json={"id": owners}, headers=carol.headers()
        )
        assert refused.status_code == 403, (slug, refused.text)
        assert "rule's author, or an owner or admin" in refused.text
    assert (await store.rules.get(alice.org_id, owners)) is not None

    own = await client.post(
        "/v1/capabilities/rules.disable", json={"id": hers}, headers=carol.headers()
    )
    assert own.status_code == 200 and own.json()["data"]["result"]["rule"]["status"] == "disabled"
    by_admin = await client.post(
        "/v1/capabilities/rules.delete", json={"id": owners}, headers=dave.headers()
    )
    assert by_admin.status_code == 200, by_admin.text
