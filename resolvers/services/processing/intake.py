"""Intake: what a source brings in (an upload, an e-mail, a WhatsApp message, a mailbox's
message) appears whole — its activity item, its documents, their jobs — or not at all.

``take_in`` writes an intake in three steps, each journaled (``persistence.durability``):

1. the intake's record (``persistence.intakes``, ``writing``): the documents' ids, the
   writing process, and the message's key, unique while the record lives;
2. the originals, in GridFS, each under its document's id;
3. the record again, ``committed``, with everything the unit makes (the item, the documents
   as first stored, the jobs) — the one write after which the intake will be whole — and then
   the unit itself (``write_unit``): the item, the documents (with their rollup rows and
   ``document.created`` events) and the jobs, in one transaction that also deletes the record
   (``persistence.units``).

Nothing of an intake is listed, readable, counted or announced before its unit is written,
and all of it is at once. A process killed on the way leaves a ``writing`` record (its
originals are removed: nothing was acknowledged, the sender sends again) or a ``committed`` one
(its unit is written from the record); ``sweep`` settles both, at start-up and every
``SWEEP_EVERY_S`` in every worker process: at once when the writer was a process of this host
that is gone, else once a record is older than any live intake can be (``ABANDONED_AFTER``,
``COMMITTED_AFTER``). On a store without transactions (a standalone MongoDB) the unit's writes
run one after the other (the item first, the record last), so a crash in the middle of them
shows part of a unit until the sweep completes it.

A message is taken once: ``take_in`` with a ``message_id`` answers ``IntakeDuplicate`` (with the
item made of it) when the workspace has an item of that message, or a committed intake of it
(which it completes first); ``IntakeBusy`` when a live process is taking the same message in
right now (the sender tries again later); a half-written intake of it whose writer died is
rolled back and the message taken afresh.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from pymongo.errors import BulkWriteError, DuplicateKeyError

from persistence.activity import Activity
from persistence.ids import new_id, utcnow
from persistence.intakes import IntakeConflict, IntakeRecord, intake_key
from persistence.jobs import owner_gone
from persistence.lease_owners import LeaseOwner
from persistence.units import Unit
from resolvers.framework.errors import ServiceUnavailable

if TYPE_CHECKING:
    from resolvers.framework.services import Services

log = logging.getLogger("fincap.intake")
# A ``writing`` intake lasts as long as storing its originals (tens of megabytes at most): one
# this old whose writer cannot be looked at (another host) is taken for dead.
ABANDONED_AFTER = timedelta(seconds=30)
# A ``committed`` intake is written out by its writer a moment later: one this old is not.
COMMITTED_AFTER = timedelta(seconds=5)
# How often every worker process settles what crashed processes left.
SWEEP_EVERY_S = 5.0
# The source name of documents joining an item that exists (media fetched after the message).
ATTACH = "attach"

DUPLICATE_KEY = 11000

JobsFor = Callable[[str, Sequence[str]], list[dict[str, Any]]]


@dataclass(frozen=True)
class Original:
    """One file a source hands to the pipeline (an attachment, a photo, a message's text)."""

    data: bytes
    file_name: str
    mime_type: str
    fields: Mapping[str, Any] = field(default_factory=dict)  # known up front (fromEmail, …)


class IntakeDuplicate(Exception):
    """The message was taken before: ``item`` is the activity item made of it."""

    def __init__(self, item: dict[str, Any]) -> None:
        super().__init__(f"already taken as {item.get('_id')}")
        self.item = item


class IntakeBusy(Exception):
    """A live process is taking the same message in right now: try again in a moment."""


class _AlreadyWritten(Exception):
    """Another process wrote this unit (the sweep and the writer met): nothing to do."""


@dataclass(frozen=True)
class Swept:
    """What a sweep settled."""

    written: int = 0
    rolled_back: int = 0


def _owner() -> str:
    return LeaseOwner.current().worker("intake")


async def take_in(
    services: Services,
    workspace_id: str,
    *,
    source: str,
    originals: Sequence[Original],
    details: Mapping[str, Any],
    jobs: JobsFor,
    message_id: str | None = None,
    activity_id: str | None = None,
    status: str = "queued",
    reasoning: str = "Received; waiting for processing",
) -> tuple[str, list[str]]:
    """Take one incoming item in, whole: (activity id, document ids).

    ``jobs(activity_id, document_ids)`` are the jobs the unit queues. With ``activity_id`` the
    documents join an item that exists (a message whose media arrived later). Raises
    ``IntakeDuplicate``, ``IntakeBusy`` (see the module) or the store's error; after an error
    nothing of the intake is readable, and it is either rolled back or, committed, written out
    by the sweep.
    """
    store = services.store
    creates = activity_id is None
    unit_activity_id = activity_id or new_id("act")
    document_ids = [new_id("doc") for _ in originals]
    key = None
    if message_id is not None:
        key = intake_key(workspace_id, source, message_id)
    elif not creates:
        key = intake_key(workspace_id, ATTACH, unit_activity_id)
    record = await _begin(
        services, workspace_id, key, unit_activity_id, creates, document_ids, source, message_id
    )
    try:
        stored = [
            await store.files.put(
                workspace_id, document_id, original.data, original.file_name, original.mime_type
            )
            for document_id, original in zip(document_ids, originals, strict=True)
        ]
    except Exception:
        log.exception("storing an intake's originals failed; rolling it back")
        await roll_back(services, record)
        raise
    now = utcnow()
    names = {doc: o.file_name for doc, o in zip(document_ids, originals, strict=True)}
    unit: dict[str, Any] = {
        "activity": Activity.new_item(
            workspace_id,
            source,
            document_ids,
            dict(details),
            status=status,
            reasoning=reasoning,
            message_id=message_id,
            activity_id=unit_activity_id,
        )
        if creates
        else None,
        "documents": [
            {
                **original.fields,
                "_id": document_id,
                "file": file_ref,
                "source": source,
                "receivedAt": now,
                "intakeOrder": order,
                "processingStatus": "queued",
                "activityId": unit_activity_id,
            }
            for order, (document_id, file_ref, original) in enumerate(
                zip(document_ids, stored, originals, strict=True)
            )
        ],
        "documentNames": names if len(originals) > 1 else {},
        "jobs": jobs(unit_activity_id, document_ids),
    }
    if creates and len(originals) > 1:
        unit["activity"]["documentNames"] = names
    async with store.units.open() as session:
        # The unit's session is written down with it: should this process die inside the
        # transaction, whoever finishes the intake ends that session first (what it holds is
        # then free at once, not when the server gives up on it).
        committed = await store.intakes.commit(
            record["_id"], {**unit, "session": session.session_id}
        )
        if committed is None:
            # Taken for dead and rolled back while its originals were still being stored:
            # nothing of it was kept; the sender is told to send it again, as in an outage
            # (503 / SMTP 451), never a 500.
            raise ServiceUnavailable(
                "Storing the upload took too long and nothing of it was kept; send it again"
            )
        await write_unit(services, committed, session)
    services.wake_workers()
    return unit_activity_id, document_ids


async def _begin(
    services: Services,
    workspace_id: str,
    key: str | None,
    activity_id: str,
    creates: bool,
    document_ids: Sequence[str],
    source: str,
    message_id: str | None,
) -> IntakeRecord:
    """The intake's ``writing`` record, once no other intake of the same key stands in the way
    (a committed one is completed and answered as the duplicate it makes this)."""
    store = services.store
    for _ in range(3):
        try:
            record = await store.intakes.begin(
                workspace_id,
                owner=_owner(),
                activity_id=activity_id,
                creates_activity=creates,
                document_ids=document_ids,
                key=key,
            )
        except IntakeConflict as conflict:
            existing = conflict.existing
            if existing["state"] == "committed":
                session_id = existing.get("session")
                if session_id and _dead(existing, utcnow()):
                    await store.units.end(session_id)
                await write_unit(services, existing)
                item = await store.activity.get(workspace_id, existing["activityId"])
                raise IntakeDuplicate(item or {"_id": existing["activityId"]}) from None
            if existing["state"] == "writing" and not _dead(existing, utcnow()):
                raise IntakeBusy(
                    "this message is being received right now; try again in a minute"
                ) from None
            await roll_back(services, existing)  # its writer died: its half goes, this goes on
            continue
        if message_id is not None:
            # An item of this message written (its record deleted) just before this began.
            earlier = await store.activity.find_by_message_ids(workspace_id, source, [message_id])
            if earlier:
                await store.intakes.settle(record["_id"], "writing")
                raise IntakeDuplicate(earlier[0])
        return record
    raise IntakeBusy("this message is being received right now; try again in a minute")


async def write_unit(services: Services, record: IntakeRecord, unit: Unit | None = None) -> bool:
    """Write a committed intake's item, documents and jobs, and delete its record: in one
    transaction where the store has them; else one write after the other, each skipped when
    it was made before (a sweep finishing what a crash interrupted), the record last. False
    when another process wrote it meanwhile."""
    store = services.store
    workspace_id, activity_id = record["workspaceId"], record["activityId"]
    as_unit = await store.units.supported()

    async def body() -> None:
        if as_unit and not await store.intakes.settle(record["_id"], "committed"):
            raise _AlreadyWritten  # first, so that two writers cannot both go on
        item = record.get("activity")
        if item is not None:
            if await store.activity.get(workspace_id, activity_id) is None:
                try:
                    await store.activity.insert(dict(item))
                except DuplicateKeyError:
                    if as_unit:
                        raise
        else:
            await store.activity.attach_documents(
                workspace_id, activity_id, list(record["documentIds"])
            )
            if record.get("documentNames"):
                await store.activity.set_document_names(
                    workspace_id, activity_id, dict(record.get("documentNames") or {})
                )
        for document in record.get("documents") or []:
            # One at a time: a document written before a crash is passed over, not repeated.
            if await store.documents.reads.get(workspace_id, document["_id"]) is None:
                try:
                    await store.documents.writes.insert_many(workspace_id, [document])
                except BulkWriteError as exc:
                    if as_unit or not _only_duplicates(exc):
                        raise
        for job in record.get("jobs") or []:
            await store.jobs.enqueue(
                workspace_id, job["kind"], dict(job["payload"]), dedupe_key=job.get("dedupeKey")
            )
        if not as_unit:
            await store.intakes.settle(record["_id"], "committed")

    try:
        if unit is not None:
            await unit.run(body)
        else:
            await store.units.run(body)
    except _AlreadyWritten:
        return False
    return True


def _only_duplicates(exc: BulkWriteError) -> bool:
    errors = exc.details.get("writeErrors") or []
    return bool(errors) and all(error.get("code") == DUPLICATE_KEY for error in errors)


async def roll_back(services: Services, record: IntakeRecord) -> bool:
    """Remove a ``writing`` (or interrupted ``abandoned``) intake: its originals and its record;
    whether this call did (a writer that committed meanwhile wins)."""
    store = services.store
    if record["state"] == "committed":
        return False
    if record["state"] == "writing" and not await store.intakes.abandon(record["_id"]):
        return False
    await store.files.delete_for(record["workspaceId"], record["documentIds"])
    return await store.intakes.settle(record["_id"], "abandoned")


def _dead(record: IntakeRecord, now: datetime) -> bool:
    """Whether the process writing ``record`` is known to be gone, or it is too old to live."""
    started = record.get("committedAt") if record["state"] == "committed" else record["createdAt"]
    limit = COMMITTED_AFTER if record["state"] == "committed" else ABANDONED_AFTER
    too_old = isinstance(started, datetime) and now - _aware(started) > limit
    return owner_gone(record["owner"]) or too_old


def _aware(moment: datetime) -> datetime:
    """A stored time as an aware UTC time (the embedded store returns naive ones)."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


async def sweep(services: Services) -> Swept:
    """Settle intakes whose writers died: committed ones are written out, the others rolled
    back (their senders were never answered, and send again)."""
    store = services.store
    now = utcnow()
    written = rolled_back = 0
    for record in await store.intakes.unsettled():
        if record["state"] != "abandoned" and not _dead(record, now):
            continue
        try:
            if record["state"] == "committed":
                session_id = record.get("session")
                if session_id:
                    await store.units.end(session_id)  # its writer's, if it died inside
                written += await write_unit(services, record)
            elif await roll_back(services, record):
                rolled_back += 1
        except Exception:
            log.exception("settling an intake failed; the next sweep tries again")
    if written or rolled_back:
        log.warning(
            "settled intakes left by stopped processes",
            extra={"intakesWritten": written, "intakesRolledBack": rolled_back},
        )
        services.wake_workers()
    return Swept(written, rolled_back)


__all__ = [
    "ABANDONED_AFTER",
    "COMMITTED_AFTER",
    "SWEEP_EVERY_S",
    "IntakeBusy",
    "IntakeDuplicate",
    "Original",
    "Swept",
    "roll_back",
    "sweep",
    "take_in",
    "write_unit",
]
