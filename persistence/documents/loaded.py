"""A document read to be changed: the API's values to decide with, the record to write against.

A change is decided on the API's values (what differs, what the edit history says) but written
against the stored record as it was read: ``writes.update_fields`` and ``bulk.update`` compute
the derived fields (search terms, which read the stored-only notes; the preferred amount; the
review flags) from it, and ``writes.mark_reviewed`` sets only while its review fields are still
the ones read. A ``Loaded`` carries both (the values mapped here, once, when first read), so
a caller above persistence reads ``document`` and hands the whole value back to the write; it
never maps a record itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

from persistence.documents.records import StoredDocument, from_record


@dataclass(frozen=True)
class Loaded:
    """One document as read: ``stored`` is what the write compares and derives from (a
    projection when the read asked for some fields only); ``document`` its API values."""

    stored: StoredDocument

    @cached_property
    def document(self) -> dict[str, Any]:
        """The API's values, mapped on first use and kept: a write that returns a ``Loaded``
        its caller ignores (the pipeline's, a rule's correction) maps nothing."""
        return from_record(self.stored)

    @property
    def id(self) -> str:
        return self.stored["_id"]
