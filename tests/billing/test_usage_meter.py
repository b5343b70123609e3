"""The API-call tally: counted per workspace and day, written in batches, kept on failure."""

from __future__ import annotations

import asyncio
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import pytest
from pymongo.errors import ServerSelectionTimeoutError

from persistence.store import Store
from resolvers.framework.usage_meter import ApiCallMeter, flushing
from tests.billing.conftest import Billed
from tests.clock import ManualClock
from tests.conftest import Tenant, second_workspace


async def test_counts_are_written_per_day_and_kept_when_a_write_fails(
    store: Store, clock: ManualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    meter = ApiCallMeter(clock)
    day = clock.now.date()
    for _ in range(3):
        meter.count("org_a")
    clock.advance(86_400)
    meter.count("org_a")
    meter.count("org_b")

    async def broken(counts: object) -> None:
        raise ConnectionError("store down")

    monkeypatch.setattr(store.usage, "add_many", broken)
    with pytest.raises(ConnectionError):
        await meter.flush(store.usage)
    assert meter.pending() == 5  # nothing lost
    monkeypatch.undo()
    await meter.flush(store.usage)
    assert meter.pending() == 0
    assert (await store.usage.totals("org_a", day, day + timedelta(days=1)))["apiCalls"] == 3
    assert (await store.usage.totals("org_a", day, date.max))["apiCalls"] == 4
    assert (await store.usage.totals("org_b", day, date.max))["apiCalls"] == 1


async def test_flushing_writes_periodically_and_once_more_at_the_end(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Waits for the periodic write itself, never for an amount of time: the loop is seen
    writing while the block runs, and the final flush writes what came after."""
    meter = ApiCallMeter()
    writes: list[int] = []
    wrote = asyncio.Event()
    add_many = store.usage.add_many

    async def observed(counts: Any) -> None:
        await add_many(counts)
        writes.append(sum(n for row in counts.values() for n in row.values()))
        wrote.set()

    monkeypatch.setattr(store.usage, "add_many", observed)
    async with flushing(meter, store.usage, 0.01):
        meter.count("org_a")
        await asyncio.wait_for(wrote.wait(), timeout=60)  # a hang guard, not a time limit
        assert meter.pending() == 0 and writes == [1]  # the loop wrote it
        meter.count("org_a")
    assert meter.pending() == 0 and sum(writes) == 2  # the final flush
    assert (await store.usage.totals("org_a", date.min, date.max))["apiCalls"] == 2


async def test_concurrent_calls_are_counted_exactly_while_flushes_run_and_fail(
    billed: Billed, store: Store, alice: Tenant, bob: Tenant, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Calls through REST and GraphQL, many at once, while the background flush runs every
    millisecond and every third write fails: after the final flush the store holds exactly
    one count per metered call (a call without a workspace and an invalid one are free)."""
    meter = billed.services.api_calls
    usage = store.usage
    writes = 0
    add_many = usage.add_many

    async def flaky(counts: Any) -> None:
        nonlocal writes
        writes += 1
        if writes % 3 == 0:
            raise ConnectionError("store busy")
        await add_many(counts)

    monkeypatch.setattr(usage, "add_many", flaky)
    rest, graphql = 0, 0
    await second_workspace(store, bob)  # with one, a call naming none would be metered there

    async def rest_call(who: Tenant) -> None:
        await billed.ok("workspaces.list", {}, who.headers())

    async def graphql_call(who: Tenant) -> None:
        body = await billed.gql("{ workspacesList { workspaces { id } } }", who.headers())
        assert "errors" not in body, body

    async with flushing(meter, usage, 0.001):
        calls = []
        for i in range(60):
            who = alice if i % 3 else bob
            if i % 4:
                calls.append(rest_call(who))
                rest += 1
            else:
                calls.append(graphql_call(who))
                graphql += 1
        calls.append(billed.ok("workspaces.list", {}, bob.headers(org=None)))  # no workspace
        bad = billed.call("documents.count", {"groupBy": "no-such-grouping"}, alice.headers())
        await asyncio.gather(*calls, bad)
    assert writes > 1 and meter.pending() == 0
    expected = {alice.org_id: 0, bob.org_id: 0}
    for i in range(60):
        expected[alice.org_id if i % 3 else bob.org_id] += 1
    for org, count in expected.items():
        assert (await store.usage.totals(org, date.min, date.max))["apiCalls"] == count


async def test_counts_the_last_flush_cannot_write_are_kept_on_disk_and_written_at_the_next_start(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A process stopping while its store is away keeps its counts in the data directory
    (before: logged as "3 calls lost"); the next start writes them, once, and a start that
    cannot write them either gives the file back."""
    meter = ApiCallMeter()
    for _ in range(3):
        meter.count("org_a")
    add_many = store.usage.add_many

    async def away(counts: object) -> None:
        raise ServerSelectionTimeoutError("127.0.0.1:27017: [Errno 111] Connection refused")

    monkeypatch.setattr(store.usage, "add_many", away)
    async with flushing(meter, store.usage, 300, tmp_path):
        pass
    assert meter.pending() == 0
    assert len(list(tmp_path.glob("usage-pending-*.json"))) == 1
    async with flushing(ApiCallMeter(), store.usage, 300, tmp_path):  # still away at start
        pass
    assert len(list(tmp_path.glob("usage-pending-*.json"))) == 1  # given back, not lost

    monkeypatch.setattr(store.usage, "add_many", add_many)
    async with flushing(ApiCallMeter(), store.usage, 300, tmp_path):
        assert (await store.usage.totals("org_a", date.min, date.max))["apiCalls"] == 3
    assert list(tmp_path.iterdir()) == []
    async with flushing(ApiCallMeter(), store.usage, 300, tmp_path):
        pass
    assert (await store.usage.totals("org_a", date.min, date.max))["apiCalls"] == 3  # once
