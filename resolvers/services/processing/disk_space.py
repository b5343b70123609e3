"""Refusing new documents before the store's disk fills up.

A store whose disk fills fails in the worst way: the embedded one's storage engine stops
(``WT_PANIC``) and every call fails until it is restarted; MongoDB stops accepting writes.
So every intake (uploads, inbound e-mail over SMTP and HTTP, WhatsApp, mailboxes) asks
``DiskSpace.require_room`` first, through the pipeline's ``receive_item``: below the floor
(``FINCAP_MIN_FREE_DISK_MB``) it is refused with ``InsufficientStorage`` (REST 507, SMTP
``452 4.3.1``), while reads, edits and the documents already queued go on.

The probe is cheap on the embedded store (``statvfs``, read every time); on MongoDB it is a
``dbStats`` call, so its answer is kept for ``CACHE_S``.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable

from resolvers.framework.errors import InsufficientStorage

log = logging.getLogger("fincap.disk")

MB = 1024 * 1024
# A free-space answer this recent is used as it is (dbStats is a call to the store).
CACHE_S = 2.0

Probe = Callable[[], Awaitable[int | None]]


class DiskSpace:
    """The free space of the store's disk, and the floor below which intake is refused."""

    def __init__(
        self,
        min_free_bytes: int,
        probe: Probe,
        *,
        cache_s: float = CACHE_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.min_free_bytes = min_free_bytes
        self._probe = probe
        self._cache_s = cache_s
        self._clock = clock
        self._seen: tuple[float, int | None] | None = None

    async def free_bytes(self) -> int | None:
        """Free bytes on the store's disk (None: not known)."""
        now = self._clock()
        if self._seen is not None and self._cache_s > 0 and now - self._seen[0] < self._cache_s:
            return self._seen[1]
        try:
            free = await self._probe()
        except Exception:
            # Not knowing is no reason to refuse a document; the store's own errors say more.
            log.warning("free disk space could not be read", exc_info=True)
            free = None
        self._seen = (now, free)
        return free

    def last_seen(self) -> int | None:
        """The free space last read, without reading it again (None: never read, or not
        known)."""
        return None if self._seen is None else self._seen[1]

    async def low(self, incoming: int = 0) -> bool:
        """Whether taking ``incoming`` more bytes would leave less than the floor."""
        if self.min_free_bytes <= 0:
            return False
        free = await self.free_bytes()
        return free is not None and free - incoming < self.min_free_bytes

    async def require_room(self, incoming: int = 0) -> None:
        """``InsufficientStorage`` when ``incoming`` bytes more would leave the store's disk
        under the floor; nothing was stored then."""
        if await self.low(incoming):
            free = await self.free_bytes() or 0
            log.error(
                "intake refused: the store's disk is nearly full",
                extra={"freeMB": free // MB, "minFreeMB": self.min_free_bytes // MB},
            )
            raise InsufficientStorage(
                "The service is low on storage space and cannot accept new documents right "
                "now; nothing was stored. Try again later (the operator must free space)"
            )


def unlimited() -> DiskSpace:
    """A guard that never refuses (no floor)."""

    async def unknown() -> int | None:
        return None

    return DiskSpace(0, unknown)
