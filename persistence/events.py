"""The ``events`` collection: what happened to a workspace's documents, in order, for a while.

One record per change of one document (``document.created``, ``document.processed``,
``document.updated``, ``document.archived``, ``document.unarchived``), written by the documents
repository in the same call as the change (``persistence.documents.writes``), whichever process
makes it: the API, a ``fincap worker``, the in-process workers. Readers are the event hubs of
the API processes (``resolvers.services.events.hub``): one poller per process reads what is new for
the workspaces it has subscribers in; a stream resumed after a disconnect reads from its last id.

Why a plain collection (docs/architecture/decisions.md, "Live events"): the embedded server has
no change streams (they need a replica set) and its tailable cursors die on the first empty
wait, so neither reaches every replica on every deployment; a collection read by ``_id`` works
on both stores. Records expire after ``RETENTION`` (a TTL index), which bounds resumption.

The record's ``_id`` is an ObjectId made by the writer: its order is time order to the second,
and within one second the order of one process's writes. The readers allow for writes of
several processes landing out of order (``recent`` re-reads a short window; the hub drops what
it has seen).
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Collection, Sequence
from datetime import datetime, timedelta
from typing import NamedTuple, TypedDict, cast

from bson import ObjectId
from motor.motor_asyncio import AsyncIOMotorDatabase
from pymongo import ASCENDING, IndexModel
from pymongo.errors import PyMongoError

from domain.events import EventType
from persistence.ids import utcnow
from persistence.units import after_commit, in_unit, joined
from persistence.where import QUERY_TIME_LIMIT_MS

log = logging.getLogger("fincap.events")

# How long events stay readable: a client away for longer resumes with a fresh read.
RETENTION = timedelta(hours=24)
# Up to this many subscribed workspaces the poller reads each one's events (``recent``).
FEW_WORKSPACES = 8
# Read at most this many events at once (a poll, a resumption): a burst (a bulk edit of
# thousands) is read in pages rather than held whole.
PAGE = 500

INDEXES = [
    # A workspace's events in order: resumption, and the poller's read per workspace.
    IndexModel([("workspaceId", ASCENDING), ("_id", ASCENDING)], name="workspace_order"),
    IndexModel(
        [("at", ASCENDING)], name="retention", expireAfterSeconds=int(RETENTION.total_seconds())
    ),
]


class EventRecord(TypedDict):
    """One stored event."""

    _id: ObjectId
    workspaceId: str
    type: EventType
    documentId: str
    at: datetime


Listener = Callable[[Sequence[EventRecord]], None]


class Window(NamedTuple):
    """A page of the poller's read, and where the next page starts (None: nothing more)."""

    records: list[EventRecord]
    more_after: ObjectId | None


