"""rules.execute is approval-gated (spec/decisions.md): a confirmed save waits for an owner
or admin; approving saves the rule as its requester, rejecting saves nothing. REST and GraphQL."""

from __future__ import annotations

import httpx

from persistence.store import Store
from tests.conftest import make_tenant
from tests.documents.conftest import call, result

UBER = "Categorize all Uber and Bolt receipts as Travel"


async def test_a_confirmed_save_waits_for_approval_then_runs_as_the_requester(
    client: httpx.AsyncClient, store: Store
) -> None:
    owner = await make_tenant(store, "owner@example.com", "Gated Co")
    waiting = result(
        await call(client, owner, "rules.execute", {"naturalLanguageRule": UBER, "confirm": True})
    )
    assert waiting["status"] == "approval_required" and waiting["approvalRequestId"]
    assert waiting["capability"]["slug"] == "rules.execute"
    assert UBER in waiting["description"] and '"set-category"' in waiting["description"]
    assert result(await call(client, owner, "rules.list", {"includeDisabled": True}))["rules"] == []

    # confirm false is refused at once, never sent to a reviewer.
    refused = await call(
        client, owner, "rules.execute", {"naturalLanguageRule": UBER, "confirm": False}
    )
    assert refused.status_code == 400

    approved = result(
        await call(
            client, owner, "approvals.approve", {"approvalRequestId": waiting["approvalRequestId"]}
        )
    )
    assert approved["status"] == "executed"
    saved = approved["result"]
    assert saved["status"] == "created" and saved["rule"]["createdBy"] == owner.user_id
    listed = result(await call(client, owner, "rules.list", {}))["rules"]
    assert [r["id"] for r in listed] == [saved["rule"]["id"]]


async def test_a_rejected_save_saves_nothing_over_graphql(
    client: httpx.AsyncClient, store: Store
) -> None:
    owner = await make_tenant(store, "owner2@example.com", "Gated Ltd")
    response = await client.post(
        "/v1/graphql",
        json={
            "query": "mutation($i: ExecuteRuleInput!) { rulesExecute(input: $i) { status "
            "approvalRequestId rule { id } } }",
            "variables": {"i": {"naturalLanguageRule": UBER, "confirm": True}},
        },
        headers=owner.headers(),
    )
    waiting = response.json()["data"]["rulesExecute"]
    assert waiting["status"] == "approval_required" and waiting["rule"] is None
    rejected = result(
        await call(
            client,
            owner,
            "approvals.reject",
            {"approvalRequestId": waiting["approvalRequestId"], "message": "not now"},
        )
    )
    assert rejected["status"] == "rejected"
    assert result(await call(client, owner, "rules.list", {"includeDisabled": True}))["rules"] == []
