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
