"""Live document events: ``publish`` and ``subscribe``, one hub per process.

Every change of a document appends an event where it is written (``persistence.events``, from
the documents repository), in whichever process writes it. An API process keeps one
``EventHub``: its subscribers (GraphQL ``documentEvents``, ``GET /v1/events``) each hold a
``Subscription``; the hub fans every event of a workspace out to that workspace's
subscriptions, each event rendered once (the document as ``documents.get`` shows it).

Events reach the hub two ways (docs/architecture/decisions.md, "Live events"):

- the fast path: a write made in this process hands its events to the hub as soon as they are
  stored (``DocumentEventLog.on_append``), so an upload processed by the in-process workers
  reaches its uploader without waiting for a poll;
- the poller: one task per process, running only while the process has subscribers, reads the
  events of the subscribed workspaces every ``poll_interval`` (writes of ``fincap worker``
  processes and of other API replicas). It re-reads a short window (``lookback``), because
  writes of several processes may land out of id order, and drops what it has delivered.

What a subscriber costs is bounded: its queue holds at most ``queue`` events (one object
shared by every subscriber); a subscriber that falls behind has the events past that dropped
and then one ``lagged`` event saying how many, whose id is the last event it did receive (a
stream resumed from there reads the missed ones from the store). A key holds at most
``per_key`` open subscriptions per process (429 past that).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import Counter, deque
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from bson import ObjectId
from pydantic import ValidationError

from domain.events import EventType
from persistence.events import PAGE, DocumentEventLog, EventRecord, event_id
from persistence.ids import utcnow
from resolvers.framework.context import Context, Credentials
from resolvers.framework.errors import (
    CapabilityError,
    ServiceUnavailable,
    TooManyRequests,
    capability_error_of,
    store_errors,
)
from resolvers.framework.invoke import authorize
from resolvers.services.document_views import ALL_FIELDS, projected_view
from schema.documents import Document
from schema.events import DocumentEvent

if TYPE_CHECKING:
    from persistence.store import Store
    from resolvers.services.container import Services

log = logging.getLogger("fincap.events")

# What a subscription needs, like documents.get (the events carry documents).
PERMISSIONS = ("read_documents",)
# An event's document: every field but the edit history (read per document on request).
EVENT_FIELDS = [name for name in ALL_FIELDS if name != "editHistory"]


@dataclass(frozen=True)
class EventLimits:
    """The hub's bounds and timings (``FINCAP_EVENTS_*`` settings)."""

    queue: int = 256  # events held for one subscriber
    per_key: int = 10  # open subscriptions of one API key or token family, per process
    poll_interval: float = 0.2  # seconds between the poller's reads
    lookback: timedelta = timedelta(seconds=5)  # how far back each poll reads again
    heartbeat: float = 15.0  # seconds of silence before a stream says it is alive


