"""The intake journal: one record per intake on its way in, gone once the intake is whole.

An intake (an upload, an e-mail, a WhatsApp message, a connected mailbox's message) is written
in three steps (``resolvers.services.processing.intake``): this record (``writing``: the documents'
ids, the writer, the message's key), the originals in GridFS, then the record again (``committed``:
everything the unit will make — its activity item, documents and jobs) and the unit itself, in
one transaction that also deletes the record. So at any moment an intake is one of: nothing; a
``writing`` record and some originals (nothing readable: what a crash leaves is rolled back);
a ``committed`` record (nothing readable yet: the unit is written from it, by its writer or
after a crash by the sweep); or the whole unit.

``key`` (a message's id, per workspace and source) is unique while the record exists: two
deliveries of one message at the same time cannot both be taken, and a delivery that meets a
half-written intake of its own message knows it (``IntakeConflict``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, Literal, NotRequired, TypedDict, cast

from motor.motor_asyncio import AsyncIOMotorDatabase
from pymongo import ASCENDING, IndexModel
from pymongo.errors import DuplicateKeyError

from persistence.durability import journaled
from persistence.ids import new_id, utcnow
from persistence.units import joined

IntakeState = Literal["writing", "committed", "abandoned"]

INDEXES = [
    # At most one intake of a message on its way in. Sparse, not partial: the in-memory test
    # store ignores partial filters.
    IndexModel([("key", ASCENDING)], unique=True, sparse=True, name="key_unique"),
    IndexModel([("createdAt", ASCENDING)], name="created"),
]


class IntakeRecord(TypedDict):
    """An intake on its way in, as stored."""

    _id: str
    workspaceId: str
    state: IntakeState
    owner: str  # the writing process (``persistence.lease_owners``): a sweep can tell it died
    activityId: str
    createsActivity: bool  # False: documents that join an existing item (media fetched later)
    documentIds: list[str]
    createdAt: datetime
    key: NotRequired[str]
    # Once committed: what the unit makes.
    activity: NotRequired[dict[str, Any] | None]
    documents: NotRequired[list[dict[str, Any]]]
    documentNames: NotRequired[dict[str, str]]
    jobs: NotRequired[list[dict[str, Any]]]
    session: NotRequired[dict[str, Any] | None]  # the unit's session (None: no transactions)
    committedAt: NotRequired[datetime]


class IntakeConflict(Exception):
    """Another intake of the same key is on its way in: ``existing`` is its record."""

    def __init__(self, existing: IntakeRecord) -> None:
        super().__init__(f"intake {existing['_id']} of the same message is {existing['state']}")
        self.existing = existing


def intake_key(workspace_id: str, kind: str, value: str) -> str:
    """The key of an intake of ``value`` (a message id, an item's id) in a workspace."""
    return f"{workspace_id}|{kind}|{value}"


class Intakes:
    """The ``intakes`` collection."""

    def __init__(self, db: AsyncIOMotorDatabase) -> None:
        # Joined: the unit that writes an intake deletes its record (persistence.units).
        self._col = joined(db["intakes"])
        # What a sender is told "accepted" for waits on these: on disk when answered.
        self._durable = joined(journaled(db["intakes"]))

    async def ensure_indexes(self) -> None:
        await self._col.create_indexes(INDEXES)

    async def begin(
        self,
        workspace_id: str,
        *,
        owner: str,
        activity_id: str,
        creates_activity: bool,
        document_ids: Sequence[str],
        key: str | None = None,
    ) -> IntakeRecord:
        """A new ``writing`` record; ``IntakeConflict`` when one with ``key`` exists."""
        record = IntakeRecord(
            _id=new_id("itk"),
            workspaceId=workspace_id,
            state="writing",
            owner=owner,
            activityId=activity_id,
            createsActivity=creates_activity,
            documentIds=list(document_ids),
            createdAt=utcnow(),
        )
        if key is not None:
            record["key"] = key
        try:
            await self._durable.insert_one(record)
        except DuplicateKeyError:
            existing = await self._col.find_one({"key": key})
            if existing is None:  # settled between the insert and the read: try again
                return await self.begin(
                    workspace_id,
                    owner=owner,
                    activity_id=activity_id,
                    creates_activity=creates_activity,
                    document_ids=document_ids,
                    key=key,
                )
            raise IntakeConflict(cast(IntakeRecord, existing)) from None
        return record

    async def commit(self, intake_id: str, unit: Mapping[str, Any]) -> IntakeRecord | None:
        """``writing`` → ``committed`` with what the unit makes (one write: from here on the
        intake will be whole); None when it is no longer ``writing`` (a sweep took it for dead
        and rolled it back)."""
        result = await self._durable.update_one(
            {"_id": intake_id, "state": "writing"},
            {"$set": {**unit, "state": "committed", "committedAt": utcnow()}},
        )
        if not result.matched_count:
            return None
        return await self.get(intake_id)

    async def abandon(self, intake_id: str, state: IntakeState = "writing") -> bool:
        """``state`` → ``abandoned`` (its originals are being removed); False when it was not
        in ``state`` (committed meanwhile, or already settled)."""
        result = await self._col.update_one(
            {"_id": intake_id, "state": state}, {"$set": {"state": "abandoned"}}
        )
        return bool(result.matched_count)

    async def settle(self, intake_id: str, state: IntakeState) -> bool:
        """Delete the record while it is in ``state``; whether it was."""
        result = await self._col.delete_one({"_id": intake_id, "state": state})
        return bool(result.deleted_count)

    async def get(self, intake_id: str) -> IntakeRecord | None:
        return cast(IntakeRecord | None, await self._col.find_one({"_id": intake_id}))

    async def unsettled(self) -> list[IntakeRecord]:
        """Every intake on its way in, oldest first (a handful: they last a moment each)."""
        cursor = self._col.find({}).sort([("createdAt", ASCENDING), ("_id", ASCENDING)])
        return cast(list[IntakeRecord], await cursor.to_list(None))


__all__ = ["IntakeConflict", "IntakeRecord", "IntakeState", "Intakes", "intake_key"]
