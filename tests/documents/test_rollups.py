"""Dashboard rollups: kept in step with every write, and equal to counting the documents.

The property test drives random write sequences through the documents repository (inserts,
corrections, bulk edits, archive and restore, removal of unacknowledged uploads) and then asks
random count queries both ways: from the rollups and from the documents. Both must agree on
every number, and the rows kept incrementally must equal the rows a rebuild counts afresh.
"""

from __future__ import annotations

import asyncio
import dataclasses
import uuid
from datetime import date
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mongomock_motor import AsyncMongoMockClient

from domain.where import WhereClause
from persistence.documents import FieldUpdate, Totals
from persistence.documents.buckets import TooManyBuckets, bucket_keys, key_day
from persistence.documents.fields import COUNT_FIELDS
from persistence.documents.query import DocumentQuery
from persistence.documents.rollups import PACKED, SHAPES
from persistence.store import Store
from resolvers.services.auth import accounts
from tests.conftest import Tenant
from tests.hypothesis_profiles import examples

WS = "org_rollups"
MERCHANTS = ["Shell", "shell", "REWE", None]
CATEGORIES = ["Fuel", "Meals", None]
CURRENCIES = ["EUR", "USD", None]
DATES = [date(2024, 1, 1), date(2024, 1, 20), date(2024, 1, 31), date(2024, 2, 1)]
DATES += [date(2024, 2, 29), None]
AMOUNTS = [None, Decimal("0.01"), Decimal("9.99"), Decimal("10.00"), Decimal("1234.56")]
RATES = [None, 1.0, 1.0837, 0.5]
BOUNDS = ["2024-01-01", "2024-01-15", "2024-01-31", "2024-02-01", "2024-02-15", "2024-02-29"]
# Inside a month near its start and near its end: a range's edge month is read as its days,
# or as the month less the days it leaves, whichever has fewer days.
BOUNDS += ["2024-03-01", "2023-12-20", "2024-01-05", "2024-01-25", "2024-02-20"]
GROUPINGS = [None, "merchant", "category", "currency", "docType", "paymentMethod"]
GROUPINGS += ["entityId", "day", "week", "month", "year", "date"]
# Row dimensions, and two fields no row keeps (so the documents answer).
CONDITION_FIELDS = ["merchant", "category", "currency", "docDate", "docType", "paymentMethod"]
CONDITION_FIELDS += ["preferredCurrency", "amount", "isRecurring"]


fields_strategy = st.fixed_dictionaries(
    {
        "merchant": st.sampled_from(MERCHANTS),
        "category": st.sampled_from(CATEGORIES),
        "currency": st.sampled_from(CURRENCIES),
        "docDate": st.sampled_from(DATES),
        "amount": st.sampled_from(AMOUNTS),
        "docType": st.sampled_from(["receipt", "invoice"]),
        "paymentMethod": st.sampled_from(["card", None]),
        "preferredCurrency": st.sampled_from(["EUR", "USD"]),
        "conversionRate": st.sampled_from(RATES),
        "processingStatus": st.sampled_from(["processed", "queued"]),
        "isRecurring": st.sampled_from([True, False]),
    }
)
change_strategy = st.dictionaries(
    st.sampled_from(["merchant", "category", "currency", "docDate", "amount", "conversionRate"]),
    st.none(),
    min_size=1,
).flatmap(
    lambda keys: st.fixed_dictionaries(
        {
            key: {
                "merchant": st.sampled_from(MERCHANTS),
                "category": st.sampled_from(CATEGORIES),
                "currency": st.sampled_from(CURRENCIES),
                "docDate": st.sampled_from(DATES),
                "amount": st.sampled_from(AMOUNTS),
                "conversionRate": st.sampled_from(RATES),
            }[key]
            for key in keys
        }
    )
)
operations = st.lists(
    st.one_of(
        st.tuples(st.just("insert"), st.lists(fields_strategy, min_size=2, max_size=6)),
        st.tuples(st.just("update"), st.integers(0, 30), change_strategy),
        st.tuples(
            st.just("bulk"),
            st.lists(st.integers(0, 30), min_size=1, max_size=4),
            st.fixed_dictionaries(
                {"merchant": st.sampled_from(MERCHANTS[:3]), "category": st.sampled_from(["Fuel"])}
            ),
        ),
        st.tuples(st.just("archive"), st.lists(st.integers(0, 30), min_size=1, max_size=3)),
        st.tuples(st.just("unarchive"), st.lists(st.integers(0, 30), min_size=1, max_size=3)),
        st.tuples(st.just("drop-queued"), st.integers(0, 30)),
    ),
    min_size=1,
    max_size=12,
)


