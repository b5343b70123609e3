"""Metered usage: per workspace and UTC day, counters of API calls (and of documents processed
before each document's outcome carried its billed day: ``documents.totals.billed`` counts
those now).

One row per workspace and day (``_id`` = ``workspaceId|YYYY-MM-DD``), grown with ``$inc``
upserts, which commute: any number of API processes and workers add to the same row without
reading it first, and none can lose another's increment. A billing period is a range of whole
days (periods run midnight to midnight UTC), so its usage is the sum of at most 366 rows, read
through the ``(workspaceId, day)`` index.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date
from typing import Literal

from motor.motor_asyncio import AsyncIOMotorDatabase
from pymongo import ASCENDING, IndexModel, UpdateOne

Counter = Literal["documentsProcessed", "apiCalls"]
COUNTERS: tuple[Counter, ...] = ("documentsProcessed", "apiCalls")
INDEXES = [IndexModel([("workspaceId", ASCENDING), ("day", ASCENDING)], name="workspace_day")]


def _row_id(workspace_id: str, day: date) -> str:
    return f"{workspace_id}|{day.isoformat()}"


class Usage:
    """The ``usage_daily`` collection."""

    def __init__(self, db: AsyncIOMotorDatabase) -> None:
        self._col = db["usage_daily"]

    async def ensure_indexes(self) -> None:
        await self._col.create_indexes(INDEXES)

    async def add(self, workspace_id: str, day: date, counter: Counter, amount: int = 1) -> None:
        await self.add_many({(workspace_id, day): {counter: amount}})

    async def add_many(self, counts: Mapping[tuple[str, date], Mapping[Counter, int]]) -> None:
        """Add every ``{(workspace, day): {counter: n}}``: one unordered bulk write of upserts
        (a flush holds one row per workspace active since the last one)."""
        operations = [
            UpdateOne(
                {"_id": _row_id(workspace_id, day)},
                {
                    "$inc": dict(increments),
                    "$setOnInsert": {"workspaceId": workspace_id, "day": day.isoformat()},
                },
                upsert=True,
            )
            for (workspace_id, day), increments in counts.items()
            if increments
        ]
        if operations:
            await self._col.bulk_write(operations, ordered=False)

    async def totals(self, workspace_id: str, first: date, end: date) -> dict[Counter, int]:
        """Each counter summed over the days ``first`` ≤ day < ``end``."""
        rows = await self._col.find(
            {
                "workspaceId": workspace_id,
                "day": {"$gte": first.isoformat(), "$lt": end.isoformat()},
            },
            {counter: 1 for counter in COUNTERS},
        ).to_list(None)
        return {counter: sum(int(row.get(counter, 0)) for row in rows) for counter in COUNTERS}
