"""What a correction changes: the one builder of edit-history entries (documents.update and
documents.bulk-edit record their changes through it)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from persistence.documents.edits import EditEntry
from resolvers.services.document_views import jsonable


def edit_entries(
    current: Mapping[str, Any],
    changes: Mapping[str, Any],
    *,
    by: str,
    via: str,
    at: datetime,
) -> list[EditEntry]:
    """One entry per field of ``changes`` whose value differs from ``current`` (API-level
    values, compared as the API shows them: 4.1 and Decimal("4.10") are the same)."""
    entries: list[EditEntry] = []
    for name, value in changes.items():
        old, new = jsonable(current.get(name)), jsonable(value)
        if old != new:
            entries.append(
                EditEntry(field=name, oldValue=old, newValue=new, editedBy=by, editedAt=at, via=via)
            )
    return entries