class Subscription:
    """One subscriber's queue of events of one workspace; iterate it for the events (it ends
    when closed: the client left, or the process shuts down)."""

    def __init__(self, hub: EventHub, workspace_id: str, key_id: str, size: int) -> None:
        self.hub = hub
        self.workspace_id = workspace_id
        self.key_id = key_id
        self.size = size
        self.closed = False
        # Events it has had or must not have: stored before it subscribed (within the poller's
        # window), or read from the store when it resumed. Bounded by the window's events.
        self.before: set[str] = set()
        # The id of the last event handed out: where a resumed stream goes on from.
        self.last_id = ""
        self.skipped = 0
        self._items: deque[DocumentEvent] = deque()
        self._lagging = False
        self._ready = asyncio.Event()
        # Why the subscription ended, when it was not the client's leaving (the store went
        # away): ``next`` raises it once the queued events are read.
        self.error: CapabilityError | None = None
        # While a resumed stream reads the stored events, live ones wait here.
        self._held: list[DocumentEvent] | None = None

    def __len__(self) -> int:
        return len(self._items)

    def push(self, event: DocumentEvent) -> None:
        """Queue ``event``; past the queue's size, drop it (and everything until the queue is
        read empty) and count it."""
        if self.closed or event.id in self.before:
            return
        if self._held is not None:
            if len(self._held) < self.size:
                self._held.append(event)
            else:  # held as long as the queue would: bounded the same way
                self._lagging = True
                self.skipped += 1
            return
        if self._lagging or len(self._items) >= self.size:
            self._lagging = True
            self.skipped += 1
        else:
            self._items.append(event)
        self._ready.set()

    async def next(self, timeout: float | None = None) -> DocumentEvent | None:
        """The next event; None when the subscription has ended. ``asyncio.TimeoutError``
        after ``timeout`` seconds without one."""
        while True:
            if self._items:
                event = self._items.popleft()
                self.last_id = event.id
                return event
            if self._lagging:
                skipped, self.skipped, self._lagging = self.skipped, 0, False
                return DocumentEvent.model_validate(
                    {"id": self.last_id, "type": "lagged", "at": utcnow(), "skipped": skipped}
                )
            if self.closed:
                if self.error is not None:
                    raise self.error
                return None
            self._ready.clear()
            await asyncio.wait_for(self._ready.wait(), timeout)

    def __aiter__(self) -> AsyncIterator[DocumentEvent]:
        return self._events()

    async def _events(self) -> AsyncIterator[DocumentEvent]:
        try:
            while (event := await self.next()) is not None:
                yield event
        finally:
            self.close()

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self._ready.set()
            self.hub.forget(self)

    def fail(self, error: CapabilityError) -> None:
        """End the subscription with ``error``: its reader gets the events already queued,
        then the error (a stream sends it as its last message)."""
        if not self.closed:
            self.error = error
            self.close()


