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
        """Write the tally; on failure it is kept for the next flush."""
        if not self._pending:
            return
        taken, self._pending = self._pending, {}
        try:
            await usage.add_many({key: {"apiCalls": calls} for key, calls in taken.items()})
        except BaseException:
            for key, calls in taken.items():
                self._pending[key] = self._pending.get(key, 0) + calls
            raise


@contextlib.asynccontextmanager
async def flushing(meter: ApiCallMeter, usage: Usage, every_s: float) -> AsyncIterator[None]:
    """Flush ``meter`` every ``every_s`` seconds while the block runs, and once at its end."""

    async def loop() -> None:
        while True:
            await asyncio.sleep(every_s)
            try:
                await meter.flush(usage)
            except Exception:
                log.exception("flushing API call counts failed; kept for the next attempt")

    task = asyncio.create_task(loop())
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        try:
            await meter.flush(usage)
        except Exception:
            log.exception("final flush of API call counts failed; %d calls lost", meter.pending())
