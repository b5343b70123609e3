"""The documents collection itself: its indexes, and the only methods that write to it.

Every write of a document passes through ``insert``, ``update_one``, ``update_many``,
``update_before`` or ``delete_queued`` here, and each update through ``stamped``
(``persistence.documents.stamp``): no setter can change what a search index keeps without
moving ``indexedAt``. The concerns built on this (reads, pages, writes, notes, bulk edits,
totals, aggregates, search data) are the collaborators ``persistence.documents.Documents``
holds; each is given this one handle (and the other concerns it needs) when it is built.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any, cast

from motor.motor_asyncio import AsyncIOMotorDatabase
from pymongo import ASCENDING, DESCENDING, IndexModel, ReturnDocument
from pymongo.errors import ExecutionTimeout

from persistence.documents.edits import DocumentEdits
from persistence.documents.query import DocumentQuery
from persistence.documents.regex_reads import RegexRead, matched_here, regex_fields
from persistence.documents.rollups import ROLLUP_FIELDS, DocumentRollups
from persistence.documents.scan_turns import ScanTurns, has_regex
from persistence.documents.stamp import stamped, stamped_record
from persistence.documents.vectors import Vectorize, embedding_text, stored_fields
from persistence.durability import journaled
from persistence.errors import QueryTimeout
from persistence.events import DocumentEventLog
from persistence.ids import utcnow
from persistence.plans import honours_hints
from persistence.units import joined

log = logging.getLogger("fincap.documents")

# Compare-and-set writes (``update_before``): lost races before the atomic fallback.
SWAP_ATTEMPTS = 3

# The index the hot reads are built for: a workspace's documents (its archive filter an
# equality), newest first. Newest-first pages, counts, the dashboard's reads of the documents
# and a ranked search's candidates name it (``hint``, ``persistence.plans``).
NEWEST_INDEX = "workspace_archived_date"

# The index a search index's read of what changed since it last looked is built for.
CHANGES_INDEX = "workspace_indexed"

INDEXES = [
    IndexModel(
        [
            ("workspaceId", ASCENDING),
            ("archived", ASCENDING),
            ("docDate", DESCENDING),
            ("_id", DESCENDING),
        ],
        name=NEWEST_INDEX,
    ),
    IndexModel([("workspaceId", ASCENDING), ("amount", DESCENDING)], name="workspace_amount"),
    IndexModel(
        [("workspaceId", ASCENDING), ("preferredCents", DESCENDING)], name="workspace_converted"
    ),
    IndexModel([("workspaceId", ASCENDING), ("merchant", ASCENDING)], name="workspace_merchant"),
    IndexModel([("workspaceId", ASCENDING), ("category", ASCENDING)], name="workspace_category"),
    IndexModel([("workspaceId", ASCENDING), ("searchTerms", ASCENDING)], name="workspace_terms"),
    # Search indexes in memory re-read what changed since they last looked.
    IndexModel([("workspaceId", ASCENDING), ("indexedAt", ASCENDING)], name=CHANGES_INDEX),
    IndexModel([("workspaceId", ASCENDING), ("invoiceId", ASCENDING)], name="workspace_invoice"),
    IndexModel([("workspaceId", ASCENDING), ("file.sha256", ASCENDING)], name="workspace_sha256"),
    IndexModel(
        [("workspaceId", ASCENDING), ("duplicateOf", ASCENDING)], name="workspace_duplicate_of"
    ),
    # Multikey: which documents list a document among their duplicates.
    IndexModel(
        [("workspaceId", ASCENDING), ("duplicates", ASCENDING)], name="workspace_duplicates"
    ),
    # Billing: a workspace's documents processed per day (``DocumentTotals.billed``).
    IndexModel([("workspaceId", ASCENDING), ("billedOn", ASCENDING)], name="workspace_billed"),
    # The review queue: a workspace's documents that need review, oldest first (``Review`` page,
    # ``needsReview`` where-clause), and their count.
    IndexModel(
        [
            ("workspaceId", ASCENDING),
            ("needsReview", ASCENDING),
            ("createdAt", ASCENDING),
            ("_id", ASCENDING),
        ],
        name="workspace_review",
    ),
    # Every workspace's unfinished documents, for the start-up check that each has a job.
    IndexModel([("processingStatus", ASCENDING)], name="processing_status"),
]


class DocumentCollection:
    """The ``documents`` collection handle the concerns share: the collection, its history and
    rollups, its event log, and the only methods that write."""

    def __init__(self, db: AsyncIOMotorDatabase, vectorize: Vectorize | None = None) -> None:
        # Joined: an intake inserts its documents in the same unit as its activity item and
        # jobs (``persistence.units``).
        self.db = db
        self.docs = joined(db["documents"])
        self._durable = joined(journaled(db["documents"]))
        self.edits = DocumentEdits(db)
        self.rollups = DocumentRollups(db)
        # Reads filtered by a regex, one at a time per workspace (``scan_turns``).
        self._scan_turns = ScanTurns()
        # Embeds documents as they are written (None: no embeddings; ``fincap admin reindex``
        # adds them later).
        self.vectorize = vectorize
        # What changed, for live subscribers: the writes below append to it (``writes``).
        self.events = DocumentEventLog(db)
        # Whether the store bounds a hinted read by its filter (None: not asked yet).
        self._hints: bool | None = None
        # Whether regex conditions are matched in this process (``regex_reads``); None: where
        # the store is the embedded one (its hints are not bounds), as ``_hints`` says.
        self.regex_here: bool | None = None

    async def ensure_indexes(self) -> None:
        await self.docs.create_indexes(INDEXES)
        await self.edits.ensure_indexes()
        await self.rollups.ensure_indexes()
        await self.events.ensure_indexes()

    @staticmethod
    def now() -> datetime:
        """The repository's clock, read in this one place (tests move it)."""
        return utcnow()

    # -- the writes (every one stamps through ``stamped``) -----------------------------------

    async def insert(self, records: Sequence[Mapping[str, Any]], now: datetime) -> Any:
        """Insert new records, each stamped; part of an acknowledged intake
        (``persistence.durability``): on disk when answered."""
        stamped_records = [stamped_record(record, now) for record in records]
        return await self._durable.insert_many(stamped_records, ordered=False)

    async def update_one(
        self,
        selector: Mapping[str, Any],
        update: Mapping[str, Mapping[str, Any]],
        now: datetime | None = None,
    ) -> Any:
        return await self.docs.update_one(dict(selector), stamped(update, now or self.now()))

    async def update_many(
        self,
        selector: Mapping[str, Any],
        update: Mapping[str, Mapping[str, Any]],
        now: datetime | None = None,
    ) -> Any:
        return await self.docs.update_many(dict(selector), stamped(update, now or self.now()))

    async def update_before(
        self,
        selector: Mapping[str, Any],
        change: Mapping[str, Any],
        fields: Iterable[str] | None,
        now: datetime | None = None,
    ) -> dict[str, Any] | None:
        """``$set`` ``change`` on the document ``selector`` picks (``_id`` first); the record as
        it was just before (only ``fields``, None: all), or None when none matched.

        ``find_one_and_update`` says this in one call, but the embedded store re-checks its
        write under a top-level ``$and``, which it cannot plan: every such write scans the
        whole collection, every workspace (100 ms at 10k documents, against 1-3 ms for a read
        and an ``update_one``). So the record is read, and the update applies only while the
        fields the rollups depend on still hold the values read (compare and set): the rows
        always move from the record the write replaced. A write that loses ``SWAP_ATTEMPTS``
        races in a row falls back to ``find_one_and_update``.
        """
        update = stamped({"$set": change}, now or self.now())
        wanted = None if fields is None else {name: 1 for name in {*fields, *ROLLUP_FIELDS}}
        for _ in range(SWAP_ATTEMPTS):
            before = await self.docs.find_one(selector, wanted)
            if before is None:
                return None
            guard = {name: before.get(name) for name in sorted(ROLLUP_FIELDS)}
            result = await self.docs.update_one({**selector, **guard}, update)
            if result.matched_count:
                return cast(dict[str, Any], before)
        found = await self.docs.find_one_and_update(
            selector,
            update,
            projection=wanted,
            return_document=ReturnDocument.BEFORE,
        )
        return cast(dict[str, Any] | None, found)

    async def delete_queued(
        self, workspace_id: str, document_id: str, fields: Iterable[str]
    ) -> dict[str, Any] | None:
        """Remove a still-queued document; its ``fields`` as they were (None: none matched).
        Search indexes drop ids that no longer exist when they list candidates."""
        removed = await self.docs.find_one_and_delete(
            {"_id": document_id, "workspaceId": workspace_id, "processingStatus": "queued"},
            projection={name: 1 for name in fields},
        )
        return cast(dict[str, Any] | None, removed)

    # -- shared by the concerns --------------------------------------------------------------

    async def embed(self, documents: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """Storage fields of the embeddings of ``documents`` (API-level fields), one per
        document; empty ones when embedding is off or fails (the write goes on: a document is
        never lost for want of its vector, and ``fincap admin reindex`` adds it later)."""
        if not documents:
            return []
        none: dict[str, Any] = {"embedding": None, "embeddingModel": None}
        if self.vectorize is None:
            return [dict(none) for _ in documents]
        texts = [embedding_text(d) for d in documents]
        wanted = [i for i, text in enumerate(texts) if text]  # a queued upload has no text yet
        out = [dict(none) for _ in documents]
        if not wanted:
            return out
        try:
            vectors = await self.vectorize([texts[i] for i in wanted])
        except Exception:
            log.exception("embedding failed; the documents are stored without vectors")
            return out
        for i, row in zip(wanted, vectors, strict=True):
            out[i] = stored_fields(row)
        return out

    async def hint(self, index: str) -> dict[str, str]:
        """The read option naming ``index`` (``{"hint": index}``) where the store bounds a
        hinted read by its filter, nothing where a hint would walk the whole index, every
        workspace's (the embedded store: ``persistence.plans``). Asked once per process."""
        if self._hints is None:
            self._hints = await honours_hints(self.db)
        return {"hint": index} if self._hints else {}

    async def scope_hint(self, words: str | None) -> dict[str, str]:
        """``_hint(NEWEST_INDEX)`` for a read of the workspace's documents by the where clause
        and the archive and export filters; none with ``words``, whose prefix ranges on
        ``workspace_terms`` select fewer entries than the workspace's whole index range."""
        return {} if words is not None else await self.hint(NEWEST_INDEX)

    @contextlib.asynccontextmanager
    async def regex_turn(self, workspace_id: str, query: DocumentQuery) -> AsyncIterator[None]:
        """Held while a read of ``query`` runs: its workspace's turn when it has a regex
        (``scan_turns``). A time-out of a regex read names the fields its regexes test."""
        async with self._scan_turns.turn(workspace_id, query.where):
            try:
                yield
            except QueryTimeout as exc:
                if exc.fields or not has_regex(query.where):
                    raise
                raise QueryTimeout(str(exc), regex_fields(query.where_filter())) from exc

    async def regex_matched(self, workspace_id: str, query: DocumentQuery) -> RegexRead:
        """``query`` to read documents by: its regex conditions matched in this process on the
        embedded store (``regex_reads``), as it is elsewhere or without a regex. Called within
        ``regex_turn``."""
        if not has_regex(query.where):
            return RegexRead(query)
        here = self.regex_here
        if here is None:
            await self.hint(NEWEST_INDEX)  # asks the store once
            here = self._hints is False
        if not here:
            return RegexRead(query)
        options = await self.scope_hint(query.words)
        return await matched_here(self.docs, workspace_id, query, options) or RegexRead(query)

    @staticmethod
    async def run(awaitable: Any) -> Any:
        try:
            return await awaitable
        except ExecutionTimeout as exc:
            raise QueryTimeout("query exceeded its time limit") from exc
