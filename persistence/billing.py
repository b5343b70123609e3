"""Billing records: an account per user, a subscription per workspace, and the ledger.

- ``billing_accounts``: one per user (the owner who pays), unique by ``userId``.
- ``subscriptions``: one per workspace (unique ``workspaceId``), pointing at its owner's
  account, with the current period and the plan changes inside it. Every change is a
  compare-and-set on ``version``, so a plan change and a period close never overwrite each other.
- ``billing_ledger``: invoices and one-off charges, each belonging to one account (``userId``).
  An invoice's id is derived from its subscription and period start, so issuing the same
  period twice (two workers, a retried job) inserts it once: the second insert is a duplicate.

Money is integer cents. Reads of the ledger are always by the owner's user id.
"""

from __future__ import annotations

import hashlib
from datetime import datetime
from typing import Any

from motor.motor_asyncio import AsyncIOMotorDatabase
from pymongo import ASCENDING, DESCENDING, IndexModel, ReturnDocument
from pymongo.errors import DuplicateKeyError

from persistence.ids import new_id, utcnow

ACCOUNT_INDEXES = [IndexModel([("userId", ASCENDING)], unique=True, name="user_unique")]
SUBSCRIPTION_INDEXES = [
    IndexModel([("workspaceId", ASCENDING)], unique=True, name="workspace_unique"),
    IndexModel([("currentPeriodEnd", ASCENDING)], name="period_end"),
    IndexModel([("accountId", ASCENDING)], name="account"),
]
LEDGER_INDEXES = [
    IndexModel(
        [("userId", ASCENDING), ("issuedAt", DESCENDING), ("_id", DESCENDING)],
        name="user_issued",
    ),
    IndexModel(
        [
            ("userId", ASCENDING),
            ("workspaceId", ASCENDING),
            ("issuedAt", DESCENDING),
            ("_id", DESCENDING),
        ],
        name="user_workspace_issued",
    ),
    IndexModel([("subscriptionId", ASCENDING), ("periodStart", ASCENDING)], name="subscription"),
]


def invoice_id(subscription_id: str, period_start: datetime) -> str:
    """The one id an invoice of this subscription period can have."""
    digest = hashlib.sha256(f"{subscription_id}|{period_start.isoformat()}".encode()).hexdigest()
    return "inv_" + digest[:24]


class BillingAccounts:
    """The ``billing_accounts`` collection."""

    def __init__(self, db: AsyncIOMotorDatabase) -> None:
        self._col = db["billing_accounts"]

    async def ensure_indexes(self) -> None:
        await self._col.create_indexes(ACCOUNT_INDEXES)

    async def get_or_create(self, user_id: str, currency: str) -> dict[str, Any]:
        """The user's account, opened on first use (safe under concurrent first uses)."""
        found = await self._col.find_one({"userId": user_id})
        if found is not None:
            return dict(found)
        account = {
            "_id": new_id("bac"),
            "userId": user_id,
            "currency": currency,
            "provider": "local",
            "providerCustomerId": None,
            "createdAt": utcnow(),
        }
        try:
            await self._col.insert_one(account)
        except DuplicateKeyError:
            found = await self._col.find_one({"userId": user_id})
            if found is None:  # pragma: no cover - a unique key we just collided with
                raise
            return dict(found)
        return account

    async def get(self, account_id: str) -> dict[str, Any] | None:
        return await self._col.find_one({"_id": account_id})

    async def for_user(self, user_id: str) -> dict[str, Any] | None:
        return await self._col.find_one({"userId": user_id})


