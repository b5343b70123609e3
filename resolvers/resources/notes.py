"""Notes: what people write about a document (Paperless-ngx's notes), with author, time and
the history of each note's edits.

A note belongs to its document (``persistence.documents.notes``): it is read with
``notes.list``, and its words find the document in ``documents.search`` like the document's own
text does. Anyone in the workspace may write a note; only its author changes it, and its
author or an owner or admin deletes it.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from persistence.documents import NotesChanged
from persistence.ids import new_id, utcnow
from resolvers.framework.context import Context
from resolvers.framework.errors import BadRequest, Conflict, Forbidden, NotFound
from resolvers.framework.registry import MANAGERS, MEMBERS, capability
from schema.notes import (
    MAX_NOTES_PER_DOCUMENT,
    MAX_REVISIONS,
    AddNote,
    DeletedNote,
    ListNotes,
    Note,
    NoteList,
    NoteRef,
    NoteResult,
    NoteRevision,
    UpdateNote,
)

Stored = dict[str, Any]


def note_of(ctx: Context, document_id: str, stored: Stored, emails: dict[str, str]) -> Note:
    """The API's note, with what the caller may do with it (GitHub's ``viewerCanUpdate``)."""
    author = stored["author"]
    return Note(
        id=stored["id"],
        documentId=document_id,
        text=stored["text"],
        author=author,
        authorEmail=emails.get(author),
        createdAt=stored["createdAt"],
        updatedAt=stored["updatedAt"],
        edits=stored.get("edits", 0),
        history=[NoteRevision(**revision) for revision in stored.get("history") or []],
        viewerCanEdit=_may_edit(ctx, stored),
        viewerCanDelete=_may_delete(ctx, stored),
    )


def _may_edit(ctx: Context, note: Stored) -> bool:
    return bool(note["author"] == ctx.user_id)


def _may_delete(ctx: Context, note: Stored) -> bool:
    return _may_edit(ctx, note) or ctx.role in MANAGERS


async def _notes_of(ctx: Context, document_id: str, notes: list[Stored]) -> list[Note]:
    emails = await ctx.store.users.emails(sorted({note["author"] for note in notes}))
    return [note_of(ctx, document_id, note, emails) for note in notes]


def _document_missing(document_id: str) -> NotFound:
    return NotFound(f"Document '{document_id}' not found")


def _find(notes: list[Stored], note_id: str) -> Stored:
    for note in notes:
        if note["id"] == note_id:
            return note
    raise NotFound(f"Note '{note_id}' not found on this document")


async def _change(ctx: Context, document_id: str, change: Any) -> list[Stored]:
    try:
        notes = await ctx.store.documents.notes.change(ctx.require_workspace(), document_id, change)
    except NotesChanged:
        raise Conflict("The document's notes kept changing while this was written; retry") from None
    if notes is None:
        raise _document_missing(document_id)
    return notes


@capability("notes.list", input=ListNotes, output=NoteList, permissions=["read_documents"],
            effect="read")  # fmt: skip
async def list_notes(ctx: Context, args: ListNotes) -> NoteList:
    """A document's notes, oldest first: each with its author, when it was written and changed,
    and its earlier texts."""
    notes = await ctx.store.documents.notes.of(ctx.require_workspace(), args.documentId)
    if notes is None:
        raise _document_missing(args.documentId)
    return NoteList(notes=await _notes_of(ctx, args.documentId, notes))


@capability("notes.add", input=AddNote, output=NoteResult, permissions=["write_documents"],
            effect="write", roles=MEMBERS)  # fmt: skip
async def add(ctx: Context, args: AddNote) -> NoteResult:
    """Writes a note on a document (at most 5,000 characters; at most 200 notes a document).
    Its words find the document in documents.search."""
    now = utcnow()
    note: Stored = {
        "id": new_id("note"),
        "text": args.text,
        "author": ctx.user_id,
        "createdAt": now,
        "updatedAt": now,
        "edits": 0,
        "history": [],
    }

    def append(notes: list[Stored]) -> list[Stored]:
        if len(notes) >= MAX_NOTES_PER_DOCUMENT:
            raise BadRequest(
                f"Invalid request: a document has at most {MAX_NOTES_PER_DOCUMENT} notes"
            )
        return [*notes, note]

    await _change(ctx, args.documentId, append)
    return NoteResult(note=(await _notes_of(ctx, args.documentId, [note]))[0])


@capability("notes.update", input=UpdateNote, output=NoteResult,
            permissions=["write_documents"], effect="write", roles=MEMBERS)  # fmt: skip
async def update(ctx: Context, args: UpdateNote) -> NoteResult:
    """Changes a note's text; only its author may. The earlier text is kept in its history
    (the 50 latest), with who changed it and when."""
    changed: Stored = {}

    def rewrite(notes: list[Stored]) -> list[Stored]:
        note = _find(notes, args.id)
        if not _may_edit(ctx, note):
            raise Forbidden("Only the author of a note may change it")
        if note["text"] == args.text:
            changed.update(note)
            return notes
        now: datetime = utcnow()
        earlier = {"text": note["text"], "editedBy": ctx.user_id, "editedAt": now}
        note.update(
            text=args.text,
            updatedAt=now,
            edits=note.get("edits", 0) + 1,
            history=[earlier, *(note.get("history") or [])][:MAX_REVISIONS],
        )
        changed.clear()
        changed.update(note)
        return notes

    await _change(ctx, args.documentId, rewrite)
    return NoteResult(note=(await _notes_of(ctx, args.documentId, [changed]))[0])


@capability("notes.delete", input=NoteRef, output=DeletedNote, permissions=["write_documents"],
            effect="destructive", roles=MEMBERS)  # fmt: skip
async def delete(ctx: Context, args: NoteRef) -> DeletedNote:
    """Deletes a note; its author may, and an owner or admin. Its words no longer find the
    document."""

    def remove(notes: list[Stored]) -> list[Stored]:
        note = _find(notes, args.id)
        if not _may_delete(ctx, note):
            raise Forbidden("Only the author of a note, an owner or an admin may delete it")
        return [kept for kept in notes if kept["id"] != args.id]

    await _change(ctx, args.documentId, remove)
    return DeletedNote(id=args.id, deleted=True)
