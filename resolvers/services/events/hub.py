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
  processes and of other API replicas). It re-reads a short window (``lookback`` before the
  start of its last whole read), because writes of several processes may land out of id order,
  and drops what it has delivered.

What a subscriber costs is bounded: its queue holds at most ``queue`` events (one object
shared by every subscriber); a subscriber that falls behind has the events past that dropped
and then one ``lagged`` event saying how many, whose id is the last event it did receive (a
stream resumed from there reads the missed ones from the store). A key holds at most
``per_key`` open subscriptions per process, a person ``per_member`` whatever their keys, a
workspace ``per_workspace`` whatever its members (429 past each).

A subscription follows its authorization (``resolvers.services.events.stream_access``): the hub
keeps an ``AccessWatch`` for each, flagged at once by a change made in this process and, through the
poller (one more query per poll), by one made in another; a flagged subscription stops
delivering and re-checks before its next event.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import Counter, deque
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from bson import ObjectId
from pydantic import ValidationError

from domain.events import EventType
from persistence.access_changes import PAGE as ACCESS_PAGE
from persistence.access_changes import AccessChange
from persistence.documents import FILTER_PATHS
from persistence.events import PAGE, DocumentEventLog, EventRecord, event_id
from persistence.events import RETENTION as EVENTS_KEPT
from persistence.ids import utcnow
from resolvers.framework.context import Context, Credentials, Principal
from resolvers.framework.errors import (
    CapabilityError,
    ServiceUnavailable,
    TooManyRequests,
    capability_error_of,
    store_errors,
)
from resolvers.framework.invoke import authorize
from resolvers.framework.services import Services
from resolvers.services.documents.document_views import ALL_FIELDS, projected_view
from resolvers.services.events.stream_access import (
    AccessSignal,
    AccessWatch,
    AccessWatches,
    Grant,
    check_again,
    grant_now,
    next_check_in,
)
from schema.documents import Document
from schema.events import DocumentEvent

if TYPE_CHECKING:
    from persistence.store import Store
    from resolvers.framework.services import Services

log = logging.getLogger("fincap.events")

# What an event keeps of its stored document for filtered subscriptions: the fields a
# where-clause reads (not the text or the embedding).
FILTER_ROOTS = tuple(dict.fromkeys(path.split(".")[0] for path in FILTER_PATHS))
# Whether a subscription wants an event (a filtered one: ``event_filters.event_filter``).
EventTest = Callable[[DocumentEvent], bool]
# What a subscription needs, like documents.get (the events carry documents).
PERMISSIONS = ("read_documents",)
# An event's document: every field but the edit history (read per document on request).
EVENT_FIELDS = [name for name in ALL_FIELDS if name != "editHistory"]


@dataclass(frozen=True)
class EventLimits:
    """The hub's bounds and timings (``FINCAP_EVENTS_*`` settings)."""

    queue: int = 256  # events held for one subscriber
    per_key: int = 10  # open subscriptions of one API key or token family, per process
    per_member: int = 20  # open subscriptions of one person, whatever their keys
    per_workspace: int = 100  # open subscriptions in one workspace, whatever its members
    poll_interval: float = 0.2  # seconds between the poller's reads
    lookback: timedelta = timedelta(seconds=5)  # how far back each poll reads again
    heartbeat: float = 15.0  # seconds of silence before a stream says it is alive
    # Seconds between a stream's own re-checks of its authorization from the store (changes
    # reach it sooner: see stream_access); a bound, should a change record be lost.
    recheck: float = 60.0


class Ticks:
    """Counts something that happens again and again (the poller's reads of access changes),
    so that a test can wait for the next ones instead of sleeping."""

    def __init__(self) -> None:
        self.count = 0
        self._changed = asyncio.Event()

    def tick(self) -> None:
        self.count += 1
        self._changed.set()

    async def wait_for(self, more: int) -> None:
        target = self.count + more
        while self.count < target:
            self._changed.clear()
            await self._changed.wait()