class Subscriptions:
    """The ``subscriptions`` collection."""

    def __init__(self, db: AsyncIOMotorDatabase) -> None:
        self._col = db["subscriptions"]

    async def ensure_indexes(self) -> None:
        await self._col.create_indexes(SUBSCRIPTION_INDEXES)

    async def insert_if_missing(self, record: dict[str, Any]) -> dict[str, Any]:
        """Insert ``record`` unless its workspace has a subscription; the one that is kept."""
        try:
            await self._col.insert_one(record)
        except DuplicateKeyError:
            found = await self._col.find_one({"workspaceId": record["workspaceId"]})
            if found is None:  # pragma: no cover - a unique key we just collided with
                raise
            return dict(found)
        return record

    async def for_workspace(self, workspace_id: str) -> dict[str, Any] | None:
        return await self._col.find_one({"workspaceId": workspace_id})

    async def for_account(self, account_id: str) -> list[dict[str, Any]]:
        return list(
            await self._col.find({"accountId": account_id})
            .sort("createdAt", ASCENDING)
            .to_list(None)
        )

    async def workspace_ids(self) -> set[str]:
        rows = await self._col.find({}, {"workspaceId": 1}).to_list(None)
        return {row["workspaceId"] for row in rows}

    async def due(self, before: datetime, limit: int = 500) -> list[dict[str, Any]]:
        """Subscriptions whose current period ended before ``before``, oldest first."""
        return list(
            await self._col.find({"currentPeriodEnd": {"$lte": before}})
            .sort("currentPeriodEnd", ASCENDING)
            .limit(limit)
            .to_list(None)
        )

    async def next_period_end(self) -> datetime | None:
        rows = (
            await self._col.find({}, {"currentPeriodEnd": 1})
            .sort("currentPeriodEnd", ASCENDING)
            .limit(1)
            .to_list(None)
        )
        return rows[0]["currentPeriodEnd"] if rows else None

    async def replace_if_version(
        self, subscription_id: str, version: int, changes: dict[str, Any]
    ) -> dict[str, Any] | None:
        """Apply ``changes`` when the record is still at ``version``; the new record or None."""
        return await self._col.find_one_and_update(
            {"_id": subscription_id, "version": version},
            {"$set": {**changes, "version": version + 1, "updatedAt": utcnow()}},
            return_document=ReturnDocument.AFTER,
        )


class BillingLedger:
    """The ``billing_ledger`` collection: invoices and one-off charges."""

    def __init__(self, db: AsyncIOMotorDatabase) -> None:
        self._col = db["billing_ledger"]

    async def ensure_indexes(self) -> None:
        await self._col.create_indexes(LEDGER_INDEXES)

    async def insert_once(self, entry: dict[str, Any]) -> bool:
        """Insert ``entry``; False when an entry with its id exists already (issued before)."""
        try:
            await self._col.insert_one(entry)
        except DuplicateKeyError:
            return False
        return True

    async def page_for_user(
        self,
        user_id: str,
        limit: int,
        after: tuple[datetime, str] | None = None,
        workspace_id: str | None = None,
    ) -> list[dict[str, Any]]:
        """The user's entries (of ``workspace_id`` only, when given), newest first (ties by id),
        strictly after the keyset ``after``.

        The keyset is read as two flat queries (the rest of the last page's instant, then
        older instants) rather than one ``$or``: the embedded store plans no index for a
        top-level ``$or`` and would scan every account's entries.
        """
        order = [("issuedAt", DESCENDING), ("_id", DESCENDING)]
        owner: dict[str, Any] = {"userId": user_id}
        if workspace_id is not None:
            owner["workspaceId"] = workspace_id
        if after is None:
            return await self._col.find(owner).sort(order).limit(limit).to_list(None)
        issued, last_id = after
        same_instant = (
            await self._col.find({**owner, "issuedAt": issued, "_id": {"$lt": last_id}})
            .sort(order)
            .limit(limit)
            .to_list(None)
        )
        if len(same_instant) >= limit:
            return list(same_instant)
        older = (
            await self._col.find({**owner, "issuedAt": {"$lt": issued}})
            .sort(order)
            .limit(limit - len(same_instant))
            .to_list(None)
        )
        return [*same_instant, *older]

    async def for_subscription(self, subscription_id: str) -> list[dict[str, Any]]:
        return list(
            await self._col.find({"subscriptionId": subscription_id})
            .sort("periodStart", ASCENDING)
            .to_list(None)
        )
