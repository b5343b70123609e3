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
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, cast

from motor.motor_asyncio import AsyncIOMotorDatabase
from pymongo import ASCENDING, DESCENDING, IndexModel, ReturnDocument
from pymongo.errors import BulkWriteError, ExecutionTimeout

from persistence.document_edits import DocumentEdits, EditEntry
from persistence.document_query import (
    ARCHIVE_FILTERS,
    NOT_AN_ORIGINAL,
    DocumentQuery,
    DuplicateRule,
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
    date_bounds,
    fitting_shape,
)
from persistence.errors import QueryTimeout
from persistence.ids import utcnow
from persistence.where import AGGREGATE_TIME_LIMIT_MS, QUERY_TIME_LIMIT_MS
from schema.documents import CountGroupBy

BULK_BATCH = 50
# Newest-first reads: the first date window, and how many widening windows before the rest.
NEWEST_FIRST_WINDOW = timedelta(days=7)
NEWEST_WINDOWS = 5
NEWEST_GROWTH = 4

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
    IndexModel([("workspaceId", ASCENDING), ("invoiceId", ASCENDING)], name="workspace_invoice"),
    IndexModel([("workspaceId", ASCENDING), ("file.sha256", ASCENDING)], name="workspace_sha256"),
    IndexModel(
        [("workspaceId", ASCENDING), ("duplicateOf", ASCENDING)], name="workspace_duplicate_of"
    ),
]


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

    def __init__(self, db: AsyncIOMotorDatabase) -> None:
        self._col = db["documents"]
        self._edits = DocumentEdits(db)
        self._rollups = DocumentRollups(db)

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
    def prepare(workspace_id: str, fields: Mapping[str, Any]) -> StoredDocument:
        """A storage record for new document ``fields`` (which carry ``_id``; an
        ``editHistory`` among them is kept by ``insert_many`` in the history collection)."""
        fields = {name: value for name, value in fields.items() if name != "editHistory"}
        now = utcnow()
        record: dict[str, Any] = {
            "archived": False,
            "archivedAt": None,
            "duplicateOf": None,
            "duplicates": [],
            "exportStatus": "not-exported",
            "createdAt": now,
            "updatedAt": now,
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
        records = [self.prepare(workspace_id, fields) for fields in documents]
        try:
            result = await self._col.insert_many(records, ordered=False)
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

    async def find_searchable(
        self, workspace_id: str, query: DocumentQuery, limit: int
    ) -> list[StoredDocument]:
        """The newest documents of ``query`` with their searchable text and search terms."""
        wanted = {name: 1 for name in (*SEARCHABLE_FIELDS, LINE_DESCRIPTIONS, "searchTerms")}
        sort = [("docDate", DESCENDING), ("_id", DESCENDING)]
        return await self._find(workspace_id, query, wanted, sort, limit)

    async def find_for_edit(
        self, workspace_id: str, query: DocumentQuery, changing: Iterable[str], limit: int
    ) -> list[StoredDocument]:
        """Documents of ``query`` with the fields a change of ``changing`` reads and rewrites."""
        names = list(changing)
        wanted = {name: 1 for name in names}
        if changes_search_terms(names):
            wanted |= {name: 1 for name in (*SEARCHABLE_FIELDS, LINE_DESCRIPTIONS)}
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
        """
        scope = match_stages(workspace_id, query.archived)[0]["$match"]
        caller = combined(query.parts())
        keyset = query.after
        start = utcnow()
        upper: datetime | None = None
        if keyset is not None and isinstance(keyset.value, datetime):
            start = upper = _off_midnight(keyset.value + timedelta(days=1))
        span = NEWEST_FIRST_WINDOW
        found: list[StoredDocument] = []
        for _ in range(NEWEST_WINDOWS):
            lower = _off_midnight(start - span)
            bounds: dict[str, Any] = {"$gt": lower}
            if upper is not None:
                bounds["$lte"] = upper
            stages = [{"$match": {**scope, "docDate": bounds}}]
            if caller:
                stages.append({"$match": caller})
            found += await self._aggregate_page(stages, wanted, sort, limit - len(found))
            if len(found) >= limit:
                return found
            upper, start, span = lower, lower, span * NEWEST_GROWTH
        rest = {"$or": [{"docDate": {"$lte": upper}}, {"docDate": None}]}
        stages = match_stages(workspace_id, query.archived, caller, rest)
        return found + await self._aggregate_page(stages, wanted, sort, limit - len(found))

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
        shape = fitting_shape(caller, group_by) if use_rollups and _rollups_apply(query) else None
        if shape is not None and not await self._rollups.is_current(workspace_id):
            shape = None  # a stale workspace counts its documents
        if shape is None:
            collection = self._col
            sums = _document_sums(preferred_currency)
            stages = query.stages(workspace_id)
        else:
            collection, source = self._rollups.collection, f"rollups:{shape.name}"
            sums = _row_sums(preferred_currency)
            first = {
                "workspaceId": workspace_id,
                "shape": shape.name,
                **ARCHIVE_FILTERS[query.archived],
                **date_bounds(caller),
            }
            stages = [{"$match": first}, *([{"$match": caller}] if caller else [])]
        pipeline = [*stages, {"$facet": _totals_facets(sums, group_key(group_by), max_groups)}]
        rows = await self._run(
            collection.aggregate(pipeline, maxTimeMS=AGGREGATE_TIME_LIMIT_MS).to_list(None)
        )
        result = rows[0] if rows else {}
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

    async def find_duplicate(
        self, workspace_id: str, document_id: str, rules: Sequence[DuplicateRule]
    ) -> tuple[StoredDocument, str] | None:
        """The oldest finished active document that one of ``rules`` matches, and the rule's
        reason; None when the document repeats nothing."""
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
                    }
                },
                {"$sort": {"createdAt": ASCENDING, "_id": ASCENDING}},
                {"$limit": 1},
            ]
            found = await self._run(
                self._col.aggregate(pipeline, maxTimeMS=QUERY_TIME_LIMIT_MS).to_list(1)
            )
            if found:
                return cast(StoredDocument, found[0]), rule.reason
        return None

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
        if set(changes) & set(PREFERRED_INPUTS):
            update["preferredCents"] = preferred_cents({**record, **update})
        return update

    async def update_fields(
        self,
        workspace_id: str,
        record: StoredDocument,
        changes: Mapping[str, Any],
        edits: Sequence[EditEntry] = (),
    ) -> StoredDocument | None:
        """Apply ``changes`` to the stored ``record`` the caller loaded and record ``edits``;
        the updated record (None when it no longer exists).

        The history is written first and taken back if the document write fails, so a
        document never changes without its history.
        """
        document_id = record["_id"]
        written = await self._edits.add(workspace_id, {document_id: edits}) if edits else []
        update = self._set_changes(record, changes, utcnow())
        try:
            before = await self._col.find_one_and_update(
                {"_id": document_id, "workspaceId": workspace_id},
                {"$set": update},
                return_document=ReturnDocument.BEFORE,
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
            before = await self._col.find_one_and_update(
                {
                    "_id": update.record["_id"],
                    "workspaceId": workspace_id,
                    "archived": False,
                },
                {"$set": changes},
                projection={name: 1 for name in ROLLUP_FIELDS},
                return_document=ReturnDocument.BEFORE,
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
        await self._col.update_one(
            {"_id": document_id, "workspaceId": workspace_id},
            {
                "$set": {
                    "processingStatus": status,
                    "processingReason": reason,
                    "updatedAt": utcnow(),
                }
            },
        )

    async def set_export_status(
        self, workspace_id: str, document_id: str, status: str, export_id: str | None
    ) -> None:
        """The document's ``exportStatus`` (exported, not-exported) and the export behind it."""
        await self._col.update_one(
            {"_id": document_id, "workspaceId": workspace_id},
            {"$set": {"exportStatus": status, "exportId": export_id, "updatedAt": utcnow()}},
        )

    async def set_archived(self, workspace_id: str, ids: Sequence[str], archived: bool) -> int:
        """Archive or restore documents; how many changed state."""
        if not ids:
            return 0
        now = utcnow()
        change = {"archived": archived, "archivedAt": now if archived else None, "updatedAt": now}
        changed = [
            before
            for before in await asyncio.gather(
                *(
                    self._col.find_one_and_update(
                        {"_id": document_id, "workspaceId": workspace_id, "archived": not archived},
                        {"$set": change},
                        projection={name: 1 for name in ROLLUP_FIELDS},
                        return_document=ReturnDocument.BEFORE,
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
        """Forget ``ids`` in other active documents' ``duplicates`` lists."""
        await self._col.update_many(
            {
                "workspaceId": workspace_id,
                "duplicates": {"$in": list(ids)},
                "_id": {"$nin": list(ids)},
            },
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

    @staticmethod
    async def _run(awaitable: Any) -> Any:
        try:
            return await awaitable
        except ExecutionTimeout as exc:
            raise QueryTimeout("query exceeded its time limit") from exc


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


def _row_sums(preferred_currency: str | None) -> dict[str, Any]:
    """The same accumulators over rollup rows, which carry the sums already."""
    return {
        "count": {"$sum": "$count"},
        "cents": {"$sum": "$cents"},
        "preferredCents": {
            "$sum": {"$cond": [_is_preferred(preferred_currency), "$preferredCents", 0]}
        },
        "converted": {"$sum": {"$cond": [_is_preferred(preferred_currency), "$converted", 0]}},
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
