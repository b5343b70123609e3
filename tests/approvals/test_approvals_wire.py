"""The approval race on the real protocol: the claim is one find_one_and_update on the
embedded MongoDB-wire server, so of several concurrent approvals exactly one runs the call."""

from __future__ import annotations

import asyncio

import pytest

from persistence.store import Store
from resolvers.framework.registry import Registry
from tests.conftest import asgi_client, make_tenant
from tests.documents.conftest import KNOWN, call, result

pytestmark = pytest.mark.wire


async def test_concurrent_approvals_run_the_call_once(
    wire_store: Store, registry: Registry
) -> None:
    alice = await make_tenant(wire_store, "alice@example.com", "Alice Co")
    await wire_store.documents.writes.insert_many(alice.org_id, KNOWN)
    edit = {"merchant": "starbucks", "changes": {"category": "Coffee"}, "dryRun": False}
    async with asgi_client(wire_store, registry) as http:
        waiting = result(await call(http, alice, "documents.bulk-edit", edit))
        body = {"approvalRequestId": waiting["approvalRequestId"]}
        answers = await asyncio.gather(
            *(call(http, alice, "approvals.approve", body) for _ in range(4))
        )
        assert sorted(a.status_code for a in answers) == [200, 400, 400, 400]
        document = result(await call(http, alice, "documents.get", {"id": "doc_a"}))
        assert document["document"]["category"] == "Coffee"
        assert len(document["document"]["editHistory"]) == 1
        shown = result(await call(http, alice, "approvals.get", body))
        assert shown["status"] == "executed" and shown["result"]["modified"] == 2
