"""Edit history: one record per corrected field, in its own collection.

A correction of 500 line items records both lists (~600 KB); kept inside the document, thirty
of them crossed MongoDB's 16 MB document limit and every later write of that document failed.
Here each entry is its own small record, so the history is complete and never blocks a write.
Entries are read back oldest first; documents written before the history moved here keep their
entries in the document's ``editHistory`` array, which reads place before the newer ones.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, TypedDict

from bson import ObjectId
from motor.motor_asyncio import AsyncIOMotorDatabase
from pymongo import ASCENDING, IndexModel

from persistence.where import QUERY_TIME_LIMIT_MS

INDEXES = [
    IndexModel(
        [
            ("workspaceId", ASCENDING),
            ("documentId", ASCENDING),
            ("editedAt", ASCENDING),
            ("_id", ASCENDING),
        ],
        name="workspace_document_edited",
    )
]


class EditEntry(TypedDict):
    """One change of one field, as the API shows it (``EditRecord``)."""

    field: str
    oldValue: Any
    newValue: Any
    editedBy: str
    editedAt: datetime
    via: str


class DocumentEdits:
    """The ``document_edits`` collection; used through the documents repository."""

    def __init__(self, db: AsyncIOMotorDatabase) -> None:
        self._col = db["document_edits"]

    async def ensure_indexes(self) -> None:
        await self._col.create_indexes(INDEXES)

    async def add(
        self, workspace_id: str, edits: Mapping[str, Sequence[EditEntry]]
    ) -> list[ObjectId]:
        """Record ``edits`` (document id → its entries); the ids of the records written.

        ObjectIds order entries written in the same millisecond by this process.
        """
        ids: list[ObjectId] = []
        records: list[dict[str, Any]] = []
        for document_id, entries in edits.items():
            for entry in entries:
                ids.append(ObjectId())
                records.append(
                    {
                        "_id": ids[-1],
                        "workspaceId": workspace_id,
                        "documentId": document_id,
                        **entry,
                    }
                )
        if records:
            await self._col.insert_many(records, ordered=True)
        return ids

    async def remove(self, workspace_id: str, ids: Sequence[ObjectId]) -> None:
        """Take back entries whose document write did not happen."""
        if ids:
            await self._col.delete_many({"workspaceId": workspace_id, "_id": {"$in": list(ids)}})

    async def of_documents(
        self, workspace_id: str, document_ids: Sequence[str]
    ) -> dict[str, list[EditEntry]]:
        """The entries of each document, oldest first (documents without any are absent)."""
        if not document_ids:
            return {}
        cursor = self._col.find(
            {"workspaceId": workspace_id, "documentId": {"$in": list(dict.fromkeys(document_ids))}},
            {"_id": 0, "workspaceId": 0},
            max_time_ms=QUERY_TIME_LIMIT_MS,
        ).sort([("editedAt", ASCENDING), ("_id", ASCENDING)])
        found: dict[str, list[EditEntry]] = defaultdict(list)
        for row in await cursor.to_list(None):
            document_id = row.pop("documentId")
            found[document_id].append(EditEntry(**row))  # type: ignore[typeddict-item]
        return dict(found)
