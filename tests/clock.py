"""A clock tests move by hand, so time-based behaviour (leases, backoff) is tested without
waiting."""

from __future__ import annotations

from datetime import datetime, timedelta

from persistence.ids import utcnow


class ManualClock:
    """Now, as far as the code under test knows; ``advance`` moves it."""

    def __init__(self, start: datetime | None = None) -> None:
        self.now = start or utcnow()

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


class TickingClock:
    """Seconds on a monotonic clock where every reading costs ``step``: the code under test
    sees time pass exactly as fast as it looks at the clock, on any machine."""

    def __init__(self, step: float, start: float = 0.0) -> None:
        self.now = start
        self.step = step
        self.readings = 0

    def __call__(self) -> float:
        self.now += self.step
        self.readings += 1
        return self.now
