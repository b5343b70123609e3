"""Read shapes on the embedded store (SecantusDB over the wire): the workspace-and-archive stage
uses an index and examines only that workspace's documents, and results stay right where the
store's index bounds are wrong (inclusive bounds on ``docDate``)."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Iterator
from datetime import date, datetime, timedelta
from decimal import Decimal
from typing import Any

import pytest

from domain.where import WhereClause
from engines.demo import demo_documents
from persistence.client import connect
from persistence.documents.query import DocumentQuery, Keyset
from persistence.embedded import EmbeddedServer
from persistence.store import Store

pytestmark = pytest.mark.wire

TODAY = date(2026, 6, 30)


async def fill(store: Store, workspace: str, count: int, seed: int) -> list[dict[str, Any]]:
    documents = demo_documents(count, seed=seed, today=TODAY)
    for position, document in enumerate(documents):
        document["_id"] = f"{workspace}_{position:04d}"
    await store.documents.writes.insert_many(workspace, documents)
    return documents


# The workspaces the parametrized read tests share (workspace, count, seed): filled once for
# the module (the rollups' 450 documents took 3 s to insert, once per parameter), never written
# by those tests, which only read.
SHARED = (("org_dates", 120, 3), ("org_big", 300, 4), ("org_rolled", 150, 5))


@pytest.fixture(scope="module")
def shared_database(embedded_server: EmbeddedServer) -> Iterator[tuple[str, dict[str, Any]]]:
    """The name of a database holding ``SHARED``, and each workspace's documents."""
    name = f"wire_{uuid.uuid4().hex[:10]}"
    filled: dict[str, Any] = {}

    async def make() -> None:
        client, db = connect(embedded_server.uri, name)
        store = Store(db)
        await store.ensure_indexes()
        for workspace, count, seed in SHARED:
            filled[workspace] = await fill(store, workspace, count, seed)
        client.close()

    async def drop() -> None:
        client, _ = connect(embedded_server.uri, name)
        await client.drop_database(name)
        client.close()

    asyncio.run(make())
    yield name, filled
    asyncio.run(drop())


@pytest.fixture
async def shared(
    embedded_server: EmbeddedServer, shared_database: tuple[str, dict[str, Any]]
) -> AsyncIterator[tuple[Store, dict[str, Any]]]:
    """The shared database, through a client of this test's event loop; the documents."""
    name, filled = shared_database
    client, db = connect(embedded_server.uri, name)
    yield Store(db), filled
    client.close()


def where(*conditions: dict[str, Any]) -> WhereClause:
    return WhereClause.model_validate({"conditions": list(conditions)})


async def explain(store: Store, pipeline: list[dict[str, Any]]) -> dict[str, Any]:
    command = {"aggregate": "documents", "pipeline": pipeline, "cursor": {}}
    result: dict[str, Any] = await store.db.command(
        {"explain": command, "verbosity": "executionStats"}
    )
    return result


def plan_text(explained: dict[str, Any]) -> str:
    return str(explained)


async def test_reads_examine_only_their_workspace(wire_store: Store) -> None:
    await fill(wire_store, "org_big", 400, seed=1)
    small = await fill(wire_store, "org_small", 40, seed=2)
    active_small = [d for d in small if not d.get("archived")]

    month = where({"field": "docDate", "op": "gte", "value": "2026-01-01"})
    query = DocumentQuery(where=month)
    stages = query.stages("org_small")
    explained = await explain(wire_store, [*stages, {"$count": "n"}])
    text = plan_text(explained)
    assert "IXSCAN" in text and "COLLSCAN" not in text, text[:600]
    assert "'totalDocsExamined': " + str(len(active_small)) in text, text[:1200]

    # The answer is the same as a plain filter over the small workspace.
    counted = await wire_store.documents.reads.count("org_small", query)
    since = datetime(2026, 1, 1).date()
    expected = [d for d in active_small if d.get("docDate") and d["docDate"] >= since]
    assert counted == len(expected)


