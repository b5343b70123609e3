"""Keyset pages of a sorted listing: the documents, each one's key, and whether more follow.

A page key is the position of one row in a ``(sort field, _id)`` order: its stored sort value
and its id. It is built here from the stored row and turned back into a ``Keyset`` here, so a
caller never learns the stored path of a field nor how a position is written: it keeps the key
as an opaque JSON-able mapping (the resolvers sign it into a cursor) and hands it back for the
next page. The key's two entries, ``"v"`` and ``"id"``, are the ones cursors have always held,
so cursors issued before this module existed still read.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from persistence.documents.query import DocumentQuery, Keyset
from persistence.documents.reads import DocumentReads
from persistence.documents.records import from_record, stored_path

# A row's position: {KEY_VALUE: its stored sort value, KEY_ROW: its id}. JSON-able but for dates.
PageKey = Mapping[str, Any]
# The key's two entries, named here only (a signed cursor holds them as they are: the
# resolvers' ``cursors`` checks a cursor's entries against these names).
KEY_VALUE, KEY_ROW = "v", "id"


class NotAPageKey(ValueError):
    """A key handed back for a next page that no page gave out (it has no row id)."""


@dataclass(frozen=True)
class Page:
    """One page of documents (the API's values) in the order asked for, with each one's key
    (same length and order) and whether documents follow the last one."""

    documents: list[dict[str, Any]]
    keys: list[PageKey]
    more: bool

    @property
    def next_key(self) -> PageKey | None:
        """Where the next page starts (None: this page is the last)."""
        return self.keys[-1] if self.more and self.keys else None

    def reversed(self) -> Page:
        """The same rows the other way round (a page read backwards, shown forwards)."""
        return Page(self.documents[::-1], self.keys[::-1], self.more)


def key_of(row: Mapping[str, Any], sort_by: str) -> PageKey:
    """The key of a stored ``row`` in the order of the API field ``sort_by``."""
    value: Any = row
    for part in stored_path(sort_by).split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return {KEY_VALUE: value, KEY_ROW: row["_id"]}


def keyset_of(key: PageKey, sort_by: str, order: int) -> Keyset:
    """The position ``key`` as a filter's ``Keyset``; ``NotAPageKey`` when it names no row."""
    if KEY_ROW not in key:
        raise NotAPageKey("not a key of a page")
    return Keyset(stored_path(sort_by), order, key.get(KEY_VALUE), key[KEY_ROW])


class DocumentPages:
    """Keyset pages over ``DocumentReads.find``: the one place a position becomes a filter and
    back."""

    def __init__(self, reads: DocumentReads) -> None:
        self._reads = reads

    def page(
        self,
        workspace_id: str,
        query: DocumentQuery,
        *,
        sort_by: str = "docDate",
        order: int = -1,
        limit: int,
        after: PageKey | None = None,
        fields: Iterable[str] | None = None,
    ) -> Awaitable[Page]:
        """Up to ``limit`` documents of ``query`` after the row ``after`` names (None: from the
        start), sorted by the API field ``sort_by`` (ties by id) in ``order``.

        A key no page gave out raises ``NotAPageKey`` at the call, before the read is awaited
        or anything else is done with the call (a caller can refuse it before metering it).
        One more row than the page is read to tell whether more follow; ``find`` reads the
        sort key even in a projection, so every row has its key.
        """
        if after is not None:
            query = dataclasses.replace(query, after=keyset_of(after, sort_by, order))
        return self._page(workspace_id, query, sort_by, order, limit, fields)

    async def _page(
        self,
        workspace_id: str,
        query: DocumentQuery,
        sort_by: str,
        order: int,
        limit: int,
        fields: Iterable[str] | None,
    ) -> Page:
        rows = await self._reads.find(
            workspace_id, query, sort_by=sort_by, order=order, limit=limit + 1, fields=fields
        )
        more = len(rows) > limit
        rows = rows[:limit]
        # Each key from the stored row (its stored sort value), then the row as the API's values.
        return Page(
            [from_record(row) for row in rows], [key_of(row, sort_by) for row in rows], more
        )
