"""Newest-first reads in date windows: how a page of the latest documents is read without the
embedded store sorting the whole workspace."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any, cast

from persistence.documents.collection import NEWEST_INDEX, DocumentCollection
from persistence.documents.query import DocumentQuery, combined, match_stages
from persistence.documents.records import StoredDocument
from persistence.where import QUERY_TIME_LIMIT_MS

# Newest-first reads: the first date window where nothing tells the density, and how many
# windows before the rest.
NEWEST_FIRST_WINDOW = timedelta(days=7)
NEWEST_WINDOWS = 5
# A window that found nothing is followed by one this many times as long; one that found some
# by one sized from the density it saw, at most NEWEST_GROWTH ** 2 times as long.
NEWEST_GROWTH = 4
# The first window is sized to hold this many times the page: from the density (matching
# documents per day) the previous read of the same workspace and filter saw, or, in a process
# that has not read it yet, from the workspace's documents per month (its rollups); within
# these bounds.
NEWEST_MARGIN = 1.5
NEWEST_SPAN_BOUNDS = (timedelta(days=1), timedelta(days=366))
NEWEST_MEMORY = 1024  # (workspace, filter) densities remembered per process
# A span that reaches every date: the windows are skipped and one read takes the page.
EVERY_DATE = timedelta(days=800_000)


class NewestFirst:
    """Pages of documents sorted in the database, and newest-first pages in date windows:
    the reads' helper (``DocumentReads.windows``), which remembers each read's density."""

    def __init__(self, collection: DocumentCollection) -> None:
        self._coll = collection
        # Matching documents per day near the top of each (workspace, archive filter, caller
        # filter) read newest first, least recently used first: sizes the first date window.
        self._densities: OrderedDict[tuple[str, str, str], float] = OrderedDict()

    async def sorted_page(
        self,
        stages: list[dict[str, Any]],
        wanted: Mapping[str, int],
        sort: list[tuple[str, int]],
        limit: int,
        index: str | None = None,
    ) -> list[StoredDocument]:
        """``stages`` sorted, the first ``limit`` (0: all) with the ``wanted`` fields; the
        read names ``index`` where the store honours that (``hint``)."""
        pipeline = [*stages, {"$sort": dict(sort)}]
        if limit:
            pipeline.append({"$limit": limit})
        if wanted:
            pipeline.append({"$project": dict(wanted)})
        options = await self._coll.hint(index) if index else {}
        found = self._coll.docs.aggregate(
            pipeline, maxTimeMS=QUERY_TIME_LIMIT_MS, **options
        ).to_list(None)
        return cast(list[StoredDocument], await self._coll.run(found))

    async def newest(
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
        back short is followed by the next one, longer, in date order, and after
        ``NEWEST_WINDOWS`` of them the rest is read (older, then undated documents).
        Bounds sit a millisecond off midnight, where no stored date is, so the store's loss of
        documents equal to an inclusive bound cannot happen. A real MongoDB walks the index in
        order and stops at the limit either way.

        The store's cost is the documents a window holds (it reads each whole, evaluates the
        caller's filter on it and sorts it), so the first window is sized to hold about
        ``NEWEST_MARGIN`` pages: from the density the previous read of the same workspace and
        filter found (the date of its last document tells how many days held a page), else
        from the workspace's documents per month (``month_counts``, one read of a few rollup
        rows). A fixed first guess made a cold process read a week of a dense workspace (190
        documents for 20) and walk a sparse one in several widening rounds. A window that comes
        back short is followed by one sized from the density it saw. A wrong guess costs reads,
        never documents.
        """
        scope = match_stages(workspace_id, query.archived)[0]["$match"]
        caller = combined(query.parts())
        keyset = query.after
        start = self._coll.now()
        upper: datetime | None = None
        if keyset is not None and isinstance(keyset.value, datetime):
            start = upper = _off_midnight(keyset.value + timedelta(days=1))
        # Remembered by the filter as the caller wrote it: not by the ids a regex matched here
        # (``regex_reads``), which can be many.
        written = combined(replace(query, compiled=None).parts())
        memory = (workspace_id, query.archived, repr(written))
        span = self._first_window(memory, limit)
        if span is None:
            span = await self._estimated_window(workspace_id, query.archived, start, upper, limit)
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
            found += await self.sorted_page(stages, dated, sort, limit - len(found), NEWEST_INDEX)
            if len(found) >= limit:
                filled = True
                break
            span = _next_span(span, len(found), limit, _naive_utc(top) - _naive_utc(lower))
            upper, start = lower, lower
        if not filled:
            rest = limit - len(found)
            found += await self._rest(workspace_id, query, caller, upper, dated, sort, rest)
        self._remember_density(memory, top, found, lower)
        if dated is not wanted:
            for record in found:
                record.pop("docDate", None)
        return found

    async def _rest(
        self,
        workspace_id: str,
        query: DocumentQuery,
        caller: Mapping[str, Any],
        upper: datetime | None,
        wanted: Mapping[str, int],
        sort: list[tuple[str, int]],
        limit: int,
    ) -> list[StoredDocument]:
        """The first ``limit`` documents at or below ``upper`` (every one without it), the
        undated ones last. Dated and undated are two reads, each a flat index bound, so the
        store reads only what lies below the windows (an ``$or`` of the two is a filter it
        applies to the whole workspace's documents)."""
        if upper is None:
            stages = match_stages(workspace_id, query.archived, caller)
            return await self.sorted_page(stages, wanted, sort, limit, NEWEST_INDEX)
        scope = match_stages(workspace_id, query.archived)[0]["$match"]
        found: list[StoredDocument] = []
        for bound in ({"$lte": upper}, None):
            stages = [{"$match": {**scope, "docDate": bound}}]
            if caller:
                stages.append({"$match": caller})
            found += await self.sorted_page(stages, wanted, sort, limit - len(found), NEWEST_INDEX)
            if len(found) >= limit:
                break
        return found

    async def _estimated_window(
        self,
        workspace_id: str,
        archived: str,
        start: datetime,
        upper: datetime | None,
        limit: int,
    ) -> timedelta:
        """The span below ``start`` that the workspace's documents per month say holds
        ``NEWEST_MARGIN`` pages (the caller's filter can only make it hold fewer: the next
        window then follows the density seen). Only the months a first window may reach are
        read; on a first page, a workspace with fewer documents in all its months is read at
        once."""
        low, high = NEWEST_SPAN_BOUNDS
        # On a first page every month counts (a small workspace is read in one go); below a
        # cursor only those the longest first window reaches.
        since = None if upper is None else _naive_utc(start) - high - timedelta(days=31)
        months = await self._coll.rollups.month_counts(workspace_id, archived == "only", since)
        span = span_holding(months, start, NEWEST_MARGIN * limit, open_top=upper is None)
        if span is None:
            if not months:
                return NEWEST_FIRST_WINDOW  # no rows (stale, or nothing dated): no guess
            return EVERY_DATE if upper is None else high
        return min(high, max(low, span))

    def _first_window(self, memory: tuple[str, str, str], limit: int) -> timedelta | None:
        """The first window from the density the last read of ``memory`` saw (None: none).
        One that would need more than the longest span reads every date at once: a sparse
        workspace (20 documents over two years) would otherwise be read in a window of a year
        that holds half the page, then the next ones and the rest (about seven reads of a few
        documents each, where the first read, sized from its rollups, was one)."""
        density = self._densities.get(memory)
        if density is None:
            return None
        self._densities.move_to_end(memory)
        low, high = NEWEST_SPAN_BOUNDS
        wanted = timedelta(days=NEWEST_MARGIN * limit / density)
        return EVERY_DATE if wanted > high else max(low, wanted)

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


