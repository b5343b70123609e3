"""What can happen to a document, as live subscribers are told (``persistence.events`` stores
them, ``schema.events`` shows them)."""

from __future__ import annotations

from typing import Literal

EventType = Literal[
    "document.created",
    "document.processed",
    "document.updated",
    "document.archived",
    "document.unarchived",
]
