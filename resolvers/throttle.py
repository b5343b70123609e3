"""Expensive calls run one at a time per API key, so one client cannot queue up OCR for everyone.

A capability that declares a ``cost`` (documents.inspect reads the original again, with OCR)
holds its key's slot while it runs; a second such call with the same key meanwhile is refused
with 429 at once rather than queued, so a client cannot stack work in front of other
workspaces' uploads. The gate is per process: with several API processes a key gets one slot in
each.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from resolvers.errors import TooManyRequests


class ExpensiveCallGate:
    """At most ``per_key`` expensive calls at a time for each key id."""

    def __init__(self, per_key: int = 1) -> None:
        self.per_key = per_key
        self._running: dict[str, int] = {}

    @contextlib.contextmanager
    def slot(self, key_id: str, slug: str) -> Iterator[None]:
        """Hold one of ``key_id``'s slots for the duration; 429 when none is free."""
        running = self._running.get(key_id, 0)
        if running >= self.per_key:
            raise TooManyRequests(
                f"{slug} is already running for this API key; retry when it has finished"
            )
        self._running[key_id] = running + 1
        try:
            yield
        finally:
            left = self._running[key_id] - 1
            if left:
                self._running[key_id] = left
            else:
                del self._running[key_id]
