"""The documents repository: every read and write of a document, scoped to one workspace here.

This package's ``__init__`` is its public surface: code above persistence (``resolvers``,
``app``) imports these names from ``persistence.documents`` and never a submodule (the
``documents-surface`` contract in ``pyproject.toml``). The surface is:

    the repository   ``Documents`` (``store.documents``)
    selections       ``DocumentQuery`` and the fields each capability may filter on
                     (``SEARCH_FIELDS``, ``COUNT_FIELDS``)
    pages            ``Page`` (documents as the API's values, each one's opaque key, whether
                     more follow), ``PageKey`` (its entries ``KEY_VALUE``, ``KEY_ROW``),
                     ``NotAPageKey``: the keyset is built and read here, callers keep keys
    documents        the API's values: ``reads.document``/``documents`` to show, ``Loaded``
                     (``reads.loaded``/``loaded_many``/``find_for_edit``) to change: its
                     ``document`` to decide with, handed back whole to ``writes.update_fields``,
                     ``writes.mark_reviewed`` or a ``FieldUpdate``, which compare and derive
                     from the record as read. The mapping of a record to those values
                     (``records.from_record``) is not on this surface: only this package maps
    records          ``StoredDocument`` / ``StoredFile``, for the callers that need the
                     stored form (the pipeline's original in GridFS and arrival order, the
                     search index's stored vectors and filter fields, a live subscription's
                     filter), and ``values_after``
    duplicates       the checks a new document's fields imply, and who arrived first
    results          totals, aggregates, notes, bulk edits, the edit history's entries
    time series      the buckets of ``documents.count``/``aggregate``'s filled gaps
    the index's view what the in-memory search index evaluates and embeds of a document
                     (``predicate``, ``FILTER_PATHS``, ``searchable_texts``, ``embedding_text``,
                     the stored vector's codec)

``Documents`` is one object holding one collaborator per concern, each its own class in its
own module, built over the one shared collection handle (``collection``) and given the other
concerns it needs; a caller names the concern (``store.documents.reads.get(...)``). Until
issue 36 it was one class of seven mixins: one object of 73 methods (49 without a leading
underscore), any of which could call any other. Now each concern has only its own methods (19
at most) and says what it depends on; ``Documents`` itself has one (``ensure_indexes``):

    collection   ``documents.collection``: the collection, its indexes, the only methods that
                 write (each stamps ``indexedAt`` through ``stamp``), the event log
                 (also ``documents.events``), ``vectorize`` and ``regex_here``
    reads        by id (records for a writer, the API's values to show, ``Loaded`` to
                 change), sorted pages, counts, duplicates, what a rule matches;
                 newest-first reads in widening date windows through its ``windows``
    pages        keyset pages over ``reads``: each row's key, the next page's filter, the
                 rows as the API's values
    writes       new documents, corrections, processing and export state, archiving, duplicate
                 links, the review queue (over the collection, and ``reads`` for what a move
                 takes along)
    notes        a document's notes (compare and set, with their search terms)
    bulk         bulk edits (documents.bulk-edit, update rules)
    totals       documents.count's numbers, from the rollups or the documents
    aggregates   documentsAggregate's groups, from the rollups or the documents
    search       index rows, embeddings, ``$vectorSearch``

What a document looks like in storage is ``records``; which documents a read selects is
``query``; the edit history (``edits``), the dashboard rollups (``rollups``), the fields each
capability may filter on (``fields``) and what an embedding is made of (``vectors``) have
their own modules.
"""

from __future__ import annotations

from motor.motor_asyncio import AsyncIOMotorDatabase

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
from persistence.documents.collection import DocumentCollection
from persistence.documents.edits import EditEntry
from persistence.documents.fields import COUNT_FIELDS, SEARCH_FIELDS
from persistence.documents.loaded import Loaded
from persistence.documents.matching import FILTER_PATHS, UnsupportedFilter, predicate
from persistence.documents.notes import DocumentNotes, NotesChanged
from persistence.documents.pages import (
    KEY_ROW,
    KEY_VALUE,
    DocumentPages,
    NotAPageKey,
    Page,
    PageKey,
)
from persistence.documents.query import (
    DocumentQuery,
    arrived_before,
    combined,
    duplicate_rules_of,
)
from persistence.documents.reads import DocumentReads
from persistence.documents.records import (
    StoredDocument,
    StoredFile,
    searchable_texts,
    values_after,
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


class Documents:
    """The ``documents`` repository: one collaborator per concern, each over the one shared
    collection handle; a caller names the concern it uses (``documents.reads.get(...)``,
    ``documents.writes.insert_many(...)``). The workspace id is the first argument of every
    method of every concern."""

    def __init__(self, db: AsyncIOMotorDatabase, vectorize: Vectorize | None = None) -> None:
        # The collection, its indexes, and the only methods that write; what every concern
        # is built over. Its ``vectorize`` and ``regex_here`` are the deployment's settings.
        self.collection = DocumentCollection(db, vectorize)
        # What changed, for live subscribers (the writes of every concern append to it).
        self.events = self.collection.events
        self.reads = DocumentReads(self.collection)
        self.pages = DocumentPages(self.reads)
        self.writes = DocumentWrites(self.collection, self.reads)
        self.notes = DocumentNotes(self.collection)
        self.bulk = DocumentBulkEdits(self.collection)
        self.totals = DocumentTotals(self.collection)
        self.aggregates = DocumentAggregates(self.collection)
        self.search = DocumentSearchData(self.collection)

    async def ensure_indexes(self) -> None:
        """The collection's indexes (its history's, rollups' and events' too), then the
        one-time review migration of older documents (``writes``)."""
        await self.collection.ensure_indexes()
        await self.writes.migrate_review()


__all__ = [
    "COUNT_FIELDS",
    "FILTER_PATHS",
    "INDEX_STATE",
    "KEY_ROW",
    "KEY_VALUE",
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
    "Loaded",
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
    "from_stored",
    "key_day",
    "predicate",
    "range_of",
    "searchable_texts",
    "stored_fields",
    "values_after",
    "vector_index_definition",
    "vector_search_pipeline",
]
