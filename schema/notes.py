"""Contract models of the notes resource: what people write about a document."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from pydantic import AfterValidator, Field

from schema.base import CapabilityInput, CapabilityOutput

MAX_NOTE_LENGTH = 5_000
MAX_NOTES_PER_DOCUMENT = 200
# Earlier texts a note keeps; older ones are dropped (the note says how many edits it had).
MAX_REVISIONS = 50
DOCUMENT_ID = "The document (doc_…)"
NOTE_ID = "Note id (note_…)"


def _words(text: str) -> str:
    """A note has words; line breaks and tabs are kept, other control characters are not."""
    text = text.strip()
    if not text:
        raise ValueError("a note has at least one letter or digit")
    if any((ord(ch) < 0x20 and ch not in "\n\t") or ord(ch) == 0x7F for ch in text):
        raise ValueError("must not contain control characters other than line breaks and tabs")
    return text.replace("\r\n", "\n")


NoteText = Annotated[str, AfterValidator(_words)]
NOTE_TEXT = Field(min_length=1, max_length=MAX_NOTE_LENGTH, description="The note's text")


class NoteRevision(CapabilityOutput):
    """An earlier text of a note: what it said, and who changed it when."""

    text: str = Field(description="What the note said before this edit")
    editedBy: str = Field(description="Who changed it (user id)")
    editedAt: datetime = Field(description="When it was changed")


class Note(CapabilityOutput):
    """A note on a document."""

    id: str = Field(description=NOTE_ID)
    documentId: str = Field(description=DOCUMENT_ID)
    text: str = Field(description="What it says now")
    author: str = Field(description="Who wrote it (user id)")
    authorEmail: str | None = Field(default=None, description="Its author's e-mail address")
    createdAt: datetime = Field(description="When it was written")
    updatedAt: datetime = Field(description="When it was last changed")
    edits: int = Field(default=0, description="How many times it was changed")
    history: list[NoteRevision] = Field(
        default_factory=list, description="Its earlier texts, the newest first (at most 50)"
    )
    viewerCanEdit: bool = Field(default=False, description="Whether the caller may change it")
    viewerCanDelete: bool = Field(default=False, description="Whether the caller may delete it")


class ListNotes(CapabilityInput):
    """The notes of one document."""

    documentId: str = Field(min_length=1, max_length=100, description=DOCUMENT_ID)


class NoteList(CapabilityOutput):
    """A document's notes, oldest first."""

    notes: list[Note] = Field(description="Its notes, oldest first")


class AddNote(CapabilityInput):
    """A new note on a document."""

    documentId: str = Field(min_length=1, max_length=100, description=DOCUMENT_ID)
    text: NoteText = NOTE_TEXT


class UpdateNote(CapabilityInput):
    """A note's new text."""

    documentId: str = Field(min_length=1, max_length=100, description=DOCUMENT_ID)
    id: str = Field(min_length=1, max_length=100, description=NOTE_ID)
    text: NoteText = NOTE_TEXT


class NoteRef(CapabilityInput):
    """One note of a document."""

    documentId: str = Field(min_length=1, max_length=100, description=DOCUMENT_ID)
    id: str = Field(min_length=1, max_length=100, description=NOTE_ID)


class NoteResult(CapabilityOutput):
    """The note as it is now."""

    note: Note = Field(description="The note")


class DeletedNote(CapabilityOutput):
    """A note that was deleted."""

    id: str = Field(description=NOTE_ID)
    deleted: bool = Field(description="Always true")