def _next_span(span: timedelta, found: int, limit: int, read: timedelta) -> timedelta:
    """The window after one that came back short: ``found`` of ``limit`` matched in the
    ``read`` span so far; sized to hold ``NEWEST_MARGIN`` times the rest at that density,
    between ``span`` and ``NEWEST_GROWTH ** 2`` times it (``NEWEST_GROWTH`` when none
    matched)."""
    if not found:
        return span * NEWEST_GROWTH
    per_day = found / max(read.total_seconds() / 86400, 1.0)
    wanted = timedelta(days=NEWEST_MARGIN * (limit - found) / per_day)
    return min(span * NEWEST_GROWTH**2, max(span, wanted))


def span_holding(
    months: Mapping[datetime, int], start: datetime, wanted: float, *, open_top: bool
) -> timedelta | None:
    """How far below ``start`` one must read to meet ``wanted`` documents, by ``months``
    (documents per month of ``docDate``, keyed by its first day, naive UTC), each month's
    spread evenly over its days. With ``open_top`` (a first page, ``start`` is now) the
    documents of later months count too (they are read first), and those of ``start``'s month
    are taken to lie before it: spread over the days gone by. None when all of them are
    fewer than ``wanted``."""
    top = _naive_utc(start)
    need = wanted
    below: list[tuple[datetime, datetime, float]] = []  # (month start, end, documents a day)
    for month, count in months.items():
        end = _next_month(month)
        if month >= top:
            need -= count if open_top else 0
            continue
        days = (end - month).total_seconds() / 86400
        if end > top and open_top:
            days = max((top - month).total_seconds() / 86400, 1.0)
        below.append((month, min(end, top), count / days))
    if need <= 0:
        return timedelta(0)
    for month, end, per_day in sorted(below, reverse=True):
        days = (end - month).total_seconds() / 86400
        if per_day * days >= need:
            return top - (end - timedelta(days=need / per_day))
        need -= per_day * days
    return None


def _next_month(month: datetime) -> datetime:
    return (month.replace(day=28) + timedelta(days=4)).replace(day=1)


def _naive_utc(moment: datetime) -> datetime:
    return moment.astimezone(UTC).replace(tzinfo=None) if moment.tzinfo else moment


def _off_midnight(moment: datetime) -> datetime:
    """A millisecond before ``moment``'s midnight (UTC): a bound no stored date equals."""
    naive = moment.astimezone(UTC).replace(tzinfo=None) if moment.tzinfo else moment
    return naive.replace(hour=0, minute=0, second=0, microsecond=0) - timedelta(milliseconds=1)
