"""The documents repository: every read and write of a document, scoped to one workspace here.

This package's ``__init__`` is its public surface: code above persistence (``resolvers``,
``app``) imports these names from ``persistence.documents`` and never a submodule (the
``documents-surface`` contract in ``pyproject.toml``). The surface is:

    the repository   ``Documents`` (``store.documents``)
    selections       ``DocumentQuery`` and the fields each capability may filter on
                     (``SEARCH_FIELDS``, ``COUNT_FIELDS``)
    pages            ``Page`` (rows, each row's opaque key, whether more follow), ``PageKey``,
                     ``NotAPageKey``: the keyset is built and read here, callers keep keys
    records          ``StoredDocument`` / ``StoredFile`` and the mapping of a record to the
                     API's values (``from_record``)
    duplicates       the checks a new document's fields imply, and who arrived first
    results          totals, aggregates, notes, bulk edits, the edit history's entries
    time series      the buckets of ``documents.count``/``aggregate``'s filled gaps
    the index's view what the in-memory search index evaluates and embeds of a document
                     (``predicate``, ``FILTER_PATHS``, ``searchable_texts``, ``embedding_text``,
                     the stored vector's codec)

``Documents`` is one object made of one mixin per concern, each in its own module over the
collection's write methods (``collection``):

    collection   the collection, its indexes, the only methods that write (each stamps
                 ``indexedAt`` through ``stamp``)
    windows      newest-first reads in widening date windows
    reads        by id, sorted pages, counts, duplicates, what a rule matches
    pages        keyset pages over ``reads``: each row's key, the next page's filter
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
from persistence.documents.buckets import (
    MAX_BUCKETS,
    TooManyBuckets,
    bucket_keys,
    fillable,
    key_day,
    range_of,
)
from persistence.documents.buckets import check as check_buckets
from persistence.documents.bulk import DocumentBulkEdits, FieldUpdate
from persistence.documents.edits import EditEntry
from persistence.documents.fields import COUNT_FIELDS, SEARCH_FIELDS
from persistence.documents.matching import FILTER_PATHS, UnsupportedFilter, predicate
from persistence.documents.notes import DocumentNotes, NotesChanged
from persistence.documents.pages import DocumentPages, NotAPageKey, Page, PageKey
from persistence.documents.query import (
    DocumentQuery,
    arrived_before,
    combined,
    duplicate_rules_of,
)
from persistence.documents.records import (
    StoredDocument,
    StoredFile,
    from_record,
    searchable_texts,
)
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
from persistence.documents.vectors import (
    MODEL_ID,
    Vectorize,
    embedding_text,
    from_stored,
    stored_fields,
)
from persistence.documents.writes import DocumentWrites


class Documents(
    DocumentWrites,
    DocumentPages,
    DocumentNotes,
    DocumentBulkEdits,
    DocumentTotals,
    DocumentAggregates,
    DocumentSearchData,
):
    """The ``documents`` collection; the workspace id is the first argument of every method."""


__all__ = [
    "COUNT_FIELDS",
    "FILTER_PATHS",
    "INDEX_STATE",
    "MAX_BUCKETS",
    "MODEL_ID",
    "SEARCH_FIELDS",
    "Aggregate",
    "AggregateGroup",
    "CurrencyTotal",
    "DocumentQuery",
    "Documents",
    "EditEntry",
    "FieldUpdate",
    "NotAPageKey",
    "NotesChanged",
    "Page",
    "PageKey",
    "PreferredTotal",
    "StoredDocument",
    "StoredFile",
    "TooManyBuckets",
    "Totals",
    "TotalsGroup",
    "UnsupportedFilter",
    "Vectorize",
    "arrived_before",
    "bucket_keys",
    "check_buckets",
    "combined",
    "duplicate_rules_of",
    "embedding_text",
    "fillable",
    "from_record",
    "from_stored",
    "key_day",
    "predicate",
    "range_of",
    "searchable_texts",
    "stored_fields",
    "vector_index_definition",
    "vector_search_pipeline",
]
