"""Newest-first reads in date windows: how a page of the latest documents is read without the
embedded store sorting the whole workspace."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any, cast

from persistence.documents.collection import DocumentCollection
from persistence.documents.query import DocumentQuery, combined, match_stages
from persistence.documents.records import StoredDocument
from persistence.where import QUERY_TIME_LIMIT_MS

# Newest-first reads: the first date window, and how many widening windows before the rest.
NEWEST_FIRST_WINDOW = timedelta(days=7)
NEWEST_WINDOWS = 5
NEWEST_GROWTH = 4
# Once a workspace's page has been read, its first window is sized from the density seen
# (matching documents per day) to hold this many times the page, within these bounds.
NEWEST_MARGIN = 1.5
NEWEST_SPAN_BOUNDS = (timedelta(days=1), timedelta(days=366))
NEWEST_MEMORY = 1024  # (workspace, filter) densities remembered per process


class NewestFirst(DocumentCollection):
    """Pages of documents sorted in the database, and newest-first pages in date windows."""

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
        found = self._docs.aggregate(pipeline, maxTimeMS=QUERY_TIME_LIMIT_MS).to_list(None)
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
        start = self._now()
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


def _naive_utc(moment: datetime) -> datetime:
    return moment.astimezone(UTC).replace(tzinfo=None) if moment.tzinfo else moment


def _off_midnight(moment: datetime) -> datetime:
    """A millisecond before ``moment``'s midnight (UTC): a bound no stored date equals."""
    naive = moment.astimezone(UTC).replace(tzinfo=None) if moment.tzinfo else moment
    return naive.replace(hour=0, minute=0, second=0, microsecond=0) - timedelta(milliseconds=1)
