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

from persistence.activity import TERMINAL
from persistence.documents.edits import EditEntry
from persistence.documents.reads import DocumentReads
from persistence.documents.records import (
    PREFERRED_INPUTS,
    StoredDocument,
    changes_search_terms,
    from_record,
    preferred_cents,
    search_terms,
    to_record,
)
from persistence.documents.rollups import ROLLUP_FIELDS
from persistence.documents.vectors import changes_embedding, stored_fields
from persistence.ids import utcnow
from persistence.where import QUERY_TIME_LIMIT_MS


def changed_fields(
    record: StoredDocument, changes: Mapping[str, Any], now: datetime
) -> dict[str, Any]:
    """The ``$set`` that applies ``changes`` (API-level values) to ``record``: the stored
    values, the search terms when a searchable field changes, and ``updatedAt``
    (``indexedAt`` is the write's: ``persistence.documents.stamp``)."""
    update = {**to_record(changes), "updatedAt": now}
    if changes_search_terms(changes):
        update["searchTerms"] = search_terms({**from_record(record), **changes})
    if set(changes) & set(PREFERRED_INPUTS):
        update["preferredCents"] = preferred_cents({**record, **update})
    return update


class DocumentWrites(DocumentReads):
    """Writes of single documents and small sets of them."""

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
        return cast(StoredDocument, record)

    async def insert_many(self, workspace_id: str, documents: Sequence[Mapping[str, Any]]) -> int:
        """Insert new documents (API-level ``fields`` with ``_id``); how many were inserted.

        Documents that arrive with an ``editHistory`` (imports, demo and test data) have it
        recorded in the history collection, like any later correction.
        """
        if not documents:
            return 0
        now = self._now()  # one arrival time for documents that arrive together
        records = [self.prepare(workspace_id, fields, now) for fields in documents]
        for record, vector in zip(records, await self._embed(documents), strict=False):
            record.update(vector)  # type: ignore[typeddict-item]
        try:
            result = await self._insert(records, now)
        except BulkWriteError as exc:
            failed = {error["index"] for error in exc.details.get("writeErrors", [])}
            inserted = [r for i, r in enumerate(records) if i not in failed]
            await self._rollups.apply(workspace_id, added=inserted)
            raise
        await self._rollups.apply(workspace_id, added=records)
        await self.events.append(workspace_id, "document.created", [r["_id"] for r in records])
        await self._edits.add(
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
        removed = await self._delete_queued(workspace_id, document_id, ROLLUP_FIELDS)
        if removed is not None:
            await self._rollups.apply(workspace_id, removed=[removed])

    async def update_fields(
        self,
        workspace_id: str,
        record: StoredDocument,
        changes: Mapping[str, Any],
        edits: Sequence[EditEntry] = (),
        vector: Any = None,
    ) -> StoredDocument | None:
        """Apply ``changes`` to the stored ``record`` the caller loaded and record ``edits``;
        the updated record (None when it no longer exists).

        A change of an embedded field stores ``vector`` (the new text's embedding, when the
        caller has it) or embeds the new text here.

        The history is written first and taken back if the document write fails, so a
        document never changes without its history.
        """
        document_id = record["_id"]
        now = self._now()
        update = changed_fields(record, changes, now)
        if changes_embedding(changes):
            if vector is not None:
                update |= stored_fields(vector)
            else:
                update |= (await self._embed([{**from_record(record), **changes}]))[0]
        written = await self._edits.add(workspace_id, {document_id: edits}) if edits else []
        try:
            before = await self._update_before(
                {"_id": document_id, "workspaceId": workspace_id}, update, None, now
            )
        except BaseException:
            await self._edits.remove(workspace_id, written)
            raise
        if before is None:
            await self._edits.remove(workspace_id, written)
            return None
        updated = {**before, **update}  # every key of ``update`` is a top-level field
        if ROLLUP_FIELDS & set(update):
            await self._rollups.apply(workspace_id, removed=[before], added=[updated])
        await self.events.append(workspace_id, "document.updated", [document_id])
        return cast(StoredDocument, updated)

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
        now = self._now()
        change: dict[str, Any] = {
            "processingStatus": status,
            "processingReason": reason,
            "updatedAt": now,
        }
        if billed_on is not None:
            change["billedOn"] = billed_on.isoformat()
        await self._update_one(
            {"_id": document_id, "workspaceId": workspace_id}, {"$set": change}, now
        )
        finished = status in TERMINAL
        await self.events.append(
            workspace_id, "document.processed" if finished else "document.updated", [document_id]
        )

    async def set_export_status(
        self, workspace_id: str, document_id: str, status: str, export_id: str | None
    ) -> None:
        """The document's ``exportStatus`` (exported, not-exported) and the export behind it."""
        now = self._now()
        await self._update_one(
            {"_id": document_id, "workspaceId": workspace_id},
            {"$set": {"exportStatus": status, "exportId": export_id, "updatedAt": now}},
            now,
        )
        await self.events.append(workspace_id, "document.updated", [document_id])

    async def set_archived(self, workspace_id: str, ids: Sequence[str], archived: bool) -> int:
        """Archive or restore documents; how many changed state."""
        if not ids:
            return 0
        now = self._now()
        change = {
            "archived": archived,
            "archivedAt": now if archived else None,
            "updatedAt": now,
        }
        changed = [
            before
            for before in await asyncio.gather(
                *(
                    self._update_before(
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
        await self._rollups.apply(
            workspace_id, removed=changed, added=[{**before, **change} for before in changed]
        )
        await self.events.append(
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
        found = await self._run(
            self._docs.aggregate(pipeline, maxTimeMS=QUERY_TIME_LIMIT_MS).to_list(None)
        )
        if found:
            await self._update_many(
                {"_id": {"$in": [row["_id"] for row in found]}, "workspaceId": workspace_id},
                {"$pull": {"duplicates": {"$in": list(ids)}}},
            )

    async def link_duplicate(self, workspace_id: str, original_id: str, duplicate_id: str) -> None:
        await self._update_one(
            {"_id": duplicate_id, "workspaceId": workspace_id},
            {"$set": {"duplicateOf": original_id}},
        )
        await self._update_one(
            {"_id": original_id, "workspaceId": workspace_id},
            {"$addToSet": {"duplicates": duplicate_id}},
        )

    async def forget_original(self, workspace_id: str, original_id: str) -> list[str]:
        """Documents marked duplicates of ``original_id``, which was removed, are no longer;
        their ids (archived ones included)."""
        rows = await self._docs.find(
            {"workspaceId": workspace_id, "duplicateOf": original_id}, {"_id": 1}
        ).to_list(None)
        marked = [row["_id"] for row in rows]
        if marked:
            await self._update_many(
                {"workspaceId": workspace_id, "duplicateOf": original_id},
                {"$set": {"duplicateOf": None}},
            )
            await self.events.append(workspace_id, "document.updated", marked)
        return marked

    async def move_duplicates(self, workspace_id: str, from_id: str, to_id: str) -> list[str]:
        """The duplicates of ``from_id`` become duplicates of ``to_id``; their ids."""
        moved = await self.active_duplicates_of(workspace_id, from_id)
        if moved:
            await self._update_many(
                {"workspaceId": workspace_id, "duplicateOf": from_id},
                {"$set": {"duplicateOf": to_id}},
            )
            await self._update_one(
                {"_id": to_id, "workspaceId": workspace_id},
                {"$addToSet": {"duplicates": {"$each": moved}}},
            )
        await self._update_one(
            {"_id": from_id, "workspaceId": workspace_id}, {"$set": {"duplicates": []}}
        )
        return moved

    async def record_edits(
        self, workspace_id: str, edits: Mapping[str, Sequence[EditEntry]]
    ) -> None:
        """Record history entries of changes made outside ``update_fields`` (an archive by an
        automation rule)."""
        await self._edits.add(workspace_id, edits)
