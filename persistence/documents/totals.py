"""documents.count's numbers: counts and integer-cent sums per currency and per group, from the
rollups when the query fits their shapes, else from the documents (both give the same)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

from domain.documents import ArchiveFilter, CountGroupBy
from persistence.documents import buckets
from persistence.documents.collection import NEWEST_INDEX, DocumentCollection
from persistence.documents.query import (
    ARCHIVE_FILTERS,
    TIME_FORMATS,
    DocumentQuery,
    combined,
    group_key,
    is_time_grouping,
)
from persistence.documents.rollups import INDEXES as ROLLUP_INDEXES
from persistence.documents.rollups import RowRead, row_reads
from persistence.where import AGGREGATE_TIME_LIMIT_MS, QUERY_TIME_LIMIT_MS

# The rollups' one index (declared in ``rollups``): every row read names it.
ROWS_INDEX: str = ROLLUP_INDEXES[0].document["name"]


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


class DocumentTotals:
    """Totals and tallies of a workspace's documents, and the rollups that answer them."""

    def __init__(self, collection: DocumentCollection) -> None:
        self._coll = collection

    async def rebuild_rollups(self, workspace_id: str) -> int:
        """Recount the workspace's dashboard rollups from its documents; the number of rows."""
        return await self._coll.rollups.rebuild(workspace_id)

    async def stale_rollups(self) -> list[str]:
        """Workspaces whose counts come from their documents until their rollups are rebuilt."""
        return await self._coll.rollups.stale_workspaces()

    async def billed(self, workspace_id: str, first: date, end: date) -> int:
        """Documents whose processing was billed on a day ``first`` ≤ day < ``end`` (their
        outcome wrote the day: ``set_processing``), through ``workspace_billed``."""
        return int(
            await self._coll.docs.count_documents(
                {
                    "workspaceId": workspace_id,
                    "billedOn": {"$gte": first.isoformat(), "$lt": end.isoformat()},
                }
            )
        )

    async def of(
        self,
        workspace_id: str,
        query: DocumentQuery,
        *,
        group_by: CountGroupBy | None = None,
        max_groups: int = 500,
        preferred_currency: str | None = None,
        use_rollups: bool = True,
        fill_gaps: bool = False,
        max_buckets: int = buckets.MAX_BUCKETS,
    ) -> Totals:
        """Count and per-currency sums, computed in MongoDB; only (group, currency) rows return.

        Groups are the ``max_groups`` largest by count (``truncated`` when there are more);
        time groups come in chronological order (documents without a date last, key None),
        others by count. With ``preferred_currency``, the sums of the documents converted to
        it come too. The rollups answer when the query fits one of their shapes (and
        ``use_rollups``), the documents otherwise; both give the same numbers.

        ``fill_gaps`` (time groupings only) lists every bucket of the range, the empty ones
        with count 0 (``buckets``); ``TooManyBuckets`` when there would be more than
        ``max_buckets``, before reading anything when the filter bounds both ends.
        """
        async with self._coll.regex_turn(workspace_id, query):
            caller = combined(query.parts())
            fill = fill_gaps and group_by is not None and buckets.fillable(group_by)
            span = buckets.range_of(caller) if fill else None
            if group_by is not None and span is not None and span.first and span.last:
                buckets.check(group_by, span.first, span.last, max_buckets)
            source = "documents"
            reads = row_reads(caller, group_by) if use_rollups and rollups_apply(query) else None
            parts: list[list[dict[str, Any]]] = []
            if reads is not None:
                # The stale check and the row reads at once (one round trip's wait, not two).
                current, *parts = await asyncio.gather(
                    self._coll.rollups.is_current(workspace_id),
                    *(self._rows(workspace_id, query.archived, read, caller) for read in reads),
                )
                if not current:
                    reads = None  # a stale workspace counts its documents
            if reads is None:
                query = (await self._coll.regex_matched(workspace_id, query)).query
                sums = _document_sums(preferred_currency)
                facets = _totals_facets(sums, group_key(group_by), max_groups)
                pipeline = [*query.stages(workspace_id), {"$facet": facets}]
                options = await self._coll.scope_hint(query.words)
                found = await self._coll.run(
                    self._coll.docs.aggregate(
                        pipeline, maxTimeMS=AGGREGATE_TIME_LIMIT_MS, **options
                    ).to_list(None)
                )
                result = found[0] if found else {}
            else:
                source = "rollups:" + "+".join(dict.fromkeys(read.shape.name for read in reads))
                signed = (
                    (row, read.sign)
                    for read, part in zip(reads, parts, strict=True)
                    for row in part
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
            truncated = len(group_rows) > max_groups
            if group_by is not None and span is not None:
                if truncated:  # more buckets hold documents than an answer lists
                    raise buckets.TooManyBuckets(group_by, None, max_buckets)
                groups = _filled(groups, group_by, span, max_buckets, preferred_currency)
            if is_time_grouping(group_by):
                groups.sort(key=lambda group: (group.key is None, group.key or ""))
            return Totals(
                overall=overall,
                groups=groups,
                truncated=truncated,
                preferred=_preferred(preferred_currency, overall_rows),
                source=source,
            )

    async def _rows(
        self, workspace_id: str, archived: ArchiveFilter, read: RowRead, caller: Mapping[str, Any]
    ) -> list[dict[str, Any]]:
        """The rollup rows of one read (``DocumentRollups.read``), through ``run``; on
        MongoDB it names the rollups' index (``hint``)."""
        hint = await self._coll.hint(ROWS_INDEX)
        rows = self._coll.rollups.read(workspace_id, ARCHIVE_FILTERS[archived], read, caller, hint)
        return await self._coll.run(rows)

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
        from_rows = await self._coll.rollups.tallies(workspace_id)
        if from_rows is not None:
            return from_rows
        pipeline: list[dict[str, Any]] = [
            {"$match": {"workspaceId": workspace_id}},
            {"$group": {"_id": "$archived", "n": {"$sum": 1}}},
        ]
        options = await self._coll.hint(NEWEST_INDEX)
        rows = await self._coll.run(
            self._coll.docs.aggregate(pipeline, maxTimeMS=QUERY_TIME_LIMIT_MS, **options).to_list(
                None
            )
        )
        tally = {"active": 0, "archived": 0}
        for row in rows:
            tally["archived" if row["_id"] else "active"] += int(row["n"])
        return tally


def _filled(
    groups: list[TotalsGroup],
    group_by: str,
    span: buckets.Range,
    max_buckets: int,
    preferred_currency: str | None,
) -> list[TotalsGroup]:
    """``groups`` with a zero group for every bucket of ``span`` that has none (an open end
    of it is the data's first or last bucket; no data and an open end: nothing to add)."""
    days = [buckets.key_day(group_by, group.key) for group in groups if group.key is not None]
    first = span.first or min(days, default=None)
    last = span.last or max(days, default=None)
    if first is None or last is None:
        return groups
    buckets.check(group_by, first, last, max_buckets)
    present = {group.key for group in groups}
    empty = _preferred(preferred_currency, [])
    zeros = [
        TotalsGroup(key=key, count=0, by_currency=[], preferred=empty)
        for key in buckets.bucket_keys(group_by, first, last)
        if key not in present
    ]
    return groups + zeros


def rollups_apply(query: DocumentQuery) -> bool:
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
