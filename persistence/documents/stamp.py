"""The one stamp of ``indexedAt``: search indexes re-read what changed since they last looked.

A search index (``resolvers.services.documents.search_indexes``) keeps, per document,
``INDEXED_PATHS``: the searchable text, the search terms, the embedding, ``INDEX_STATE`` and the
fields filters read. It re-reads the documents whose ``indexedAt`` is at or after its last look, so
a write that changes one of those paths and does not move ``indexedAt`` leaves every index of every
process wrong until restart.

No writer stamps by hand: every write of the documents collection goes through
``DocumentCollection``'s write methods (``persistence.documents.collection``), which pass the
update through ``stamped`` here. ``tests/documents/test_indexed_stamp.py`` fails on a write
that reaches the collection any other way.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from persistence.documents.matching import FILTER_PATHS
from persistence.documents.records import LINE_DESCRIPTIONS, NOTE_TEXTS, SEARCHABLE_FIELDS

STAMP = "indexedAt"
# What search indexes keep of a document besides its text and vector, to list a search's
# candidates without the database.
INDEX_STATE = ("archived", "exportStatus", "processingStatus")
# Every stored path a search index reads (``documents.search.index_rows`` reads exactly these): with
# the fields a where-clause reads (``FILTER_PATHS``), a ranked search with one takes its
# candidates from the index too.
INDEXED_PATHS = tuple(
    dict.fromkeys(
        (
            *SEARCHABLE_FIELDS,
            LINE_DESCRIPTIONS,
            NOTE_TEXTS,
            "searchTerms",
            "embedding",
            *INDEX_STATE,
            *FILTER_PATHS,
        )
    )
)


def touches_index(paths: Iterable[str]) -> bool:
    """Whether writing ``paths`` (stored paths, dotted or not) changes what an index keeps:
    a path the index reads, one inside it, or one holding it (``lineItems`` holds
    ``lineItems.description``)."""
    for path in paths:
        for indexed in INDEXED_PATHS:
            if path == indexed or path.startswith(indexed + ".") or indexed.startswith(path + "."):
                return True
    return False


def stamped(update: Mapping[str, Mapping[str, Any]], now: datetime) -> dict[str, Any]:
    """``update`` (a MongoDB update: ``{"$set": …, "$pull": …}``) with ``indexedAt`` set to
    ``now`` in its ``$set`` when any operator writes an indexed path; unchanged otherwise."""
    written = [path for fields in update.values() for path in fields]
    if STAMP in written:
        raise ValueError(f"{STAMP} is stamped by the write, never set by a caller")
    if not touches_index(written):
        return {operator: dict(fields) for operator, fields in update.items()}
    result = {operator: dict(fields) for operator, fields in update.items()}
    result.setdefault("$set", {})[STAMP] = now
    return result


def stamped_record(record: Mapping[str, Any], now: datetime) -> dict[str, Any]:
    """A new document's record with its first ``indexedAt`` (a new document is new to every
    index)."""
    if STAMP in record:
        raise ValueError(f"{STAMP} is stamped by the write, never set by a caller")
    return {**record, STAMP: now}
