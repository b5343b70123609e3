"""Bank transactions, one record per booked line of an imported statement, scoped by workspace.

``key`` (``engines.statements.keys``) identifies a line across imports; the unique index on
(workspace, key) is what makes importing the same statement twice add nothing, even when two
imports race. ``bank`` keeps what the bank wrote (a person's correction of counterparty or
reference never changes it). ``matched`` and ``matches`` are the place the matching of issue 42
(item 2) fills: false and empty until then. ``rejected`` holds the documents never proposed for
the transaction again; ``autoUndone`` those of an automatic match a person took back, which are
never matched automatically again, to any transaction.

A document accounts for one transaction at a time. What makes that hold when two people (or a
person and an import) match one document at once is a *claim* per matched document in
``document_claims`` (``_id`` = workspace and document, so the store refuses a second one),
written before the transaction's match and released when the match fails or is undone. A
claim whose transaction does not hold the document is left from a call that stopped between
the two writes; after ``CLAIM_LEASE`` it is free again (a younger one may be a match still
being written). Matches from before the claims existed get theirs at start-up
(``ensure_indexes``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any, cast

from motor.motor_asyncio import AsyncIOMotorDatabase
from pymongo import ASCENDING, DESCENDING, IndexModel, ReturnDocument, UpdateOne
from pymongo.errors import BulkWriteError, DuplicateKeyError

from domain.transactions import TOTALS_TIME_FORMATS, TRANSACTION_FILTERS
from domain.where import WhereClause
from persistence.ids import utcnow
from persistence.where import AGGREGATE_TIME_LIMIT_MS, QUERY_TIME_LIMIT_MS, FieldSpec, compile_where

INDEXES = [
    IndexModel(
        [("workspaceId", ASCENDING), ("key", ASCENDING)], unique=True, name="workspace_key_unique"
    ),
    # The hot read: a workspace's transactions, newest booking first (two keys: SecantusDB drops
    # an inclusive bound on a three-key index whose range key is not the last).
    IndexModel(
        [("workspaceId", ASCENDING), ("bookingDate", DESCENDING)], name="workspace_booking_date"
    ),
    # The unmatched ones (the matching and its review queue read these).
    IndexModel(
        [("workspaceId", ASCENDING), ("matched", ASCENDING), ("bookingDate", DESCENDING)],
        name="workspace_matched_booking_date",
    ),
    # Documents whose automatic match was undone: every import asks about its window's documents.
    IndexModel(
        [("workspaceId", ASCENDING), ("autoUndone", ASCENDING)], name="workspace_auto_undone"
    ),
]
STORED_AS = {"id": "_id"}
FIELDS: dict[str, FieldSpec] = {
    name: FieldSpec(spec.type, path=STORED_AS.get(name), upper=spec.upper)
    for name, spec in TRANSACTION_FILTERS.items()
}
DUPLICATE_KEY = 11000
# How long a claim whose transaction does not hold its document still counts: the time a call
# may take between writing the claim and the transaction's match (two writes, well under a
# second), with a wide margin for a loaded store.
CLAIM_LEASE = timedelta(seconds=60)


# The row of ``document_claims`` saying the matches from before claims existed have theirs.
BACKFILLED = "backfilled:v1"


class DocumentTaken(Exception):
    """A document of a match accounts for another transaction already."""

    def __init__(self, document_id: str) -> None:
        super().__init__(document_id)
        self.document_id = document_id


def claim_id(workspace_id: str, document_id: str) -> str:
    return f"{workspace_id}:{document_id}"


class Transactions:
    """The ``transactions`` collection; every method takes the workspace and filters by it."""

    def __init__(self, db: AsyncIOMotorDatabase) -> None:
        self._col = db["transactions"]
        self._claims = db["document_claims"]

    async def ensure_indexes(self) -> None:
        await self._col.create_indexes(INDEXES)
        await self._claim_existing_matches()

    async def _claim_existing_matches(self) -> None:
        """Claims for the matches made before claims existed (idempotent: a claim already
        there is kept). One read of the matched transactions' document ids, once: a marker
        row says it was done, so later starts skip the read of every matched transaction."""
        if await self._claims.find_one({"_id": BACKFILLED}, {"_id": 1}):
            return
        cursor = self._col.find({"matched": True}, {"workspaceId": 1, "matches.documentIds": 1})
        rows = [
            self._claim_row(row["workspaceId"], row["_id"], document_id)
            for row in await cursor.to_list(None)
            for match in row.get("matches") or []
            for document_id in match.get("documentIds") or []
        ]
        if rows:
            await self._insert_claims(rows)
        await self._insert_claims([{"_id": BACKFILLED, "at": utcnow()}])

    @staticmethod
    def _claim_row(workspace_id: str, transaction_id: str, document_id: str) -> dict[str, Any]:
        return {
            "_id": claim_id(workspace_id, document_id),
            "workspaceId": workspace_id,
            "documentId": document_id,
            "transactionId": transaction_id,
            "claimedAt": utcnow(),
        }

    async def _insert_claims(self, rows: list[dict[str, Any]]) -> set[str]:
        """Insert ``rows``; the ids of those refused because a claim was there already."""
        try:
            await self._claims.insert_many(rows, ordered=False)
        except BulkWriteError as exc:
            errors = exc.details.get("writeErrors", [])
            if any(error.get("code") != DUPLICATE_KEY for error in errors):
                raise
            return {str(rows[error["index"]]["_id"]) for error in errors}
        return set()

    async def _holds(self, workspace_id: str, transaction_id: str, document_id: str) -> bool:
        found = await self._col.count_documents(
            {
                "_id": transaction_id,
                "workspaceId": workspace_id,
                "matched": True,
                "matches.documentIds": document_id,
            }
        )
        return bool(found)

    async def _claim_one(self, workspace_id: str, transaction_id: str, document_id: str) -> bool:
        """Claim ``document_id`` for the transaction; False when another transaction has it."""
        row = self._claim_row(workspace_id, transaction_id, document_id)
        try:
            await self._claims.insert_one(row)
            return True
        except DuplicateKeyError:
            pass
        held = await self._claims.find_one({"_id": row["_id"]})
        if held is None:  # released meanwhile: try once more
            try:
                await self._claims.insert_one(row)
                return True
            except DuplicateKeyError:
                return False
        if held["transactionId"] == transaction_id:
            return True
        if await self._holds(workspace_id, held["transactionId"], document_id):
            return False
        claimed_at = cast(datetime, held["claimedAt"])
        if claimed_at.tzinfo is None:  # the driver hands back naive UTC
            claimed_at = claimed_at.replace(tzinfo=row["claimedAt"].tzinfo)
        if row["claimedAt"] - claimed_at < CLAIM_LEASE:
            return False  # maybe a match still being written
        # Stale: take it over, unless someone else did first (compare-and-set on its holder).
        taken = await self._claims.find_one_and_update(
            {"_id": row["_id"], "transactionId": held["transactionId"],
             "claimedAt": held["claimedAt"]},
            {"$set": {"transactionId": transaction_id, "claimedAt": row["claimedAt"]}},
        )  # fmt: skip
        return taken is not None

    async def release_claims(
        self, workspace_id: str, transaction_id: str, document_ids: Sequence[str]
    ) -> None:
        """Release the transaction's claims on ``document_ids`` (never another's)."""
        if not document_ids:
            return
        await self._claims.delete_many(
            {
                "_id": {"$in": [claim_id(workspace_id, d) for d in document_ids]},
                "transactionId": transaction_id,
            }
        )

    async def claim(
        self, workspace_id: str, transaction_id: str, document_ids: Sequence[str]
    ) -> None:
        """Claim every one of ``document_ids`` for the transaction, or none: raises
        ``DocumentTaken`` (naming the first refused) after releasing what this call claimed."""
        claimed: list[str] = []
        for document_id in document_ids:
            if not await self._claim_one(workspace_id, transaction_id, document_id):
                await self.release_claims(workspace_id, transaction_id, claimed)
                raise DocumentTaken(document_id)
            claimed.append(document_id)

    async def insert_new(
        self, workspace_id: str, records: Sequence[dict[str, Any]]
    ) -> list[dict[str, Any]]:
        """Insert ``records`` (each with its ``key``); returns those added. A record whose key
        another import stored meanwhile is left out by the unique index."""
        if not records:
            return []
        rows = [{**record, "workspaceId": workspace_id} for record in records]
        try:
            await self._col.insert_many(rows, ordered=False)
        except BulkWriteError as exc:
            errors = exc.details.get("writeErrors", [])
            if any(error.get("code") != DUPLICATE_KEY for error in errors):
                raise
            refused = {error["index"] for error in errors}
            return [row for at, row in enumerate(rows) if at not in refused]
        return rows

    async def get(self, workspace_id: str, transaction_id: str) -> dict[str, Any] | None:
        return cast(
            dict[str, Any] | None,
            await self._col.find_one({"_id": transaction_id, "workspaceId": workspace_id}),
        )

    def _filter(self, workspace_id: str, where: WhereClause | None) -> dict[str, Any]:
        compiled = compile_where(where, FIELDS)
        # Flat where it can be: the embedded store plans only filters without a top-level $and.
        if not compiled:
            return {"workspaceId": workspace_id}
        if any(key.startswith("$") for key in compiled) or "workspaceId" in compiled:
            return {"workspaceId": workspace_id, "$and": [compiled]}
        return {"workspaceId": workspace_id, **compiled}

    async def search(
        self,
        workspace_id: str,
        where: WhereClause | None,
        *,
        sort_by: str,
        sort_order: int,
        skip: int,
        limit: int,
    ) -> list[dict[str, Any]]:
        """A page of matching transactions; ties broken by id so pages never overlap."""
        cursor = (
            self._col.find(self._filter(workspace_id, where))
            .sort([(sort_by, sort_order), ("_id", sort_order)])
            .skip(skip)
            .limit(limit)
            .max_time_ms(QUERY_TIME_LIMIT_MS)
        )
        return cast(list[dict[str, Any]], await cursor.to_list(None))

    async def totals(self, workspace_id: str, where: WhereClause | None) -> list[dict[str, Any]]:
        """Per currency: how many match, and the sums of their debits and credits in cents."""
        pipeline: list[Mapping[str, Any]] = [
            {"$match": self._filter(workspace_id, where)},
            {
                "$group": {
                    "_id": "$currency",
                    "count": {"$sum": 1},
                    "debits": {"$sum": {"$cond": [{"$lt": ["$amount", 0]}, "$amount", 0]}},
                    "credits": {"$sum": {"$cond": [{"$gt": ["$amount", 0]}, "$amount", 0]}},
                }
            },
            {"$sort": {"_id": 1}},
        ]
        cursor = self._col.aggregate(pipeline, maxTimeMS=AGGREGATE_TIME_LIMIT_MS)
        return cast(list[dict[str, Any]], await cursor.to_list(None))

    async def update_fields(
        self,
        workspace_id: str,
        transaction_id: str,
        changes: dict[str, Any],
        edits: list[dict[str, Any]],
    ) -> dict[str, Any] | None:
        """Set ``changes`` and record ``edits`` in the history; None when it does not exist."""
        return cast(
            dict[str, Any] | None,
            await self._col.find_one_and_update(
                {"_id": transaction_id, "workspaceId": workspace_id},
                {
                    "$set": {**changes, "updatedAt": utcnow()},
                    "$push": {"editHistory": {"$each": edits}},
                },
                return_document=ReturnDocument.AFTER,
            ),
        )

    async def set_match(
        self, workspace_id: str, transaction_id: str, match: dict[str, Any], event: dict[str, Any]
    ) -> dict[str, Any] | None:
        """Record ``match`` on a transaction that has none (compare-and-set: two people
        confirming at once, one wins); the transaction after, or None when it has one (or is
        gone). Its documents are claimed first: ``DocumentTaken`` when one accounts for another
        transaction (nothing written)."""
        document_ids = list(match.get("documentIds") or [])
        await self.claim(workspace_id, transaction_id, document_ids)
        updated = cast(
            dict[str, Any] | None,
            await self._col.find_one_and_update(
                {"_id": transaction_id, "workspaceId": workspace_id, "matched": False},
                {
                    "$set": {"matched": True, "matches": [match], "updatedAt": utcnow()},
                    "$push": {"matchHistory": event},
                },
                return_document=ReturnDocument.AFTER,
            ),
        )
        if updated is None:
            await self.release_claims(workspace_id, transaction_id, document_ids)
        return updated

    async def set_matches(
        self, workspace_id: str, matches: Sequence[tuple[str, dict[str, Any], dict[str, Any]]]
    ) -> int:
        """Record each (transaction id, match, event) as ``set_match`` does, in one round trip
        (an import's automatic matches); how many were recorded. A match one of whose documents
        another transaction has claimed is left out, and a transaction matched meanwhile keeps
        its match (the claims made for it are released)."""
        if not matches:
            return 0
        rows = [
            self._claim_row(workspace_id, transaction_id, document_id)
            for transaction_id, match, _ in matches
            for document_id in match.get("documentIds") or []
        ]
        held_elsewhere = await self._insert_claims(rows) if rows else set()
        refused = {str(row["transactionId"]) for row in rows if row["_id"] in held_elsewhere}
        for transaction_id, match, _ in matches:
            if transaction_id in refused:
                await self.release_claims(workspace_id, transaction_id, match["documentIds"])
        matches = [m for m in matches if m[0] not in refused]
        if not matches:
            return 0
        now = utcnow()
        result = await self._col.bulk_write(
            [
                UpdateOne(
                    {"_id": transaction_id, "workspaceId": workspace_id, "matched": False},
                    {
                        "$set": {"matched": True, "matches": [match], "updatedAt": now},
                        "$push": {"matchHistory": event},
                    },
                )
                for transaction_id, match, event in matches
            ],
            ordered=False,
        )
        if result.modified_count < len(matches):
            # Some were matched meanwhile: release the claims of those not holding theirs.
            held = {
                str(row["_id"]): [m.get("documentIds") for m in row.get("matches") or []]
                for row in await self.by_ids(workspace_id, [m[0] for m in matches])
            }
            for transaction_id, match, _ in matches:
                if match["documentIds"] not in held.get(transaction_id, []):
                    await self.release_claims(workspace_id, transaction_id, match["documentIds"])
        return int(result.modified_count)

    async def clear_match(
        self,
        workspace_id: str,
        transaction_id: str,
        match: dict[str, Any],
        rejected: list[str],
        event: dict[str, Any],
    ) -> dict[str, Any] | None:
        """Take back ``match`` (only while it is still the transaction's) and remember its
        documents as rejected for it, and when the match was automatic as never to be matched
        automatically again; the transaction after, or None when the match changed. Its
        documents' claims are released after (free for another transaction)."""
        remembered: dict[str, Any] = {"rejected": {"$each": rejected}}
        if match.get("via") == "auto":
            remembered["autoUndone"] = {"$each": rejected}
        updated = cast(
            dict[str, Any] | None,
            await self._col.find_one_and_update(
                {"_id": transaction_id, "workspaceId": workspace_id, "matches": [match]},
                {
                    "$set": {"matched": False, "matches": [], "updatedAt": utcnow()},
                    "$addToSet": remembered,
                    "$push": {"matchHistory": event},
                },
                return_document=ReturnDocument.AFTER,
            ),
        )
        if updated is not None:
            await self.release_claims(workspace_id, transaction_id, match.get("documentIds") or [])
        return updated

    async def reject(
        self, workspace_id: str, transaction_id: str, document_id: str, event: dict[str, Any]
    ) -> dict[str, Any] | None:
        """Never propose ``document_id`` for the transaction again; the transaction after."""
        return cast(
            dict[str, Any] | None,
            await self._col.find_one_and_update(
                {"_id": transaction_id, "workspaceId": workspace_id},
                {
                    "$addToSet": {"rejected": document_id},
                    "$push": {"matchHistory": event},
                    "$set": {"updatedAt": utcnow()},
                },
                return_document=ReturnDocument.AFTER,
            ),
        )

    async def matched_documents(self, workspace_id: str, document_ids: Sequence[str]) -> set[str]:
        """Which of ``document_ids`` a transaction of the workspace is matched to."""
        if not document_ids:
            return set()
        cursor = self._col.find(
            {
                "workspaceId": workspace_id,
                "matched": True,
                "matches.documentIds": {"$in": list(document_ids)},
            },
            {"matches.documentIds": 1},
        )
        wanted, found = set(document_ids), set()
        for row in await cursor.to_list(None):
            for match in row.get("matches") or []:
                found |= wanted & set(match.get("documentIds") or [])
        return found

    async def by_ids(
        self, workspace_id: str, transaction_ids: Sequence[str]
    ) -> list[dict[str, Any]]:
        """The workspace's transactions among ``transaction_ids`` (one read; order not kept)."""
        if not transaction_ids:
            return []
        cursor = self._col.find(
            {"workspaceId": workspace_id, "_id": {"$in": list(transaction_ids)}}
        ).max_time_ms(QUERY_TIME_LIMIT_MS)
        return cast(list[dict[str, Any]], await cursor.to_list(None))

    async def matching(
        self,
        workspace_id: str,
        transaction_ids: Sequence[str],
        filters: Mapping[str, Mapping[str, Any]],
    ) -> dict[str, set[str]]:
        """Per name of ``filters`` (compiled where clauses): which of the matched transactions
        among ``transaction_ids`` it matches, in one read (one ``$facet`` branch per filter)."""
        if not transaction_ids or not filters:
            return {}
        names = list(filters)
        facets = {
            f"f{index}": [{"$match": dict(filters[name])}, {"$project": {"_id": 1}}]
            for index, name in enumerate(names)
        }
        pipeline: list[Mapping[str, Any]] = [
            {
                "$match": {
                    "workspaceId": workspace_id,
                    "_id": {"$in": list(transaction_ids)},
                    "matched": True,
                }
            },
            {"$facet": facets},
        ]
        cursor = self._col.aggregate(pipeline, maxTimeMS=QUERY_TIME_LIMIT_MS)
        rows = await cursor.to_list(None)
        if not rows:
            return {}
        return {
            name: {str(row["_id"]) for row in rows[0].get(f"f{index}") or []}
            for index, name in enumerate(names)
        }

    async def matched_to(
        self, workspace_id: str, document_ids: Sequence[str]
    ) -> list[dict[str, Any]]:
        """The workspace's transactions matched to any of ``document_ids`` (one read), oldest
        booking first."""
        if not document_ids:
            return []
        cursor = (
            self._col.find(
                {
                    "workspaceId": workspace_id,
                    "matched": True,
                    "matches.documentIds": {"$in": list(document_ids)},
                }
            )
            .sort([("bookingDate", ASCENDING), ("_id", ASCENDING)])
            .max_time_ms(QUERY_TIME_LIMIT_MS)
        )
        return cast(list[dict[str, Any]], await cursor.to_list(None))

    async def flows(
        self,
        workspace_id: str,
        where: WhereClause | None,
        keys: Sequence[str],
        max_groups: int,
    ) -> list[dict[str, Any]]:
        """Per group of ``keys`` (a time key cut from the booking date, or a field) and
        currency, in key order, at most ``max_groups + 1``: how many transactions, and the
        count and sum in cents of money out (``out``), of money out matched to documents
        (``matched``) and of money in (``in``). One aggregation in the store."""
        group: dict[str, Any] = {
            key: (
                {"$dateToString": {"format": TOTALS_TIME_FORMATS[key], "date": "$bookingDate"}}
                if key in TOTALS_TIME_FORMATS
                else f"${key}"
            )
            for key in keys
        }
        group["currency"] = "$currency"
        money_out = {"$lt": ["$amount", 0]}
        matched_out = {"$cond": [money_out, {"$eq": ["$matched", True]}, False]}
        money_in = {"$gt": ["$amount", 0]}

        def tally(condition: dict[str, Any]) -> dict[str, Any]:
            return {
                "count": {"$sum": {"$cond": [condition, 1, 0]}},
                "sum": {"$sum": {"$cond": [condition, "$amount", 0]}},
            }

        sums = {
            f"{name}_{part}": value
            for name, condition in (("out", money_out), ("matched", matched_out), ("in", money_in))
            for part, value in tally(condition).items()
        }
        pipeline: list[Mapping[str, Any]] = [
            {"$match": self._filter(workspace_id, where)},
            {"$group": {"_id": group, "count": {"$sum": 1}, **sums}},
            {"$sort": {f"_id.{key}": 1 for key in group}},
            {"$limit": max_groups + 1},
        ]
        cursor = self._col.aggregate(pipeline, maxTimeMS=AGGREGATE_TIME_LIMIT_MS)
        return cast(list[dict[str, Any]], await cursor.to_list(None))

    async def count(self, workspace_id: str, where: WhereClause | None) -> int:
        """How many of the workspace's transactions match ``where``."""
        return int(
            await self._col.count_documents(
                self._filter(workspace_id, where), maxTimeMS=QUERY_TIME_LIMIT_MS
            )
        )

    async def auto_undone_documents(
        self, workspace_id: str, document_ids: Sequence[str]
    ) -> set[str]:
        """Which of ``document_ids`` a person took back from an automatic match."""
        if not document_ids:
            return set()
        cursor = self._col.find(
            {"workspaceId": workspace_id, "autoUndone": {"$in": list(document_ids)}},
            {"autoUndone": 1},
        )
        wanted, found = set(document_ids), set()
        for row in await cursor.to_list(None):
            found |= wanted & set(row.get("autoUndone") or [])
        return found
