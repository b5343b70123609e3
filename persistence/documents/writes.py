"""Writing documents: new ones, corrections of one, processing and export state, archiving,
duplicate links.

Every write here that changes a document appends its event (``persistence.events``) once it
is written: created, processed (a finished processing status), updated, archived, unarchived.

Every change of a stored document's fields is built by ``changed_fields``, the one place
where a write knows the record before and the values after (derived data such as the search
terms is recomputed there). Every write that can move a document between dashboard rollup
rows (``persistence.documents.rollups``) reads the record as it was in the same operation and
hands old and new to the rollups before it returns.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from datetime import date, datetime
from typing import Any, cast

from pymongo.errors import BulkWriteError

from domain.documents import TERMINAL
from domain.review import review_state
from persistence.documents.collection import DocumentCollection
from persistence.documents.edits import EditEntry
from persistence.documents.loaded import Loaded
from persistence.documents.reads import DocumentReads
from persistence.documents.records import (
    PREFERRED_INPUTS,
    REVIEW_INPUTS,
    StoredDocument,
    changes_search_terms,
    from_record,
    preferred_cents,
    search_terms,
    to_record,
    values_after,
)
from persistence.documents.rollups import ROLLUP_FIELDS
from persistence.documents.vectors import changes_embedding, stored_fields
from persistence.ids import utcnow
from persistence.where import QUERY_TIME_LIMIT_MS

# What the review fields are computed from, and the review fields themselves.
REVIEW_READ = {
    name: 1 for name in (*REVIEW_INPUTS, "needsReview", "reviewReasons", "reviewAccepted")
}
# The marker of the one-time computation of the review fields of older documents.
REVIEW_MIGRATION = "documents-review-v1"
MIGRATION_BATCH = 1000  # ids per write of the migration


def changed_fields(
    record: StoredDocument, changes: Mapping[str, Any], now: datetime
) -> dict[str, Any]:
    """The ``$set`` that applies ``changes`` (API-level values) to ``record``: the stored
    values, the search terms when a searchable field changes, and ``updatedAt``
    (``indexedAt`` is the write's: ``persistence.documents.stamp``)."""
    update = {**to_record(changes), "updatedAt": now}
    if changes_search_terms(changes):
        # Notes are stored-only (``from_record`` leaves them out) and searched all the same.
        before = {**from_record(record), "notes": record.get("notes")}
        update["searchTerms"] = search_terms({**before, **changes})
    if set(changes) & set(PREFERRED_INPUTS):
        update["preferredCents"] = preferred_cents({**record, **update})
    if set(changes) & set(REVIEW_INPUTS):
        update |= changed_review(record, update)
    return update


def changed_review(record: Mapping[str, Any], update: Mapping[str, Any]) -> dict[str, Any]:
    """The review fields (``domain.review``) of ``record`` after the stored values ``update``,
    those that differ from the record's (an unchanged flag writes nothing)."""
    state = review_state({**record, **update})
    return {name: value for name, value in state.items() if record.get(name) != value}


class DocumentWrites:
    """Writes of single documents and small sets of them; what a write must read first (the
    duplicates a move takes along) it asks ``reads``."""

    def __init__(self, collection: DocumentCollection, reads: DocumentReads) -> None:
        self._coll = collection
        self._reads = reads

    @staticmethod
    def prepare(
        workspace_id: str, fields: Mapping[str, Any], now: datetime | None = None
    ) -> StoredDocument:
        """A storage record for new document ``fields`` (which carry ``_id``; an
        ``editHistory`` among them is kept by ``insert_many`` in the history collection);
        ``indexedAt`` is added as it is written."""
        fields = {name: value for name, value in fields.items() if name != "editHistory"}
        now = now or utcnow()
        record: dict[str, Any] = {
            "archived": False,
            "archivedAt": None,
            "duplicateOf": None,
            "duplicates": [],
            "exportStatus": "not-exported",
            "createdAt": now,
            "updatedAt": now,
            **to_record(fields),
            "workspaceId": workspace_id,
        }
        record["searchTerms"] = search_terms(fields)
        record["preferredCents"] = preferred_cents(record)
        record.update(review_state(record))
        return cast(StoredDocument, record)

    async def insert_many(self, workspace_id: str, documents: Sequence[Mapping[str, Any]]) -> int:
        """Insert new documents (API-level ``fields`` with ``_id``); how many were inserted.

        Documents that arrive with an ``editHistory`` (imports, demo and test data) have it
        recorded in the history collection, like any later correction.
        """
        if not documents:
            return 0
        now = self._coll.now()  # one arrival time for documents that arrive together
        records = [self.prepare(workspace_id, fields, now) for fields in documents]
        for record, vector in zip(records, await self._coll.embed(documents), strict=False):
            record.update(vector)  # type: ignore[typeddict-item]
        try:
            result = await self._coll.insert(records, now)
        except BulkWriteError as exc:
            failed = {error["index"] for error in exc.details.get("writeErrors", [])}
            inserted = [r for i, r in enumerate(records) if i not in failed]
            await self._coll.rollups.apply(workspace_id, added=inserted)
            raise
        await self._coll.rollups.apply(workspace_id, added=records)
        await self._coll.events.append(
            workspace_id, "document.created", [r["_id"] for r in records]
        )
        await self._coll.edits.add(
            workspace_id,
            {
                fields["_id"]: fields["editHistory"]
                for fields in documents
                if fields.get("editHistory")
            },
        )
        return len(result.inserted_ids)

    async def delete_unprocessed(self, workspace_id: str, document_id: str) -> None:
        """Remove a document whose upload was never acknowledged (nothing else refers to it)."""
        removed = await self._coll.delete_queued(workspace_id, document_id, ROLLUP_FIELDS)
        if removed is not None:
            await self._coll.rollups.apply(workspace_id, removed=[removed])

    async def update_fields(
        self,
        workspace_id: str,
        loaded: Loaded,
        changes: Mapping[str, Any],
        edits: Sequence[EditEntry] = (),
        vector: Any = None,
    ) -> Loaded | None:
        """Apply ``changes`` (API-level values) to the document the caller ``loaded`` and
        record ``edits``; the updated document (None when it no longer exists). The derived
        fields are computed from the record as loaded (``changed_fields``).

        A change of an embedded field stores ``vector`` (the new text's embedding, when the
        caller has it) or embeds the new text here.

        The history is written first and taken back if the document write fails, so a
        document never changes without its history.
        """
        record = loaded.stored
        document_id = record["_id"]
        now = self._coll.now()
        update = changed_fields(record, changes, now)
        if changes_embedding(changes):
            if vector is not None:
                update |= stored_fields(vector)
            else:
                update |= (await self._coll.embed([values_after(record, changes)]))[0]
        written = await self._coll.edits.add(workspace_id, {document_id: edits}) if edits else []
        try:
            before = await self._coll.update_before(
                {"_id": document_id, "workspaceId": workspace_id}, update, None, now
            )
        except BaseException:
            await self._coll.edits.remove(workspace_id, written)
            raise
        if before is None:
            await self._coll.edits.remove(workspace_id, written)
            return None
        updated = {**before, **update}  # every key of ``update`` is a top-level field
        if ROLLUP_FIELDS & set(update):
            await self._coll.rollups.apply(workspace_id, removed=[before], added=[updated])
        await self._coll.events.append(workspace_id, "document.updated", [document_id])
        return Loaded(cast(StoredDocument, updated))

    async def set_processing(
        self,
        workspace_id: str,
        document_id: str,
        status: str,
        reason: str | None = None,
        *,
        billed_on: date | None = None,
    ) -> None:
        """The document's processing status (and reason). With ``billed_on``, the outcome is
        also the document's billed count for that day, in the same write (``billed``): a crash
        cannot leave the outcome without its count, and a retry cannot count it twice."""
        now = self._coll.now()
        change: dict[str, Any] = {
            "processingStatus": status,
            "processingReason": reason,
            "updatedAt": now,
        }
        if billed_on is not None:
            change["billedOn"] = billed_on.isoformat()
        finished = status in TERMINAL
        selector = {"_id": document_id, "workspaceId": workspace_id}
        # Read, then written with the outcome: a correction landing in between is reviewed by
        # its own write's ``changed_fields``, which sees this outcome.
        record = await self._coll.docs.find_one(selector, REVIEW_READ)
        if record is not None:
            after = {**record, **change}
            if finished and record.get("reviewAccepted"):
                # A new outcome is something new: what an earlier review accepted is asked again.
                change["reviewAccepted"] = after["reviewAccepted"] = []
            change |= changed_review(record, after)
        await self._coll.update_one(selector, {"$set": change}, now)
        await self._coll.events.append(
            workspace_id, "document.processed" if finished else "document.updated", [document_id]
        )

    async def mark_reprocessed(self, workspace_id: str, document_id: str) -> None:
        """Say that ``documents.reprocess`` read the document again (whether or not the new
        reading changed anything): a page waiting for it learns it through the event."""
        now = self._coll.now()
        await self._coll.update_one(
            {"_id": document_id, "workspaceId": workspace_id},
            {"$set": {"reprocessedAt": now}},
            now,
        )
        await self._coll.events.append(workspace_id, "document.updated", [document_id])

    async def set_export_status(
        self, workspace_id: str, document_id: str, status: str, export_id: str | None
    ) -> None:
        """The document's ``exportStatus`` (exported, not-exported) and the export behind it."""
        now = self._coll.now()
        await self._coll.update_one(
            {"_id": document_id, "workspaceId": workspace_id},
            {"$set": {"exportStatus": status, "exportId": export_id, "updatedAt": now}},
            now,
        )
        await self._coll.events.append(workspace_id, "document.updated", [document_id])

    async def set_archived(self, workspace_id: str, ids: Sequence[str], archived: bool) -> int:
        """Archive or restore documents; how many changed state."""
        if not ids:
            return 0
        now = self._coll.now()
        change = {
            "archived": archived,
            "archivedAt": now if archived else None,
            "updatedAt": now,
        }
        changed = [
            before
            for before in await asyncio.gather(
                *(
                    self._coll.update_before(
                        {"_id": document_id, "workspaceId": workspace_id, "archived": not archived},
                        change,
                        ROLLUP_FIELDS,
                        now,
                    )
                    for document_id in dict.fromkeys(ids)
                )
            )
            if before is not None
        ]
        await self._coll.rollups.apply(
            workspace_id, removed=changed, added=[{**before, **change} for before in changed]
        )
        await self._coll.events.append(
            workspace_id,
            "document.archived" if archived else "document.unarchived",
            [before["_id"] for before in changed],
        )
        return len(changed)

    async def remove_references(self, workspace_id: str, ids: Sequence[str]) -> None:
        """Forget ``ids`` in other documents' ``duplicates`` lists.

        The documents are found first through ``workspace_duplicates`` (the workspace and
        ``duplicates`` alone: a ``$match`` the embedded store can plan), then updated by id.
        """
        pipeline: list[dict[str, Any]] = [
            {"$match": {"workspaceId": workspace_id, "duplicates": {"$in": list(ids)}}},
            {"$match": {"_id": {"$nin": list(ids)}}},
            {"$project": {"_id": 1}},
        ]
        found = await self._coll.run(
            self._coll.docs.aggregate(pipeline, maxTimeMS=QUERY_TIME_LIMIT_MS).to_list(None)
        )
        if found:
            await self._coll.update_many(
                {"_id": {"$in": [row["_id"] for row in found]}, "workspaceId": workspace_id},
                {"$pull": {"duplicates": {"$in": list(ids)}}},
            )

    async def link_duplicate(self, workspace_id: str, original_id: str, duplicate_id: str) -> None:
        await self._coll.update_one(
            {"_id": duplicate_id, "workspaceId": workspace_id},
            {"$set": {"duplicateOf": original_id}},
        )
        await self.refresh_review(workspace_id, [duplicate_id])
        await self._coll.update_one(
            {"_id": original_id, "workspaceId": workspace_id},
            {"$addToSet": {"duplicates": duplicate_id}},
        )

    async def forget_original(self, workspace_id: str, original_id: str) -> list[str]:
        """Documents marked duplicates of ``original_id``, which was removed, are no longer;
        their ids (archived ones included)."""
        rows = await self._coll.docs.find(
            {"workspaceId": workspace_id, "duplicateOf": original_id}, {"_id": 1}
        ).to_list(None)
        marked = [row["_id"] for row in rows]
        if marked:
            await self._coll.update_many(
                {"workspaceId": workspace_id, "duplicateOf": original_id},
                {"$set": {"duplicateOf": None}},
            )
            await self.refresh_review(workspace_id, marked)
            await self._coll.events.append(workspace_id, "document.updated", marked)
        return marked

    async def move_duplicates(self, workspace_id: str, from_id: str, to_id: str) -> list[str]:
        """The duplicates of ``from_id`` become duplicates of ``to_id``; their ids."""
        moved = await self._reads.active_duplicates_of(workspace_id, from_id)
        if moved:
            await self._coll.update_many(
                {"workspaceId": workspace_id, "duplicateOf": from_id},
                {"$set": {"duplicateOf": to_id}},
            )
            await self._coll.update_one(
                {"_id": to_id, "workspaceId": workspace_id},
                {"$addToSet": {"duplicates": {"$each": moved}}},
            )
        await self._coll.update_one(
            {"_id": from_id, "workspaceId": workspace_id}, {"$set": {"duplicates": []}}
        )
        return moved

    async def record_edits(
        self, workspace_id: str, edits: Mapping[str, Sequence[EditEntry]]
    ) -> None:
        """Record history entries of changes made outside ``update_fields`` (an archive by an
        automation rule)."""
        await self._coll.edits.add(workspace_id, edits)

    # -- the review queue (``domain.review``) ----------------------------------------------

    async def refresh_review(self, workspace_id: str, ids: Sequence[str]) -> None:
        """Recompute the review fields of documents changed by a write that sets
        ``REVIEW_INPUTS`` itself (duplicate links)."""
        if not ids:
            return
        rows = await self._coll.docs.find(
            {"workspaceId": workspace_id, "_id": {"$in": list(ids)}}, REVIEW_READ
        ).to_list(None)
        for row in rows:
            change = changed_review(row, {})
            if change:
                await self._coll.update_one(
                    {"_id": row["_id"], "workspaceId": workspace_id}, {"$set": change}
                )

    async def mark_reviewed(self, workspace_id: str, loaded: Loaded, by: str) -> Loaded | None:
        """Accept the review reasons the document had as the caller ``loaded`` it: who and
        when, and the flag cleared. None when its reasons or its last review changed meanwhile
        (another review came first, a new outcome): nothing is written then."""
        record = loaded.stored
        now = self._coll.now()
        change: dict[str, Any] = {
            "needsReview": False,
            "reviewAccepted": list(record.get("reviewReasons") or []),
            "reviewedBy": by,
            "reviewedAt": now,
            "updatedAt": now,
        }
        selector = {
            "_id": record["_id"],
            "workspaceId": workspace_id,
            "reviewReasons": list(record.get("reviewReasons") or []),
            "reviewedAt": record.get("reviewedAt"),
        }
        result = await self._coll.update_one(selector, {"$set": change}, now)
        if not result.matched_count:
            return None
        await self._coll.events.append(workspace_id, "document.updated", [record["_id"]])
        return Loaded(cast(StoredDocument, {**record, **change}))

    async def migrate_review(self) -> int:
        """Documents written before the review queue get their review fields, once (a marker
        says it was done); how many were written. Documents of one state are written together."""
        state = self._coll.db["document_migrations"]
        if await state.find_one({"_id": REVIEW_MIGRATION}) is not None:
            return 0
        rows = await self._coll.docs.find(
            {"needsReview": {"$exists": False}}, {**REVIEW_READ, "workspaceId": 1}
        ).to_list(None)
        groups: dict[tuple[str, bool, tuple[str, ...]], list[str]] = {}
        for row in rows:
            review = review_state(row)
            key = (row["workspaceId"], review["needsReview"], tuple(review["reviewReasons"]))
            groups.setdefault(key, []).append(row["_id"])
        for (workspace_id, needs, reasons), ids in groups.items():
            for start in range(0, len(ids), MIGRATION_BATCH):
                await self._coll.update_many(
                    {
                        "workspaceId": workspace_id,
                        "_id": {"$in": ids[start : start + MIGRATION_BATCH]},
                    },
                    {"$set": {"needsReview": needs, "reviewReasons": list(reasons)}},
                )
        await state.update_one(
            {"_id": REVIEW_MIGRATION},
            {"$set": {"at": self._coll.now(), "documents": len(rows)}},
            upsert=True,
        )
        return len(rows)