@st.composite
def condition(draw: st.DrawFn, depth: int = 0) -> dict[str, Any]:
    if depth < 1 and draw(st.integers(0, 5)) == 0:
        return {
            "logic": draw(st.sampled_from(["and", "or", "nor"])),
            "conditions": draw(st.lists(condition(depth + 1), min_size=1, max_size=3)),
        }
    field = draw(st.sampled_from(CONDITION_FIELDS))
    if field == "docDate":
        op = draw(st.sampled_from(["gte", "gt", "lt", "lte", "eq", "ne", "in", "exists"]))
        value: Any = draw(st.sampled_from(BOUNDS))
        if op == "in":
            value = draw(st.lists(st.sampled_from(BOUNDS), min_size=1, max_size=2))
    elif field == "amount":
        op, value = draw(st.sampled_from(["gt", "lte"])), draw(st.sampled_from(["0.01", "10"]))
    elif field == "isRecurring":
        op, value = "eq", draw(st.booleans())
    elif field in ("docType", "preferredCurrency"):
        op = draw(st.sampled_from(["eq", "ne", "exists"]))
        value = "receipt" if field == "docType" else "EUR"
    else:
        op = draw(st.sampled_from(["eq", "ne", "in", "nin", "regex", "exists"]))
        pool = {"merchant": MERCHANTS, "category": CATEGORIES, "currency": CURRENCIES}.get(
            field, ["card"]
        )
        value = draw(st.sampled_from([v for v in pool if v is not None]))
        if op in ("in", "nin"):
            value = [value]
        elif op == "regex":
            value = "^" + value[:2]
    if op == "exists":
        value = draw(st.booleans())
    return {"field": field, "op": op, "value": value}


date_condition = st.builds(
    lambda op, value: {"field": "docDate", "op": op, "value": value},
    st.sampled_from(["gte", "gt", "lt", "lte"]),
    st.sampled_from(BOUNDS),
)
queries = st.tuples(
    st.one_of(
        st.none(),
        # Date ranges, alone or beside another condition: where month rows could go wrong.
        st.builds(
            lambda conds: {"conditions": conds},
            st.lists(st.one_of(date_condition, condition()), min_size=1, max_size=2),
        ),
        st.builds(
            lambda logic, conds: {"logic": logic, "conditions": conds},
            st.sampled_from(["and", "or", "nor"]),
            st.lists(condition(), min_size=1, max_size=3),
        ),
    ),
    st.sampled_from(GROUPINGS),
    st.sampled_from(["exclude", "only", "include"]),
    st.booleans(),  # fillGaps: every bucket of the range (time groupings)
)


async def answer(
    store: Store, query: DocumentQuery, group_by: Any, fill_gaps: bool, use_rollups: bool
) -> Totals | str:
    """The totals, or the refusal of a series longer than 60 buckets (the dates span 91
    days, so some day series are)."""
    try:
        return await store.documents.totals.of(
            WS,
            query,
            group_by=group_by,
            preferred_currency="EUR",
            use_rollups=use_rollups,
            fill_gaps=fill_gaps,
            max_buckets=60,
        )
    except TooManyBuckets as refused:
        return str(refused)


def assert_without_holes(totals: Totals, group_by: str) -> None:
    """A filled time series: consecutive buckets from its first to its last, undated last."""
    if group_by not in ("day", "date", "week", "month", "year"):
        return
    keys = [group.key for group in totals.groups if group.key is not None]
    if keys:
        first, last = key_day(group_by, keys[0]), key_day(group_by, keys[-1])
        assert keys == list(bucket_keys(group_by, first, last))
    assert all(group.key is not None for group in totals.groups[: len(keys)])


def without_source(totals: Totals) -> Totals:
    return dataclasses.replace(totals, source="")


async def new_store() -> Store:
    store = Store(AsyncMongoMockClient(tz_aware=True)[f"r_{uuid.uuid4().hex[:8]}"])
    await store.ensure_indexes()
    return store


