"""Group-by over several keys at once (GraphQL's ``documentsAggregate``): from the rollups
where they cover the query, else one aggregation of the documents; both give the same answer.

Every group is also split by currency, so no sum, average, minimum or maximum ever mixes two
currencies (a document without a currency forms its own group, currency null). Money is int64
cents in storage; each group carries how many of its documents have an amount, a tax amount
and a conversion to the workspace's currency beside the sums, so a sum over nothing is told
from a sum of zero and the average is the exact sum over the count (rounded once, by the
caller). The groups are the ``max_groups`` largest by count, then by key (``truncated`` says
when there were more); the total counts every matching document.

The rollup rows (``persistence.documents.rollups``) keep counts and sums per month, day,
category, merchant, currency and document type, so they answer a query whose filter and keys
use only one shape's dimensions, unless it asks for minimums and maximums (``extremes``),
which a row cannot keep under removals: a few hundred rows read instead of every matching
document (at 20k documents on the embedded store, ~0.1 s against seconds). Otherwise one
aggregation: the workspace and archive filter first (an index prefix), then the caller's
filter, one ``$group`` (and ``$facet`` for the total).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from domain.documents import AggregateKey
from persistence.documents.collection import DocumentCollection
from persistence.documents.query import (
    ARCHIVE_FILTERS,
    TIME_FORMATS,
    DocumentQuery,
    combined,
    group_key,
)
from persistence.documents.rollups import RowRead, row_reads
from persistence.documents.totals import rollups_apply
from persistence.where import AGGREGATE_TIME_LIMIT_MS

CURRENCY = "currency"
# The counters of a group, and the rollup row field each is added up from.
ROW_FIELDS = {
    "count": "count",
    "amounts": "amounts",
    "cents": "cents",
    "taxes": "taxes",
    "taxCents": "taxCents",
    "converted": "converted",
    "convertedCents": "preferredCents",
}
COUNTERS = tuple(ROW_FIELDS)
# A row converted to another currency: its documents count, their conversions do not.
UNCONVERTED_FIELDS = {
    name: field for name, field in ROW_FIELDS.items() if not name.startswith("converted")
}


@dataclass(frozen=True)
class AggregateGroup:
    """One group: its key (each requested key and the currency), how many documents, and of
    them how many have an amount, a tax amount and a conversion to the preferred currency,
    with the sums of each in cents (0 when none has it). The extremes are None where no
    document of the group has the field, or where they were not asked for."""

    key: dict[str, Any]
    count: int
    amounts: int = 0
    amount_cents: int = 0
    taxes: int = 0
    tax_cents: int = 0
    converted: int = 0
    converted_cents: int = 0
    min_cents: int | None = None
    max_cents: int | None = None
    first_date: datetime | None = None
    last_date: datetime | None = None


@dataclass(frozen=True)
class Aggregate:
    """The groups, the total of matching documents, and what answered (``rollups:…`` or
    ``documents``)."""

    total: int
    groups: list[AggregateGroup]
    truncated: bool
    source: str = "documents"


def _present(path: str) -> dict[str, Any]:
    """1 for a document that has the field (not missing, not null), else 0."""
    return {"$cond": [{"$eq": [{"$ifNull": [path, None]}, None]}, 0, 1]}


def _document_stages(
    keys: Sequence[AggregateKey], max_groups: int, preferred: str | None, extremes: bool
) -> list[dict[str, Any]]:
    """The groups of the matched documents: the counters, and the extremes if asked."""
    group_id: dict[str, Any] = {key: group_key(key) for key in keys}
    group_id[CURRENCY] = "$currency"
    # preferredCents exists only with an amount and a rate; documents converted to another
    # currency (before the preference changed) are not converted to this one.
    in_preferred = {"$eq": ["$preferredCurrency", preferred]}
    accumulators: dict[str, Any] = {
        "count": {"$sum": 1},
        "amounts": {"$sum": _present("$amount")},
        "cents": {"$sum": "$amount"},
        "taxes": {"$sum": _present("$taxAmount")},
        "taxCents": {"$sum": "$taxAmount"},
        "converted": {"$sum": {"$cond": [in_preferred, _present("$preferredCents"), 0]}},
        "convertedCents": {"$sum": {"$cond": [in_preferred, "$preferredCents", 0]}},
    }
    unwind: list[dict[str, Any]] = []
    if "tag" in keys:  # one row per tag of each document; none for an untagged one
        unwind = [{"$unwind": {"path": "$tags", "preserveNullAndEmptyArrays": True}}]
    if extremes:
        accumulators |= {
            "min": {"$min": "$amount"},
            "max": {"$max": "$amount"},
            "first": {"$min": "$docDate"},
            "last": {"$max": "$docDate"},
        }
    return [
        *unwind,
        {"$group": {"_id": group_id, **accumulators}},
        {"$sort": {"count": -1, "_id": 1}},
        {"$limit": max_groups + 1},
    ]


def _ordered(key: Mapping[str, Any]) -> tuple[tuple[bool, str], ...]:
    """MongoDB's order of group ids of one shape: field by field, null before any string."""
    return tuple((value is not None, "" if value is None else str(value)) for value in key.values())


