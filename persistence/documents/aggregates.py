"""Group-by over several keys at once (GraphQL's ``documentsAggregate``): one aggregation.

Every group is also split by currency, so no sum, average, minimum or maximum ever mixes two
currencies (a document without a currency forms its own group, currency null). Money is int64
cents in storage; ``$sum``/``$min``/``$max``/``$avg`` ignore documents without the field, and
the average is of the documents that have an amount. The groups are the ``max_groups``
largest by count (``truncated`` says when there were more); ``totalCount`` counts every
matching document, in the same aggregation (``$facet``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from domain.documents import AggregateKey
from persistence.documents.collection import DocumentCollection
from persistence.documents.query import DocumentQuery, group_key
from persistence.where import AGGREGATE_TIME_LIMIT_MS

CURRENCY = "currency"


@dataclass(frozen=True)
class AggregateGroup:
    """One group: its key (each requested key and the currency), count, and cents figures
    (None where no document of the group has the field)."""

    key: dict[str, Any]
    count: int
    amount_cents: int | None
    tax_cents: int | None
    average_cents: float | None
    min_cents: int | None
    max_cents: int | None
    first_date: datetime | None
    last_date: datetime | None


@dataclass(frozen=True)
class Aggregate:
    total: int
    groups: list[AggregateGroup]
    truncated: bool


def _present(path: str) -> dict[str, Any]:
    """1 for a document that has the field (not missing, not null), else 0."""
    return {"$cond": [{"$eq": [{"$ifNull": [path, None]}, None]}, 0, 1]}


def _stages(keys: Sequence[AggregateKey], max_groups: int) -> list[dict[str, Any]]:
    group_id: dict[str, Any] = {key: group_key(key) for key in keys}
    group_id[CURRENCY] = "$currency"
    return [
        {
            "$group": {
                "_id": group_id,
                "count": {"$sum": 1},
                # $sum of nothing is 0; "amounts" tells a zero sum from no amount at all.
                "amounts": {"$sum": _present("$amount")},
                "taxes": {"$sum": _present("$taxAmount")},
                "amount": {"$sum": "$amount"},
                "tax": {"$sum": "$taxAmount"},
                "average": {"$avg": "$amount"},
                "min": {"$min": "$amount"},
                "max": {"$max": "$amount"},
                "first": {"$min": "$docDate"},
                "last": {"$max": "$docDate"},
            }
        },
        {"$sort": {"count": -1, "_id": 1}},
        {"$limit": max_groups + 1},
    ]


class DocumentAggregates(DocumentCollection):
    """Several-key groupings of a workspace's documents."""

    async def aggregate(
        self,
        workspace_id: str,
        query: DocumentQuery,
        keys: Sequence[AggregateKey],
        *,
        max_groups: int,
    ) -> Aggregate:
        """The groups of ``query``'s documents by ``keys`` (and currency), largest first."""
        pipeline = [
            *query.stages(workspace_id),
            {"$facet": {"total": [{"$count": "n"}], "groups": _stages(keys, max_groups)}},
        ]
        found = await self._run(
            self._docs.aggregate(pipeline, maxTimeMS=AGGREGATE_TIME_LIMIT_MS).to_list(None)
        )
        result = found[0] if found else {}
        total = result.get("total") or []
        rows = result.get("groups") or []
        groups = [
            AggregateGroup(
                key=dict(row["_id"]),
                count=int(row["count"]),
                amount_cents=int(row["amount"]) if row["amounts"] else None,
                tax_cents=int(row["tax"]) if row["taxes"] else None,
                average_cents=row.get("average"),
                min_cents=row.get("min"),
                max_cents=row.get("max"),
                first_date=row.get("first"),
                last_date=row.get("last"),
            )
            for row in rows[:max_groups]
        ]
        return Aggregate(
            total=int(total[0]["n"]) if total else 0,
            groups=groups,
            truncated=len(rows) > max_groups,
        )
