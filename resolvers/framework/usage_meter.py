"""Counting API calls without slowing them: an in-memory tally, flushed in batches.

``invoke()`` adds one to a dictionary entry per call made in a workspace (no I/O, no await);
the API process flushes the tally every few seconds (``FINCAP_USAGE_FLUSH_SECONDS``) as one
``$inc`` upsert per workspace and day (``persistence/usage.py``), and once more when it stops.
``billing.get`` and the period close flush first, so this process's calls are always counted
in what they report. A process killed without stopping loses at most one interval of counts.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable
from datetime import date, datetime

from persistence.ids import utcnow
from persistence.usage import Usage

log = logging.getLogger("fincap.usage")


class ApiCallMeter:
    """API calls per (workspace, UTC day) not yet written to the store."""

    def __init__(self, clock: Callable[[], datetime] = utcnow) -> None:
        self._clock = clock
        self._pending: dict[tuple[str, date], int] = {}

    def count(self, workspace_id: str) -> None:
        """One call in ``workspace_id``, today (UTC)."""
        key = (workspace_id, self._clock().date())
        self._pending[key] = self._pending.get(key, 0) + 1

    def pending(self) -> int:
        return sum(self._pending.values())

    async def flush(self, usage: Usage) -> None:
        """Write the tally, one ``$inc`` per (workspace, day) at once; the counts of a write
        that failed are kept for the next flush (only those: the others are in the store)."""
        if not self._pending:
            return
        taken, self._pending = self._pending, {}
        outcomes = await asyncio.gather(
            *(usage.add_many({key: {"apiCalls": calls}}) for key, calls in taken.items()),
            return_exceptions=True,
        )
        failures = [
            (key, calls, outcome)
            for (key, calls), outcome in zip(taken.items(), outcomes, strict=True)
            if isinstance(outcome, BaseException)
        ]
        for key, calls, _ in failures:
            self._pending[key] = self._pending.get(key, 0) + calls
        if failures:
            raise failures[0][2]


@contextlib.asynccontextmanager
async def flushing(meter: ApiCallMeter, usage: Usage, every_s: float) -> AsyncIterator[None]:
    """Flush ``meter`` every ``every_s`` seconds while the block runs, and once at its end.

    The periodic flush is asked to stop, never cancelled: a flush cancelled while its writes
    were in flight would keep counts the store had already added, and write them twice.
    """
    stop = asyncio.Event()

    async def loop() -> None:
        while not stop.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), every_s)
            if stop.is_set():
                return
            try:
                await meter.flush(usage)
            except Exception:
                log.exception("flushing API call counts failed; kept for the next attempt")

    task = asyncio.create_task(loop())
    try:
        yield
    finally:
        stop.set()
        await task  # lets a flush in progress finish
        try:
            await meter.flush(usage)
        except Exception:
            log.exception("final flush of API call counts failed; %d calls lost", meter.pending())