class Subscription:
    """One subscriber's queue of events of one workspace; iterate it for the events (it ends
    when closed: the client left, or the process shuts down)."""

    def __init__(
        self,
        hub: EventHub,
        workspace_id: str,
        principal: Principal,
        size: int,
        access: AccessWatch | None = None,
        accepts: EventTest | None = None,
    ) -> None:
        self.hub = hub
        self.workspace_id = workspace_id
        self.key_id = principal.key_id
        self.user_id = principal.user_id
        self.size = size
        self.closed = False
        # Which events it wants (a filtered subscription, ``event_filters``); None: all. Tested
        # before an event is queued, so the queue's bound counts only the wanted ones.
        self.accepts = accepts
        # What its authorization rests on; flagged, the subscription delivers nothing more
        # until it is checked again (``watch``). What it was granted when it opened.
        self.access = access
        self.grant: Grant | None = None
        self.recheck_in = hub.limits.recheck
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
        if access is not None:
            access.on_change(self._ready.set)

    def __len__(self) -> int:
        return len(self._items)

    def push(self, event: DocumentEvent) -> None:
        """Queue ``event``; past the queue's size, drop it (and everything until the queue is
        read empty) and count it."""
        if self.closed or event.id in self.before:
            return
        if self.accepts is not None and not self.accepts(event):
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
        after ``timeout`` seconds without one; ``AccessSignal`` (before any event) when its
        authorization may have changed."""
        while True:
            if self.access is not None and self.access.changed and not self.closed:
                raise AccessSignal
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
        self._per_member: Counter[str] = Counter()
        # Live streams' and sockets' authorizations (stream_access), and the callbacks told of
        # the changes other processes made (the auth cache forgets what they touch).
        self.access = AccessWatches()
        self.on_access_change: list[Callable[[AccessChange], None]] = []
        self.access_read = Ticks()
        self._access_seen: dict[ObjectId, datetime] = {}
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
        self,
        workspace_id: str,
        principal: Principal,
        after: str | None = None,
        accepts: EventTest | None = None,
    ) -> Subscription:
        """A new subscription to the workspace's events, from now on, or from the event after
        ``after`` when it is still stored (a resumed stream); only those ``accepts`` passes,
        when given. The caller is authorized already (``open_stream``); ``TooManyRequests``
        past ``per_key`` open ones of its key, ``per_member`` of its person or
        ``per_workspace`` in the workspace."""
        self.check_caps(workspace_id, principal)
        if self._closed:  # shutting down: a stream that ends at once (the client reconnects)
            subscription = Subscription(self, workspace_id, principal, self.limits.queue)
            subscription.closed = True
            return subscription
        access = self.access.watch(principal, workspace_id)
        subscription = Subscription(
            self, workspace_id, principal, self.limits.queue, access, accepts
        )
        self._per_key[principal.key_id] += 1
        self._per_member[principal.user_id] += 1
        self._subscribers.setdefault(workspace_id, set()).add(subscription)
        try:
            self._start_poller()
            resume_from = event_id(after) if after else None
            if resume_from is not None and resume_from.generation_time <= utcnow():
                await self._replay(subscription, resume_from)
            else:  # none, or from the future: from now on
                await self._start_now(subscription)
        except BaseException:
            subscription.close()  # its places under the caps are given back
            raise
        return subscription

    def check_caps(self, workspace_id: str, principal: Principal) -> None:
        limits = self.limits
        for held, most, whose in (
            (self._per_key[principal.key_id], limits.per_key, "This key"),
            (self._per_member[principal.user_id], limits.per_member, "This member"),
            (len(self._subscribers.get(workspace_id, ())), limits.per_workspace, "This workspace"),
        ):
            if held >= most:
                raise TooManyRequests(
                    f"{whose} already has {held} open event streams (at most {most}); "
                    "close one first",
                    retry_after=limits.heartbeat.__ceil__(),
                )

    def watch_access(self, principal: Principal, workspace_id: str) -> AccessWatch:
        """Watch an authorization that is not a subscription's (a GraphQL WebSocket's);
        ``unwatch`` it when done. The poller runs meanwhile, to read other processes'
        changes."""
        watch = self.access.watch(principal, workspace_id)
        if not self._closed:
            self._start_poller()
        return watch

    def unwatch(self, watch: AccessWatch) -> None:
        self.access.forget(watch)

    def credential_ended(self, key_id: str) -> None:
        """This process revoked a key or grant (the store's ``on_revoke``)."""
        self.access.credential_ended(key_id)

    def membership_changed(self, user_id: str, workspace_id: str) -> None:
        """This process changed a membership (the store's ``on_membership_change``)."""
        self.access.membership_changed(user_id, workspace_id)

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
        for counter, key in (
            (self._per_key, subscription.key_id),
            (self._per_member, subscription.user_id),
        ):
            counter[key] -= 1
            if counter[key] <= 0:
                del counter[key]
        if subscription.access is not None:
            self.access.forget(subscription.access)

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
            found = await self._store.documents.reads.loaded_many(workspace_id, ids)
        documents: dict[str, Document] = {}
        stored_by_id: dict[str, dict[str, Any]] = {}
        for loaded in found:
            try:
                view = projected_view(loaded.document, EVENT_FIELDS, self._base_url)
                documents[loaded.id] = Document.model_validate(view)
                # A subscription's filter is compiled to stored paths: it reads the record.
                fields: dict[str, Any] = dict(loaded.stored)
                stored_by_id[loaded.id] = {r: fields[r] for r in FILTER_ROOTS if r in fields}
            except ValidationError:
                log.exception("a document could not be shown in its event")
        events = []
        for record in records:
            event = DocumentEvent.model_validate(
                {
                    "id": str(record["_id"]),
                    "type": record["type"],
                    "documentId": record["documentId"],
                    "at": record["at"],
                    "document": documents.get(record["documentId"]),
                }
            )
            # Shared by every subscription of the workspace (a reference, not a copy).
            event._stored = stored_by_id.get(record["documentId"])
            events.append(event)
        return events

    async def _replay(self, subscription: Subscription, after: ObjectId) -> None:
        """Push the stored events after ``after``, then the live ones that arrived meanwhile.

        Ids of one process sort in the order it wrote them, but within a second another
        process's may sort before ``after`` and still be news: those of the second before are
        sent again too (a repeated event is harmless: each carries the document as it is).
        """
        subscription._held = []
        # From the second before ``after`` (no earlier than events are kept: an id of 1970
        # is no reason to read the whole collection).
        since = max(after.generation_time - timedelta(seconds=1), utcnow() - EVENTS_KEPT)
        floor = ObjectId.from_datetime(since)
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
        """Read what is new for the subscribed workspaces, and the access changes other
        processes made, until no stream or socket is left."""
        # Each poll reads back ``lookback`` from the start of the last poll that read the
        # window whole, not from its own start: a poll slower than ``lookback`` (a machine
        # starved of CPU, a large burst) would otherwise leave the events written while it ran
        # in a gap no window covers.
        covered_from: datetime | None = None
        while (self._subscribers or len(self.access)) and not self._closed:
            started = utcnow()
            since = (covered_from or started) - self.limits.lookback
            try:
                await self._read_access_changes(since)
            except Exception:
                log.exception("reading access changes failed")
            try:
                async for records in self._window(list(self._subscribers), since):
                    await self._deliver(records)
                covered_from = started
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

    async def _read_access_changes(self, since: datetime) -> None:
        """Flag the watches the access changes of the window touch (re-read each poll, as
        events are: writes of several processes may land out of id order)."""
        changes = await self._store.access_changes.since(ObjectId.from_datetime(since))
        if len(changes) >= ACCESS_PAGE:
            # More changes than a page in a few seconds: re-check every stream rather than
            # risk missing one.
            self.access.everything_changed()
        for change in changes:
            if change["_id"] in self._access_seen:
                continue
            self._access_seen[change["_id"]] = change["_id"].generation_time
            if "keyId" in change:
                self.access.credential_ended(change["keyId"])
            else:
                self.access.membership_changed(change["userId"], change["workspaceId"])
            for listener in self.on_access_change:
                listener(change)
        for seen_id, at in list(self._access_seen.items()):
            if at >= since - self.limits.lookback:
                break
            del self._access_seen[seen_id]
        self.access_read.tick()

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


def hub_of(services: Services) -> EventHub:
    """The process's event hub, as this module's class: the container names it by the part the
    framework and a server's stop call (``LiveEvents``); subscribing and watching an
    authorization are this room's. ``build_services`` puts no other kind there."""
    hub = services.events
    assert isinstance(hub, EventHub), hub
    return hub


async def open_stream(
    credentials: Credentials,
    services: Services,
    after: str | None = None,
    accepts: EventTest | None = None,
) -> tuple[Context, Subscription]:
    """Authorize a subscriber like a documents query (401, 400/403 workspace, 403 without
    ``read_documents``), from the store rather than the auth cache, and subscribe it to its
    workspace's events. The caps are checked first on the cached authorization: a flood of
    streams past them costs no store read (1,000 at once held another workspace's calls up to
    6 s when each was read from the store first)."""
    hub = hub_of(services)
    known = await authorize(credentials, services, PERMISSIONS, needs_workspace=True)
    hub.check_caps(known.require_workspace(), known.principal)
    ctx = await authorize(credentials, services, PERMISSIONS, needs_workspace=True, fresh=True)
    # A store lost while the stream opens (its grant, the events it resumes from or already
    # knows) is the 503 every other read answers, not an unexpected error.
    with store_errors():
        grant = await grant_now(ctx, PERMISSIONS, services)
        subscription = await hub.subscribe(ctx.require_workspace(), ctx.principal, after, accepts)
    subscription.grant = grant
    subscription.recheck_in = next_check_in(ctx.principal, hub.limits.recheck)
    return ctx, subscription


async def watch(
    subscription: Subscription, credentials: Credentials, services: Services
) -> AsyncIterator[DocumentEvent | None]:
    """The subscription's events, and None after each ``heartbeat`` seconds of silence (a
    stream sends something so that proxies keep it open), until it ends.

    Its authorization is checked again, from the store, whenever a change may have touched it
    (``stream_access``: at once for this process's changes, within a poll for another's), and
    every ``recheck`` seconds in any case, however busy the stream. A check that fails raises
    its ``CapabilityError`` (after the subscription is closed), which the face shows as the
    stream's last message; no event is delivered between the change and the check.
    """
    limits = hub_of(services).limits
    loop = asyncio.get_running_loop()
    check_at = loop.time() + subscription.recheck_in
    quiet_until = loop.time() + limits.heartbeat
    try:
        while True:
            access = subscription.access
            if (access is not None and access.changed) or loop.time() >= check_at:
                if access is not None:
                    access.changed = False
                assert subscription.grant is not None
                await check_again(credentials, services, PERMISSIONS, subscription.grant)
                check_at = loop.time() + limits.recheck
            try:
                wait = max(0.0, min(quiet_until, check_at) - loop.time())
                event = await subscription.next(timeout=wait)
            except AccessSignal:
                continue
            except TimeoutError:
                if loop.time() >= quiet_until:
                    quiet_until = loop.time() + limits.heartbeat
                    yield None
                continue
            if event is None:
                return
            quiet_until = loop.time() + limits.heartbeat
            yield event
    finally:
        subscription.close()