async def run_writes(store: Store, ops: list[tuple[Any, ...]]) -> None:
    documents = store.documents
    ids: list[str] = []
    for op in ops:
        kind = op[0]
        if kind == "insert":
            batch = [{"_id": f"d{len(ids) + i}", **fields} for i, fields in enumerate(op[1])]
            await documents.writes.insert_many(WS, batch)
            ids += [fields["_id"] for fields in batch]
            continue
        if not ids:
            continue
        if kind == "update":
            loaded = await documents.reads.loaded(WS, ids[op[1] % len(ids)])
            if loaded is not None:  # None: dropped while queued
                await documents.writes.update_fields(WS, loaded, op[2])
        elif kind == "bulk":
            found = [await documents.reads.loaded(WS, ids[i % len(ids)]) for i in op[1]]
            updates = {d.id: FieldUpdate(d, op[2]) for d in found if d is not None}
            await documents.bulk.update(WS, list(updates.values()))
        elif kind in ("archive", "unarchive"):
            chosen = [ids[i % len(ids)] for i in op[1]]
            await documents.writes.set_archived(WS, chosen, archived=kind == "archive")
        elif kind == "drop-queued":
            await documents.writes.delete_unprocessed(WS, ids[op[1] % len(ids)])


async def rows(store: Store) -> list[dict[str, Any]]:
    found = await store.db["document_rollups"].find({}).to_list(None)
    return sorted(found, key=lambda row: row["_id"])


