"""Issue 35: stored events had no per-workspace cap (only a 24-hour TTL): a workspace's bulk
edits could store events without bound. The log keeps at most ``kept_per_workspace`` of one
workspace's newest events (trimmed every ``trim_every`` appends of that workspace in a
process), and never touches another workspace's."""

from __future__ import annotations

from persistence.store import Store
from tests.conftest import Tenant


async def test_a_workspaces_stored_events_are_capped(
    store: Store, alice: Tenant, bob: Tenant
) -> None:
    log = store.documents.events
    log.kept_per_workspace = 50
    log.trim_every = 10
    await log.append(bob.org_id, "document.updated", [f"doc_b{n}" for n in range(5)])
    for batch in range(20):
        await log.append(alice.org_id, "document.updated", [f"doc_{batch}_{n}" for n in range(10)])
    events = store.db["events"]
    kept = await events.count_documents({"workspaceId": alice.org_id})
    assert 50 <= kept < 50 + 10
    newest = await events.find({"workspaceId": alice.org_id}).sort("_id", -1).limit(1).to_list(1)
    assert newest[0]["documentId"] == "doc_19_9"  # the newest are the ones kept
    assert await events.count_documents({"workspaceId": bob.org_id}) == 5
