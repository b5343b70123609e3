"""rules.execute / list / enable / disable / delete through REST and GraphQL: saving needs
confirm, bad input is a 400 naming the field, another workspace's rule is a 404."""

from __future__ import annotations

from typing import Any

import httpx

from persistence.store import Store
from tests.conftest import Tenant, second_workspace
from tests.documents.conftest import call, doc, result

UBER = "Categorize all Uber and Bolt receipts as Travel"


async def save(client: httpx.AsyncClient, tenant: Tenant, sentence: str) -> dict[str, Any]:
    saved: dict[str, Any] = result(
        await call(
            client, tenant, "rules.execute", {"naturalLanguageRule": sentence, "confirm": True}
        )
    )
    return saved


def error(response: httpx.Response, status: int) -> str:
    assert response.status_code == status, response.text
    message: str = response.json()["error"]["errorMessage"]
    return message


async def test_execute_needs_confirm_true(client: httpx.AsyncClient, alice: Tenant) -> None:
    missing = await call(client, alice, "rules.execute", {"naturalLanguageRule": UBER})
    assert "confirm" in error(missing, 400)
    refused = await call(
        client, alice, "rules.execute", {"naturalLanguageRule": UBER, "confirm": False}
    )
    assert "confirm: must be true" in error(refused, 400)
    as_text = await call(
        client, alice, "rules.execute", {"naturalLanguageRule": UBER, "confirm": "true"}
    )
    assert "confirm" in error(as_text, 400)
    listed = result(await call(client, alice, "rules.list", {"includeDisabled": True}))
    assert listed["rules"] == []  # nothing was saved


async def test_bad_input_is_a_400_naming_the_field(
    client: httpx.AsyncClient, alice: Tenant, store: Store
) -> None:
    too_long = await call(client, alice, "rules.prepare", {"naturalLanguageRule": "x" * 1001})
    assert "naturalLanguageRule" in error(too_long, 400)
    empty = await call(client, alice, "rules.prepare", {"naturalLanguageRule": ""})
    assert "naturalLanguageRule" in error(empty, 400)
    unknown = await call(client, alice, "rules.prepare", {"naturalLanguageRule": UBER, "x": 1})
    assert "x" in error(unknown, 400)
    nonsense = await call(
        client, alice, "rules.execute", {"naturalLanguageRule": "Make coffee", "confirm": True}
    )
    assert "no rule could be read" in error(nonsense, 400)
    limit = await call(client, alice, "rules.list", {"limit": 0})
    assert "limit" in error(limit, 400)
    flag = await call(client, alice, "rules.list", {"includeDisabled": "yes"})
    assert "includeDisabled" in error(flag, 400)
    await second_workspace(store, alice)  # with one, the call would act there
    no_org = await call(client, alice, "rules.prepare", {"naturalLanguageRule": UBER}, org=None)
    assert error(no_org, 400).startswith("Organization context required: ")


async def test_execute_saves_and_list_shows_name_status_trigger_and_stats(
    client: httpx.AsyncClient, alice: Tenant, store: Store
) -> None:
    await store.documents.writes.insert_many(
        alice.org_id,
        [doc("doc_u", merchant="UBER BV"), doc("doc_s", merchant="Starbucks")],
    )
    preview = result(await call(client, alice, "rules.prepare", {"naturalLanguageRule": UBER}))
    assert preview["matchingDocuments"] == 1
    assert result(await call(client, alice, "rules.list", {}))["rules"] == []  # not saved

    saved = await save(client, alice, UBER)
    assert saved["status"] == "created" and saved["webhookSecret"] is None
    rule = saved["rule"]
    assert rule["id"].startswith("rul_") and rule["status"] == "enabled"
    assert rule["triggerType"] == "document-processed" and rule["name"] == UBER
    assert rule["definition"] == preview["rule"] | {"conditions": preview["rule"]["conditions"]}
    assert rule["stats"] == {
        "runs": 0,
        "documentsMatched": 0,
        "actionsApplied": 0,
        "actionsFailed": 0,
        "lastRunAt": None,
        "lastError": None,
        "lastErrorAt": None,
        "awaitingApproval": [],
    }
    assert rule["createdBy"] == alice.user_id and rule["nextRunAt"] is None

    second = await save(client, alice, "Archive receipts under 1 dollar")
    listed = result(await call(client, alice, "rules.list", {}))["rules"]
    assert [r["id"] for r in listed] == [second["rule"]["id"], rule["id"]]  # newest first
    assert [
        r["id"] for r in result(await call(client, alice, "rules.list", {"limit": 1}))["rules"]
    ] == [second["rule"]["id"]]