@settings(
    max_examples=examples(100),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(ops=operations, asked=st.lists(queries, min_size=1, max_size=6))
def test_rollups_answer_like_the_documents(
    ops: list[tuple[Any, ...]], asked: list[tuple[Any, ...]]
) -> None:
    async def scenario() -> None:
        store = await new_store()
        await run_writes(store, ops)
        for where, group_by, archived, fill_gaps in asked:
            query = DocumentQuery(
                where=WhereClause.model_validate(where) if where else None,
                where_fields=COUNT_FIELDS,
                archived=archived,
            )
            fast, slow = [
                await answer(store, query, group_by, fill_gaps, use) for use in (True, False)
            ]
            if isinstance(slow, str):  # both refuse a series too long, alike
                assert fast == slow, (where, group_by, archived)
                continue
            assert not isinstance(fast, str)
            if fill_gaps and group_by is not None:
                assert_without_holes(slow, group_by)
            assert slow.source == "documents"
            assert without_source(fast) == without_source(slow), (where, group_by, archived)
        # The graph's documentCount and archivedCount, from the total rows.
        col = store.db["documents"]
        expected = {
            "active": await col.count_documents({"workspaceId": WS, "archived": False}),
            "archived": await col.count_documents({"workspaceId": WS, "archived": True}),
        }
        assert await store.documents.totals.counts_by_workspace([WS]) == {WS: expected}
        # What the writes kept equals what a recount finds.
        kept = await rows(store)
        await store.documents.totals.rebuild_rollups(WS)
        assert kept == await rows(store)

    asyncio.run(scenario())


async def totals_of(store: Store, where: dict[str, Any] | None, group_by: Any = None) -> Totals:
    query = DocumentQuery(
        where=WhereClause.model_validate(where) if where else None, where_fields=COUNT_FIELDS
    )
    return await store.documents.totals.of(WS, query, group_by=group_by, preferred_currency="EUR")


def since(value: str, op: str = "gte") -> dict[str, Any]:
    return {"conditions": [{"field": "docDate", "op": op, "value": value}]}


async def test_which_source_answers(store: Store) -> None:
    await store.documents.writes.insert_many(
        WS,
        [
            {"_id": "a", "merchant": "Shell", "docDate": date(2024, 1, 5), "amount": Decimal(1)},
            {"_id": "b", "merchant": "REWE", "docDate": date(2024, 2, 5), "amount": Decimal(2)},
        ],
    )
    # No date range: the all-time rows (per category: the category rows).
    everything = await totals_of(store, None, "category")
    assert everything.source == "rollups:category" and everything.overall[0].count == 2
    # Month boundaries: the month rows (with merchants, the merchant-month rows).
    assert (
        await totals_of(store, since("2024-02-01"), "merchant")
    ).source == "rollups:merchant-month"
    assert (
        await totals_of(store, since("2024-01-31", "gt"), "month")
    ).source == "rollups:month-currency"
    # A range from inside a month: the whole months after it from the month rows, and the
    # month it starts in from the day rows of the days it takes when they are fewer than
    # half, else from the month's rows less the day rows of the days it leaves out.
    late = await totals_of(store, since("2024-01-25"), "category")
    assert late.source == "rollups:day+month-category" and late.overall[0].count == 1
    early = await totals_of(store, since("2024-01-04"), "category")
    assert early.source == "rollups:month-category+day" and early.overall[0].count == 2
    within = await totals_of(store, since("2024-01-15"), "category")
    assert within.source == "rollups:month-category+day" and within.overall[0].count == 1
    # Two months cut at both ends, no whole month between: each edge as above.
    edges = {
        "conditions": [
            *since("2024-01-04")["conditions"],
            *since("2024-02-10", "lte")["conditions"],
        ]
    }
    assert (await totals_of(store, edges, "category")).source == "rollups:month-category+day"
    assert (await totals_of(store, edges, "category")).overall[0].count == 2
    # Inside one month, the day rows alone.
    short = {
        "conditions": [
            *since("2024-01-04")["conditions"],
            *since("2024-01-20", "lte")["conditions"],
        ]
    }
    assert (await totals_of(store, short, "category")).source == "rollups:day"
    assert (await totals_of(store, short, "category")).overall[0].count == 1
    # A merchant and a date inside a month, or a field no row keeps: the documents.
    by_merchant = {"conditions": [*since("2024-01-15")["conditions"]]}
    assert (await totals_of(store, by_merchant, "merchant")).source == "documents"
    amount = {"conditions": [{"field": "amount", "op": "gt", "value": "1"}]}
    assert (await totals_of(store, amount)).source == "documents"


async def test_rows_follow_corrections_and_vanish_at_zero(store: Store) -> None:
    await store.documents.writes.insert_many(
        WS, [{"_id": "a", "merchant": "Shell", "docDate": date(2024, 1, 5), "amount": Decimal(1)}]
    )
    record = await store.documents.reads.loaded(WS, "a")
    assert record is not None
    await store.documents.writes.update_fields(WS, record, {"merchant": "Aral"})
    kept = await rows(store)
    assert [row["merchant"] for row in kept if row["shape"] == "merchant-month"] == ["Aral"]
    await store.documents.writes.set_archived(WS, ["a"], archived=True)
    assert {row["archived"] for row in await rows(store)} == {True}
    totals = await totals_of(store, None)
    assert totals.source.startswith("rollups") and totals.overall == []


async def test_a_write_that_loses_a_race_moves_the_rows_from_what_it_replaced(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another writer changes the category between this write's read and its update: the
    compare-and-set update misses, the record is read again, and the rows move from the
    category the other writer left, not from the one first read."""
    await store.documents.writes.insert_many(
        WS, [{"_id": "a", "category": "Fuel", "docDate": date(2024, 1, 5), "amount": Decimal(1)}]
    )
    documents = store.documents
    col = documents.collection.docs
    read = col.find_one
    reads = 0

    async def read_then_lose_the_race(*args: Any, **kwargs: Any) -> Any:
        nonlocal reads
        reads += 1
        found = await read(*args, **kwargs)
        if reads == 1:  # the other writer lands between this read and the update
            before = await read({"_id": "a"})
            assert before is not None
            await col.update_one({"_id": "a"}, {"$set": {"category": "Meals"}})
            await documents.collection.rollups.apply(
                WS, removed=[before], added=[{**before, "category": "Meals"}]
            )
        return found

    monkeypatch.setattr(col, "find_one", read_then_lose_the_race)
    await documents.writes.set_archived(WS, ["a"], archived=True)
    assert reads == 2
    kept = await rows(store)
    assert {(row["category"], row["archived"]) for row in kept if row["shape"] == "day"} == {
        ("Meals", True)
    }
    await documents.totals.rebuild_rollups(WS)
    assert kept == await rows(store)


async def test_preferred_total_sums_each_documents_conversion(store: Store) -> None:
    await store.documents.writes.insert_many(
        WS,
        [
            {"_id": "a", "currency": "USD", "amount": Decimal("10.00"),
             "preferredCurrency": "EUR", "conversionRate": 0.9},
            {"_id": "b", "currency": "EUR", "amount": Decimal("5.55"),
             "preferredCurrency": "EUR", "conversionRate": 1.0},
            # Converted to another currency before the preference changed: not in the sum.
            {"_id": "c", "currency": "GBP", "amount": Decimal("3.00"),
             "preferredCurrency": "USD", "conversionRate": 1.27},
            {"_id": "d", "currency": "XTS", "amount": Decimal("1.00"),
             "preferredCurrency": "EUR", "conversionRate": None},
        ],
    )  # fmt: skip
    totals = await totals_of(store, None)
    assert totals.preferred is not None
    assert (totals.preferred.currency, totals.preferred.cents) == ("EUR", 900 + 555)
    assert totals.preferred.converted == 2


async def test_a_failed_row_write_falls_back_to_the_documents(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    rollups = store.documents.collection.rollups

    async def broken(*_: Any) -> None:
        raise RuntimeError("store went away")

    monkeypatch.setattr(rollups, "_write", broken)
    await store.documents.writes.insert_many(WS, [{"_id": "a", "amount": Decimal(1)}])
    assert await store.documents.totals.stale_rollups() == [WS]
    totals = await totals_of(store, None)
    assert totals.source == "documents" and totals.overall[0].count == 1
    monkeypatch.undo()
    assert await store.documents.totals.rebuild_rollups(WS) == len(SHAPES)  # one row per shape
    assert await store.documents.totals.stale_rollups() == []
    assert (await totals_of(store, None)).source.startswith("rollups")


async def test_count_returns_the_preferred_total(client: Any, store: Store, alice: Tenant) -> None:
    await store.documents.writes.insert_many(
        alice.org_id,
        [{"_id": "a", "currency": "USD", "amount": Decimal("10.00"),
          "preferredCurrency": "USD", "conversionRate": 1.0}],
    )  # fmt: skip
    response = await client.post(
        "/v1/capabilities/documents.count", json={"groupBy": "month"}, headers=alice.headers()
    )
    result = response.json()["data"]["result"]
    assert result["preferredTotal"] == {"currency": "USD", "amount": 10.0, "converted": 1}
    assert result["groups"][0]["preferredTotal"]["amount"] == 10.0


async def test_documents_from_before_rollups_are_counted_until_rebuilt() -> None:
    """A database written before rollups existed: its workspaces are stale at start-up and
    count from the documents; ``fincap admin rebuild-rollups`` recounts them."""
    db = AsyncMongoMockClient(tz_aware=True)[f"r_{uuid.uuid4().hex[:8]}"]
    legacy = Store(db).documents.writes.prepare(WS, {"_id": "old", "amount": Decimal("2.50")})
    await db["documents"].insert_one(dict(legacy))
    store = Store(db)
    await store.ensure_indexes()
    assert await store.documents.totals.stale_rollups() == [WS]
    assert (await totals_of(store, None)).overall[0].cents == 250

    assert await accounts.rebuild_rollups(store, []) == {"rebuilt": {WS: len(SHAPES)}}
    rebuilt = await totals_of(store, None)
    assert rebuilt.source.startswith("rollups") and rebuilt.overall[0].cents == 250
    await store.ensure_indexes()  # the check runs once per database
    assert await store.documents.totals.stale_rollups() == []


async def test_workspaces_without_a_newer_shapes_rows_are_counted_until_rebuilt() -> None:
    """A database whose rows were kept before a shape was added (``month-category``): at
    start-up its workspaces with documents are stale, so no count reads the missing rows."""
    db = AsyncMongoMockClient(tz_aware=True)[f"r_{uuid.uuid4().hex[:8]}"]
    store = Store(db)
    await store.ensure_indexes()
    await store.documents.writes.insert_many(
        WS, [{"_id": "a", "category": "Fuel", "docDate": date(2024, 1, 5), "amount": Decimal(3)}]
    )
    await db["document_rollups"].delete_many({"shape": {"$in": ["category", "month-category"]}})
    await db["document_rollup_state"].delete_many({})  # as written by an older release
    store = Store(db)
    await store.ensure_indexes()
    assert await store.documents.totals.stale_rollups() == [WS]
    totals = await totals_of(store, since("2024-01-01"), "category")
    assert totals.source == "documents" and totals.groups[0].key == "Fuel"
    await accounts.rebuild_rollups(store, [])
    totals = await totals_of(store, since("2024-01-01"), "category")
    assert totals.source == "rollups:month-category" and totals.overall[0].cents == 300


async def test_rows_without_the_newer_counters_are_counted_until_rebuilt() -> None:
    """Rows kept by a release before the tax and amount counters (v4): an ``$inc`` would start
    those at the change, so at start-up the workspace is stale until it is rebuilt."""
    db = AsyncMongoMockClient(tz_aware=True)[f"r_{uuid.uuid4().hex[:8]}"]
    store = Store(db)
    await store.ensure_indexes()
    await store.documents.writes.insert_many(
        WS, [{"_id": "a", "docDate": date(2024, 1, 5), "amount": Decimal(3),
              "taxAmount": Decimal("0.50")}]
    )  # fmt: skip
    await db["document_rollups"].update_many({}, {"$unset": {"taxCents": "", "taxes": ""}})
    await db["document_rollup_state"].delete_many({})  # as written by an older release
    store = Store(db)
    await store.ensure_indexes()
    assert await store.documents.totals.stale_rollups() == [WS]
    await accounts.rebuild_rollups(store, [])
    assert await store.documents.totals.stale_rollups() == []
    kept = await rows(store)
    assert {row["taxCents"] for row in kept if row["shape"] != PACKED} == {50}
    assert {cell["taxCents"] for row in kept for cell in row.get("cells", {}).values()} == {50}
