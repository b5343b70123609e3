"""Events across processes on the embedded server: a document written by another process (its
own motor client: what a ``fincap worker`` or another API replica is) reaches this process's
subscriber through the poller; the indexes exist; resumption reads from the store."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap

import pytest
from bson import ObjectId

from persistence.embedded import EmbeddedServer
from persistence.store import Store
from resolvers.services.events.hub import EventHub, EventLimits
from tests.conftest import make_tenant
from tests.events.streams import key

pytestmark = pytest.mark.wire

# A separate Python process that marks a stored document processed, as a worker would.
WRITER = textwrap.dedent(
    """
    import asyncio, sys
    from persistence.client import connect
    from persistence.store import Store

    async def main(uri, database, workspace, document):
        client, db = connect(uri, database)
        writes = Store(db).documents.writes
        await writes.set_processing(workspace, document, "processed", "elsewhere")
        client.close()

    asyncio.run(main(*sys.argv[1:]))
    """
)


async def test_a_write_of_another_process_reaches_the_subscriber(
    wire_store: Store, embedded_server: EmbeddedServer
) -> None:
    tenant = await make_tenant(wire_store, "wire@example.com", "Wire Co")
    await wire_store.documents.writes.insert_many(
        tenant.org_id, [{"_id": "doc_w", "merchant": "Shell", "processingStatus": "queued"}]
    )
    hub = EventHub(wire_store, "http://fincap.test", EventLimits(poll_interval=0.05))
    subscription = await hub.subscribe(tenant.org_id, key("key_w"))
    args = [embedded_server.uri, wire_store.db.name, tenant.org_id, "doc_w"]
    writer = await asyncio.create_subprocess_exec(
        sys.executable, "-c", WRITER, *args, stderr=subprocess.PIPE
    )
    _, errors = await writer.communicate()
    assert writer.returncode == 0, errors.decode()
    event = await subscription.next(timeout=10)
    assert event is not None and event.type == "document.processed"
    assert event.document is not None and event.document.processingStatus == "processed"
    # Resumption from before it, on the same store, finds it too.
    other = EventHub(wire_store, "http://fincap.test")
    # (Not the first by id: within a second, ids of two processes sort by their random part.)
    stored = await wire_store.documents.events.after(tenant.org_id, ObjectId("0" * 24))
    created = next(record for record in stored if record["type"] == "document.created")
    resumed = await other.subscribe(tenant.org_id, key("key_w"), after=str(created["_id"]))
    again = await resumed.next(timeout=5)
    assert again is not None and again.id == event.id
    await hub.close()
    await other.close()


async def test_the_events_indexes_exist(wire_store: Store) -> None:
    indexes = await wire_store.db["events"].index_information()
    assert indexes["workspace_order"]["key"] == [("workspaceId", 1), ("_id", 1)]
    assert indexes["retention"]["expireAfterSeconds"] == 24 * 3600