class EventHub:
    """The process's live events: ``publish``, ``subscribe``, and the fan-out between them."""

    def __init__(self, store: Store, base_url: str, limits: EventLimits | None = None) -> None:
        self.limits = limits or EventLimits()
        self._store = store
        self._log: DocumentEventLog = store.documents.events
        self._base_url = base_url
        self._subscribers: dict[str, set[Subscription]] = {}
        self._per_key: Counter[str] = Counter()
        # Event ids delivered (or being delivered), in arrival order, with their time: the
        # poller's window is re-read, and the fast path and the poller both see local writes.
        self._seen: dict[ObjectId, datetime] = {}
        self._poller: asyncio.Task[None] | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._closed = False
        self._log.on_append.append(self.offer)

    # -- the interface -------------------------------------------------------------------------

    async def publish(
        self, workspace_id: str, event_type: EventType, document_ids: Sequence[str]
    ) -> list[str]:
        """Tell the workspace's subscribers, on every process, that ``event_type`` happened to
        ``document_ids``; the events' ids. (Document writes publish by themselves.)"""
        return [
            str(r["_id"]) for r in await self._log.append(workspace_id, event_type, document_ids)
        ]

    async def subscribe(
        self, workspace_id: str, key_id: str, after: str | None = None
    ) -> Subscription:
        """A new subscription to the workspace's events, from now on, or from the event after
        ``after`` when it is still stored (a resumed stream). The caller is authorized already
        (``open_stream``); ``TooManyRequests`` past ``per_key`` open ones of ``key_id``."""
        if self._per_key[key_id] >= self.limits.per_key:
            raise TooManyRequests(
                f"This key already has {self._per_key[key_id]} open event streams "
                f"(at most {self.limits.per_key}); close one first",
                retry_after=self.limits.heartbeat.__ceil__(),
            )
        subscription = Subscription(self, workspace_id, key_id, self.limits.queue)
        if self._closed:  # shutting down: a stream that ends at once (the client reconnects)
            subscription.closed = True
            return subscription
        self._per_key[key_id] += 1
        self._subscribers.setdefault(workspace_id, set()).add(subscription)
        self._start_poller()
        resume_from = event_id(after) if after else None
        if resume_from is not None:
            await self._replay(subscription, resume_from)
        else:
            await self._start_now(subscription)
        return subscription

    async def _start_now(self, subscription: Subscription) -> None:
        """Tell ``subscription`` what happens from now on: the events still in the poller's
        window are marked as known to it (the poller would deliver them otherwise)."""
        subscription._held = []
        try:
            since = utcnow() - self.limits.lookback
            async for known in self._window([subscription.workspace_id], since):
                subscription.before.update(str(record["_id"]) for record in known)
        finally:
            held, subscription._held = subscription._held, None
            for event in held:
                subscription.push(event)

    async def close(self) -> None:
        """End every subscription (their streams finish) and stop polling: the process is
        shutting down."""
        self._closed = True
        for subscriptions in list(self._subscribers.values()):
            for subscription in list(subscriptions):
                subscription.close()
        if self._poller is not None:
            self._poller.cancel()
        for task in [*self._tasks, *([self._poller] if self._poller else [])]:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    def _fail_all(self, error: Callable[[], CapabilityError]) -> None:
        """End every subscription with an ``error()`` of its own (each is raised in its own
        reader's task)."""
        for subscriptions in list(self._subscribers.values()):
            for subscription in list(subscriptions):
                subscription.fail(error())

    # -- bookkeeping -------------------------------------------------------------------------

    def subscribers(self, workspace_id: str | None = None) -> int:
        """How many subscriptions are open (of one workspace)."""
        if workspace_id is not None:
            return len(self._subscribers.get(workspace_id, ()))
        return sum(len(s) for s in self._subscribers.values())

    def forget(self, subscription: Subscription) -> None:
        subscriptions = self._subscribers.get(subscription.workspace_id)
        if subscriptions is None or subscription not in subscriptions:
            return
        subscriptions.discard(subscription)
        if not subscriptions:
            del self._subscribers[subscription.workspace_id]
        self._per_key[subscription.key_id] -= 1
        if self._per_key[subscription.key_id] <= 0:
            del self._per_key[subscription.key_id]

    # -- delivery ------------------------------------------------------------------------------

    def offer(self, records: Sequence[EventRecord]) -> None:
        """The fast path: events just stored by this process."""
        if self._closed or not any(r["workspaceId"] in self._subscribers for r in records):
            return
        task = asyncio.get_running_loop().create_task(self._deliver(records))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _deliver(self, records: Sequence[EventRecord]) -> None:
        """Send each record not sent yet to its workspace's subscriptions, rendered once."""
        fresh = [
            r
            for r in records
            if r["_id"] not in self._seen and r["workspaceId"] in self._subscribers
        ]
        for record in fresh:  # marked before the first await: a second path skips them
            self._seen[record["_id"]] = record["_id"].generation_time
        by_workspace: dict[str, list[EventRecord]] = {}
        for record in fresh:
            by_workspace.setdefault(record["workspaceId"], []).append(record)
        for workspace_id, batch in by_workspace.items():
            try:
                events = await self._render(workspace_id, batch)
            except Exception:
                log.exception("rendering events failed", extra={"workspaceId": workspace_id})
                continue
            for subscription in list(self._subscribers.get(workspace_id, ())):
                for event in events:
                    subscription.push(event)

    async def _render(
        self, workspace_id: str, records: Sequence[EventRecord]
    ) -> list[DocumentEvent]:
        """The records as events, each with its document as it is now (one read for all)."""
        ids = list(dict.fromkeys(r["documentId"] for r in records))
        with store_errors():
            found = await self._store.documents.get_many(workspace_id, ids)
        documents: dict[str, Document] = {}
        for stored in found:
            try:
                view = projected_view(stored, EVENT_FIELDS, self._base_url)
                documents[stored["_id"]] = Document.model_validate(view)
            except ValidationError:
                log.exception("a document could not be shown in its event")
        return [
            DocumentEvent.model_validate(
                {
                    "id": str(record["_id"]),
                    "type": record["type"],
                    "documentId": record["documentId"],
                    "at": record["at"],
                    "document": documents.get(record["documentId"]),
                }
            )
            for record in records
        ]

    async def _replay(self, subscription: Subscription, after: ObjectId) -> None:
        """Push the stored events after ``after``, then the live ones that arrived meanwhile.

        Ids of one process sort in the order it wrote them, but within a second another
        process's may sort before ``after`` and still be news: those of the second before are
        sent again too (a repeated event is harmless: each carries the document as it is).
        """
        subscription._held = []
        floor = ObjectId.from_datetime(after.generation_time - timedelta(seconds=1))
        try:
            while not subscription.closed:
                page = await self._log.after(subscription.workspace_id, floor, PAGE)
                floor = page[-1]["_id"] if page else floor
                page = [r for r in page if r["_id"] > after or _other_process(r["_id"], after)]
                events = await self._render(subscription.workspace_id, page)
                held, subscription._held = subscription._held, None
                recent = utcnow() - 2 * self.limits.lookback
                for event, record in zip(events, page, strict=True):
                    subscription.push(event)
                    # Read from the store: the poller may still bring it (it re-reads its
                    # window), and it is not news then. Older ones it will not bring.
                    if record["_id"].generation_time >= recent:
                        subscription.before.add(event.id)
                subscription._held = held
                if len(page) < PAGE or subscription._lagging:
                    break
        finally:
            held, subscription._held = subscription._held or [], None
            for event in held:
                subscription.push(event)

    def _start_poller(self) -> None:
        if self._poller is None or self._poller.done():
            self._poller = asyncio.get_running_loop().create_task(self._poll())

    async def _poll(self) -> None:
        """Read what is new for the subscribed workspaces until none is left."""
        while self._subscribers and not self._closed:
            since = utcnow() - self.limits.lookback
            try:
                async for records in self._window(list(self._subscribers), since):
                    await self._deliver(records)
            except Exception as exc:
                if isinstance(capability_error_of(exc), ServiceUnavailable):
                    # The store is away: every stream says so and ends (its client resumes
                    # from its last id once the store is back), rather than staying open
                    # with nothing to say.
                    log.warning("store unavailable: ending the live event streams")
                    self._fail_all(ServiceUnavailable)
                    return
                # Anything else: try again at the next tick, the window covers the gap.
                log.exception("reading new events failed")
            for seen_id, at in list(self._seen.items()):
                if at >= since - self.limits.lookback:
                    break
                del self._seen[seen_id]
            await asyncio.sleep(self.limits.poll_interval)

    async def _window(
        self, workspace_ids: list[str], since: datetime
    ) -> AsyncIterator[list[EventRecord]]:
        """The stored events of ``workspace_ids`` since ``since``, a page at a time."""
        after: ObjectId | None = None
        while not self._closed:
            window = await self._log.recent(workspace_ids, since, after=after)
            yield window.records
            if window.more_after is None:
                return
            after = window.more_after


