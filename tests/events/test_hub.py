"""The event hub over the in-memory store: document writes publish, subscribers of a workspace
get its events (and only its), a slow subscriber's queue stays bounded, a key's streams are
capped, a closed hub ends every stream."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from decimal import Decimal

import pytest

from persistence.events import EventRecord
from persistence.store import Store
from resolvers.framework.errors import TooManyRequests
from resolvers.services.events.hub import EventHub, EventLimits, Subscription
from schema.events import DocumentEvent
from tests.conftest import Tenant
from tests.documents.conftest import doc
from tests.events.streams import key

FAST = EventLimits(poll_interval=0.02, heartbeat=0.5)


def hub_over(store: Store, limits: EventLimits = FAST) -> EventHub:
    return EventHub(store, "http://fincap.test", limits)


async def next_event(subscription: Subscription) -> DocumentEvent:
    # A hang guard, not a wait: the event is what is waited for (a loaded machine is slow).
    event = await subscription.next(timeout=60)
    assert event is not None, "the subscription ended"
    return event


async def polls(hub: EventHub, count: int) -> None:
    """Until the poller has read the window ``count`` more times (each poll ticks before it
    reads: ``count + 1`` ticks)."""
    await asyncio.wait_for(hub.access_read.wait_for(count + 1), 60)


async def test_a_processed_document_reaches_its_subscriber_with_status_and_amount(
    store: Store, alice: Tenant
) -> None:
    hub = hub_over(store)
    subscription = await hub.subscribe(alice.org_id, key("key_a"))
    await store.documents.writes.insert_many(
        alice.org_id, [doc("doc_1", processingStatus="queued")]
    )
    created = await next_event(subscription)
    assert (created.type, created.documentId) == ("document.created", "doc_1")
    assert created.document is not None and created.document.processingStatus == "queued"

    record = await store.documents.reads.loaded(alice.org_id, "doc_1")
    assert record is not None
    await store.documents.writes.update_fields(alice.org_id, record, {"amount": Decimal("12.50")})
    await store.documents.writes.set_processing(
        alice.org_id, "doc_1", "processed", "Extracted Shell"
    )
    updated, processed = await next_event(subscription), await next_event(subscription)
    assert updated.type == "document.updated"
    assert processed.type == "document.processed"
    assert processed.document is not None
    assert processed.document.processingStatus == "processed"
    assert processed.document.amount == Decimal("12.50")
    assert processed.document.merchant == "Shell"
    await hub.close()


async def test_archive_and_unarchive_and_bulk_edits_publish(store: Store, alice: Tenant) -> None:
    await store.documents.writes.insert_many(alice.org_id, [doc("doc_1"), doc("doc_2")])
    hub = hub_over(store)
    subscription = await hub.subscribe(alice.org_id, key("key_a"))
    await store.documents.writes.set_archived(alice.org_id, ["doc_1", "doc_2"], archived=True)
    await store.documents.writes.set_archived(alice.org_id, ["doc_2"], archived=False)
    seen = [(e.type, e.documentId) for e in [await next_event(subscription) for _ in range(3)]]
    assert seen == [
        ("document.archived", "doc_1"),
        ("document.archived", "doc_2"),
        ("document.unarchived", "doc_2"),
    ]
    await hub.close()


async def test_a_workspace_never_sees_another_workspaces_events(
    store: Store, alice: Tenant, bob: Tenant
) -> None:
    hub = hub_over(store)
    alices = await hub.subscribe(alice.org_id, key("key_a"))
    bobs = await hub.subscribe(bob.org_id, key("key_b"))
    await store.documents.writes.insert_many(alice.org_id, [doc("doc_alice")])
    await store.documents.writes.insert_many(bob.org_id, [doc("doc_bob")])
    assert (await next_event(alices)).documentId == "doc_alice"
    assert (await next_event(bobs)).documentId == "doc_bob"
    # A later write in each workspace is the next event each hears: the other's came before
    # it, if at all, and did not come.
    await polls(hub, 2)
    await store.documents.writes.insert_many(alice.org_id, [doc("doc_alice_later")])
    await store.documents.writes.insert_many(bob.org_id, [doc("doc_bob_later")])
    assert (await next_event(alices)).documentId == "doc_alice_later"
    assert (await next_event(bobs)).documentId == "doc_bob_later"
    await hub.close()


async def test_events_written_by_another_process_arrive_through_the_poller(
    store: Store, alice: Tenant
) -> None:
    """A write the hub's own process did not make (another API replica, a ``fincap worker``):
    here a second repository object over the same database, whose appends this hub's fast
    path never hears of."""
    hub = hub_over(store)
    other_process = Store(store.db)
    assert hub.offer not in other_process.documents.events.on_append
    subscription = await hub.subscribe(alice.org_id, key("key_a"))
    await other_process.documents.writes.insert_many(alice.org_id, [doc("doc_1")])
    event = await next_event(subscription)
    assert (event.type, event.documentId) == ("document.created", "doc_1")
    # Re-read by later polls (the look-back window), it is not delivered twice: the next event
    # is a later write, read by a poll that read doc_1 again first.
    await polls(hub, 2)
    await other_process.documents.writes.insert_many(alice.org_id, [doc("doc_2")])
    assert (await next_event(subscription)).documentId == "doc_2"
    await hub.close()


async def test_a_burst_of_more_than_a_page_from_another_process_arrives_whole(
    store: Store, alice: Tenant
) -> None:
    """1,200 events written at once by another process (a bulk change in a worker): the
    poller reads past its 500-event page. Before, each poll read the same first page of its
    window again and the other 700 were never delivered, with no lagged notice."""
    hub = hub_over(store, EventLimits(queue=2000, poll_interval=0.02, heartbeat=0.5))
    other_process = Store(store.db)
    subscription = await hub.subscribe(alice.org_id, key("key_a"))
    ids = [f"doc_{n:04}" for n in range(1200)]
    await other_process.documents.writes.insert_many(alice.org_id, [doc(i) for i in ids])
    heard = [(await next_event(subscription)).documentId for _ in ids]
    assert heard == ids
    # Nothing more (no repeat, no lagged notice): the next event is a later write.
    await other_process.documents.writes.insert_many(alice.org_id, [doc("doc_after")])
    assert (await next_event(subscription)).documentId == "doc_after"
    await hub.close()


async def test_a_poll_slower_than_the_lookback_misses_nothing(store: Store, alice: Tenant) -> None:
    """A poll that takes longer than ``lookback`` (a machine starved of CPU, a burst to render):
    an event another process wrote meanwhile is read by the next poll all the same. Before,
    each poll read back ``lookback`` from its own start, and such an event fell in the gap (a
    suite at load 15 lost one of 1,200 and waited 60 s for it)."""
    limits = EventLimits(
        queue=100, poll_interval=0.02, heartbeat=0.5, lookback=timedelta(seconds=1)
    )
    hub = hub_over(store, limits)
    other_process = Store(store.db)
    subscription = await hub.subscribe(alice.org_id, key("key_a"))
    deliver = hub._deliver
    stalled = False

    async def slow_deliver(records: list[EventRecord]) -> None:
        nonlocal stalled
        await deliver(records)
        if not stalled:
            stalled = True
            await other_process.documents.writes.insert_many(alice.org_id, [doc("doc_during")])
            # The poll goes on 2.5 s after that write: past the lookback (1 s; event ids count
            # whole seconds, so no shorter one is exact) and past the write's second, so no
            # later poll's own window holds it.
            await asyncio.sleep(2.5)

    hub._deliver = slow_deliver  # type: ignore[method-assign]
    await other_process.documents.writes.insert_many(alice.org_id, [doc("doc_first")])
    assert (await next_event(subscription)).documentId == "doc_first"
    assert (await next_event(subscription)).documentId == "doc_during"
    await hub.close()


async def test_a_slow_subscriber_holds_at_most_its_queue_and_is_told_what_it_missed(
    store: Store, alice: Tenant
) -> None:
    hub = hub_over(store, EventLimits(queue=5, poll_interval=0.02, heartbeat=0.5))
    slow = await hub.subscribe(alice.org_id, key("key_a"))
    ids = [f"doc_{n}" for n in range(40)]
    await store.documents.writes.insert_many(alice.org_id, [doc(i) for i in ids])
    for _ in range(1000):  # until all 40 were offered: 5 queued, 35 dropped and counted
        if slow.skipped >= 35:
            break
        await polls(hub, 1)
    await polls(hub, 2)  # and read again by the poller, twice
    assert len(slow) == 5  # never more than its queue, whatever arrives
    assert slow.skipped == 35  # the window's re-reads were not offered again
    first = [await next_event(slow) for _ in range(5)]
    assert [e.documentId for e in first] == ids[:5]
    lagged = await next_event(slow)
    assert lagged.type == "lagged" and lagged.skipped == 35
    assert lagged.id == first[-1].id  # where to resume from
    # Resuming from there (here on another API process) reads the missed events from the store.
    other_process = hub_over(Store(store.db))
    resumed = await other_process.subscribe(alice.org_id, key("key_a"), after=lagged.id)
    replayed = [await next_event(resumed) for _ in range(35)]
    assert [e.documentId for e in replayed] == ids[5:]
    await hub.close()
    await other_process.close()


async def test_a_key_holds_a_bounded_number_of_streams(store: Store, alice: Tenant) -> None:
    hub = hub_over(store, EventLimits(per_key=2))
    first = await hub.subscribe(alice.org_id, key("key_a"))
    await hub.subscribe(alice.org_id, key("key_a"))
    with pytest.raises(TooManyRequests, match="at most 2"):
        await hub.subscribe(alice.org_id, key("key_a"))
    await hub.subscribe(alice.org_id, key("key_b"))  # another key is not affected
    first.close()
    await hub.subscribe(alice.org_id, key("key_a"))  # a closed stream frees its place
    assert hub.subscribers(alice.org_id) == 3
    await hub.close()


async def test_closing_the_hub_ends_every_stream(store: Store, alice: Tenant) -> None:
    hub = hub_over(store)
    subscription = await hub.subscribe(alice.org_id, key("key_a"))
    waiting = asyncio.create_task(subscription.next())
    await asyncio.sleep(0)  # the task runs to its wait
    assert not waiting.done()
    await hub.close()
    assert await asyncio.wait_for(waiting, 2) is None
    assert hub.subscribers() == 0
    late = await hub.subscribe(alice.org_id, key("key_a"))  # while shutting down: ends at once
    assert await late.next(timeout=1) is None


async def test_a_new_subscriber_starts_from_now(store: Store, alice: Tenant) -> None:
    await store.documents.writes.insert_many(alice.org_id, [doc("doc_before")])
    hub = hub_over(store)
    subscription = await hub.subscribe(alice.org_id, key("key_a"))
    await polls(hub, 2)  # polls re-read the recent window, doc_before in it
    # Written by another process, the next event comes through a poll that reads doc_before
    # first: it is the next event all the same.
    await Store(store.db).documents.writes.insert_many(alice.org_id, [doc("doc_after")])
    assert (await next_event(subscription)).documentId == "doc_after"
    await hub.close()


async def test_with_many_workspaces_one_read_serves_all_and_each_gets_only_its_own(
    store: Store,
) -> None:
    """Past ``FEW_WORKSPACES`` the poller reads the window once for every workspace."""
    from persistence.events import FEW_WORKSPACES
    from tests.conftest import make_tenant

    tenants = [
        await make_tenant(store, f"t{n}@example.com", f"T{n}") for n in range(FEW_WORKSPACES + 2)
    ]
    hub = hub_over(store)
    subscriptions = [await hub.subscribe(t.org_id, key(f"key_{n}")) for n, t in enumerate(tenants)]
    other_process = Store(store.db)  # the poller's path, not the fast path
    reads: list[dict[str, object]] = []
    collection = store.documents.events._col
    find = collection.find

    def counted_find(selector: dict[str, object], *args: object, **kwargs: object) -> object:
        reads.append(selector)
        return find(selector, *args, **kwargs)

    collection.find = counted_find
    for n, tenant in enumerate(tenants):
        await other_process.documents.writes.insert_many(tenant.org_id, [doc(f"doc_{n}")])
    for n, subscription in enumerate(subscriptions):
        assert (await next_event(subscription)).documentId == f"doc_{n}"
    # Nobody got another's: each one's next event is a later write of its own, read by a poll
    # that read every other workspace's first.
    for n, tenant in enumerate(tenants):
        await other_process.documents.writes.insert_many(tenant.org_id, [doc(f"doc_{n}_later")])
    for n, subscription in enumerate(subscriptions):
        assert (await next_event(subscription)).documentId == f"doc_{n}_later"
    assert reads and all("workspaceId" not in selector for selector in reads)  # by _id only
    await hub.close()


async def test_events_held_during_a_resumption_are_bounded_too(store: Store, alice: Tenant) -> None:
    hub = hub_over(store, EventLimits(queue=2, poll_interval=0.02, heartbeat=0.5))
    resuming = Subscription(hub, alice.org_id, key("key_a"), size=2)
    resuming._held = []  # as while ``_replay`` reads the store
    for n in range(5):
        resuming.push(
            DocumentEvent.model_validate(
                {"id": f"{n:024x}", "type": "document.updated", "at": "2026-01-01T00:00:00Z"}
            )
        )
    assert len(resuming._held) == 2 and resuming.skipped == 3
    await hub.close()
