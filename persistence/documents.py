"""The ``documents`` collection: every query is scoped to one workspace here.

Stored records differ from the API's ``Document`` in three ways, all handled in this module:
money is integer cents, ``docDate`` is a BSON date at midnight UTC, and ``searchTerms`` holds the
folded words of the searchable fields (a multikey index finds lexical candidates).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Mapping, Sequence
from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal
from typing import Any, Literal

from bson import Decimal128
from motor.motor_asyncio import AsyncIOMotorDatabase
from pymongo import ASCENDING, DESCENDING, IndexModel, ReturnDocument
from pymongo.errors import ExecutionTimeout

from engines.text import tokenize
from persistence.ids import utcnow
from persistence.money import from_cents, to_cents
from persistence.where import AGGREGATE_TIME_LIMIT_MS, QUERY_TIME_LIMIT_MS

ArchiveFilter = Literal["exclude", "only", "include"]
SortSpec = Sequence[tuple[str, int]]

MONEY_FIELDS = ("amount", "taxAmount", "subtotal")
LINE_MONEY_FIELDS = ("amount", "taxAmount")
LINE_DECIMAL_FIELDS = ("quantity", "unitPrice")
BULK_BATCH = 50
SEARCHABLE_FIELDS = ("merchant", "summary", "category", "invoiceId", "receiptId")

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


class QueryTimeout(Exception):
    """A query ran past ``maxTimeMS`` (typically an expensive regex)."""


def archive_filter(archived: ArchiveFilter) -> dict[str, Any]:
    if archived == "exclude":
        return {"archived": {"$ne": True}}
    if archived == "only":
        return {"archived": True}
    return {}


def scoped(
    workspace_id: str, archived: ArchiveFilter, *filters: Mapping[str, Any]
) -> dict[str, Any]:
    """Workspace and archive filters outside the caller's filters, always."""
    candidates: list[Mapping[str, Any]] = [
        {"workspaceId": workspace_id},
        archive_filter(archived),
        *filters,
    ]
    parts = [dict(part) for part in candidates if part]
    return parts[0] if len(parts) == 1 else {"$and": parts}


def _midnight(value: date) -> datetime:
    return datetime.combine(value, time(), tzinfo=UTC)


def search_terms(fields: Mapping[str, Any]) -> list[str]:
    """Distinct folded words of the searchable fields and line item descriptions."""
    words: list[str] = []
    for name in SEARCHABLE_FIELDS:
        value = fields.get(name)
        words += tokenize(value if isinstance(value, str) else None)
    for item in fields.get("lineItems") or []:
        words += tokenize(item.get("description"))
    return list(dict.fromkeys(words))


def to_record(fields: Mapping[str, Any]) -> dict[str, Any]:
    """API-level values (Decimal, date) → storage values (cents, BSON dates)."""
    record = dict(fields)
    for name in MONEY_FIELDS:
        if isinstance(record.get(name), Decimal | int | float):
            record[name] = to_cents(record[name])
    for name in ("docDate",):
        if isinstance(record.get(name), date) and not isinstance(record[name], datetime):
            record[name] = _midnight(record[name])
    if record.get("lineItems") is not None:
        record["lineItems"] = [_line_to_record(item) for item in record["lineItems"]]
    return record


def _line_to_record(item: Mapping[str, Any]) -> dict[str, Any]:
    line = dict(item)
    for name in LINE_MONEY_FIELDS:
        if line.get(name) is not None:
            line[name] = to_cents(line[name])
    for name in LINE_DECIMAL_FIELDS:
        if line.get(name) is not None:
            line[name] = Decimal128(Decimal(str(line[name])))
    return line


def from_record(record: Mapping[str, Any]) -> dict[str, Any]:
    """Storage values → API-level values, with ``id`` and without storage-only fields."""
    out = {k: v for k, v in record.items() if k not in ("_id", "workspaceId", "searchTerms")}
    if "_id" in record:
        out["id"] = record["_id"]
    for name in MONEY_FIELDS:
        if isinstance(out.get(name), int):
            out[name] = from_cents(out[name])
    if isinstance(out.get("docDate"), datetime):
        out["docDate"] = out["docDate"].date()
        out["date"] = out["docDate"]
    if out.get("lineItems") is not None:
        out["lineItems"] = [_line_from_record(item) for item in out["lineItems"]]
    return out


