"""How much room the store has left: the embedded store's disk, or what MongoDB says of its own.

The embedded store writes under the data directory, so its free space is the file system's
(``os.statvfs``, available to unprivileged users: ``f_bavail``). A MongoDB deployment reports
the file system of its data files in ``dbStats`` (``fsTotalSize``, ``fsUsedSize``; of the
server the driver reads from, the primary); a deployment that does not say is not checked.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from motor.motor_asyncio import AsyncIOMotorDatabase

StatVfs = Callable[[str], Any]


def free_bytes_at(path: Path, statvfs: StatVfs = os.statvfs) -> int:
    """Bytes an unprivileged writer may still use on the file system holding ``path`` (its
    nearest existing ancestor, for a directory not made yet)."""
    existing = path
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    stat = statvfs(str(existing))
    return int(stat.f_bavail) * int(stat.f_frsize)


async def reported_free_bytes(db: AsyncIOMotorDatabase) -> int | None:
    """Free bytes on the file system of the server's data files, from ``dbStats``; None when
    the server does not report them."""
    stats = await db.command("dbStats", freeStorage=1)
    total, used = stats.get("fsTotalSize"), stats.get("fsUsedSize")
    if not isinstance(total, (int, float)) or not isinstance(used, (int, float)) or total <= 0:
        return None
    return int(total - used)
