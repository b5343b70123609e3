"""Expensive calls are limited per API key: one at a time, and a budget of cost units.

A capability that declares a ``cost`` (documents.inspect reads the original again with OCR;
rules.prepare and rules.execute read a sentence with the grammar, up to a second of CPU) holds
its key's slot while it runs: a second such call with the same key meanwhile is refused with
429 at once rather than queued, so a client cannot stack work in front of other workspaces'.
Each call also spends ``cost`` units of the key's budget: ``burst`` units at once, refilled at
``per_minute`` units a minute; an empty budget is a 429 whose ``Retry-After`` says when a unit
is back. The gate is per process: with several API processes a key gets one slot and one budget
in each.
"""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from resolvers.framework.errors import TooManyRequests

BURST = 10
PER_MINUTE = 10
MAX_TRACKED_KEYS = 10_000


@dataclass
class _Budget:
    units: float
    at: float  # when ``units`` was last brought up to date (the clock's seconds)


class ExpensiveCallGate:
    """At most ``per_key`` expensive calls at a time for each key id, within its budget."""

    def __init__(
        self,
        per_key: int = 1,
        burst: float = BURST,
        per_minute: float = PER_MINUTE,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.per_key = per_key
        self.burst = burst
        self.rate = per_minute / 60.0  # units per second
        self.clock = clock
        self._running: dict[str, int] = {}
        self._budgets: dict[str, _Budget] = {}

    @contextlib.contextmanager
    def slot(self, key_id: str, slug: str, cost: int = 1) -> Iterator[None]:
        """Hold one of ``key_id``'s slots for the duration, spending ``cost`` units; 429 when
        none is free or the budget is spent."""
        running = self._running.get(key_id, 0)
        if running >= self.per_key:
            raise TooManyRequests(
                f"{slug} is already running for this API key; retry when it has finished"
            )
        self._spend(key_id, slug, cost)
        self._running[key_id] = running + 1
        try:
            yield
        finally:
            left = self._running[key_id] - 1
            if left:
                self._running[key_id] = left
            else:
                del self._running[key_id]

    def _spend(self, key_id: str, slug: str, cost: int) -> None:
        now = self.clock()
        budget = self._budgets.get(key_id)
        units = (
            self.burst
            if budget is None
            else min(self.burst, budget.units + (now - budget.at) * self.rate)
        )
        if units < cost:
            wait = math.ceil((cost - units) / self.rate)
            raise TooManyRequests(
                f"{slug}: this API key used its budget of expensive calls ({self.burst:g} at "
                f"once, {self.rate * 60:g} a minute); retry in {wait} seconds",
                retry_after=wait,
            )
        if budget is None and len(self._budgets) >= MAX_TRACKED_KEYS:
            self._forget_full(now)
        self._budgets[key_id] = _Budget(units - cost, now)

    def _forget_full(self, now: float) -> None:
        """Drop the keys whose budget has refilled (they behave as new ones)."""
        for key, budget in list(self._budgets.items()):
            if budget.units + (now - budget.at) * self.rate >= self.burst:
                del self._budgets[key]
