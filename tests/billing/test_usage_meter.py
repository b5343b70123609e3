"""The API-call tally: counted per workspace and day, written in batches, kept on failure."""

from __future__ import annotations

import asyncio
from datetime import date, timedelta

import pytest

from persistence.store import Store
from resolvers.usage_meter import ApiCallMeter, flushing
from tests.clock import ManualClock


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


async def test_flushing_writes_periodically_and_once_more_at_the_end(store: Store) -> None:
    meter = ApiCallMeter()
    async with flushing(meter, store.usage, 0.01):
        meter.count("org_a")
        await asyncio.sleep(0.05)
        assert meter.pending() == 0  # the loop wrote it
        meter.count("org_a")
    assert meter.pending() == 0  # the final flush
    assert (await store.usage.totals("org_a", date.min, date.max))["apiCalls"] == 2