@pytest.mark.parametrize("op", ["gte", "lte", "eq", "gt", "lt"])
async def test_inclusive_date_bounds_keep_equal_documents(
    shared: tuple[Store, dict[str, Any]], op: str
) -> None:
    """The store drops documents equal to an inclusive ``docDate`` bound when the bound is in
    an index range; reads keep dates out of index bounds, so every such document is found."""
    wire_store, filled = shared
    documents = filled["org_dates"]
    active = [d for d in documents if not d.get("archived") and d.get("docDate")]
    pivot = sorted(d["docDate"] for d in active)[len(active) // 2]
    compare = {
        "gte": lambda v: v >= pivot,
        "lte": lambda v: v <= pivot,
        "eq": lambda v: v == pivot,
        "gt": lambda v: v > pivot,
        "lt": lambda v: v < pivot,
    }[op]
    expected = {d["_id"] for d in active if compare(d["docDate"])}
    assert any(d["docDate"] == pivot for d in active)  # the bound itself is stored
    query = DocumentQuery(where=where({"field": "docDate", "op": op, "value": pivot.isoformat()}))
    found = await wire_store.documents.reads.find("org_dates", query)
    assert {d["_id"] for d in found} == expected
    assert await wire_store.documents.reads.count("org_dates", query) == len(expected)
    totals = await wire_store.documents.totals.of("org_dates", query, group_by="month")
    assert sum(group.count for group in totals.groups) == len(expected)


@pytest.mark.parametrize("op", ["gte", "gt", "lte", "lt"])
async def test_rollups_on_the_embedded_store_agree_and_read_only_their_range(
    shared: tuple[Store, dict[str, Any]], op: str
) -> None:
    """Counts from the rollups equal counts from the documents on SecantusDB, also at
    inclusive bounds (the rows' date is the index's last key, where bounds are exact) and where
    a range is split into day rows at its ends and month rows between, and the day rows of a
    date range are read through the index without a collection scan."""
    wire_store, filled = shared  # org_big (300 documents) beside it
    documents = filled["org_rolled"]
    dated = sorted(d["docDate"] for d in documents if d.get("docDate"))
    pivot = dated[len(dated) // 2].isoformat()
    for group_by in (None, "category", "month", "day"):
        query = DocumentQuery(where=where({"field": "docDate", "op": op, "value": pivot}))
        fast, slow = [
            await wire_store.documents.totals.of(
                "org_rolled", query, group_by=group_by, preferred_currency="EUR", use_rollups=use
            )
            for use in (True, False)
        ]
        # Whole months inside the range come from month rows, its other days from day rows
        # (the month it cuts: its days taken, or the month less the days left out).
        shapes = set(fast.source.removeprefix("rollups:").split("+"))
        months = {"month-currency", "month-category", "month"}
        if group_by == "day":
            assert shapes == {"day"}, fast.source
        else:
            assert "day" in shapes and shapes & months and shapes <= months | {"day"}, fast.source
        assert fast.source.startswith("rollups:") and slow.source == "documents"
        assert (fast.overall, fast.groups, fast.preferred) == (
            slow.overall,
            slow.groups,
            slow.preferred,
        )

    month_start = where({"field": "docDate", "op": "gte", "value": pivot[:8] + "01"})
    by_merchant = await wire_store.documents.totals.of(
        "org_rolled", DocumentQuery(where=month_start), group_by="merchant"
    )
    assert by_merchant.source == "rollups:merchant-month"

    first = {"workspaceId": "org_rolled", "shape": "day", "archived": False}
    first["docDate"] = {"$gte": datetime.fromisoformat(pivot)}
    command = {"aggregate": "document_rollups", "pipeline": [{"$match": first}], "cursor": {}}
    explained = await wire_store.db.command({"explain": command, "verbosity": "executionStats"})
    text = plan_text(explained)
    assert "IXSCAN" in text and "COLLSCAN" not in text, text[:600]


async def test_newest_first_pages_read_in_widening_windows(wire_store: Store) -> None:
    """Newest-first pages come in date windows; paging through dense recent, sparse old,
    future and undated documents returns each exactly once, in (docDate, id) order."""
    today = date.today()
    dated = [today - timedelta(days=offset) for offset in (0, 0, 1, 3, 6, 7, 8, 9, 30, 35)]
    dated += [today - timedelta(days=offset) for offset in (200, 700, 3000, 9000)]
    dated += [today + timedelta(days=20), None, None]
    documents = [
        {"_id": f"n{i:02d}", "docDate": value, "amount": Decimal(i), "currency": "EUR"}
        for i, value in enumerate(dated)
    ]
    await wire_store.documents.writes.insert_many("org_newest", documents)
    await fill(wire_store, "org_other", 50, seed=6)
    expected = sorted(
        documents, key=lambda d: (d["docDate"] is not None, d["docDate"] or today, d["_id"])
    )
    expected_ids = [d["_id"] for d in reversed(expected)]
    for page_size in (1, 3, 7, 40):
        seen: list[str] = []
        keyset = None
        while True:
            page = await wire_store.documents.reads.find(
                "org_newest", DocumentQuery(after=keyset), limit=page_size, fields=["id"]
            )
            seen += [record["_id"] for record in page]
            if len(page) < page_size:
                break
            last = page[-1]
            keyset = Keyset("docDate", -1, last.get("docDate"), last["_id"])
        assert seen == expected_ids, page_size

    # The first window is sized from the density earlier pages found; whatever it guesses
    # (a day, or every date at once), the pages are the same.
    documents_repo = wire_store.documents
    assert documents_repo.reads.windows._densities, "a read remembers its density"
    for guess in (timedelta(days=1), timedelta(days=366), timedelta(days=40_000)):
        documents_repo.reads.windows._first_window = lambda _memory, _limit, guess=guess: guess  # type: ignore[method-assign]
        for page_size in (1, 3, 7):
            seen, keyset = [], None
            while True:
                page = await documents_repo.reads.find(
                    "org_newest", DocumentQuery(after=keyset), limit=page_size, fields=["id"]
                )
                seen += [record["_id"] for record in page]
                if len(page) < page_size:
                    break
                keyset = Keyset("docDate", -1, page[-1].get("docDate"), page[-1]["_id"])
            assert seen == expected_ids, (guess, page_size)

    # The first window of a dense workspace reads that window only.
    lower = datetime.combine(today - timedelta(days=7), datetime.min.time())
    first = {"workspaceId": "org_newest", "archived": False, "docDate": {"$gt": lower}}
    explained = await explain(wire_store, [{"$match": first}])
    assert "IXSCAN" in plan_text(explained) and "COLLSCAN" not in plan_text(explained)
    assert "'totalDocsExamined': 6" in plan_text(explained), plan_text(explained)[:1200]


async def test_forgetting_a_duplicate_reads_only_the_documents_that_list_it(
    wire_store: Store,
) -> None:
    """Deleting a document takes its id out of the ``duplicates`` of the documents that list
    it; finding them examines those documents only (``workspace_duplicates``)."""
    await fill(wire_store, "org_big", 200, seed=1)
    await fill(wire_store, "org_dup", 60, seed=3)
    documents = wire_store.documents
    await documents.writes.link_duplicate("org_dup", "org_dup_0001", "org_dup_0002")
    await documents.writes.link_duplicate("org_dup", "org_dup_0003", "org_dup_0002")
    pipeline = [{"$match": {"workspaceId": "org_dup", "duplicates": {"$in": ["org_dup_0002"]}}}]
    text = plan_text(await explain(wire_store, pipeline))
    assert "IXSCAN" in text and "'totalDocsExamined': 2" in text, text[:1200]

    await documents.writes.remove_references("org_dup", ["org_dup_0002"])
    listing = await wire_store.db["documents"].count_documents({"duplicates": "org_dup_0002"})
    assert listing == 0
