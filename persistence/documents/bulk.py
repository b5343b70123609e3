"""Bulk edits: corrections of many documents at once (documents.bulk-edit, update rules)."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from persistence.documents.collection import DocumentCollection
from persistence.documents.edits import EditEntry
from persistence.documents.loaded import Loaded
from persistence.documents.records import values_after
from persistence.documents.rollups import ROLLUP_FIELDS
from persistence.documents.vectors import changes_embedding
from persistence.documents.writes import changed_fields

BULK_BATCH = 50


@dataclass(frozen=True)
class FieldUpdate:
    """New values for some fields of one loaded document, and the edits that record them."""

    loaded: Loaded  # as read: the changes are computed from its stored record
    changes: Mapping[str, Any]  # API-level values
    edits: Sequence[EditEntry] = ()


class DocumentBulkEdits:
    """Many corrections in one call, each recorded in the edit history."""

    def __init__(self, collection: DocumentCollection) -> None:
        self._coll = collection

    async def update(self, workspace_id: str, updates: Sequence[FieldUpdate]) -> int:
        """Apply ``updates`` to active documents; how many documents changed.

        The history of every update is written first, in one batch; the entries of documents
        that were archived meanwhile (and so did not change) are taken back. Updates run
        concurrently in small batches, each a compare-and-set of its own (``update_before``):
        the rollups move each document from the rows of the record it really replaced, which a
        bulk write does not return.
        """
        now = self._coll.now()
        embedding = [u for u in updates if changes_embedding(u.changes)]
        vectors = dict(
            zip(
                [u.loaded.id for u in embedding],
                await self._coll.embed(
                    [values_after(u.loaded.stored, u.changes) for u in embedding]
                ),
                strict=True,
            )
        )
        written = await self._coll.edits.add(
            workspace_id, {u.loaded.id: u.edits for u in updates if u.edits}
        )
        ids_by_document: dict[str, list[Any]] = {}
        position = 0
        for u in updates:
            ids_by_document[u.loaded.id] = written[position : position + len(u.edits)]
            position += len(u.edits)

        moved_from: list[Mapping[str, Any]] = []
        moved_to: list[Mapping[str, Any]] = []
        changed: list[str] = []

        async def apply(update: FieldUpdate) -> int:
            changes = changed_fields(update.loaded.stored, update.changes, now)
            changes |= vectors.get(update.loaded.id, {})
            before = await self._coll.update_before(
                {"_id": update.loaded.id, "workspaceId": workspace_id, "archived": False},
                changes,
                ROLLUP_FIELDS,
                now,
            )
            if before is None:
                await self._coll.edits.remove(workspace_id, ids_by_document[update.loaded.id])
                return 0
            if ROLLUP_FIELDS & set(changes):
                moved_from.append(before)
                moved_to.append({**before, **changes})
            changed.append(update.loaded.id)
            return 1

        modified = 0
        try:
            for start in range(0, len(updates), BULK_BATCH):
                batch = updates[start : start + BULK_BATCH]
                modified += sum(await asyncio.gather(*(apply(update) for update in batch)))
        finally:
            await self._coll.rollups.apply(workspace_id, removed=moved_from, added=moved_to)
            await self._coll.events.append(workspace_id, "document.updated", changed)
        return modified

    async def rename_tag(self, workspace_id: str, old: str, new: str | None) -> int:
        """Every document of the workspace (archived ones too) that carries tag ``old`` carries
        ``new`` instead (None: no tag in its place); how many changed. Two writes, each safe to
        repeat: the new name is added where the old one is, then the old one taken out, so a
        failure between them leaves both names, never a document that lost its tag."""
        selector = {"workspaceId": workspace_id, "tags": old}
        ids = [row["_id"] for row in await self._coll.docs.find(selector, {"_id": 1}).to_list(None)]
        if not ids:
            return 0
        now = self._coll.now()
        if new is not None:
            await self._coll.update_many(selector, {"$addToSet": {"tags": new}}, now)
        await self._coll.update_many(
            selector, {"$pull": {"tags": old}, "$set": {"updatedAt": now}}, now
        )
        await self._coll.events.append(workspace_id, "document.updated", ids)
        return len(ids)
