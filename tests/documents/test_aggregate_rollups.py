"""documentsAggregate's two paths give one answer: the rollup rows and the aggregation of the
documents, after any sequence of writes (inserts, corrections, bulk edits, archive and
restore, removals), for random filters, several keys at once, and the conversions to the
workspace's currency."""

from __future__ import annotations

import asyncio
import dataclasses
import typing
from datetime import date
from decimal import Decimal
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from domain.documents import AggregateKey
from domain.where import WhereClause
from persistence.documents import Aggregate
from persistence.documents.query import DocumentQuery
from persistence.store import Store
from tests.documents.test_rollups import (
    WS,
    change_strategy,
    fields_strategy,
    new_store,
    queries,
    run_writes,
)
from tests.hypothesis_profiles import examples

TAXES = [None, Decimal("0.00"), Decimal("0.19"), Decimal("1.90")]
KEYS = list(typing.get_args(AggregateKey))

with_tax = st.tuples(fields_strategy, st.sampled_from(TAXES)).map(
    lambda pair: {**pair[0], "taxAmount": pair[1]}
)
tax_change = st.fixed_dictionaries({"taxAmount": st.sampled_from(TAXES)})
operations = st.lists(
    st.one_of(
        st.tuples(st.just("insert"), st.lists(with_tax, min_size=2, max_size=6)),
        st.tuples(st.just("update"), st.integers(0, 30), st.one_of(change_strategy, tax_change)),
        st.tuples(
            st.just("bulk"),
            st.lists(st.integers(0, 30), min_size=1, max_size=4),
            st.fixed_dictionaries({"category": st.sampled_from(["Fuel", "Meals"])}),
        ),
        st.tuples(st.just("archive"), st.lists(st.integers(0, 30), min_size=1, max_size=3)),
        st.tuples(st.just("unarchive"), st.lists(st.integers(0, 30), min_size=1, max_size=3)),
        st.tuples(st.just("drop-queued"), st.integers(0, 30)),
    ),
    min_size=1,
    max_size=12,
)
asks = st.tuples(
    queries,
    st.lists(st.sampled_from(KEYS), min_size=0, max_size=3, unique=True),
    st.sampled_from([2, 500]),  # few groups: the same largest ones listed, in the same order
    st.sampled_from(["EUR", "USD"]),
)


async def both(
    store: Store, query: DocumentQuery, keys: list[Any], max_groups: int, currency: str
) -> tuple[Aggregate, Aggregate]:
    return tuple(  # type: ignore[return-value]
        [
            await store.documents.aggregates.of(
                WS,
                query,
                keys,
                max_groups=max_groups,
                preferred_currency=currency,
                extremes=False,
                use_rollups=use,
            )
            for use in (True, False)
        ]
    )


@settings(
    max_examples=examples(100),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(ops=operations, asked=st.lists(asks, min_size=1, max_size=6))
def test_rollups_aggregate_like_the_documents(
    ops: list[tuple[Any, ...]], asked: list[tuple[Any, ...]]
) -> None:
    async def scenario() -> None:
        store = await new_store()
        await run_writes(store, ops)
        for (where, _, archived, _), keys, max_groups, currency in asked:
            query = DocumentQuery(
                where=WhereClause.model_validate(where) if where else None, archived=archived
            )
            fast, slow = await both(store, query, keys, max_groups, currency)
            assert slow.source == "documents"
            assert dataclasses.replace(fast, source="") == dataclasses.replace(slow, source=""), (
                where,
                keys,
                archived,
            )

    asyncio.run(scenario())


async def test_the_rollups_answer_what_they_cover(store: Store) -> None:
    """Month × category over whole months, or a range that cuts months, or by category alone:
    rows; a field no row keeps, a key no shape has, or minimums and maximums: the documents.
    Corrections and archiving move the answer on both paths alike."""
    await store.documents.writes.insert_many(
        WS,
        [
            {"_id": f"d{i}", "category": ["Fuel", "Meals"][i % 2], "currency": "EUR",
             "docDate": date(2024, 1 + i % 3, 1 + i), "amount": Decimal(f"{i}.25"),
             "taxAmount": Decimal("0.10") if i % 3 else None, "paymentStatus": "paid",
             "preferredCurrency": "USD", "conversionRate": 1.1 if i % 4 else None}
            for i in range(12)
        ],
    )  # fmt: skip

    async def source(where: dict[str, Any] | None, keys: list[Any], **options: Any) -> str:
        query = DocumentQuery(where=WhereClause.model_validate(where) if where else None)
        found = await store.documents.aggregates.of(
            WS, query, keys, max_groups=500, preferred_currency="USD", **options
        )
        return found.source

    def since(value: str) -> dict[str, Any]:
        return {"conditions": [{"field": "docDate", "op": "gte", "value": value}]}

    covered = {"extremes": False}
    assert await source(None, ["month", "category"], **covered) == "rollups:month-category"
    assert await source(since("2024-02-01"), ["month"], **covered) == "rollups:month-currency"
    assert await source(since("2024-01-10"), ["month", "category"], **covered) == (
        "rollups:month-category+day"
    )
    assert await source(None, ["category"], **covered) == "rollups:category"
    assert await source(None, ["paymentStatus"], **covered) == "documents"
    paid = {"conditions": [{"field": "paymentStatus", "op": "eq", "value": "paid"}]}
    assert await source(paid, ["month"], **covered) == "documents"
    assert await source(None, ["month", "category"]) == "documents"  # extremes by default

    record = await store.documents.reads.loaded(WS, "d4")
    assert record is not None
    await store.documents.writes.update_fields(WS, record, {"taxAmount": Decimal("5.00")})
    await store.documents.writes.set_archived(WS, ["d1", "d2"], archived=True)
    query = DocumentQuery(where=WhereClause.model_validate(since("2024-01-10")))
    fast, slow = await both(store, query, ["month", "category"], 500, "USD")
    assert fast.source.startswith("rollups") and fast.total == 12 - 3 - 2  # d0, d3, d6 before
    assert dataclasses.replace(fast, source="") == dataclasses.replace(slow, source="")
    # d4 and d10; d4 has no rate: counted, with an amount, not converted.
    group = next(g for g in fast.groups if g.key == {"month": "2024-02", "category": "Fuel",
                                                     "currency": "EUR"})  # fmt: skip
    assert (group.count, group.amounts, group.taxes, group.tax_cents) == (2, 2, 2, 510)
    assert (group.converted, group.converted_cents) == (1, round(1025 * 1.1))


async def test_a_stale_workspace_aggregates_its_documents(store: Store) -> None:
    await store.documents.writes.insert_many(
        WS, [{"_id": "a", "category": "Fuel", "docDate": date(2024, 1, 5), "amount": Decimal(3)}]
    )
    await store.documents.collection.rollups.mark_stale(WS, "a test")
    query = DocumentQuery()
    found = await store.documents.aggregates.of(
        WS, query, ["month"], max_groups=500, extremes=False
    )
    assert found.source == "documents" and found.groups[0].amount_cents == 300
