"""The documents repository: every read and write of a document, scoped to one workspace here.

What a document looks like in storage is ``persistence/document_records.py``; which documents a
read selects is ``persistence/document_query.py``; its edit history lives in the
``document_edits`` collection (``persistence/document_edits.py``), written and read through this
repository. Every change of a stored document's fields is built by ``_set_changes``, the one
place where a write knows the record before and the values after (derived data such as the
search terms is recomputed there). Every write that can move a document between dashboard
rollup rows (``persistence/document_rollups.py``) reads the record as it was in the same
operation and hands old and new to the rollups before it returns.
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, cast

from motor.motor_asyncio import AsyncIOMotorDatabase
from pymongo import ASCENDING, DESCENDING, IndexModel, ReturnDocument
from pymongo.errors import BulkWriteError, ExecutionTimeout

from domain.documents import ArchiveFilter, CountGroupBy
from persistence.document_edits import DocumentEdits, EditEntry
from persistence.document_query import (
    ARCHIVE_FILTERS,
    ARRIVAL_ORDER,
    NOT_AN_ORIGINAL,
    TIME_FORMATS,
    UNFINISHED,
    DocumentQuery,
    DuplicateRule,
    arrival,
    combined,
    group_key,
    is_time_grouping,
    match_stages,
)
from persistence.document_records import (
    LINE_DESCRIPTIONS,
    PREFERRED_INPUTS,
    SEARCHABLE_FIELDS,
    StoredDocument,
    changes_search_terms,
    from_record,
    preferred_cents,
    projection,
    search_terms,
    stored_path,
    to_record,
)
from persistence.document_rollups import (
    ROLLUP_FIELDS,
    DocumentRollups,
    RowRead,
    row_reads,
)
from persistence.document_vectors import (
    EMBEDDED_PATHS,
    MODEL_ID,
    Vectorize,
    changes_embedding,
    embedding_text,
    stored_fields,
)
from persistence.durability import journaled
from persistence.errors import QueryTimeout
from persistence.ids import utcnow
from persistence.where import AGGREGATE_TIME_LIMIT_MS, QUERY_TIME_LIMIT_MS

log = logging.getLogger("fincap.documents")

BULK_BATCH = 50
# Newest-first reads: the first date window, and how many widening windows before the rest.
NEWEST_FIRST_WINDOW = timedelta(days=7)
NEWEST_WINDOWS = 5
NEWEST_GROWTH = 4
# Once a workspace's page has been read, its first window is sized from the density seen
# (matching documents per day) to hold this many times the page, within these bounds.
NEWEST_MARGIN = 1.5
NEWEST_SPAN_BOUNDS = (timedelta(days=1), timedelta(days=366))
NEWEST_MEMORY = 1024  # (workspace, filter) densities remembered per process
# Rollup rows per batch of a read (the store's reply limit is far above this many rows).
ROWS_BATCH = 20_000
# Compare-and-set writes (``Documents._update_before``): lost races before the atomic fallback.
SWAP_ATTEMPTS = 3
# What search indexes keep of a document besides its text and vector, to list a search's
# candidates without the database (``resolvers.search_indexes``): a write that changes one of
# these stamps ``indexedAt``, as a change of searchable text does.
INDEX_STATE = ("archived", "exportStatus", "processingStatus")

INDEXES = [
    IndexModel(
        [
            ("workspaceId", ASCENDING),
            ("archived", ASCENDING),
            ("docDate", DESCENDING),
            ("_id", DESCENDING),
        ],
        name="workspace_archived_date",
    ),
    IndexModel([("workspaceId", ASCENDING), ("amount", DESCENDING)], name="workspace_amount"),
    IndexModel([("workspaceId", ASCENDING), ("merchant", ASCENDING)], name="workspace_merchant"),
    IndexModel([("workspaceId", ASCENDING), ("category", ASCENDING)], name="workspace_category"),
    IndexModel([("workspaceId", ASCENDING), ("searchTerms", ASCENDING)], name="workspace_terms"),
    # Search indexes in memory re-read what changed since they last looked.
    IndexModel([("workspaceId", ASCENDING), ("indexedAt", ASCENDING)], name="workspace_indexed"),
    IndexModel([("workspaceId", ASCENDING), ("invoiceId", ASCENDING)], name="workspace_invoice"),
    IndexModel([("workspaceId", ASCENDING), ("file.sha256", ASCENDING)], name="workspace_sha256"),
    IndexModel(
        [("workspaceId", ASCENDING), ("duplicateOf", ASCENDING)], name="workspace_duplicate_of"
    ),
    # Multikey: which documents list a document among their duplicates.
    IndexModel(
        [("workspaceId", ASCENDING), ("duplicates", ASCENDING)], name="workspace_duplicates"
    ),
    # Every workspace's unfinished documents, for the start-up check that each has a job.
    IndexModel([("processingStatus", ASCENDING)], name="processing_status"),
]
# What the duplicate check reads of a matching document: its arrival and its standing.
DUPLICATE_FIELDS = {
    "createdAt": 1,
    "intakeOrder": 1,
    "duplicateOf": 1,
    "processingStatus": 1,
}


@dataclass(frozen=True)
class FieldUpdate:
    """New values for some fields of one stored document, and the edits that record them."""

    record: StoredDocument  # as read: the changes are computed from it
    changes: Mapping[str, Any]  # API-level values
    edits: Sequence[EditEntry] = ()


@dataclass(frozen=True)
class CurrencyTotal:
    """Documents of one currency (None: unknown) and the sum of their amounts in cents."""

    currency: str | None
    count: int
    cents: int


@dataclass(frozen=True)
class PreferredTotal:
    """The sum of ``preferredCents`` of the documents converted to one currency."""

    currency: str
    converted: int  # documents that have an amount in that currency
    cents: int


@dataclass(frozen=True)
class TotalsGroup:
    key: Any
    count: int
    by_currency: list[CurrencyTotal]
    preferred: PreferredTotal | None = None


@dataclass(frozen=True)
class Totals:
    """``documents.count``'s numbers: overall per currency, and per group; ``source`` says
    whether the rollups or the documents answered."""

    overall: list[CurrencyTotal]
    groups: list[TotalsGroup] = field(default_factory=list)
    truncated: bool = False
    preferred: PreferredTotal | None = None
    source: str = "documents"


class Documents:
    """The ``documents`` collection; the workspace id is the first argument of every method."""

    def __init__(self, db: AsyncIOMotorDatabase, vectorize: Vectorize | None = None) -> None:
        self._col = db["documents"]
        self._durable = journaled(self._col)
        self._edits = DocumentEdits(db)
        self._rollups = DocumentRollups(db)
        # Matching documents per day near the top of each (workspace, archive filter, caller
        # filter) read newest first, least recently used first: sizes the first date window.
        self._densities: OrderedDict[tuple[str, str, str], float] = OrderedDict()
        # Embeds documents as they are written (None: no embeddings; ``fincap admin reindex``
        # adds them later).
        self.vectorize = vectorize

    async def ensure_indexes(self) -> None:
        await self._col.create_indexes(INDEXES)
        await self._edits.ensure_indexes()
        await self._rollups.ensure_indexes()

    async def rebuild_rollups(self, workspace_id: str) -> int:
        """Recount the workspace's dashboard rollups from its documents; the number of rows."""
        return await self._rollups.rebuild(workspace_id)

    async def stale_rollups(self) -> list[str]:
        """Workspaces whose counts come from their documents until their rollups are rebuilt."""
        return await self._rollups.stale_workspaces()

    # -- new documents ----------------------------------------------------------------------

    @staticmethod
    def prepare(
        workspace_id: str, fields: Mapping[str, Any], now: datetime | None = None
    ) -> StoredDocument:
        """A storage record for new document ``fields`` (which carry ``_id``; an
        ``editHistory`` among them is kept by ``insert_many`` in the history collection)."""
        fields = {name: value for name, value in fields.items() if name != "editHistory"}
        now = now or utcnow()
        record: dict[str, Any] = {
            "archived": False,
            "archivedAt": None,
            "duplicateOf": None,
            "duplicates": [],
            "exportStatus": "not-exported",
            "createdAt": now,
            "updatedAt": now,
            "indexedAt": now,
            **to_record(fields),
            "workspaceId": workspace_id,
        }
        record["searchTerms"] = search_terms(fields)
        record["preferredCents"] = preferred_cents(record)
        return cast(StoredDocument, record)

    async def insert_many(self, workspace_id: str, documents: Sequence[Mapping[str, Any]]) -> int:
        """Insert new documents (API-level ``fields`` with ``_id``); how many were inserted.

        Documents that arrive with an ``editHistory`` (imports, demo and test data) have it
        recorded in the history collection, like any later correction.
        """
        if not documents:
            return 0
        now = utcnow()  # one arrival time for documents that arrive together
        records = [self.prepare(workspace_id, fields, now) for fields in documents]
        for record, vector in zip(records, await self._embed(documents), strict=False):
            record.update(vector)  # type: ignore[typeddict-item]
        try:
            # Part of an acknowledged intake (``persistence.durability``): on disk when answered.
            result = await self._durable.insert_many(records, ordered=False)
        except BulkWriteError as exc:
            failed = {error["index"] for error in exc.details.get("writeErrors", [])}
            inserted = [r for i, r in enumerate(records) if i not in failed]
            await self._rollups.apply(workspace_id, added=inserted)
            raise
        await self._rollups.apply(workspace_id, added=records)
        await self._edits.add(
            workspace_id,
            {
                fields["_id"]: fields["editHistory"]
                for fields in documents
                if fields.get("editHistory")
            },
        )
        return len(result.inserted_ids)

    async def delete_unprocessed(self, workspace_id: str, document_id: str) -> None:
        """Remove a document whose upload was never acknowledged (nothing else refers to it)."""
        removed = await self._col.find_one_and_delete(
            {"_id": document_id, "workspaceId": workspace_id, "processingStatus": "queued"},
            projection={name: 1 for name in ROLLUP_FIELDS},
        )
        if removed is not None:
            await self._rollups.apply(workspace_id, removed=[removed])

    # -- reads ------------------------------------------------------------------------------

    async def get(self, workspace_id: str, document_id: str) -> StoredDocument | None:
        found = await self._col.find_one({"_id": document_id, "workspaceId": workspace_id})
        return cast(StoredDocument | None, found)

    async def get_many(
        self, workspace_id: str, ids: Sequence[str], fields: Iterable[str] | None = None
    ) -> list[StoredDocument]:
        """Documents by id (in no particular order) with the API ``fields`` (None: all)."""
        if not ids:
            return []
        cursor = self._col.find(
            {"_id": {"$in": list(ids)}, "workspaceId": workspace_id},
            projection(fields),
            max_time_ms=QUERY_TIME_LIMIT_MS,
        )
        return cast(list[StoredDocument], await self._run(cursor.to_list(None)))

    async def find(
        self,
        workspace_id: str,
        query: DocumentQuery,
        *,
        sort_by: str = "docDate",
        order: int = -1,
        limit: int = 0,
        fields: Iterable[str] | None = None,
    ) -> list[StoredDocument]:
        """Documents of ``query`` sorted by the API field ``sort_by`` (ties by id).

        With ``fields`` (API names) only those are read, plus the sort key (for cursors).
        """
        path = stored_path(sort_by)
        sort = [(path, order)] if path == "_id" else [(path, order), ("_id", order)]
        wanted = projection(fields)
        if fields is not None:
            wanted[path] = 1
        return await self._find(workspace_id, query, wanted, sort, limit)

    async def find_for_edit(
        self, workspace_id: str, query: DocumentQuery, changing: Iterable[str], limit: int
    ) -> list[StoredDocument]:
        """Documents of ``query`` with the fields a change of ``changing`` reads and rewrites."""
        names = list(changing)
        wanted = {name: 1 for name in names}
        if changes_search_terms(names):
            wanted |= {name: 1 for name in (*SEARCHABLE_FIELDS, LINE_DESCRIPTIONS)}
        if changes_embedding(names):
            wanted |= {name: 1 for name in EMBEDDED_PATHS}
        sort = [("docDate", DESCENDING), ("_id", DESCENDING)]
        return await self._find(workspace_id, query, wanted, sort, limit)

    async def _find(
        self,
        workspace_id: str,
        query: DocumentQuery,
        wanted: Mapping[str, int],
        sort: list[tuple[str, int]],
        limit: int,
    ) -> list[StoredDocument]:
        if limit and sort[0] == ("docDate", DESCENDING) and query.archived != "include":
            return await self._find_newest(workspace_id, query, wanted, sort, limit)
        return await self._aggregate_page(query.stages(workspace_id), wanted, sort, limit)

    async def _aggregate_page(
        self,
        stages: list[dict[str, Any]],
        wanted: Mapping[str, int],
        sort: list[tuple[str, int]],
        limit: int,
    ) -> list[StoredDocument]:
        pipeline = [*stages, {"$sort": dict(sort)}]
        if limit:
            pipeline.append({"$limit": limit})
        if wanted:
            pipeline.append({"$project": dict(wanted)})
        found = self._col.aggregate(pipeline, maxTimeMS=QUERY_TIME_LIMIT_MS).to_list(None)
        return cast(list[StoredDocument], await self._run(found))

    async def _find_newest(
        self,
        workspace_id: str,
        query: DocumentQuery,
        wanted: Mapping[str, int],
        sort: list[tuple[str, int]],
        limit: int,
    ) -> list[StoredDocument]:
        """The newest ``limit`` documents of ``query``, read in date windows that widen.

        The embedded store sorts every document a read selects (it reads 19k to return 20),
        so the first ``$match`` bounds ``docDate`` to a window below the page's start (now, or
        the cursor's date) through the ``workspace_archived_date`` index; a window that comes
        back short is followed by the next one, four times as long, in date order, and after
        ``NEWEST_WINDOWS`` of them one read takes the rest (older and undated documents).
        Bounds sit a millisecond off midnight, where no stored date is, so the store's loss of
        documents equal to an inclusive bound cannot happen. A real MongoDB walks the index in
        order and stops at the limit either way.

        The store's cost is the documents a window holds, so the first window is sized from
        the density the previous read of the same workspace and filter found (the date of its
        last document tells how many days held a page): a dense workspace reads a day or two,
        a sparse or narrowly filtered one reads months at once instead of several widening
        windows. A wrong guess costs reads, never documents.
        """
        scope = match_stages(workspace_id, query.archived)[0]["$match"]
        caller = combined(query.parts())
        keyset = query.after
        start = utcnow()
        upper: datetime | None = None
        if keyset is not None and isinstance(keyset.value, datetime):
            start = upper = _off_midnight(keyset.value + timedelta(days=1))
        memory = (workspace_id, query.archived, repr(caller))
        span = self._first_window(memory, limit)
        # The date of the last document tells the density; strip it where it was not asked.
        # (An exclusion projection keeps it already.)
        inclusion = bool(wanted) and all(wanted.values())
        dated = {**wanted, "docDate": 1} if inclusion and "docDate" not in wanted else wanted
        top, found = start, cast(list[StoredDocument], [])
        lower, filled = start, False
        for _ in range(NEWEST_WINDOWS):
            if _naive_utc(start) - datetime.min <= span + timedelta(days=1):
                break  # a window reaching before year 1: the rest read below takes it all
            lower = _off_midnight(start - span)
            bounds: dict[str, Any] = {"$gt": lower}
            if upper is not None:
                bounds["$lte"] = upper
            stages = [{"$match": {**scope, "docDate": bounds}}]
            if caller:
                stages.append({"$match": caller})
            found += await self._aggregate_page(stages, dated, sort, limit - len(found))
            if len(found) >= limit:
                filled = True
                break
            upper, start, span = lower, lower, span * NEWEST_GROWTH
        if not filled:
            rest = {"$or": [{"docDate": {"$lte": upper}}, {"docDate": None}]} if upper else {}
            stages = match_stages(workspace_id, query.archived, caller, rest)
            found += await self._aggregate_page(stages, dated, sort, limit - len(found))
        self._remember_density(memory, top, found, lower)
        if dated is not wanted:
            for record in found:
                record.pop("docDate", None)
        return found

    def _first_window(self, memory: tuple[str, str, str], limit: int) -> timedelta:
        density = self._densities.get(memory)
        if density is None:
            return NEWEST_FIRST_WINDOW
        self._densities.move_to_end(memory)
        low, high = NEWEST_SPAN_BOUNDS
        return min(high, max(low, timedelta(days=NEWEST_MARGIN * limit / density)))

    def _remember_density(
        self,
        memory: tuple[str, str, str],
        top: datetime,
        found: list[StoredDocument],
        lower: datetime,
    ) -> None:
        """Matching documents per day below ``top``: up to the last one found when the page
        filled, else the page's few over every window read (``lower`` the last bound)."""
        last = found[-1].get("docDate") if found else None
        if isinstance(last, datetime):
            days = (_naive_utc(top) - _naive_utc(last)).total_seconds() / 86400
        else:
            days = (_naive_utc(top) - _naive_utc(lower)).total_seconds() / 86400
        self._densities[memory] = max(len(found), 1) / max(days, 1.0)
        self._densities.move_to_end(memory)
        while len(self._densities) > NEWEST_MEMORY:
            self._densities.popitem(last=False)

    async def count(self, workspace_id: str, query: DocumentQuery) -> int:
        pipeline = [*query.stages(workspace_id), {"$count": "n"}]
        rows = await self._run(
            self._col.aggregate(pipeline, maxTimeMS=QUERY_TIME_LIMIT_MS).to_list(None)
        )
        return int(rows[0]["n"]) if rows else 0

    async def totals(
        self,
        workspace_id: str,
        query: DocumentQuery,
        *,
        group_by: CountGroupBy | None = None,
        max_groups: int = 500,
        preferred_currency: str | None = None,
        use_rollups: bool = True,
    ) -> Totals:
        """Count and per-currency sums, computed in MongoDB; only (group, currency) rows return.

        Groups are the ``max_groups`` largest by count (``truncated`` when there are more);
        time groups come in chronological order (documents without a date last, key None),
        others by count. With ``preferred_currency``, the sums of the documents converted to
        it come too. The rollups answer when the query fits one of their shapes (and
        ``use_rollups``), the documents otherwise; both give the same numbers.
        """
        caller = combined(query.parts())
        source = "documents"
        reads = row_reads(caller, group_by) if use_rollups and _rollups_apply(query) else None
        parts: list[list[dict[str, Any]]] = []
        if reads is not None:
            # The stale check and the row reads at once (one round trip's wait, not two).
            current, *parts = await asyncio.gather(
                self._rollups.is_current(workspace_id),
                *(self._rows(workspace_id, query.archived, read, caller) for read in reads),
            )
            if not current:
                reads = None  # a stale workspace counts its documents
        if reads is None:
            sums = _document_sums(preferred_currency)
            facets = _totals_facets(sums, group_key(group_by), max_groups)
            pipeline = [*query.stages(workspace_id), {"$facet": facets}]
            found = await self._run(
                self._col.aggregate(pipeline, maxTimeMS=AGGREGATE_TIME_LIMIT_MS).to_list(None)
            )
            result = found[0] if found else {}
        else:
            source = "rollups:" + "+".join(dict.fromkeys(read.shape.name for read in reads))
            signed = (
                (row, read.sign) for read, part in zip(reads, parts, strict=True) for row in part
            )
            result = _fold_rows(signed, group_by, preferred_currency, max_groups)
        overall_rows = [row for row in result.get("overall") or [] if row["count"] > 0]
        overall = _currency_totals({**r, "currency": r["_id"]} for r in overall_rows)
        group_rows = result.get("groups") or []
        groups = [
            TotalsGroup(
                key=row["_id"],
                count=row["count"],
                by_currency=_currency_totals(row["byCurrency"]),
                preferred=_preferred(preferred_currency, [row]),
            )
            for row in group_rows[:max_groups]
        ]
        if is_time_grouping(group_by):
            groups.sort(key=lambda group: (group.key is None, group.key or ""))
        return Totals(
            overall=overall,
            groups=groups,
            truncated=len(group_rows) > max_groups,
            preferred=_preferred(preferred_currency, overall_rows),
            source=source,
        )

    async def _rows(
        self, workspace_id: str, archived: ArchiveFilter, read: RowRead, caller: Mapping[str, Any]
    ) -> list[dict[str, Any]]:
        """The rollup rows of one read: the workspace, shape, archive filter and date bounds
        first (index bounds of ``workspace_shape_archived_date``), then the read's own filter
        (else the caller's). Whole rows: they are small, and the embedded store's ``$project``
        cost as much per row as reading it (the day rows of 90 days: 299 ms with it, 148
        without, at 20k documents)."""
        first: dict[str, Any] = {
            "workspaceId": workspace_id,
            "shape": read.shape.name,
            **ARCHIVE_FILTERS[archived],
            **({"docDate": dict(read.dates)} if read.dates else {}),
        }
        then = caller if read.others is None else read.others
        pipeline: list[dict[str, Any]] = [{"$match": first}, *([{"$match": then}] if then else [])]
        found = self._rollups.collection.aggregate(
            # In one batch: a read of a few thousand rows pays no getMore round trips.
            pipeline,
            maxTimeMS=AGGREGATE_TIME_LIMIT_MS,
            batchSize=ROWS_BATCH,
        )
        return cast(list[dict[str, Any]], await self._run(found.to_list(None)))

    async def counts_by_workspace(self, workspace_ids: Sequence[str]) -> dict[str, dict[str, int]]:
        """Active and archived document counts of several workspaces.

        For batched reads (the GraphQL graph's DataLoaders): the caller has authorized every id.
        Each comes from the workspace's few ``total`` rollup rows (one indexed read per
        workspace, concurrently), or, for a stale workspace, from its documents.
        """
        ids = list(dict.fromkeys(workspace_ids))
        tallies = await asyncio.gather(*(self._tally(workspace_id) for workspace_id in ids))
        return dict(zip(ids, tallies, strict=True))

    async def _tally(self, workspace_id: str) -> dict[str, int]:
        from_rows = await self._rollups.tallies(workspace_id)
        if from_rows is not None:
            return from_rows
        pipeline: list[dict[str, Any]] = [
            {"$match": {"workspaceId": workspace_id}},
            {"$group": {"_id": "$archived", "n": {"$sum": 1}}},
        ]
        rows = await self._run(
            self._col.aggregate(pipeline, maxTimeMS=QUERY_TIME_LIMIT_MS).to_list(None)
        )
        tally = {"active": 0, "archived": 0}
        for row in rows:
            tally["archived" if row["_id"] else "active"] += int(row["n"])
        return tally

    async def distinct_values(self, workspace_id: str, field: str, limit: int = 200) -> list[str]:
        """Values of ``field`` in use among active documents, most used first."""
        pipeline: list[dict[str, Any]] = [
            *match_stages(workspace_id, "exclude", {field: {"$ne": None}}),
            {"$group": {"_id": f"${field}", "n": {"$sum": 1}}},
            {"$sort": {"n": -1, "_id": 1}},
            {"$limit": limit},
        ]
        rows = await self._run(
            self._col.aggregate(pipeline, maxTimeMS=QUERY_TIME_LIMIT_MS).to_list(None)
        )
        return [row["_id"] for row in rows]

    async def history(
        self, workspace_id: str, records: Sequence[StoredDocument]
    ) -> dict[str, list[EditEntry]]:
        """The edit history of each of ``records`` (stored documents of this workspace), oldest
        first; a document without edits maps to an empty list."""
        kept = await self._edits.of_documents(workspace_id, [r["_id"] for r in records])
        return {
            record["_id"]: [
                *cast(list[EditEntry], record.get("editHistory") or []),
                *kept.get(record["_id"], []),
            ]
            for record in records
        }

    async def find_duplicates(
        self,
        workspace_id: str,
        document_id: str,
        rules: Sequence[DuplicateRule],
        *,
        only: Mapping[str, Any] | None = None,
        limit: int = 1,
    ) -> list[tuple[StoredDocument, str]]:
        """The earliest arrivals (``limit`` per rule) among the active documents one of
        ``rules`` matches (and ``only``, a further filter), earliest first, each with the reason
        of the strongest rule it matches; only what arrival order needs is read. Documents
        still queued or processing count (their file's SHA-256 is known from the start, their
        other fields once saved), failed and skipped ones do not: which of two documents is the
        original then depends on when they arrived, not on which was processed first."""
        found: dict[str, tuple[StoredDocument, str]] = {}
        for rule in rules:
            # The rule's indexed pair first (a few documents), then everything else on those.
            pipeline: list[dict[str, Any]] = [
                {"$match": {"workspaceId": workspace_id, **rule.indexed}},
                {
                    "$match": {
                        "archived": False,
                        "_id": {"$ne": document_id},
                        "processingStatus": {"$nin": list(NOT_AN_ORIGINAL)},
                        **rule.rest,
                        **(only or {}),
                    }
                },
                {"$sort": dict(ARRIVAL_ORDER)},
                {"$limit": limit},
                {"$project": DUPLICATE_FIELDS},
            ]
            rows = await self._run(
                self._col.aggregate(pipeline, maxTimeMS=QUERY_TIME_LIMIT_MS).to_list(None)
            )
            for row in rows:
                found.setdefault(row["_id"], (cast(StoredDocument, row), rule.reason))
        return sorted(found.values(), key=lambda match: arrival(match[0]))

    async def unfinished(self) -> list[StoredDocument]:
        """Every workspace's documents still queued or processing (a start-up check)."""
        rows: list[StoredDocument] = []
        for status in UNFINISHED:
            rows += await self._col.find(
                {"processingStatus": status},
                {"workspaceId": 1, "activityId": 1, "processingStatus": 1, "createdAt": 1},
            ).to_list(None)
        return rows

    async def move_duplicates(self, workspace_id: str, from_id: str, to_id: str) -> list[str]:
        """The duplicates of ``from_id`` become duplicates of ``to_id``; their ids."""
        moved = await self.active_duplicates_of(workspace_id, from_id)
        if moved:
            await self._col.update_many(
                {"workspaceId": workspace_id, "duplicateOf": from_id},
                {"$set": {"duplicateOf": to_id}},
            )
            await self._col.update_one(
                {"_id": to_id, "workspaceId": workspace_id},
                {"$addToSet": {"duplicates": {"$each": moved}}},
            )
        await self._col.update_one(
            {"_id": from_id, "workspaceId": workspace_id}, {"$set": {"duplicates": []}}
        )
        return moved

    async def matching(
        self, workspace_id: str, document_id: str, filters: Mapping[str, Mapping[str, Any]]
    ) -> set[str]:
        """Which of ``filters`` (compiled where clauses, by name) the active document matches,
        in one read: the document by id, then one ``$facet`` branch per filter."""
        if not filters:
            return set()
        names = list(filters)
        facets = {
            f"f{index}": [{"$match": dict(filters[name])}, {"$project": {"_id": 1}}]
            for index, name in enumerate(names)
        }
        pipeline: list[dict[str, Any]] = [
            {"$match": {"_id": document_id, "workspaceId": workspace_id, "archived": False}},
            {"$facet": facets},
        ]
        rows = await self._run(
            self._col.aggregate(pipeline, maxTimeMS=QUERY_TIME_LIMIT_MS).to_list(None)
        )
        if not rows:
            return set()
        return {name for index, name in enumerate(names) if rows[0].get(f"f{index}")}

    async def record_edits(
        self, workspace_id: str, edits: Mapping[str, Sequence[EditEntry]]
    ) -> None:
        """Record history entries of changes made outside ``update_fields`` (an archive by an
        automation rule)."""
        await self._edits.add(workspace_id, edits)

    async def active_duplicates_of(self, workspace_id: str, document_id: str) -> list[str]:
        rows = await self._col.find(
            {"workspaceId": workspace_id, "duplicateOf": document_id, "archived": False},
            {"_id": 1},
        ).to_list(None)
        return [row["_id"] for row in rows]

    # -- changes ----------------------------------------------------------------------------

    @staticmethod
    def _set_changes(
        record: StoredDocument, changes: Mapping[str, Any], now: datetime
    ) -> dict[str, Any]:
        """The ``$set`` that applies ``changes`` (API-level values) to ``record``: the stored
        values, the search terms when a searchable field changes, and ``updatedAt``."""
        update = {**to_record(changes), "updatedAt": now}
        if changes_search_terms(changes):
            update["searchTerms"] = search_terms({**from_record(record), **changes})
        if (
            changes_search_terms(changes)
            or changes_embedding(changes)
            or set(changes) & set(INDEX_STATE)
        ):
            update["indexedAt"] = now
        if set(changes) & set(PREFERRED_INPUTS):
            update["preferredCents"] = preferred_cents({**record, **update})
        return update

    async def update_fields(
        self,
        workspace_id: str,
        record: StoredDocument,
        changes: Mapping[str, Any],
        edits: Sequence[EditEntry] = (),
        vector: Any = None,
    ) -> StoredDocument | None:
        """Apply ``changes`` to the stored ``record`` the caller loaded and record ``edits``;
        the updated record (None when it no longer exists).

        A change of an embedded field stores ``vector`` (the new text's embedding, when the
        caller has it) or embeds the new text here.

        The history is written first and taken back if the document write fails, so a
        document never changes without its history.
        """
        document_id = record["_id"]
        update = self._set_changes(record, changes, utcnow())
        if changes_embedding(changes):
            if vector is not None:
                update |= stored_fields(vector)
            else:
                update |= (await self._embed([{**from_record(record), **changes}]))[0]
        written = await self._edits.add(workspace_id, {document_id: edits}) if edits else []
        try:
            before = await self._update_before(
                {"_id": document_id, "workspaceId": workspace_id}, update, None
            )
        except BaseException:
            await self._edits.remove(workspace_id, written)
            raise
        if before is None:
            await self._edits.remove(workspace_id, written)
            return None
        updated = {**before, **update}  # every key of ``update`` is a top-level field
        if ROLLUP_FIELDS & set(update):
            await self._rollups.apply(workspace_id, removed=[before], added=[updated])
        return cast(StoredDocument, updated)

    async def bulk_update(self, workspace_id: str, updates: Sequence[FieldUpdate]) -> int:
        """Apply ``updates`` to active documents; how many documents changed.

        The history of every update is written first, in one batch; the entries of documents
        that were archived meanwhile (and so did not change) are taken back. Updates run
        concurrently in small batches (one ``update_one`` each: mongomock's ``bulk_write`` does
        not accept current pymongo ops).
        """
        now = utcnow()
        embedding = [u for u in updates if changes_embedding(u.changes)]
        vectors = dict(
            zip(
                [u.record["_id"] for u in embedding],
                await self._embed([{**from_record(u.record), **u.changes} for u in embedding]),
                strict=True,
            )
        )
        written = await self._edits.add(
            workspace_id, {u.record["_id"]: u.edits for u in updates if u.edits}
        )
        ids_by_document: dict[str, list[Any]] = {}
        position = 0
        for u in updates:
            ids_by_document[u.record["_id"]] = written[position : position + len(u.edits)]
            position += len(u.edits)

        moved_from: list[Mapping[str, Any]] = []
        moved_to: list[Mapping[str, Any]] = []

        async def apply(update: FieldUpdate) -> int:
            changes = self._set_changes(update.record, update.changes, now)
            changes |= vectors.get(update.record["_id"], {})
            before = await self._update_before(
                {"_id": update.record["_id"], "workspaceId": workspace_id, "archived": False},
                changes,
                ROLLUP_FIELDS,
            )
            if before is None:
                await self._edits.remove(workspace_id, ids_by_document[update.record["_id"]])
                return 0
            if ROLLUP_FIELDS & set(changes):
                moved_from.append(before)
                moved_to.append({**before, **changes})
            return 1

        modified = 0
        try:
            for start in range(0, len(updates), BULK_BATCH):
                batch = updates[start : start + BULK_BATCH]
                modified += sum(await asyncio.gather(*(apply(update) for update in batch)))
        finally:
            await self._rollups.apply(workspace_id, removed=moved_from, added=moved_to)
        return modified

    async def set_processing(
        self, workspace_id: str, document_id: str, status: str, reason: str | None = None
    ) -> None:
        now = utcnow()
        await self._col.update_one(
            {"_id": document_id, "workspaceId": workspace_id},
            {
                "$set": {
                    "processingStatus": status,
                    "processingReason": reason,
                    "updatedAt": now,
                    "indexedAt": now,  # INDEX_STATE
                }
            },
        )

    async def set_export_status(
        self, workspace_id: str, document_id: str, status: str, export_id: str | None
    ) -> None:
        """The document's ``exportStatus`` (exported, not-exported) and the export behind it."""
        now = utcnow()
        await self._col.update_one(
            {"_id": document_id, "workspaceId": workspace_id},
            {
                "$set": {
                    "exportStatus": status,
                    "exportId": export_id,
                    "updatedAt": now,
                    "indexedAt": now,  # INDEX_STATE
                }
            },
        )

    async def set_archived(self, workspace_id: str, ids: Sequence[str], archived: bool) -> int:
        """Archive or restore documents; how many changed state."""
        if not ids:
            return 0
        now = utcnow()
        change = {
            "archived": archived,
            "archivedAt": now if archived else None,
            "updatedAt": now,
            "indexedAt": now,  # INDEX_STATE
        }
        changed = [
            before
            for before in await asyncio.gather(
                *(
                    self._update_before(
                        {"_id": document_id, "workspaceId": workspace_id, "archived": not archived},
                        change,
                        ROLLUP_FIELDS,
                    )
                    for document_id in dict.fromkeys(ids)
                )
            )
            if before is not None
        ]
        await self._rollups.apply(
            workspace_id, removed=changed, added=[{**before, **change} for before in changed]
        )
        return len(changed)

    async def remove_references(self, workspace_id: str, ids: Sequence[str]) -> None:
        """Forget ``ids`` in other documents' ``duplicates`` lists.

        The documents are found first through ``workspace_duplicates`` (the workspace and
        ``duplicates`` alone: a ``$match`` the embedded store can plan), then updated by id.
        """
        pipeline: list[dict[str, Any]] = [
            {"$match": {"workspaceId": workspace_id, "duplicates": {"$in": list(ids)}}},
            {"$match": {"_id": {"$nin": list(ids)}}},
            {"$project": {"_id": 1}},
        ]
        found = await self._run(
            self._col.aggregate(pipeline, maxTimeMS=QUERY_TIME_LIMIT_MS).to_list(None)
        )
        if found:
            await self._col.update_many(
                {"_id": {"$in": [row["_id"] for row in found]}, "workspaceId": workspace_id},
                {"$pull": {"duplicates": {"$in": list(ids)}}},
            )

    async def link_duplicate(self, workspace_id: str, original_id: str, duplicate_id: str) -> None:
        await self._col.update_one(
            {"_id": duplicate_id, "workspaceId": workspace_id},
            {"$set": {"duplicateOf": original_id}},
        )
        await self._col.update_one(
            {"_id": original_id, "workspaceId": workspace_id},
            {"$addToSet": {"duplicates": duplicate_id}},
        )

    async def _update_before(
        self,
        selector: Mapping[str, Any],
        change: Mapping[str, Any],
        fields: Iterable[str] | None,
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
        wanted = None if fields is None else {name: 1 for name in {*fields, *ROLLUP_FIELDS}}
        for _ in range(SWAP_ATTEMPTS):
            before = await self._col.find_one(selector, wanted)
            if before is None:
                return None
            guard = {name: before.get(name) for name in sorted(ROLLUP_FIELDS)}
            result = await self._col.update_one({**selector, **guard}, {"$set": dict(change)})
            if result.matched_count:
                return cast(dict[str, Any], before)
        found = await self._col.find_one_and_update(
            selector,
            {"$set": dict(change)},
            projection=wanted,
            return_document=ReturnDocument.BEFORE,
        )
        return cast(dict[str, Any] | None, found)

    # -- embeddings and search indexes ------------------------------------------------------

    async def _embed(self, documents: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
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

    async def index_rows(
        self, workspace_id: str, since: datetime | None = None
    ) -> list[StoredDocument]:
        """What a search index holds of the workspace's documents (searchable text, search
        terms, embedding, ``INDEX_STATE``, ``indexedAt``): all of them, or those re-indexed at
        ``since`` or later."""
        match: dict[str, Any] = {"workspaceId": workspace_id}
        if since is not None:
            match["indexedAt"] = {"$gte": since}
        wanted = {
            name: 1
            for name in (
                *SEARCHABLE_FIELDS,
                LINE_DESCRIPTIONS,
                "searchTerms",
                "embedding",
                *INDEX_STATE,
                "indexedAt",
            )
        }
        cursor = self._col.find(match, wanted, batch_size=5000)
        return cast(list[StoredDocument], await cursor.to_list(None))

    async def candidate_ids(self, workspace_id: str, query: DocumentQuery) -> list[str]:
        """Ids of every document of ``query`` (where-clause, archive and export filters): the
        population a ranked search orders."""
        pipeline = [*query.stages(workspace_id), {"$project": {"_id": 1}}]
        found = self._col.aggregate(pipeline, maxTimeMS=QUERY_TIME_LIMIT_MS).to_list(None)
        return [row["_id"] for row in await self._run(found)]

    async def existing_ids(self, workspace_id: str, ids: Sequence[str]) -> set[str]:
        """Those of ``ids`` that are still stored (by primary key: no scan)."""
        if not ids:
            return set()
        cursor = self._col.find(
            {"_id": {"$in": list(ids)}, "workspaceId": workspace_id},
            {"_id": 1},
            max_time_ms=QUERY_TIME_LIMIT_MS,
        )
        return {row["_id"] for row in await self._run(cursor.to_list(None))}

    async def needing_embeddings(
        self, workspace_id: str, after_id: str | None, limit: int, redo_all: bool = False
    ) -> list[StoredDocument]:
        """The next ``limit`` documents (by id, after ``after_id``) without an embedding of
        the current model (every document with ``redo_all``), with the fields it is made of."""
        match: dict[str, Any] = {"workspaceId": workspace_id}
        if not redo_all:
            match["embeddingModel"] = {"$ne": MODEL_ID}
        if after_id is not None:
            match["_id"] = {"$gt": after_id}
        wanted = {name: 1 for name in EMBEDDED_PATHS}
        cursor = self._col.find(match, wanted).sort("_id", ASCENDING).limit(limit)
        return cast(list[StoredDocument], await cursor.to_list(None))

    async def workspaces_with_documents(self) -> list[str]:
        return sorted(await self._col.distinct("workspaceId"))

    async def count_needing_embeddings(self, workspace_id: str, redo_all: bool = False) -> int:
        match: dict[str, Any] = {"workspaceId": workspace_id}
        if not redo_all:
            match["embeddingModel"] = {"$ne": MODEL_ID}
        return int(await self._col.count_documents(match))

    async def set_embeddings(
        self, workspace_id: str, vectors: Mapping[str, Mapping[str, Any]]
    ) -> None:
        """Store embeddings (storage fields by document id); ``updatedAt`` stays, since the
        document's content did not change, while ``indexedAt`` tells search indexes to re-read."""
        now = utcnow()
        await asyncio.gather(
            *(
                self._col.update_one(
                    {"_id": document_id, "workspaceId": workspace_id},
                    {"$set": {**fields, "indexedAt": now}},
                )
                for document_id, fields in vectors.items()
            )
        )

    async def vector_search(
        self,
        workspace_id: str,
        query: DocumentQuery,
        vector: Sequence[float],
        limit: int,
        index_name: str,
        num_candidates: int,
    ) -> list[tuple[str, float]]:
        """(id, score) of the ``limit`` documents of ``query`` nearest to ``vector``, by
        MongoDB's ``$vectorSearch`` (a deployment with vector search indexes only)."""
        pipeline = vector_search_pipeline(
            workspace_id, query, vector, limit, index_name, num_candidates
        )
        found = self._col.aggregate(pipeline, maxTimeMS=QUERY_TIME_LIMIT_MS).to_list(None)
        return [(row["_id"], float(row["score"])) for row in await self._run(found)]

    @staticmethod
    async def _run(awaitable: Any) -> Any:
        try:
            return await awaitable
        except ExecutionTimeout as exc:
            raise QueryTimeout("query exceeded its time limit") from exc


def _naive_utc(moment: datetime) -> datetime:
    return moment.astimezone(UTC).replace(tzinfo=None) if moment.tzinfo else moment


def _off_midnight(moment: datetime) -> datetime:
    """A millisecond before ``moment``'s midnight (UTC): a bound no stored date equals."""
    naive = moment.astimezone(UTC).replace(tzinfo=None) if moment.tzinfo else moment
    return naive.replace(hour=0, minute=0, second=0, microsecond=0) - timedelta(milliseconds=1)


def _rollups_apply(query: DocumentQuery) -> bool:
    """Whether the query selects only by its where clause and archive filter (rollup rows
    know nothing of words, export status or keyset positions)."""
    return (
        query.export_status == "all"
        and query.words is None
        and query.merchant is None
        and query.category is None
        and query.after is None
    )


def _is_preferred(currency: str | None) -> dict[str, Any]:
    return {"$eq": ["$preferredCurrency", currency]}


def _document_sums(preferred_currency: str | None) -> dict[str, Any]:
    """``$group`` accumulators over documents: count, cents, and the preferred-currency sums."""
    has_preferred = {"$ne": [{"$ifNull": ["$preferredCents", None]}, None]}
    return {
        "count": {"$sum": 1},
        "cents": {"$sum": "$amount"},
        "preferredCents": {
            "$sum": {"$cond": [_is_preferred(preferred_currency), "$preferredCents", 0]}
        },
        "converted": {
            "$sum": {
                "$cond": [_is_preferred(preferred_currency), {"$cond": [has_preferred, 1, 0]}, 0]
            }
        },
    }


def _totals_facets(sums: Mapping[str, Any], key: Any, max_groups: int) -> dict[str, Any]:
    """``documents.count``'s ``$facet``: per currency overall, and per (group, currency)
    rows folded into groups (the ``max_groups + 1`` largest, to tell truncation)."""
    facets: dict[str, Any] = {"overall": [{"$group": {"_id": "$currency", **sums}}]}
    if key is None:
        return facets
    facets["groups"] = [
        {"$group": {"_id": {"key": key, "currency": "$currency"}, **sums}},
        {"$match": {"count": {"$gt": 0}}},
        {
            "$group": {
                "_id": "$_id.key",
                "count": {"$sum": "$count"},
                "preferredCents": {"$sum": "$preferredCents"},
                "converted": {"$sum": "$converted"},
                "byCurrency": {
                    "$push": {"currency": "$_id.currency", "count": "$count", "cents": "$cents"}
                },
            }
        },
        {"$sort": {"count": -1, "_id": 1}},
        {"$limit": max_groups + 1},
    ]
    return facets


def _fold_rows(
    rows: Iterable[tuple[Mapping[str, Any], int]],
    group_by: CountGroupBy | None,
    preferred_currency: str | None,
    max_groups: int,
) -> dict[str, Any]:
    """``_totals_facets``'s answer computed here from rollup rows, each added (sign 1) or
    subtracted (sign -1) (same keys and order).

    A shape has at most a few thousand rows in a workspace (its dimensions' combinations), and
    the embedded store runs a ``$facet`` of ``$group`` stages at about 0.6 ms a row: moving
    the rows and adding them up here costs a quarter of that. Documents are never folded here.
    """
    time_format = TIME_FORMATS.get(group_by) if group_by is not None else None

    def key_of(row: Mapping[str, Any]) -> Any:
        if time_format is not None:
            moment = row.get("docDate")
            return moment.strftime(time_format) if isinstance(moment, datetime) else None
        return row.get(group_by) if group_by is not None else None

    def zero() -> dict[str, int]:
        return {"count": 0, "cents": 0, "preferredCents": 0, "converted": 0}

    overall: dict[Any, dict[str, int]] = {}
    by_key_currency: dict[tuple[Any, Any], dict[str, int]] = {}
    for row, sign in rows:
        preferred = row.get("preferredCurrency") == preferred_currency
        sums = {
            "count": sign * int(row.get("count") or 0),
            "cents": sign * int(row.get("cents") or 0),
            "preferredCents": sign * int(row.get("preferredCents") or 0) if preferred else 0,
            "converted": sign * int(row.get("converted") or 0) if preferred else 0,
        }
        targets = [overall.setdefault(row.get("currency"), zero())]
        if group_by is not None:
            targets.append(by_key_currency.setdefault((key_of(row), row.get("currency")), zero()))
        for target in targets:
            for name, value in sums.items():
                target[name] += value
    result: dict[str, Any] = {
        "overall": [{"_id": currency, **sums} for currency, sums in overall.items()]
    }
    if group_by is None:
        return result
    groups: dict[Any, dict[str, Any]] = {}
    for (key, currency), sums in by_key_currency.items():
        if sums["count"] <= 0:
            continue
        group = groups.setdefault(
            key, {"_id": key, "count": 0, "preferredCents": 0, "converted": 0, "byCurrency": []}
        )
        for name in ("count", "preferredCents", "converted"):
            group[name] += sums[name]
        group["byCurrency"].append(
            {"currency": currency, "count": sums["count"], "cents": sums["cents"]}
        )
    # MongoDB's order: most documents first, then the key (null before any string).
    ordered = sorted(
        groups.values(),
        key=lambda g: (-g["count"], g["_id"] is not None, g["_id"] if g["_id"] is not None else ""),
    )
    result["groups"] = ordered[: max_groups + 1]
    return result


def _preferred(currency: str | None, rows: Iterable[Mapping[str, Any]]) -> PreferredTotal | None:
    if currency is None:
        return None
    rows = list(rows)
    return PreferredTotal(
        currency=currency,
        converted=sum(int(row.get("converted") or 0) for row in rows),
        cents=sum(int(row.get("preferredCents") or 0) for row in rows),
    )


def _currency_totals(rows: Iterable[Mapping[str, Any]]) -> list[CurrencyTotal]:
    """Per-currency rows sorted by currency (unknown last); a sum over no amounts is 0."""
    totals = [
        CurrencyTotal(
            currency=row.get("currency"), count=int(row["count"]), cents=int(row.get("cents") or 0)
        )
        for row in rows
        if row["count"] > 0
    ]
    return sorted(totals, key=lambda total: (total.currency is None, total.currency or ""))


def vector_search_pipeline(
    workspace_id: str,
    query: DocumentQuery,
    vector: Sequence[float],
    limit: int,
    index_name: str,
    num_candidates: int,
) -> list[dict[str, Any]]:
    """The aggregation that asks ``$vectorSearch`` for the nearest documents of ``query``.

    ``$vectorSearch`` must be the first stage and its ``filter`` takes only the fields the
    vector index declares as filters: the workspace and the archive state go there (they are
    equalities, see ``match_stages``), the caller's where-clause and export filter follow as a
    ``$match`` over the nearest ``num_candidates``. The index is ``vector_index_definition``.
    """
    scope = match_stages(workspace_id, query.archived)[0]["$match"]
    stages: list[dict[str, Any]] = [
        {
            "$vectorSearch": {
                "index": index_name,
                "path": "embedding",
                "queryVector": [float(x) for x in vector],
                "numCandidates": max(num_candidates, limit),
                "limit": max(num_candidates, limit),
                "filter": scope,
            }
        },
        {"$project": {"_id": 1, "score": {"$meta": "vectorSearchScore"}}},
    ]
    caller = combined(query.parts())
    if caller:
        # The projection above dropped the fields the where-clause reads: match before it.
        stages.insert(1, {"$match": caller})
    stages.append({"$limit": limit})
    return stages


def vector_index_definition(dim: int) -> dict[str, Any]:
    """The Atlas Vector Search index ``vector_search_pipeline`` expects (create it once with
    ``db.documents.createSearchIndex(name, "vectorSearch", definition)``)."""
    return {
        "fields": [
            {"type": "vector", "path": "embedding", "numDimensions": dim, "similarity": "cosine"},
            {"type": "filter", "path": "workspaceId"},
            {"type": "filter", "path": "archived"},
        ]
    }
