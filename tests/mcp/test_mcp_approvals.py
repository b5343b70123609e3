"""A gated call on the MCP face: the answer names the approvals tools, which then run it."""

from __future__ import annotations

import httpx

from persistence.store import Store
from tests.conftest import Tenant
from tests.documents.conftest import KNOWN
from tests.mcp import oauth_client as oc
from tests.mcp.conftest import PASSWORD
from tests.mcp.test_mcp_face import call


async def test_gated_tool_names_the_review_tools_and_approval_runs_it(
    http: httpx.AsyncClient, store: Store, person: Tenant
) -> None:
    await store.documents.writes.insert_many(person.org_id, KNOWN)
    tokens = await oc.whole_flow(http, "alice@example.com", PASSWORD, person.org_id)
    token = tokens["access_token"]
    edit = {"merchant": "starbucks", "changes": {"category": "Coffee"}, "dryRun": False}
    answer = (await call(http, token, "documents_bulk_edit", **edit))["result"]
    assert answer["isError"] is False
    waiting = answer["structuredContent"]
    assert waiting["status"] == "approval_required"
    assert waiting["nextTools"] == ["approvals_get", "approvals_approve", "approvals_reject"]
    assert "approvals_approve" in answer["content"][-1]["text"]
    request_id = waiting["approvalRequestId"]

    shown = (await call(http, token, "approvals_get", approvalRequestId=request_id))["result"]
    assert shown["structuredContent"]["status"] == "pending"
    approved = (await call(http, token, "approvals_approve", approvalRequestId=request_id))[
        "result"
    ]
    assert approved["isError"] is False
    assert approved["structuredContent"]["result"]["modified"] == 2
