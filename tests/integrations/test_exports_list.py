"""exports.list: the workspace's export history newest first, with who asked and who approved,
the provider's error on a refused one, filters and pages; tenant-scoped, read scope. Against the
fake Xero, delivered by the worker; REST and GraphQL. Also the connect flow that returns to the
dashboard."""

from __future__ import annotations

import asyncio
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

from app.host.workers import WorkerPool
from persistence.store import Store
from resolvers.framework.auth import new_api_key_secret
from tests.clock import ManualClock
from tests.conftest import Tenant, member_of
from tests.integrations.conftest import Api, add_document
from tests.integrations.fakes import Failure, FakeXero
from tests.integrations.test_xero import deliver

pytestmark = pytest.mark.wire
SEND = {"integrationId": "xero", "tenantId": "tenant-acme", "dryRun": False}


async def test_history_newest_first_with_who_approved_and_the_refusal(
    api: Api, store: Store, xero: FakeXero, workers: WorkerPool, clock: ManualClock
) -> None:
    for doc_id in ("doc_r1", "doc_r2"):
        await add_document(store, api.tenant, doc_id, receiptId=f"R-{doc_id}")
    await api.connect("xero")
    carol = Api(api.http, await member_of(store, api.tenant, "carol@example.com"))
    waiting = await carol.ok("integrations.send", {**SEND, "documentId": "doc_r1"})
    first = (await api.approve(waiting))["exportRecordId"]
    await deliver(workers, clock)
    await asyncio.sleep(0.002)  # a later createdAt: ties are ordered by random id
    await api.ok("approvals.configure", {"capabilitySlug": "integrations.send", "gated": False})
    xero.fail = [Failure("PUT", "/Invoices", 400)]
    second = (await api.ok("integrations.send", {**SEND, "documentId": "doc_r2"}))["exportRecordId"]
    await deliver(workers, clock)

    page = await api.ok("exports.list", {})
    assert [e["id"] for e in page["exports"]] == [second, first]
    assert page["nextCursor"] is None
    refused, sent = page["exports"]
    assert sent["status"] == "exported" and sent["documentId"] == "doc_r1"
    assert sent["requestedBy"] == carol.tenant.user_id
    assert sent["approvedBy"] == api.tenant.user_id
    assert refused["status"] == "failed" and "400" in refused["error"]
    assert refused["approvedBy"] is None and refused["requestedBy"] == api.tenant.user_id

    assert [e["id"] for e in (await api.ok("exports.list", {"status": "failed"}))["exports"]] == [
        second
    ]
    by_document = await api.ok("exports.list", {"documentId": "doc_r1"})
    assert [e["id"] for e in by_document["exports"]] == [first]
    one = await api.ok("exports.list", {"limit": 1})
    assert [e["id"] for e in one["exports"]] == [second]
    rest = await api.ok("exports.list", {"limit": 1, "cursor": one["nextCursor"]})
    assert [e["id"] for e in rest["exports"]] == [first] and rest["nextCursor"] is None
    other_query = await api.call("exports.list", {"status": "failed", "cursor": one["nextCursor"]})
    assert other_query.status_code == 400 and "cursor" in other_query.text

    graph = await api.http.post(
        "/v1/graphql",
        json={
            "query": "query { exportsList(input: {limit: 5}) "
            "{ exports { id status error errorReason approvedBy } nextCursor } }"
        },
        headers=api.tenant.headers(),
    )
    assert graph.json()["data"]["exportsList"]["exports"] == [
        {
            "id": second,
            "status": "failed",
            "error": refused["error"],
            "errorReason": "refused",
            "approvedBy": None,
        },
        {
            "id": first,
            "status": "exported",
            "error": None,
            "errorReason": None,
            "approvedBy": api.tenant.user_id,
        },
    ]


async def test_scoped_to_the_workspace_and_the_read_scope(
    api: Api, store: Store, bob: Tenant, workers: WorkerPool, clock: ManualClock
) -> None:
    await add_document(store, api.tenant, "doc_r1")
    await api.connect("xero")
    await api.ok("approvals.configure", {"capabilitySlug": "integrations.send", "gated": False})
    await api.ok("integrations.send", {**SEND, "documentId": "doc_r1"})
    assert len((await api.ok("exports.list", {}))["exports"]) == 1
    assert (await Api(api.http, bob).ok("exports.list", {}))["exports"] == []
    secret = new_api_key_secret()
    await store.api_keys.create(api.tenant.user_id, secret, scopes=["read_documents"])
    narrow = Api(api.http, Tenant(api.tenant.user_id, api.tenant.org_id, secret))
    refused = await narrow.call("exports.list", {})
    assert refused.status_code == 403 and "read_integrations" in refused.text
    for bad in ({"limit": 0}, {"limit": 101}, {"status": "lost"}, {"cursor": "forged"}):
        response = await api.call("exports.list", bad)
        assert response.status_code == 400, bad
        assert next(iter(bad)) in response.json()["error"]["errorMessage"]


async def consent(api: Api, query: str) -> httpx.Response:
    """Start the flow (with ``query``) and consent at the fake; the callback's answer to a
    browser (no JSON asked for)."""
    started = await api.http.get(
        f"/v1/integrations/xero/connect{query}",
        headers={**api.tenant.headers(), "Accept": "application/json"},
    )
    assert started.status_code == 200, started.text
    async with httpx.AsyncClient() as browser:
        at_provider = await browser.get(started.json()["data"]["result"]["authorizationUrl"])
    back = urlsplit(at_provider.headers["location"])
    return await api.http.get(f"{back.path}?{back.query}")


async def test_a_flow_started_for_the_dashboard_returns_to_it(api: Api) -> None:
    done = await consent(api, "?return=dashboard")
    assert done.status_code == 303
    assert done.headers["location"] == "http://fincap.test/app/#/integrations?connected=xero"
    listed = await api.ok("integrations.list", {"status": "connected"})
    assert [i["id"] for i in listed["integrations"]] == ["xero"]
    # Without it, the page that says so, as before.
    again = await consent(api, "")
    assert again.status_code == 200 and "xero is connected" in again.text


async def test_a_failed_flow_links_back_and_no_other_return_is_taken(
    api: Api, store: Store
) -> None:
    # Dave is no longer an admin when the provider sends him back: the page says why, with the
    # way back to the dashboard.
    other = await member_of(store, api.tenant, "dave@example.com", role="admin")
    as_dave = Api(api.http, other)
    started = await as_dave.http.get(
        "/v1/integrations/xero/connect?return=dashboard",
        headers={**other.headers(), "Accept": "application/json"},
    )
    url: Any = started.json()["data"]["result"]["authorizationUrl"]
    async with httpx.AsyncClient() as browser:
        at_provider = await browser.get(url)
    await store.workspaces.add_member(api.tenant.org_id, other.user_id, "member")
    back = urlsplit(at_provider.headers["location"])
    failed = await api.http.get(f"{back.path}?{back.query}")
    assert failed.status_code == 403
    assert 'href="http://fincap.test/app/#/integrations">Back to the dashboard' in failed.text
    elsewhere = await api.http.get(
        "/v1/integrations/xero/connect?return=https://evil.example/",
        headers={**api.tenant.headers(), "Accept": "application/json"},
    )
    assert elsewhere.status_code == 400 and "return" in elsewhere.text
