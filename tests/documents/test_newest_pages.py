"""Newest-first pages (``NewestFirst._find_newest``) equal a plain sorted filter whatever the
workspace's density, the filter, the archive state and what the process knows: a cold process
(first window from the rollups' documents per month), wrong rollups, or a remembered density
of any size. Paged through with keyset cursors, every document comes exactly once, in
(docDate, id) order, undated ones last."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable
from datetime import date, datetime, timedelta
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mongomock_motor import AsyncMongoMockClient
from pymongo import DESCENDING

from domain.where import WhereClause
from persistence.client import connect
from persistence.documents.query import DocumentQuery, Keyset
from persistence.documents.windows import NEWEST_FIRST_WINDOW, span_holding
from persistence.embedded import EmbeddedServer
from persistence.store import Store
from tests.hypothesis_profiles import examples

WS = "org_pages"
TODAY = date.today()
CURRENCIES = ["EUR", "USD", "CHF"]

# A document: days before today (negative: in the future; None: undated), amount, currency,
# archived.
document = st.tuples(
    st.one_of(st.none(), st.integers(-30, 4000)),
    st.integers(0, 900),
    st.sampled_from(CURRENCIES),
    st.booleans(),
)


@st.composite
def workspaces(draw: st.DrawFn) -> list[tuple[Any, ...]]:
    """Dense (many documents a day), sparse (a few over years) and in between."""
    spread = draw(st.sampled_from([0, 2, 40, 400, 4000]))
    count = draw(st.integers(0, 70))
    rows = []
    for _ in range(count):
        undated, amount, currency, archived = draw(document)
        offset = None if undated is None else draw(st.integers(-5, spread))
        rows.append((offset, amount, currency, archived))
    return rows


conditions = st.sampled_from(
    [
        [],
        [{"field": "amount", "op": "gt", "value": 5}],
        [{"field": "amount", "op": "gt", "value": 800}],
        [{"field": "currency", "op": "eq", "value": "USD"}],
        [
            {"field": "currency", "op": "eq", "value": "EUR"},
            {"field": "amount", "op": "lte", "value": 100},
        ],
    ]
)
# What the process knows before the first page: nothing (the rollups size the first window),
# or a remembered first window of any size.
first_windows = st.sampled_from(
    [None, timedelta(days=1), timedelta(days=3), timedelta(days=366), timedelta(days=50_000)]
)


async def load(store: Store, rows: list[tuple[Any, ...]], wrong_rollups: bool) -> None:
    documents = [
        {
            "_id": f"d{i:03d}",
            "docDate": None if offset is None else TODAY - timedelta(days=offset),
            "amount": Decimal(amount) / 4,
            "currency": currency,
        }
        for i, (offset, amount, currency, _archived) in enumerate(rows)
    ]
    await store.documents.writes.insert_many(WS, documents)
    archived = [f"d{i:03d}" for i, row in enumerate(rows) if row[3]]
    if archived:
        await store.documents.writes.set_archived(WS, archived, archived=True)
    if wrong_rollups:
        # Months lost or doubled: the estimate is wrong, the pages must not be.
        rollups = store.db["document_rollups"]
        async for row in rollups.find({"shape": "month-currency"}):
            if row["docDate"] is None or row["docDate"].month % 2:
                await rollups.delete_one({"_id": row["_id"]})
            else:
                await rollups.update_one({"_id": row["_id"]}, {"$inc": {"count": row["count"]}})


async def check_pages(
    store: Store,
    where: list[dict[str, Any]],
    archived: Any,
    page_size: int,
    first_window: timedelta | None,
) -> None:
    documents = store.documents
    if first_window is not None:
        documents.reads.windows._first_window = lambda _memory, _limit: first_window  # type: ignore[method-assign]
    clause = WhereClause.model_validate({"conditions": where}) if where else None
    query = DocumentQuery(where=clause, archived=archived)
    sort = [("docDate", DESCENDING), ("_id", DESCENDING)]
    plain = await documents.reads.windows.sorted_page(query.stages(WS), {"_id": 1}, sort, 0)
    expected = [record["_id"] for record in plain]
    seen: list[str] = []
    keyset = None
    for _ in range(len(expected) + 2):
        page = await documents.reads.find(
            WS,
            DocumentQuery(where=clause, archived=archived, after=keyset),
            limit=page_size,
            fields=["id"],
        )
        seen += [record["_id"] for record in page]
        if len(page) < page_size:
            break
        keyset = Keyset("docDate", -1, page[-1].get("docDate"), page[-1]["_id"])
    assert seen == expected


async def scenario(
    make_store: Callable[[], Awaitable[tuple[Store, Callable[[], Awaitable[None]]]]],
    rows: list[tuple[Any, ...]],
    wrong_rollups: bool,
    where: list[dict[str, Any]],
    archived: Any,
    page_size: int,
    first_window: timedelta | None,
) -> None:
    store, drop = await make_store()
    try:
        await load(store, rows, wrong_rollups)
        await check_pages(store, where, archived, page_size, first_window)
    finally:
        await drop()


async def mock_store() -> tuple[Store, Callable[[], Awaitable[None]]]:
    store = Store(AsyncMongoMockClient(tz_aware=True)[f"p_{uuid.uuid4().hex[:8]}"])
    await store.ensure_indexes()

    async def drop() -> None:
        return None

    return store, drop


SLOW = [HealthCheck.too_slow, HealthCheck.data_too_large]


@settings(max_examples=examples(120), deadline=None, suppress_health_check=SLOW)
@given(
    rows=workspaces(),
    wrong_rollups=st.booleans(),
    where=conditions,
    archived=st.sampled_from(["exclude", "only"]),
    page_size=st.integers(1, 25),
    first_window=first_windows,
)
def test_newest_pages_equal_a_sorted_filter(
    rows: list[tuple[Any, ...]],
    wrong_rollups: bool,
    where: list[dict[str, Any]],
    archived: Any,
    page_size: int,
    first_window: timedelta | None,
) -> None:
    asyncio.run(scenario(mock_store, rows, wrong_rollups, where, archived, page_size, first_window))


@pytest.mark.wire
@settings(max_examples=examples(25), deadline=None, suppress_health_check=SLOW)
@given(
    rows=workspaces(),
    wrong_rollups=st.booleans(),
    where=conditions,
    page_size=st.integers(1, 25),
    first_window=first_windows,
)
def test_newest_pages_equal_a_sorted_filter_on_the_embedded_store(
    embedded_server: EmbeddedServer,
    rows: list[tuple[Any, ...]],
    wrong_rollups: bool,
    where: list[dict[str, Any]],
    page_size: int,
    first_window: timedelta | None,
) -> None:
    """The same on the embedded store, whose inclusive index bounds on ``docDate`` are wrong
    (STACK-NOTES): the windows' and the rest's bounds must never sit on a stored date."""

    async def wire_store() -> tuple[Store, Callable[[], Awaitable[None]]]:
        name = f"pages_{uuid.uuid4().hex[:10]}"
        client, db = connect(embedded_server.uri, name)
        store = Store(db)
        await store.ensure_indexes()

        async def drop() -> None:
            await client.drop_database(name)
            client.close()

        return store, drop

    asyncio.run(
        scenario(wire_store, rows, wrong_rollups, where, "exclude", page_size, first_window)
    )


def month(year: int, number: int) -> datetime:
    return datetime(year, number, 1)


def test_the_first_window_holds_the_wanted_documents_by_the_monthly_counts() -> None:
    """``span_holding`` spreads each month's documents over its days: 310 in March (10 a day)
    hold 30 documents in the 3 days below March 31st; a sparse month is crossed into the
    one before; documents of later months count only on a first page."""
    start = datetime(2026, 3, 31)
    assert span_holding({month(2026, 3): 310}, start, 30, open_top=False) == timedelta(days=3)
    # 31 in March (one a day up to the 31st's midnight: 30), then 28 in February (one a day).
    sparse = {month(2026, 3): 31, month(2026, 2): 28}
    assert span_holding(sparse, start, 40, open_top=False) == timedelta(days=40)
    assert span_holding(sparse, start, 100, open_top=False) is None
    # A first page also reads what is dated after the start: April's documents fill it.
    future = {month(2026, 4): 300, month(2026, 3): 310}
    assert span_holding(future, start, 30, open_top=True) == timedelta(0)
    assert span_holding(future, start, 30, open_top=False) == timedelta(days=3)
    # On a first page the current month's documents lie in the days gone by: 100 in the
    # first ten days of March are 10 a day.
    assert span_holding({month(2026, 3): 100}, datetime(2026, 3, 11), 30, open_top=True) == (
        timedelta(days=3)
    )


async def test_a_cold_read_sizes_its_first_window_from_the_rollups(store: Store) -> None:
    """A process that has not read the workspace yet sizes the first window from its
    documents per month: a dense workspace's first window is a day or two, not a week, and
    one read fills the page. (With no rollup rows it falls back to a week.)"""
    documents = [
        {"_id": f"x{day:03d}{n}", "docDate": TODAY - timedelta(days=day), "currency": "EUR"}
        for day in range(60)
        for n in range(20)
    ]
    await store.documents.writes.insert_many(WS, documents)
    rounds: list[dict[str, Any]] = []
    read = store.documents.reads.windows.sorted_page

    async def traced(stages: list[dict[str, Any]], *args: Any) -> Any:
        rounds.append(stages[0]["$match"])
        return await read(stages, *args)

    store.documents.reads.windows.sorted_page = traced  # type: ignore[method-assign,assignment]
    page = await store.documents.reads.find(WS, DocumentQuery(), limit=21, fields=["id"])
    assert len(page) == 21 and len(rounds) == 1
    lower = rounds[0]["docDate"]["$gt"]
    assert datetime.combine(TODAY, datetime.min.time()) - lower <= timedelta(days=2, seconds=1)

    # Another process (a fresh repository: nothing remembered) on a workspace without rollup
    # rows: a week.
    rounds.clear()
    await store.db["document_rollups"].delete_many({})
    fresh = type(store.documents)(store.db)
    fresh.reads.windows.sorted_page = traced  # type: ignore[method-assign,assignment]
    await fresh.reads.find(WS, DocumentQuery(), limit=21, fields=["id"])
    lower = rounds[0]["docDate"]["$gt"]
    expected = datetime.combine(TODAY, datetime.min.time()) - NEWEST_FIRST_WINDOW
    assert abs(lower - expected) <= timedelta(days=1)


async def test_a_sparse_workspace_is_read_in_one_go_once_its_density_is_known(
    store: Store,
) -> None:
    """20 documents over two years: the first page reads them at once (the rollups say they
    are fewer than a page and a half), and so does the next one, from the density remembered:
    a first window that would need more than the longest span reads every date."""
    now = store.documents.collection.now()
    documents = [
        {"_id": f"s{n:02d}", "docDate": now - timedelta(days=1 + 36 * n), "currency": "EUR"}
        for n in range(20)
    ]
    await store.documents.writes.insert_many(WS, documents)
    rounds: list[dict[str, Any]] = []
    read = store.documents.reads.windows.sorted_page

    async def traced(stages: list[dict[str, Any]], *args: Any) -> Any:
        rounds.append(stages[0]["$match"])
        return await read(stages, *args)

    store.documents.reads.windows.sorted_page = traced  # type: ignore[method-assign,assignment]
    first = await store.documents.reads.find(WS, DocumentQuery(), limit=20, fields=["id"])
    assert [d["_id"] for d in first] == [d["_id"] for d in documents] and len(rounds) == 1
    rounds.clear()
    again = await store.documents.reads.find(WS, DocumentQuery(), limit=20, fields=["id"])
    assert [d["_id"] for d in again] == [d["_id"] for d in documents]
    assert len(rounds) == 1, rounds