def _line_from_record(item: Mapping[str, Any]) -> dict[str, Any]:
    line = dict(item)
    for name in LINE_MONEY_FIELDS:
        if isinstance(line.get(name), int):
            line[name] = from_cents(line[name])
    for name in LINE_DECIMAL_FIELDS:
        if isinstance(line.get(name), Decimal128):
            line[name] = line[name].to_decimal()
    return line


class Documents:
    """The ``documents`` collection; the workspace id is the first argument of every method."""

    def __init__(self, db: AsyncIOMotorDatabase) -> None:
        self._col = db["documents"]

    async def ensure_indexes(self) -> None:
        await self._col.create_indexes(INDEXES)

    def prepare(self, workspace_id: str, fields: Mapping[str, Any]) -> dict[str, Any]:
        """A storage record for new document ``fields`` (which carry ``_id``)."""
        now = utcnow()
        record: dict[str, Any] = {
            "archived": False,
            "archivedAt": None,
            "duplicateOf": None,
            "duplicates": [],
            "editHistory": [],
            "exportStatus": "not-exported",
            "createdAt": now,
            "updatedAt": now,
            **to_record(fields),
            "workspaceId": workspace_id,
        }
        record["searchTerms"] = search_terms(fields)
        return record

    async def insert_many(self, workspace_id: str, documents: Sequence[Mapping[str, Any]]) -> int:
        if not documents:
            return 0
        records = [self.prepare(workspace_id, fields) for fields in documents]
        result = await self._col.insert_many(records, ordered=False)
        return len(result.inserted_ids)

    async def get(self, workspace_id: str, document_id: str) -> dict[str, Any] | None:
        return await self._col.find_one({"_id": document_id, "workspaceId": workspace_id})

    async def get_many(
        self, workspace_id: str, ids: Sequence[str], projection: Mapping[str, Any] | None = None
    ) -> list[dict[str, Any]]:
        if not ids:
            return []
        cursor = self._col.find(
            {"_id": {"$in": list(ids)}, "workspaceId": workspace_id},
            projection,
            max_time_ms=QUERY_TIME_LIMIT_MS,
        )
        return await self._run(cursor.to_list(None))

    async def find(
        self,
        workspace_id: str,
        *,
        filters: Sequence[Mapping[str, Any]] = (),
        archived: ArchiveFilter = "exclude",
        sort: SortSpec = (("docDate", DESCENDING), ("_id", DESCENDING)),
        limit: int = 0,
        projection: Mapping[str, Any] | None = None,
    ) -> list[dict[str, Any]]:
        cursor = self._col.find(
            scoped(workspace_id, archived, *filters), projection, max_time_ms=QUERY_TIME_LIMIT_MS
        ).sort(list(sort))
        if limit:
            cursor = cursor.limit(limit)
        return await self._run(cursor.to_list(None))

    async def count(
        self,
        workspace_id: str,
        *,
        filters: Sequence[Mapping[str, Any]] = (),
        archived: ArchiveFilter = "exclude",
    ) -> int:
        return int(
            await self._run(
                self._col.count_documents(
                    scoped(workspace_id, archived, *filters), maxTimeMS=QUERY_TIME_LIMIT_MS
                )
            )
        )

    async def totals(
        self,
        workspace_id: str,
        *,
        filters: Sequence[Mapping[str, Any]] = (),
        archived: ArchiveFilter = "exclude",
        group_key: Any = None,
        max_groups: int = 500,
    ) -> dict[str, Any]:
        """Count and per-currency sums in MongoDB; only (group, currency) rows come back.

        Returns ``{"overall": [{currency, count, cents}], "groups": [{key, currency, count,
        cents}], "groupCount": n}``; groups are the ``max_groups`` largest by count.
        """
        by_currency = {"_id": "$currency", "count": {"$sum": 1}, "cents": {"$sum": "$amount"}}
        facets: dict[str, Any] = {"overall": [{"$group": by_currency}]}
        if group_key is not None:
            facets["groups"] = [
                {
                    "$group": {
                        "_id": {"key": group_key, "currency": "$currency"},
                        "count": {"$sum": 1},
                        "cents": {"$sum": "$amount"},
                    }
                },
                {
                    "$group": {
                        "_id": "$_id.key",
                        "count": {"$sum": "$count"},
                        "byCurrency": {
                            "$push": {
                                "currency": "$_id.currency",
                                "count": "$count",
                                "cents": "$cents",
                            }
                        },
                    }
                },
                {"$sort": {"count": -1, "_id": 1}},
                {"$limit": max_groups + 1},
            ]
        pipeline: list[dict[str, Any]] = [
            {"$match": scoped(workspace_id, archived, *filters)},
            {"$facet": facets},
        ]
        rows = await self._run(
            self._col.aggregate(pipeline, maxTimeMS=AGGREGATE_TIME_LIMIT_MS).to_list(None)
        )
        return rows[0] if rows else {"overall": [], "groups": []}

    async def counts_by_workspace(self, workspace_ids: Sequence[str]) -> dict[str, dict[str, int]]:
        """Active and archived document counts of several workspaces in one aggregation.

        For batched reads (the GraphQL graph's DataLoaders): the caller has authorized every id,
        and the filter holds exactly those workspaces. Workspaces without documents are absent.
        """
        if not workspace_ids:
            return {}
        pipeline: list[dict[str, Any]] = [
            {"$match": {"workspaceId": {"$in": list(workspace_ids)}}},
            {
                "$group": {
                    "_id": "$workspaceId",
                    "total": {"$sum": 1},
                    "archived": {"$sum": {"$cond": [{"$eq": ["$archived", True]}, 1, 0]}},
                }
            },
        ]
        rows = await self._run(
            self._col.aggregate(pipeline, maxTimeMS=QUERY_TIME_LIMIT_MS).to_list(None)
        )
        return {
            row["_id"]: {"active": row["total"] - row["archived"], "archived": row["archived"]}
            for row in rows
        }

    async def distinct_values(self, workspace_id: str, field: str, limit: int = 200) -> list[str]:
        """Values of ``field`` in use among active documents, most used first."""
        pipeline: list[dict[str, Any]] = [
            {"$match": scoped(workspace_id, "exclude", {field: {"$ne": None}})},
            {"$group": {"_id": f"${field}", "n": {"$sum": 1}}},
            {"$sort": {"n": -1, "_id": 1}},
            {"$limit": limit},
        ]
        rows = await self._run(
            self._col.aggregate(pipeline, maxTimeMS=QUERY_TIME_LIMIT_MS).to_list(None)
        )
        return [row["_id"] for row in rows]

    async def update_fields(
        self,
        workspace_id: str,
        record: Mapping[str, Any],
        changes: Mapping[str, Any],
        history: Sequence[Mapping[str, Any]],
    ) -> dict[str, Any] | None:
        """Apply ``changes`` (API-level values) to the stored ``record`` the caller loaded and
        append ``history``; the updated record, in one round trip."""
        update: dict[str, Any] = {"$set": {**to_record(changes), "updatedAt": utcnow()}}
        if history:
            update["$push"] = {"editHistory": {"$each": list(history)}}
        if set(changes) & {*SEARCHABLE_FIELDS, "lineItems"}:
            update["$set"]["searchTerms"] = search_terms({**from_record(record), **changes})
        updated = await self._col.find_one_and_update(
            {"_id": record["_id"], "workspaceId": workspace_id},
            update,
            return_document=ReturnDocument.AFTER,
        )
        return dict(updated) if updated else None

    async def bulk_update(
        self,
        workspace_id: str,
        updates: Sequence[tuple[Mapping[str, Any], Mapping[str, Any], Sequence[Mapping[str, Any]]]],
    ) -> int:
        """Apply ``(record, changes, history)`` triples; how many documents changed.

        ``record`` is the stored document the changes were computed from; its search terms are
        recomputed with the changes applied. Updates run concurrently in small batches (one
        ``update_one`` each: mongomock's ``bulk_write`` does not accept current pymongo ops).
        """
        now = utcnow()

        async def apply(
            record: Mapping[str, Any],
            changes: Mapping[str, Any],
            history: Sequence[Mapping[str, Any]],
        ) -> int:
            terms = search_terms({**from_record(record), **changes})
            result = await self._col.update_one(
                {"_id": record["_id"], "workspaceId": workspace_id, "archived": {"$ne": True}},
                {
                    "$set": {**to_record(changes), "searchTerms": terms, "updatedAt": now},
                    "$push": {"editHistory": {"$each": list(history)}},
                },
            )
            return int(result.modified_count)

        modified = 0
        for start in range(0, len(updates), BULK_BATCH):
            batch = updates[start : start + BULK_BATCH]
            modified += sum(await asyncio.gather(*(apply(*update) for update in batch)))
        return modified

    async def delete_unprocessed(self, workspace_id: str, document_id: str) -> None:
        """Remove a document whose upload was never acknowledged (nothing else refers to it)."""
        await self._col.delete_one(
            {"_id": document_id, "workspaceId": workspace_id, "processingStatus": "queued"}
        )

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

    async def find_duplicate(
        self,
        workspace_id: str,
        document_id: str,
        *,
        sha256: str | None,
        invoice_id: str | None,
        merchant: str | None,
        amount_cents: int | None,
        doc_date: datetime | None,
        amount_tolerance_cents: int = 5,
        days: int = 1,
    ) -> tuple[dict[str, Any], str] | None:
        """The oldest active document this one duplicates, and why; None when it is new."""
        rules: list[tuple[str, dict[str, Any]]] = []
        if sha256:
            rules.append(("the same file (identical SHA-256)", {"file.sha256": sha256}))
        if invoice_id:
            rules.append((f"the same invoice number {invoice_id}", {"invoiceId": invoice_id}))
        if merchant and amount_cents is not None and doc_date is not None:
            rules.append(
                (
                    "the same merchant, amount within 0.05 and date within a day",
                    {
                        "merchant": {"$regex": f"^{re.escape(merchant)}$", "$options": "i"},
                        "amount": {
                            "$gte": amount_cents - amount_tolerance_cents,
                            "$lte": amount_cents + amount_tolerance_cents,
                        },
                        "docDate": {
                            "$gte": doc_date - timedelta(days=days),
                            "$lte": doc_date + timedelta(days=days),
                        },
                    },
                )
            )
        for reason, rule in rules:
            found = (
                await self._col.find(
                    scoped(
                        workspace_id,
                        "exclude",
                        {"_id": {"$ne": document_id}},
                        {
                            "processingStatus": {
                                "$nin": ["queued", "processing", "failed", "skipped"]
                            }
                        },
                        rule,
                    ),
                    max_time_ms=QUERY_TIME_LIMIT_MS,
                )
                .sort([("createdAt", ASCENDING), ("_id", ASCENDING)])
                .limit(1)
                .to_list(1)
            )
            if found:
                return found[0], reason
        return None

    async def set_archived(self, workspace_id: str, ids: Sequence[str], archived: bool) -> int:
        """Archive or restore documents; how many changed state."""
        if not ids:
            return 0
        now = utcnow()
        result = await self._col.update_many(
            {
                "_id": {"$in": list(ids)},
                "workspaceId": workspace_id,
                "archived": {"$ne": True} if archived else True,
            },
            {
                "$set": {
                    "archived": archived,
                    "archivedAt": now if archived else None,
                    "updatedAt": now,
                }
            },
        )
        return int(result.modified_count)

    async def active_duplicates_of(self, workspace_id: str, document_id: str) -> list[str]:
        rows = await self._col.find(
            {"workspaceId": workspace_id, "duplicateOf": document_id, "archived": {"$ne": True}},
            {"_id": 1},
        ).to_list(None)
        return [row["_id"] for row in rows]

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


def terms_filter(tokens: Sequence[str], *, require_all: bool) -> dict[str, Any]:
    """Documents whose search terms contain each token (or a word it starts, for 3+ letters).

    Anchored prefix regexes can use the ``searchTerms`` index.
    """
    parts: list[dict[str, Any]] = []
    for token in dict.fromkeys(tokens):
        if len(token) >= 3:
            parts.append({"searchTerms": {"$regex": "^" + re.escape(token)}})
        else:
            parts.append({"searchTerms": token})
    if not parts:
        return {"_id": {"$exists": False}}  # nothing searchable in the query: match nothing
    if len(parts) == 1:
        return parts[0]
    return {"$and" if require_all else "$or": parts}
