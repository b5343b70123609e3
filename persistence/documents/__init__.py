"""The documents repository: every read and write of a document, scoped to one workspace here.

``Documents`` is one object (``store.documents``) made of one mixin per concern, each in its
own module over the collection's write methods (``collection``):

    collection   the collection, its indexes, the only methods that write (each stamps
                 ``indexedAt`` through ``stamp``)
    windows      newest-first reads in widening date windows
    reads        by id, sorted pages, counts, duplicates, what a rule matches
    writes       new documents, corrections, processing and export state, archiving
    notes        a document's notes (compare and set, with their search terms)
    bulk         bulk edits (documents.bulk-edit, update rules)
    totals       documents.count's numbers, from the rollups or the documents
    search       index rows, embeddings, ``$vectorSearch``

What a document looks like in storage is ``records``; which documents a read selects is
``query``; the edit history (``edits``), the dashboard rollups (``rollups``), the fields each
capability may filter on (``fields``) and what an embedding is made of (``vectors``) have
their own modules.
"""

from __future__ import annotations

from persistence.documents.aggregates import Aggregate, AggregateGroup, DocumentAggregates
from persistence.documents.bulk import DocumentBulkEdits, FieldUpdate
from persistence.documents.notes import DocumentNotes, NotesChanged
from persistence.documents.search import (
    DocumentSearchData,
    vector_index_definition,
    vector_search_pipeline,
)
from persistence.documents.stamp import INDEX_STATE
from persistence.documents.totals import (
    CurrencyTotal,
    DocumentTotals,
    PreferredTotal,
    Totals,
    TotalsGroup,
)
from persistence.documents.writes import DocumentWrites


class Documents(
    DocumentWrites,
    DocumentNotes,
    DocumentBulkEdits,
    DocumentTotals,
    DocumentAggregates,
    DocumentSearchData,
):
    """The ``documents`` collection; the workspace id is the first argument of every method."""


__all__ = [
    "INDEX_STATE",
    "Aggregate",
    "AggregateGroup",
    "CurrencyTotal",
    "Documents",
    "FieldUpdate",
    "NotesChanged",
    "PreferredTotal",
    "Totals",
    "TotalsGroup",
    "vector_index_definition",
    "vector_search_pipeline",
]