def _other_process(one: ObjectId, other: ObjectId) -> bool:
    """Whether two ids were made by different processes (an ObjectId's bytes 4-8 are its
    process's random value)."""
    return one.binary[4:9] != other.binary[4:9]


async def open_stream(
    credentials: Credentials, services: Services, after: str | None = None
) -> tuple[Context, Subscription]:
    """Authorize a subscriber like a documents query (401, 400/403 workspace, 403 without
    ``read_documents``) and subscribe it to its workspace's events."""
    ctx = await authorize(credentials, services, PERMISSIONS, needs_workspace=True)
    subscription = await services.events.subscribe(
        ctx.require_workspace(), ctx.principal.key_id, after
    )
    return ctx, subscription


async def watch(
    subscription: Subscription, credentials: Credentials, services: Services
) -> AsyncIterator[DocumentEvent | None]:
    """The subscription's events, and None after each ``heartbeat`` seconds of silence (a
    stream sends something so that proxies keep it open), until it ends. At each heartbeat the
    credentials are checked again: a revoked key or a removed member stops receiving within a
    heartbeat and the auth cache's time, and the stream ends."""
    heartbeat = services.events.limits.heartbeat
    try:
        while True:
            try:
                event = await subscription.next(timeout=heartbeat)
            except TimeoutError:
                try:
                    await authorize(credentials, services, PERMISSIONS, needs_workspace=True)
                except ServiceUnavailable:
                    raise  # the stream ends saying why
                except CapabilityError:
                    return
                yield None
                continue
            if event is None:
                return
            yield event
    finally:
        subscription.close()