async def test_disable_enable_delete_and_includeDisabled(
    client: httpx.AsyncClient, alice: Tenant
) -> None:
    rule_id = (await save(client, alice, UBER))["rule"]["id"]
    disabled = result(await call(client, alice, "rules.disable", {"id": rule_id}))["rule"]
    assert disabled["status"] == "disabled"
    assert result(await call(client, alice, "rules.list", {}))["rules"] == []
    everything = result(await call(client, alice, "rules.list", {"includeDisabled": True}))
    assert [r["status"] for r in everything["rules"]] == ["disabled"]
    enabled = result(await call(client, alice, "rules.enable", {"id": rule_id}))["rule"]
    assert enabled["status"] == "enabled"
    again = result(await call(client, alice, "rules.enable", {"id": rule_id}))["rule"]
    assert again["status"] == "enabled"  # idempotent
    deleted = result(await call(client, alice, "rules.delete", {"id": rule_id}))
    assert deleted == {"id": rule_id, "deleted": True}
    assert "not found" in error(await call(client, alice, "rules.delete", {"id": rule_id}), 404)
    assert "not found" in error(await call(client, alice, "rules.enable", {"id": rule_id}), 404)


async def test_another_workspaces_rule_is_not_found(
    client: httpx.AsyncClient, alice: Tenant, bob: Tenant
) -> None:
    rule_id = (await save(client, alice, UBER))["rule"]["id"]
    for slug in ("rules.enable", "rules.disable", "rules.delete"):
        assert error(await call(client, bob, slug, {"id": rule_id}), 404)
    assert result(await call(client, bob, "rules.list", {"includeDisabled": True}))["rules"] == []
    # Alice's workspace named with Bob's key: he is not a member.
    assert error(await call(client, bob, "rules.list", {}, org=alice.org_id), 403)
    still = result(await call(client, alice, "rules.list", {}))["rules"]
    assert [r["id"] for r in still] == [rule_id] and still[0]["status"] == "enabled"


async def test_webhook_rules_get_a_secret_once_and_scheduled_rules_a_job(
    client: httpx.AsyncClient, alice: Tenant, store: Store
) -> None:
    hook = await save(client, alice, "Notify https://hooks.example.com/a when an invoice arrives")
    secret = hook["webhookSecret"]
    assert isinstance(secret, str) and len(secret) >= 40
    stored = await store.rules.get(alice.org_id, hook["rule"]["id"])
    assert stored is not None and secret not in str(stored)  # kept encrypted only
    listed = result(await call(client, alice, "rules.list", {}))
    assert "webhookSecret" not in str(listed)

    weekly = await save(client, alice, "Every Monday at 9am, send invoices from Google to Xero")
    rule = weekly["rule"]
    assert rule["triggerType"] == "schedule" and rule["nextRunAt"].endswith("09:00:00Z")
    job = await store.db["jobs"].find_one({"kind": "run-scheduled-rule"})
    assert job is not None and job["payload"] == {"ruleId": rule["id"]}
    assert job["workspaceId"] == alice.org_id


EXECUTE = """
mutation($input: ExecuteRuleInput!) {
  rulesExecute(input: $input) {
    status webhookSecret notUnderstood
    rule { id name status triggerType stats { runs documentsMatched actionsApplied lastError }
           definition { actions { type category } } }
  }
}
"""
LIST = """
query($input: ListRulesInput!) {
  rulesList(input: $input) { rules { id name status triggerType stats { runs lastRunAt } } }
}
"""
DISABLE = "mutation($input: DisableRuleInput!) { rulesDisable(input: $input) { rule { status } } }"
DELETE = "mutation($input: DeleteRuleInput!) { rulesDelete(input: $input) { id deleted } }"


async def gql(client: httpx.AsyncClient, tenant: Tenant, query: str, **input: Any) -> Any:
    response = await client.post(
        "/v1/graphql",
        json={"query": query, "variables": {"input": input}},
        headers=tenant.headers(),
    )
    return response.json()


async def test_the_same_through_graphql(
    client: httpx.AsyncClient, alice: Tenant, bob: Tenant
) -> None:
    refused = await gql(client, alice, EXECUTE, naturalLanguageRule=UBER, confirm=False)
    assert refused["errors"][0]["extensions"]["code"] == "BAD_REQUEST"
    assert "confirm" in refused["errors"][0]["message"]

    saved = (await gql(client, alice, EXECUTE, naturalLanguageRule=UBER, confirm=True))["data"]
    rule = saved["rulesExecute"]["rule"]
    assert saved["rulesExecute"]["status"] == "created"
    assert rule["status"] == "enabled" and rule["definition"]["actions"] == [
        {"type": "set_category", "category": "Travel"}
    ]
    listed = (await gql(client, alice, LIST))["data"]["rulesList"]["rules"]
    assert [r["id"] for r in listed] == [rule["id"]]
    assert listed[0]["stats"] == {"runs": 0, "lastRunAt": None}

    foreign = await gql(client, bob, DISABLE, id=rule["id"])
    assert foreign["errors"][0]["extensions"]["code"] == "NOT_FOUND"
    off = (await gql(client, alice, DISABLE, id=rule["id"]))["data"]["rulesDisable"]
    assert off["rule"]["status"] == "disabled"
    assert (await gql(client, alice, LIST))["data"]["rulesList"]["rules"] == []
    shown = await gql(client, alice, LIST, includeDisabled=True)
    assert [r["status"] for r in shown["data"]["rulesList"]["rules"]] == ["disabled"]
    gone = (await gql(client, alice, DELETE, id=rule["id"]))["data"]["rulesDelete"]
    assert gone == {"id": rule["id"], "deleted": True}