def fold_rows(
    rows: Iterable[tuple[Mapping[str, Any], int]],
    keys: Sequence[AggregateKey],
    preferred: str | None,
) -> list[dict[str, Any]]:
    """The groups the aggregation would give, added up from rollup rows (each added, sign 1,
    or subtracted, sign -1), in its order (count, then key). A row keeps the documents' own
    field names; a time key is its ``docDate`` (the first of its month or its day)."""
    sums: dict[tuple[Any, ...], dict[str, int]] = {}
    names = [*keys, CURRENCY]
    # Rows share few dates (the first of a month, or a day): each is formatted once.
    formatted: dict[tuple[str, datetime], str] = {}
    for row, sign in rows:
        values: list[Any] = []
        for name in names:
            if name in TIME_FORMATS:
                moment = row.get("docDate")
                if not isinstance(moment, datetime):
                    values.append(None)
                    continue
                text = formatted.get((name, moment))
                if text is None:
                    text = formatted[name, moment] = moment.strftime(TIME_FORMATS[name])
                values.append(text)
            else:
                values.append(row.get(name))
        group = sums.setdefault(tuple(values), dict.fromkeys(COUNTERS, 0))
        fields = ROW_FIELDS if row.get("preferredCurrency") == preferred else UNCONVERTED_FIELDS
        for counter, field in fields.items():
            group[counter] += sign * int(row.get(field) or 0)
    found: list[dict[str, Any]] = [
        {"_id": dict(zip(names, values, strict=True)), **counters}
        for values, counters in sums.items()
        if counters["count"] > 0
    ]
    found.sort(key=lambda row: (-row["count"], _ordered(row["_id"])))
    return found


def _group(row: Mapping[str, Any]) -> AggregateGroup:
    return AggregateGroup(
        key=dict(row["_id"]),
        count=int(row["count"]),
        amounts=int(row["amounts"]),
        amount_cents=int(row["cents"] or 0),
        taxes=int(row["taxes"]),
        tax_cents=int(row["taxCents"] or 0),
        converted=int(row["converted"]),
        converted_cents=int(row["convertedCents"] or 0),
        min_cents=row.get("min"),
        max_cents=row.get("max"),
        first_date=row.get("first"),
        last_date=row.get("last"),
    )


class DocumentAggregates:
    """Several-key groupings of a workspace's documents."""

    def __init__(self, collection: DocumentCollection) -> None:
        self._coll = collection

    async def of(
        self,
        workspace_id: str,
        query: DocumentQuery,
        keys: Sequence[AggregateKey],
        *,
        max_groups: int,
        preferred_currency: str | None = None,
        extremes: bool = True,
        use_rollups: bool = True,
    ) -> Aggregate:
        """The groups of ``query``'s documents by ``keys`` (and currency), largest first, with
        the conversions to ``preferred_currency`` counted and summed; minimum and maximum
        amount and date only with ``extremes``. From the rollups when they cover the query
        (and ``use_rollups``), else from the documents: the same numbers either way."""
        async with self._coll.regex_turn(workspace_id, query):
            caller = combined(query.parts())
            reads = None
            if use_rollups and not extremes and rollups_apply(query):
                reads = row_reads(caller, keys)
            if reads is not None:
                archived = ARCHIVE_FILTERS[query.archived]
                # The stale check and the row reads at once (one round trip's wait, not two).
                current, *parts = await self._coll.run(
                    asyncio.gather(
                        self._coll.rollups.is_current(workspace_id),
                        *(
                            self._coll.rollups.read(workspace_id, archived, r, caller)
                            for r in reads
                        ),
                    )
                )
                if current:
                    return self._from_rows(reads, parts, keys, preferred_currency, max_groups)
            matched = await self._coll.regex_matched(workspace_id, query)
            return await self._from_documents(
                workspace_id, matched.query, keys, max_groups, preferred_currency, extremes
            )

    @staticmethod
    def _from_rows(
        reads: list[RowRead],
        parts: list[list[dict[str, Any]]],
        keys: Sequence[AggregateKey],
        preferred: str | None,
        max_groups: int,
    ) -> Aggregate:
        signed = ((row, read.sign) for read, part in zip(reads, parts, strict=True) for row in part)
        rows = fold_rows(signed, keys, preferred)
        return Aggregate(
            total=sum(row["count"] for row in rows),
            groups=[_group(row) for row in rows[:max_groups]],
            truncated=len(rows) > max_groups,
            source="rollups:" + "+".join(dict.fromkeys(read.shape.name for read in reads)),
        )

    async def _from_documents(
        self,
        workspace_id: str,
        query: DocumentQuery,
        keys: Sequence[AggregateKey],
        max_groups: int,
        preferred: str | None,
        extremes: bool,
    ) -> Aggregate:
        pipeline = [
            *query.stages(workspace_id),
            {
                "$facet": {
                    "total": [{"$count": "n"}],
                    "groups": _document_stages(keys, max_groups, preferred, extremes),
                }
            },
        ]
        found = await self._coll.run(
            self._coll.docs.aggregate(pipeline, maxTimeMS=AGGREGATE_TIME_LIMIT_MS).to_list(None)
        )
        result = found[0] if found else {}
        total = result.get("total") or []
        rows = result.get("groups") or []
        return Aggregate(
            total=int(total[0]["n"]) if total else 0,
            groups=[_group(row) for row in rows[:max_groups]],
            truncated=len(rows) > max_groups,
        )

    async def tag_counts(self, workspace_id: str) -> dict[str, int]:
        """Tag name → how many active documents of the workspace carry it."""
        pipeline: list[dict[str, Any]] = [
            {
                "$match": {
                    "workspaceId": workspace_id,
                    "archived": False,
                    "tags": {"$exists": True, "$ne": []},
                }
            },
            {"$project": {"tags": 1}},
            {"$unwind": "$tags"},
            {"$group": {"_id": "$tags", "count": {"$sum": 1}}},
        ]
        rows = await self._coll.run(
            self._coll.docs.aggregate(pipeline, maxTimeMS=AGGREGATE_TIME_LIMIT_MS).to_list(None)
        )
        return {row["_id"]: row["count"] for row in rows}
