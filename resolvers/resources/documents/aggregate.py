"""documentsAggregate (GraphQL): documents grouped by several keys at once.

The filter is the where-clause documents.count and documents.search take (the typed filter
translated), checked by the same compiler; the groups come from the rollups where they cover
the filter and keys and nothing asks for minimums or maximums, else from one store
aggregation bounded by the aggregates' time limit; both give the same numbers, capped at
``MAX_GROUPS`` groups (as documents.count). Converted sums are in the workspace's preferred
currency (``preferred_currency``, as documents.count's preferredTotal).

``fillGaps`` (exactly one time key, beside any others) gives every combination of the other
keys and currency the answer holds a group in every bucket of the range, the empty ones with
count 0: the range's buckets within documents.count's cap (``MAX_BUCKETS``), the filled groups
within ``MAX_FILLED``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from decimal import ROUND_HALF_EVEN, Decimal
from typing import Any

from domain.documents import AggregateKey
from domain.where import WhereClause
from persistence.documents import (
    MAX_BUCKETS,
    SEARCH_FIELDS,
    AggregateGroup,
    DocumentQuery,
    TooManyBuckets,
    bucket_keys,
    check_buckets,
    key_day,
    range_of,
)
from persistence.money import CENT, from_cents
from persistence.where import WhereError, compile_where
from resolvers.framework.context import Context
from resolvers.framework.errors import BadRequest, store_errors
from resolvers.services.documents.preferences import preferred_currency
from schema.aggregates import (
    AggregateAverage,
    AggregateConverted,
    AggregateExtreme,
    AggregateSum,
    DocumentAggregate,
    DocumentGroup,
    DocumentGroupKey,
)

MAX_GROUPS = 500
# Groups a filled answer may hold: every combination of the other keys in every bucket.
MAX_FILLED = 5_000
TIME_KEYS = ("year", "month", "week", "day")


async def document_aggregate(
    ctx: Context,
    where: WhereClause | None,
    keys: Sequence[AggregateKey],
    *,
    fill_gaps: bool = False,
    extremes: bool = True,
    locate: Callable[[str], str] = str,
    use_rollups: bool = True,
) -> DocumentAggregate:
    """The workspace's documents matching ``where`` grouped by ``keys`` (and currency).

    ``extremes``: whether minimums and maximums are wanted (without them the rollups can
    answer); ``use_rollups`` False always aggregates the documents (benchmarks, tests).
    """
    workspace_id = ctx.require_workspace()
    keys = list(dict.fromkeys(keys))
    time_keys = [key for key in keys if key in TIME_KEYS]
    if fill_gaps and len(time_keys) != 1:
        raise BadRequest(
            "Invalid request: fillGaps: needs exactly one time key in groupBy "
            f"(YEAR, MONTH, WEEK or DAY; got {', '.join(keys) or 'none'})"
        )
    try:
        compiled = compile_where(where, SEARCH_FIELDS)
    except WhereError as error:
        raise BadRequest(f"Invalid request: {locate(error.location)}: {error.reason}") from None
    span = range_of(compiled) if fill_gaps else None
    try:
        if span is not None and span.first and span.last:
            check_buckets(time_keys[0], span.first, span.last, MAX_BUCKETS)
    except TooManyBuckets as error:
        raise BadRequest(_too_many(error)) from None
    ctx.services.api_calls.count(workspace_id)  # metered like one documents.count call
    query = DocumentQuery(where=where)
    currency = await preferred_currency(ctx.store, workspace_id, ctx.user_id)
    with store_errors():
        found = await ctx.store.documents.aggregates.of(
            workspace_id,
            query,
            keys,
            max_groups=MAX_GROUPS,
            preferred_currency=currency,
            extremes=extremes,
            use_rollups=use_rollups,
        )
    # Validated in one call (pydantic-core builds the 3,500 models of 500 groups in Rust):
    # half the time of building each model in Python without validation.
    answer = DocumentAggregate.model_validate(
        {
            "totalCount": found.total,
            "groups": [_group(group, currency) for group in found.groups],
            "groupsTruncated": found.truncated,
        }
    )
    groups = answer.groups
    if span is not None:
        if found.truncated:
            raise BadRequest(_too_many(TooManyBuckets(time_keys[0], None, MAX_BUCKETS)))
        try:
            groups += _gaps(time_keys[0], groups, span.first, span.last, currency)
        except TooManyBuckets as error:
            raise BadRequest(_too_many(error)) from None
    if time_keys:
        groups.sort(key=lambda group: tuple(_late(getattr(group.key, k)) for k in time_keys))
    return answer


def _late(value: str | None) -> tuple[bool, str]:
    """Time keys in time order, documents without a date last."""
    return (value is None, value or "")


def _too_many(error: TooManyBuckets) -> str:
    return (
        f"Invalid request: fillGaps: {error}; narrow the filter's docDate range or group by "
        "a longer period"
    )


def _gaps(
    key: str, groups: list[DocumentGroup], first: Any, last: Any, currency: str
) -> list[DocumentGroup]:
    """A zero group for every bucket of [``first``, ``last``] (an open end: the data's first
    or last bucket) that a combination of the other keys has none in. The combinations are
    those the answer's groups hold (currency among them); no groups: one, every other key
    null."""
    keys = [name for name in DocumentGroupKey.model_fields if name != key]
    present: set[tuple[Any, ...]] = set()
    combinations: set[tuple[Any, ...]] = set()
    for group in groups:
        others = tuple(getattr(group.key, name) for name in keys)
        combinations.add(others)
        present.add((getattr(group.key, key), others))
    days = [key_day(key, value) for value, _ in present if value is not None]
    first = first or min(days, default=None)
    last = last or max(days, default=None)
    if first is None or last is None:
        return []
    check_buckets(key, first, last, MAX_BUCKETS)
    combinations = combinations or {tuple(None for _ in keys)}
    buckets = list(bucket_keys(key, first, last))
    if len(buckets) * len(combinations) > MAX_FILLED:
        raise BadRequest(
            f"Invalid request: fillGaps: {len(buckets)} {key}s for each of "
            f"{len(combinations)} key combinations is more than {MAX_FILLED} groups; narrow "
            "the filter or group by fewer keys"
        )
    ordered = sorted(combinations, key=lambda values: tuple(_late(v) for v in values))
    return [
        DocumentGroup(
            key=DocumentGroupKey(**{key: value}, **dict(zip(keys, others, strict=True))),
            count=0,
            sum=AggregateSum(),
            avg=AggregateAverage(),
            min=AggregateExtreme(),
            max=AggregateExtreme(),
            converted=AggregateConverted(currency=currency),
        )
        for others in ordered
        for value in buckets
        if (value, others) not in present
    ]


def _money(cents: Any) -> Decimal | None:
    return from_cents(int(cents)) if cents is not None else None


def _day(moment: datetime | None) -> Any:
    return moment.date() if isinstance(moment, datetime) else None


def _group(group: AggregateGroup, currency: str) -> dict[str, Any]:
    """A ``DocumentGroup``'s fields (validated by the caller, with the whole answer)."""
    # The exact sum over the count, rounded once (half to even): the same from rows or documents.
    average = (
        (Decimal(group.amount_cents) / group.amounts * CENT).quantize(CENT, ROUND_HALF_EVEN)
        if group.amounts
        else None
    )
    key = {name: (str(value) if value is not None else None) for name, value in group.key.items()}
    return {
        "key": key,
        "count": group.count,
        "sum": {
            "amount": _money(group.amount_cents) if group.amounts else None,
            "taxAmount": _money(group.tax_cents) if group.taxes else None,
        },
        "avg": {"amount": average},
        "min": {"amount": _money(group.min_cents), "docDate": _day(group.first_date)},
        "max": {"amount": _money(group.max_cents), "docDate": _day(group.last_date)},
        "converted": {
            "currency": currency,
            "sum": _money(group.converted_cents) if group.converted else None,
            "count": group.converted,
            "unconverted": group.amounts - group.converted,
        },
    }
