"""documentsAggregate (GraphQL): documents grouped by several keys in one aggregation.

The filter is the where-clause documents.count and documents.search take (the typed filter
translated), checked by the same compiler; the groups come from one store aggregation bounded
by the aggregates' time limit and a cap on groups (``MAX_GROUPS``, as documents.count).
``fillGaps`` lists every bucket of a time series (one time key, alone), the empty ones with
count 0, within the same bucket cap as documents.count's.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from decimal import Decimal
from typing import Any

from domain.documents import AggregateKey
from domain.where import WhereClause
from persistence.documents import AggregateGroup
from persistence.documents.buckets import (
    MAX_BUCKETS,
    TooManyBuckets,
    bucket_keys,
    check,
    key_day,
    range_of,
)
from persistence.documents.fields import SEARCH_FIELDS
from persistence.documents.query import DocumentQuery
from persistence.money import CENT, from_cents
from persistence.where import WhereError, compile_where
from resolvers.framework.context import Context
from resolvers.framework.errors import BadRequest, store_errors
from schema.aggregates import (
    AggregateAverage,
    AggregateExtreme,
    AggregateSum,
    DocumentAggregate,
    DocumentGroup,
    DocumentGroupKey,
)

MAX_GROUPS = 500
TIME_KEYS = ("year", "month", "week", "day")


async def document_aggregate(
    ctx: Context,
    where: WhereClause | None,
    keys: Sequence[AggregateKey],
    *,
    fill_gaps: bool = False,
    locate: Callable[[str], str] = str,
) -> DocumentAggregate:
    """The workspace's documents matching ``where`` grouped by ``keys`` (and currency)."""
    workspace_id = ctx.require_workspace()
    keys = list(dict.fromkeys(keys))
    time_keys = [key for key in keys if key in TIME_KEYS]
    if fill_gaps and (len(time_keys) != 1 or len(keys) != 1):
        raise BadRequest(
            "Invalid request: fillGaps: needs groupBy with one time key alone "
            f"(YEAR, MONTH, WEEK or DAY; got {', '.join(keys) or 'none'})"
        )
    try:
        compiled = compile_where(where, SEARCH_FIELDS)
    except WhereError as error:
        raise BadRequest(f"Invalid request: {locate(error.location)}: {error.reason}") from None
    span = range_of(compiled) if fill_gaps else None
    try:
        if span is not None and span.first and span.last:
            check(keys[0], span.first, span.last, MAX_BUCKETS)
    except TooManyBuckets as error:
        raise BadRequest(_too_many(error)) from None
    ctx.services.api_calls.count(workspace_id)  # metered like one documents.count call
    query = DocumentQuery(where=where)
    with store_errors():
        found = await ctx.store.documents.aggregate(
            workspace_id, query, keys, max_groups=MAX_GROUPS
        )
    groups = [_group(group) for group in found.groups]
    if span is not None:
        if found.truncated:
            raise BadRequest(_too_many(TooManyBuckets(keys[0], None, MAX_BUCKETS)))
        try:
            groups += _gaps(keys[0], groups, span.first, span.last)
        except TooManyBuckets as error:
            raise BadRequest(_too_many(error)) from None
    if time_keys:
        groups.sort(key=lambda group: tuple(_late(getattr(group.key, k)) for k in time_keys))
    return DocumentAggregate(totalCount=found.total, groups=groups, groupsTruncated=found.truncated)


def _late(value: str | None) -> tuple[bool, str]:
    """Time keys in time order, documents without a date last."""
    return (value is None, value or "")


def _too_many(error: TooManyBuckets) -> str:
    return (
        f"Invalid request: fillGaps: {error}; narrow the filter's docDate range or group by "
        "a longer period"
    )


def _gaps(key: str, groups: list[DocumentGroup], first: Any, last: Any) -> list[DocumentGroup]:
    present = {getattr(group.key, key) for group in groups} - {None}
    days = [key_day(key, value) for value in present]
    first = first or min(days, default=None)
    last = last or max(days, default=None)
    if first is None or last is None:
        return []
    check(key, first, last, MAX_BUCKETS)
    return [
        DocumentGroup(
            key=DocumentGroupKey(**{key: value}),
            count=0,
            sum=AggregateSum(),
            avg=AggregateAverage(),
            min=AggregateExtreme(),
            max=AggregateExtreme(),
        )
        for value in bucket_keys(key, first, last)
        if value not in present
    ]


def _money(cents: Any) -> Decimal | None:
    return from_cents(int(cents)) if cents is not None else None


def _day(moment: datetime | None) -> Any:
    return moment.date() if isinstance(moment, datetime) else None


def _group(group: AggregateGroup) -> DocumentGroup:
    average = (
        (Decimal(str(group.average_cents)) * CENT).quantize(CENT)
        if group.average_cents is not None
        else None
    )
    key = {name: (str(value) if value is not None else None) for name, value in group.key.items()}
    return DocumentGroup(
        key=DocumentGroupKey(**key),
        count=group.count,
        sum=AggregateSum(amount=_money(group.amount_cents), taxAmount=_money(group.tax_cents)),
        avg=AggregateAverage(amount=average),
        min=AggregateExtreme(amount=_money(group.min_cents), docDate=_day(group.first_date)),
        max=AggregateExtreme(amount=_money(group.max_cents), docDate=_day(group.last_date)),
    )
