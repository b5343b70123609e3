"""billing.get and billing.change-plan through REST and GraphQL: real counts, proration,
owner-only changes, the user's own account without a workspace, and bad input."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from persistence.store import Store
from tests.billing.conftest import START, Billed
from tests.conftest import Tenant, second_workspace


async def test_get_reports_subscription_real_usage_features_and_upcoming_invoice(
    billed: Billed, store: Store, alice: Tenant, bob: Tenant
) -> None:
    billed.clock.now = datetime(2024, 2, 10, 12, tzinfo=UTC)
    today = billed.clock.now.date()
    await store.usage.add(alice.org_id, today, "documentsProcessed", 60)
    await store.usage.add(alice.org_id, START.date() - timedelta(days=1), "documentsProcessed", 9)
    await store.usage.add(bob.org_id, today, "documentsProcessed", 500)  # another workspace
    for _ in range(3):
        await billed.ok("workspaces.list", {}, alice.headers())
    await billed.ok("workspaces.list", {}, bob.headers())
    await second_workspace(store, bob)
    await billed.ok("workspaces.list", {}, bob.headers(org=None))  # no workspace: not metered

    result = await billed.ok("billing.get", {}, alice.headers())
    subscription = result["subscription"]
    assert subscription["workspaceId"] == alice.org_id
    assert subscription["workspaceName"] == "Alice Co"
    assert subscription["plan"]["id"] == "free" and subscription["plan"]["price"] == 0
    # Anchored on the workspace's creation day, the 31st: February's period ends on the 29th.
    assert subscription["currentPeriodStart"].startswith("2024-01-31T00:00:00")
    assert subscription["currentPeriodEnd"].startswith("2024-02-29T00:00:00")
    assert result["account"]["ownedByCaller"] is True
    assert result["account"]["currency"] == "USD" and result["account"]["provider"] == "local"
    usage = result["usage"]
    assert usage["documentsProcessed"] == 60  # not the day before the period, not Bob's
    assert usage["documentsIncluded"] == 50 and usage["documentsOverQuota"] == 10
    assert usage["apiCalls"] == 4  # three workspaces.list calls and this billing.get
    assert usage["seatsUsed"] == 1 and usage["seatsIncluded"] == 1
    assert usage["storageBytes"] == 0 and usage["storageBytesIncluded"] == 500 * 1024 * 1024
    features = {feature["key"]: feature["included"] for feature in result["features"]}
    assert features["ocr"] is True and features["rules"] is False
    upcoming = result["upcomingInvoice"]
    assert upcoming["total"] == 0 and upcoming["currency"] == "USD"
    assert [line["kind"] for line in upcoming["lines"]] == ["plan"]  # free: overage not billed
    assert result["subscriptions"] == []

    slim = await billed.ok(
        "billing.get",
        {"includeUsage": False, "includeFeatures": False, "includeUpcomingInvoice": False},
        alice.headers(),
    )
    assert slim["usage"] is None and slim["features"] is None and slim["upcomingInvoice"] is None
    assert slim["subscription"]["id"] == subscription["id"]


async def test_an_upgrade_mid_period_is_prorated_in_the_upcoming_invoice(
    billed: Billed, store: Store, alice: Tenant
) -> None:
    # Period 2024-01-31 → 2024-02-29 (29 days); Pro from 2024-02-14 00:00, 15 days of it.
    billed.clock.now = datetime(2024, 2, 14, tzinfo=UTC)
    changed = await billed.ok("billing.change-plan", {"planId": "pro"}, alice.headers())
    assert changed["subscription"]["plan"]["id"] == "pro"
    await store.usage.add(alice.org_id, datetime(2024, 2, 20).date(), "documentsProcessed", 600)
    billed.clock.now = datetime(2024, 2, 20, tzinfo=UTC)

    result = await billed.ok("billing.get", {}, alice.headers())
    upcoming = result["upcomingInvoice"]
    lines = [(line["kind"], line["planId"], line["amount"]) for line in upcoming["lines"]]
    # Free 14/29 of 0.00; Pro 15/29 of 29.00 = 15.00; quota ⌈50·14/29 + 1000·15/29⌉ = 542, so
    # 58 documents over at Pro's 0.05 = 2.90.
    assert lines == [("plan", "free", 0), ("plan", "pro", 15.0), ("overage", "pro", 2.9)]
    assert upcoming["total"] == 17.9
    assert result["usage"]["documentsIncluded"] == 542
    assert result["usage"]["documentsOverQuota"] == 58
    assert upcoming["lines"][1]["periodStart"].startswith("2024-02-14T00:00:00")

    # The same plan again changes nothing; a yearly plan would wait for the renewal.
    again = await billed.ok("billing.change-plan", {"planId": "pro"}, alice.headers())
    assert len(again["upcomingInvoice"]["lines"]) == 3


async def test_only_the_owner_changes_the_plan_and_members_see_the_owners_account(
    billed: Billed, store: Store, alice: Tenant, bob: Tenant
) -> None:
    await store.workspaces.add_member(alice.org_id, bob.user_id, "member")
    as_bob_in_alice = bob.headers(org=alice.org_id)
    refused = await billed.call("billing.change-plan", {"planId": "pro"}, as_bob_in_alice)
    assert refused.status_code == 403
    assert refused.json()["error"]["errorMessage"] == (
        "billing.change-plan is for the workspace's owners; your role here is member"
    )
    seen = await billed.ok("billing.get", {}, as_bob_in_alice)
    assert seen["subscription"]["workspaceId"] == alice.org_id
    assert seen["account"]["ownedByCaller"] is False
    assert seen["usage"]["seatsUsed"] == 2
    assert seen["subscription"]["plan"]["id"] == "free"  # unchanged


async def test_without_a_workspace_the_callers_own_account_and_its_subscriptions(
    billed: Billed, store: Store, alice: Tenant, bob: Tenant
) -> None:
    await store.workspaces.add_member(alice.org_id, bob.user_id, "admin")
    result = await billed.ok("billing.get", {}, bob.headers(org=None))
    assert result["subscription"] is None and result["usage"] is None
    assert result["upcomingInvoice"] is None and result["features"] is None
    assert result["account"]["ownedByCaller"] is True
    # Bob pays for his own workspace only, not for Alice's where he is an admin.
    assert [row["workspaceId"] for row in result["subscriptions"]] == [bob.org_id]


async def test_bad_input_is_a_400_naming_the_field(
    billed: Billed, store: Store, alice: Tenant
) -> None:
    cases = [
        ("billing.get", {"includeUsage": "yes"}, "includeUsage"),
        ("billing.get", {"verbose": True}, "verbose"),
        ("billing.change-plan", {"planId": "platinum"}, "planId: unknown plan 'platinum'"),
        ("billing.change-plan", {}, "planId"),
        ("billing.listHistory", {"limit": 0}, "limit"),
        ("billing.listHistory", {"limit": 101}, "limit"),
        ("billing.listHistory", {"limit": "5"}, "limit"),
        ("billing.listHistory", {"startingAfter": ""}, "startingAfter"),
    ]
    for slug, body, named in cases:
        response = await billed.call(slug, body, alice.headers())
        assert response.status_code == 400, (slug, body, response.text)
        assert named in response.json()["error"]["errorMessage"], (slug, body)
    await second_workspace(store, alice)  # with one, the call would act there
    needs = await billed.call("billing.change-plan", {"planId": "pro"}, alice.headers(org=None))
    assert needs.status_code == 400
    assert needs.json()["error"]["reason"] == "workspace_required"


GET_QUERY = """
query($input: GetBillingInput!) {
  billingGet(input: $input) {
    account { id ownedByCaller currency }
    subscription { workspaceId plan { id price overagePerDocument } currentPeriodEnd }
    usage { documentsProcessed apiCalls documentsIncluded }
    features { key included }
    upcomingInvoice { total lines { kind amount planId } }
  }
}
"""

CHANGE_MUTATION = """
mutation($input: ChangeBillingPlanInput!) {
  billingChangePlan(input: $input) { subscription { plan { id } } upcomingInvoice { total } }
}
"""


async def test_graphql_get_and_change_plan(billed: Billed, store: Store, alice: Tenant) -> None:
    billed.clock.now = datetime(2024, 2, 14, tzinfo=UTC)
    await store.usage.add(alice.org_id, billed.clock.now.date(), "documentsProcessed", 7)
    body = await billed.gql(GET_QUERY, alice.headers(), {"input": {}})
    assert "errors" not in body, body
    data = body["data"]["billingGet"]
    assert data["subscription"]["plan"] == {
        "id": "free",
        "price": "0.00",
        "overagePerDocument": None,
    }
    assert data["usage"]["documentsProcessed"] == 7 and data["usage"]["apiCalls"] == 1
    assert data["upcomingInvoice"]["total"] == "0.00"

    changed = await billed.gql(CHANGE_MUTATION, alice.headers(), {"input": {"planId": "business"}})
    assert "errors" not in changed, changed
    # Business 15/29 of 99.00 = 51.206… → 51.21.
    assert changed["data"]["billingChangePlan"]["upcomingInvoice"]["total"] == "51.21"
    assert changed["data"]["billingChangePlan"]["subscription"]["plan"]["id"] == "business"

    bad = await billed.gql(CHANGE_MUTATION, alice.headers(), {"input": {"planId": "gold"}})
    assert bad["errors"][0]["extensions"]["code"] == "BAD_REQUEST"
    assert "unknown plan 'gold'" in bad["errors"][0]["message"]
    await second_workspace(store, alice)  # with one, the call would act there
    slim = await billed.gql(GET_QUERY, alice.headers(org=None), {"input": {"includeUsage": False}})
    assert slim["data"]["billingGet"]["subscription"] is None
    assert slim["data"]["billingGet"]["usage"] is None
