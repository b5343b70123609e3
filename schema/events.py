"""Contract models of live document events (GraphQL ``documentEvents``, ``GET /v1/events``)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import Field, PrivateAttr

from domain.events import EventType
from schema.base import CapabilityOutput
from schema.documents import Document

# ``lagged`` is not stored: it tells a subscriber too slow to keep up what it missed.
DocumentEventKind = Literal[EventType, "lagged"]


class DocumentEvent(CapabilityOutput):
    """Something happened to a document of the workspace (or, ``lagged``, the subscriber fell
    behind and missed ``skipped`` events: read the documents again)."""

    id: str = Field(description="The event's id: resume after it (SSE ``Last-Event-ID``)")
    type: DocumentEventKind = Field(description="What happened")
    documentId: str | None = Field(None, description="The document it happened to")
    at: datetime = Field(description="When it happened (UTC)")
    document: Document | None = Field(
        None,
        description="The document as documents.get shows it when the event was delivered "
        "(without its edit history); null when it no longer exists",
    )
    skipped: int | None = Field(None, description="lagged: how many events were missed")
    # Its JSON as an SSE stream sends it, made once for all the workspace's streams.
    _serialized: str | None = PrivateAttr(None)
    # The fields a where-clause reads of the document as stored, read to render this event: a
    # filtered subscription tests them with the in-memory matcher. Never sent.
    _stored: dict[str, Any] | None = PrivateAttr(None)
