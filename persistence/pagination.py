"""Keyset pagination filters: the rows strictly after (value, id) in a (field, _id) order.

MongoDB sorts missing and null values lowest, so in a descending order they come last and in
an ascending order first; the filters below follow that so no row is skipped or repeated.
"""

from __future__ import annotations

from typing import Any, cast

from motor.motor_asyncio import AsyncIOMotorCollection
from pymongo import DESCENDING


def after(path: str, order: int, value: Any, last_id: str) -> dict[str, Any]:
    """Rows after ``(value, last_id)`` in the order ``[(path, order), ("_id", order)]``."""
    id_after = {"$lt": last_id} if order < 0 else {"$gt": last_id}
    if path == "_id":
        return {"_id": id_after}
    if order < 0:
        if value is None:
            return {"$and": [{path: None}, {"_id": id_after}]}
        return {"$or": [{path: {"$lt": value}}, {path: value, "_id": id_after}, {path: None}]}
    if value is None:
        return {"$or": [{path: {"$ne": None}}, {"$and": [{path: None}, {"_id": id_after}]}]}
    return {"$or": [{path: {"$gt": value}}, {path: value, "_id": id_after}]}


async def newest_first(
    collection: AsyncIOMotorCollection,
    query: dict[str, Any],
    limit: int,
    after_row: tuple[Any, str] | None = None,
) -> list[dict[str, Any]]:
    """A page of ``query``'s records, newest ``createdAt`` first (ties by id), those after
    ``after_row`` (createdAt, id) when paging on."""
    if after_row is not None:
        query = {"$and": [query, after("createdAt", -1, after_row[0], after_row[1])]}
    cursor = collection.find(query).sort([("createdAt", DESCENDING), ("_id", DESCENDING)])
    return cast(list[dict[str, Any]], await cursor.limit(limit).to_list(None))
