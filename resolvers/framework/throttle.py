"""Expensive calls are limited per API key: one at a time, and a budget of cost units.

A capability that declares a ``cost`` (documents.inspect reads the original again with OCR;
rules.prepare and rules.execute read a sentence with the grammar, up to a second of CPU) holds
its key's slot while it runs: a second such call with the same key meanwhile is refused with
429 at once rather than queued, so a client cannot stack work in front of other workspaces'.
Each call also spends ``cost`` units of the key's budget: ``burst`` units at once, refilled at
``per_minute`` units a minute; an empty budget is a 429 whose ``Retry-After`` says when a unit
is back. The gate is per process: with several API processes a key gets one slot and one budget
in each.

Keys are free to make, so the slots are also counted per member (``per_member``, whatever their
keys) and per workspace (``per_workspace``, whatever its members): an original read over MCP
holds up to 5 MB while it is encoded, and 100 keys of one person read 100 at once (issue 35).
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
PER_MEMBER = 2  # expensive calls running at once for one person, whatever their keys
PER_WORKSPACE = 4  # and in one workspace, whatever its members
MAX_TRACKED_KEYS = 10_000


@dataclass
class _Budget:
    units: float
    at: float  # when ``units`` was last brought up to date (the clock's seconds)


class TokenBuckets:
    """A budget of units per key: ``burst`` at once, refilled at ``per_minute``.

    ``take`` spends only what is there (a cost known before the work); ``charge`` spends
    even past zero (a cost known only after it: a GraphQL read's answer), and the key then
    waits until the budget is positive again. A key whose budget has refilled is the same as
    one never seen, so only keys still owing are remembered (at most ``MAX_TRACKED_KEYS``).
    """

    def __init__(
        self, burst: float, per_minute: float, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.burst = burst
        self.rate = per_minute / 60.0  # units per second
        self.clock = clock
        self._budgets: dict[str, _Budget] = {}

    def available(self, key: str) -> float:
        budget = self._budgets.get(key)
        if budget is None:
            return self.burst
        return min(self.burst, budget.units + (self.clock() - budget.at) * self.rate)

    def wait_for(self, key: str, units: float) -> int:
        """Whole seconds until ``units`` are available to ``key`` (0: now)."""
        missing = units - self.available(key)
        return math.ceil(missing / self.rate) if missing > 0 else 0

    def take(self, key: str, units: float) -> bool:
        """Spend ``units`` if ``key`` has them; whether it had."""
        if self.available(key) < units:
            return False
        self.charge(key, units)
        return True

    def charge(self, key: str, units: float) -> float:
        """Spend ``units`` whatever is left; what remains (negative: owed)."""
        now = self.clock()
        left = self.available(key) - units
        if key not in self._budgets and len(self._budgets) >= MAX_TRACKED_KEYS:
            self._forget_full(now)
        self._budgets[key] = _Budget(left, now)
        return left

    def _forget_full(self, now: float) -> None:
        """Drop the keys whose budget has refilled (they behave as new ones)."""
        for key, budget in list(self._budgets.items()):
            if budget.units + (now - budget.at) * self.rate >= self.burst:
                del self._budgets[key]


class ExpensiveCallGate:
    """At most ``per_key`` expensive calls at a time for each key id, within its budget."""

    def __init__(
        self,
        per_key: int = 1,
        burst: float = BURST,
        per_minute: float = PER_MINUTE,
        clock: Callable[[], float] = time.monotonic,
        per_member: int = PER_MEMBER,
        per_workspace: int = PER_WORKSPACE,
    ) -> None:
        self.per_key = per_key
        self.per_member = per_member
        self.per_workspace = per_workspace
        self.budgets = TokenBuckets(burst, per_minute, clock)
        self._running: dict[str, int] = {}

    @contextlib.contextmanager
    def slot(
        self,
        key_id: str,
        slug: str,
        cost: int = 1,
        *,
        member: str | None = None,
        workspace: str | None = None,
    ) -> Iterator[None]:
        """Hold one of ``key_id``'s slots (and of its ``member``'s and ``workspace``'s) for the
        duration, spending ``cost`` units of the key's budget; 429 when none is free or the
        budget is spent."""
        holders = [(key_id, self.per_key, "this API key")]
        if member is not None:
            holders.append((f"member:{member}", self.per_member, "this member"))
        if workspace is not None:
            holders.append((f"workspace:{workspace}", self.per_workspace, "this workspace"))
        for holder, most, whose in holders:
            if self._running.get(holder, 0) < most:
                continue
            if holder == key_id:
                raise TooManyRequests(
                    f"{slug} is already running for this API key; retry when it has finished"
                )
            raise TooManyRequests(
                f"{slug}: {whose} already has {most} such calls running, whatever the keys; "
                "retry when one has finished"
            )
        self._spend(key_id, slug, cost)
        for holder, _, _ in holders:
            self._running[holder] = self._running.get(holder, 0) + 1
        try:
            yield
        finally:
            for holder, _, _ in holders:
                left = self._running[holder] - 1
                if left:
                    self._running[holder] = left
                else:
                    del self._running[holder]

    def _spend(self, key_id: str, slug: str, cost: int) -> None:
        budgets = self.budgets
        if not budgets.take(key_id, cost):
            wait = budgets.wait_for(key_id, cost)
            raise TooManyRequests(
                f"{slug}: this API key used its budget of expensive calls ({budgets.burst:g} at "
                f"once, {budgets.rate * 60:g} a minute); retry in {wait} seconds",
                retry_after=wait,
            )
