"""A document's notes: what people wrote about it, each with its author, time and edits.

Notes live in the document itself (``notes``, stored-only: ``records.STORED_ONLY``), so they go
where the document goes (deleted with it, scoped by its workspace) and their words are in the
document's ``searchTerms`` and in every search index's text (``records.searchable_texts``).

Two people writing notes on one document at once must both be kept, and the search terms must
hold both texts. A write reads the notes with ``notesRevision``, makes the new list and the new
terms from them, and writes only while the revision is still the one it read (compare and set);
a write that lost the race reads again. ``notesRevision`` counts every notes write.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from persistence.documents.collection import DocumentCollection
from persistence.documents.records import (
    LINE_DESCRIPTIONS,
    SEARCHABLE_FIELDS,
    from_record,
    search_terms,
)

# Reads of one document's notes lose to concurrent writers at most this often in a row.
ATTEMPTS = 20
NOTE_READ = {name: 1 for name in (*SEARCHABLE_FIELDS, LINE_DESCRIPTIONS, "notes", "notesRevision")}

Note = dict[str, Any]


class NotesChanged(Exception):
    """The notes kept changing under a write (``ATTEMPTS`` lost races in a row)."""


class DocumentNotes:
    """Reads and writes of the ``notes`` of one document."""

    def __init__(self, collection: DocumentCollection) -> None:
        self._coll = collection

    async def of(self, workspace_id: str, document_id: str) -> list[Note] | None:
        """The document's notes, oldest first (None: no such document in the workspace)."""
        found = await self._coll.docs.find_one(
            {"_id": document_id, "workspaceId": workspace_id}, {"notes": 1}
        )
        return None if found is None else list(found.get("notes") or [])

    async def change(
        self,
        workspace_id: str,
        document_id: str,
        change: Callable[[list[Note]], list[Note]],
    ) -> list[Note] | None:
        """Write ``change(notes)`` as the document's notes, with its search terms; the notes
        written (None: no such document). ``change`` may raise to refuse (nothing is written);
        it is called again with the newer notes when another write came first."""
        selector = {"_id": document_id, "workspaceId": workspace_id}
        for _ in range(ATTEMPTS):
            found = await self._coll.docs.find_one(selector, NOTE_READ)
            if found is None:
                return None
            before = list(found.get("notes") or [])
            after = change([dict(note) for note in before])
            revision = found.get("notesRevision", 0)
            now = self._coll.now()
            terms = search_terms({**from_record(found), "notes": after})
            written = await self._coll.update_one(
                {**selector, "notesRevision": found.get("notesRevision")},
                {
                    "$set": {
                        "notes": after,
                        "notesRevision": revision + 1,
                        "searchTerms": terms,
                        "updatedAt": now,
                    }
                },
                now,
            )
            if written.matched_count:
                await self._coll.events.append(workspace_id, "document.updated", [document_id])
                return after
        raise NotesChanged(f"the notes of {document_id} kept changing; try again")
