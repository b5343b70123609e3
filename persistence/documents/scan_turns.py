"""Reads filtered by a regex take turns, one at a time per workspace.

A ``regex`` condition cannot use an index: the store tests it on every document the rest of the
filter leaves, and the embedded store (SecantusDB) does so with Python's ``re`` in one request
thread per connection, all sharing one interpreter. The safe subset (``persistence.safe_regex``)
bounds one document's cost (under a millisecond on a 1,000-character field), not how many such
scans one workspace runs at once: four concurrent ``documents.count`` calls with
``[a-z]{0,15}!`` over long summaries held another workspace's search up by ~220 ms at p95 on a
quiet machine (issue 35, M3), its one request thread waiting for the interpreter behind four.
In turns, a workspace's regex scans compete with other workspaces' reads as one, whatever it
sends; a workspace's own regex reads queue behind each other (one dashboard's list and count of
the same filter run one after the other). The turns are per process, like the other fairness
bounds. They left +75 to +173 ms; the store's regex work itself is now fincap's on the embedded
store (``regex_reads``), and the turns still bound one workspace's scans to one at a time.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from domain.where import WhereClause, WhereCondition


def has_regex(where: WhereClause | None) -> bool:
    """Whether ``where`` tests any field with ``regex``, at any depth."""
    pending: list[WhereCondition] = list(where.conditions) if where is not None else []
    while pending:
        condition = pending.pop()
        if condition.conditions is not None:
            pending.extend(condition.conditions)
        elif condition.op == "regex":
            return True
    return False


class ScanTurns:
    """One regex-filtered read at a time per workspace."""

    def __init__(self) -> None:
        self._locks: dict[str, asyncio.Lock] = {}
        self._waiting: dict[str, int] = {}  # holders and waiters: the lock goes with the last

    @contextlib.asynccontextmanager
    async def turn(self, workspace_id: str, where: WhereClause | None) -> AsyncIterator[None]:
        """Held while a read filtered by ``where`` runs: at once without a regex, else when
        the workspace's previous regex read has finished."""
        if not has_regex(where):
            yield
            return
        lock = self._locks.setdefault(workspace_id, asyncio.Lock())
        self._waiting[workspace_id] = self._waiting.get(workspace_id, 0) + 1
        try:
            async with lock:
                yield
        finally:
            left = self._waiting[workspace_id] - 1
            if left:
                self._waiting[workspace_id] = left
            else:
                del self._waiting[workspace_id], self._locks[workspace_id]
