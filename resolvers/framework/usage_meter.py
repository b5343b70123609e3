"""Counting API calls without slowing them: an in-memory tally, flushed in batches.

``invoke()`` adds one to a dictionary entry per call made in a workspace (no I/O, no await);
the API process flushes the tally every few seconds (``FINCAP_USAGE_FLUSH_SECONDS``) as one
``$inc`` upsert per workspace and day (``persistence/usage.py``), and once more when it stops.
``billing.get`` and the period close flush first, so this process's calls are always counted
in what they report. A process killed without stopping loses at most one interval of counts;
one stopped while its store is away keeps them on local disk (``persistence.usage_spool``) and
the next start on the same data directory writes them.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable
from datetime import date, datetime
from pathlib import Path

from persistence import usage_spool
from persistence.errors import StoreUnavailable, store_error_of
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

    def take(self) -> dict[tuple[str, date], int]:
        """The tally, emptied (to be kept elsewhere: ``usage_spool``)."""
        taken, self._pending = self._pending, {}
        return taken


async def _flush_spooled(usage: Usage, spool: Path) -> None:
    """Write what a process that stopped while the store was away left in ``spool``."""
    counts, claimed = usage_spool.claim(spool)
    if not counts:
        return
    try:
        await usage.add_many({key: {"apiCalls": calls} for key, calls in counts.items()})
    except Exception:
        usage_spool.release(claimed)
        log.exception("spooled API call counts could not be written; kept for the next start")
        return
    usage_spool.forget(claimed)
    log.info("spooled API call counts written", extra={"calls": sum(counts.values())})


@contextlib.asynccontextmanager
async def flushing(
    meter: ApiCallMeter, usage: Usage, every_s: float, spool: Path | None = None
) -> AsyncIterator[None]:
    """Flush ``meter`` every ``every_s`` seconds while the block runs, and once at its end.

    The periodic flush is asked to stop, never cancelled: a flush cancelled while its writes
    were in flight would keep counts the store had already added, and write them twice.
    With ``spool`` (a directory), counts the last flush could not write (the store away at
    shutdown) are written there, and counts found there at the start are written first.
    """
    if spool is not None:
        await _flush_spooled(usage, spool)
    stop = asyncio.Event()
    # Whether the last periodic flush found the store away: the final one then does not wait
    # out the store timeout again (a stop must take seconds), the counts go to the spool.
    away = False

    async def loop() -> None:
        nonlocal away
        while not stop.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), every_s)
            if stop.is_set():
                return
            try:
                await meter.flush(usage)
            except Exception as exc:
                away = store_error_of(exc) is not None
                if away:
                    log.warning("store unavailable: API call counts kept for the next flush")
                else:
                    log.exception("flushing API call counts failed; kept for the next attempt")
            else:
                away = False

    task = asyncio.create_task(loop())
    try:
        yield
    finally:
        stop.set()
        await task  # lets a flush in progress finish
        try:
            if away and spool is not None:
                raise StoreUnavailable()
            await meter.flush(usage)
        except Exception:
            if spool is None:
                log.exception(
                    "final flush of API call counts failed; %d calls lost", meter.pending()
                )
            else:
                kept = meter.pending()
                path = usage_spool.save(spool, meter.take())
                log.warning(
                    "final flush of API call counts failed (store unavailable); "
                    "kept on disk for the next start",
                    extra={"calls": kept, "file": str(path)},
                )