class DocumentEventLog:
    """The ``events`` collection; the workspace id is the first argument of every write.

    Besides the day's TTL, one workspace keeps at most ``kept_per_workspace`` events (its
    newest): every ``trim_every`` events a process appends for a workspace, it deletes that
    workspace's older ones (one indexed read for the boundary, one delete), so a workspace's
    bulk edits cannot make the store keep events without bound. A stream resumed from before
    the boundary reads from the oldest kept.
    """

    kept_per_workspace = 100_000
    trim_every = 1_000

    def __init__(self, db: AsyncIOMotorDatabase) -> None:
        # Joined: a document's event is written in the unit that writes the document.
        self._col = joined(db["events"])
        self._since_trim: dict[str, int] = {}
        # Called with every batch appended through this process, after it is stored: the event
        # hub's fast path, so a subscriber in the writing process does not wait for a poll.
        self.on_append: list[Listener] = []

    async def ensure_indexes(self) -> None:
        await self._col.create_indexes(INDEXES)

    async def append(
        self, workspace_id: str, event_type: EventType, document_ids: Sequence[str]
    ) -> list[EventRecord]:
        """Store one ``event_type`` event per document (in that order); the stored records.

        Never raises for a store error: the change the event reports is already written, and
        failing its caller now would report a failure that did not happen. The loss is logged;
        a subscriber sees the document's state with its next event or read.
        """
        if not document_ids:
            return []
        at = utcnow()
        records = [
            EventRecord(
                _id=ObjectId(),
                workspaceId=workspace_id,
                type=event_type,
                documentId=document_id,
                at=at,
            )
            for document_id in document_ids
        ]
        try:
            await self._col.insert_many(records, ordered=True)
        except PyMongoError:
            if in_unit():
                raise  # the unit fails whole: the change it reports is not written either
            log.exception(
                "storing document events failed; subscribers miss them",
                extra={"workspaceId": workspace_id, "type": event_type},
            )
            return []
        for listener in self.on_append:
            # Inside a unit, subscribers hear of it once it is committed (readable).
            after_commit(functools.partial(listener, records))
        appended = self._since_trim.get(workspace_id, 0) + len(records)
        if appended >= self.trim_every:
            appended = 0
            # After the unit's commit, outside its transaction: a trim is no part of the change.
            trim = after_commit(functools.partial(self._trim, workspace_id))
            if trim is not None:
                await trim
        self._since_trim[workspace_id] = appended
        return records

    async def _trim(self, workspace_id: str) -> None:
        """Delete the workspace's events older than its ``kept_per_workspace`` newest."""
        try:
            boundary = (
                await self._col.find({"workspaceId": workspace_id}, {"_id": 1})
                .sort("_id", -1)
                .skip(self.kept_per_workspace)
                .limit(1)
                .to_list(1)
            )
            if boundary:
                await self._col.delete_many(
                    {"workspaceId": workspace_id, "_id": {"$lte": boundary[0]["_id"]}}
                )
        except PyMongoError:
            log.exception("trimming stored events failed", extra={"workspaceId": workspace_id})

    async def after(
        self, workspace_id: str, after: ObjectId, limit: int = PAGE
    ) -> list[EventRecord]:
        """The workspace's events from ``after`` on (exclusive), oldest first."""
        cursor = (
            self._col.find(
                {"workspaceId": workspace_id, "_id": {"$gt": after}},
                max_time_ms=QUERY_TIME_LIMIT_MS,
            )
            .sort("_id", ASCENDING)
            .limit(limit)
        )
        return cast(list[EventRecord], await cursor.to_list(None))

    async def recent(
        self,
        workspace_ids: Collection[str],
        since: datetime,
        limit: int = PAGE,
        after: ObjectId | None = None,
    ) -> Window:
        """Events of ``workspace_ids`` made at or after ``since`` (by their id's time; from
        ``after`` on when given), oldest first: the poller's read, a page at a time. When a page
        was full, ``more_after`` says where the next read starts (a burst of more than a page
        between two polls is read whole, not cut at the page).

        For a few workspaces, one query each (a flat filter, which the embedded server plans
        onto ``workspace_order``; an ``$in`` over workspaces it would not). For more, one read
        of the window by ``_id`` whatever the workspace, kept to ``workspace_ids`` here: a
        process with subscribers in hundreds of workspaces makes one query per poll, not
        hundreds. Nothing leaves this method for a workspace not asked for.
        """
        floor = after or ObjectId.from_datetime(since)
        if len(workspace_ids) <= FEW_WORKSPACES:
            found: list[EventRecord] = []
            full: list[ObjectId] = []
            for workspace_id in workspace_ids:
                page = await self.after(workspace_id, floor, limit)
                found.extend(page)
                if len(page) >= limit:
                    full.append(page[-1]["_id"])
            # Past the earliest full page's end, another workspace's events may be read
            # again: the hub drops what it has seen.
            return Window(sorted(found, key=lambda record: record["_id"]), min(full, default=None))
        wanted = set(workspace_ids)
        cursor = (
            self._col.find({"_id": {"$gt": floor}}, max_time_ms=QUERY_TIME_LIMIT_MS)
            .sort("_id", ASCENDING)
            .limit(limit * len(wanted))
        )
        window = cast(list[EventRecord], await cursor.to_list(None))
        more = window[-1]["_id"] if len(window) >= limit * len(wanted) else None
        return Window([record for record in window if record["workspaceId"] in wanted], more)


def event_id(value: str) -> ObjectId | None:
    """An event id as a client sends it back (``Last-Event-ID``, ``after``); None when it is not
    one (a client's garbage is a fresh start, not an error)."""
    return ObjectId(value) if ObjectId.is_valid(value) else None
