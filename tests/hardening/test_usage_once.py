"""Usage counted exactly once (issue 35, item 5): a worker killed right after a document's
outcome, before anything else is written, loses no billing count, and the job run again by
another worker adds none. Before, the count was a write of its own after the outcome: lost
with the worker (seen once in about twenty runs), since the job run again found the document
finished and returned."""

from __future__ import annotations

from typing import Any

import pytest

from persistence.store import Store
from resolvers.services.processing.pipeline import receive
from tests.conftest import app_on, make_tenant, worker_pool
from tests.hardening.test_crash_recovery import ProcessKilled, services_over
from tests.sources.conftest import fixture

pytestmark = pytest.mark.wire


async def billed_documents(store: Store, headers: dict[str, str]) -> int:
    import httpx

    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app_on(store)), base_url="http://fincap.test"
    ) as http:
        response = await http.post("/v1/capabilities/billing.get", json={}, headers=headers)
    assert response.status_code == 200, response.text
    documents: int = response.json()["data"]["result"]["usage"]["documentsProcessed"]
    return documents


async def test_a_worker_killed_after_the_outcome_loses_no_count_and_adds_none(
    wire_store: Store,
) -> None:
    tenant = await make_tenant(wire_store, "alice@example.com", "Alice Co")
    document_id, activity_id = await receive(
        services_over(wire_store),
        tenant.org_id,
        data=fixture("text-layer.pdf"),
        file_name="northwind.pdf",
        mime_type="application/pdf",
        source="upload",
        details={},
    )
    doomed = worker_pool(wire_store)

    async def dies(*args: Any, **kwargs: Any) -> Any:
        raise ProcessKilled  # the worker's process ends here: nothing after the outcome runs

    # The first write after the document's outcome is its item's record of it.
    record_outcome = wire_store.activity.record_outcome
    wire_store.activity.record_outcome = dies  # type: ignore[method-assign]
    with pytest.raises(ProcessKilled):
        await doomed.run_one("doomed-worker")
    wire_store.activity.record_outcome = record_outcome  # type: ignore[method-assign]
    document = await wire_store.documents.reads.get(tenant.org_id, document_id)
    assert document is not None and document["processingStatus"] == "processed"
    assert await billed_documents(wire_store, tenant.headers()) == 1  # counted with the outcome

    # Another worker takes the dead one's job back and runs it again.
    assert await wire_store.jobs.take_back_leases(lambda owner: owner == "doomed-worker") == 1
    assert await worker_pool(wire_store).run_until_idle() == 1
    assert await billed_documents(wire_store, tenant.headers()) == 1  # not twice
    item = await wire_store.activity.get(tenant.org_id, activity_id)
    assert item is not None and item["status"] == "processed"  # its record, made after all
    job = await wire_store.db["jobs"].find_one({"payload.documentId": document_id})
    assert job is not None and job["status"] == "done" and job["attempts"] == 2
