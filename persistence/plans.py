"""Whether the store bounds a hinted read by its filter: when a read may name its index.

A hot read names the index it is built for (``hint``), so that no planner can pick another for
it: MongoDB caches one plan per query shape (the shape, not the values), chooses it by a trial
run on whichever tenant asked first, and replans only after a large regression, so a plan won
on one large tenant can serve every small one (or the other way round). A hint bounds the scan
by the filter's index bounds as before, and takes the choice away.

The embedded store (SecantusDB) keeps no plan cache: its picker is a fixed set of rules over the
filter's shape (a flat filter of equalities and one range on an index's leading fields rides that
index), the same for every tenant and every load order. Its ``hint``, though, is not a bound: it
walks the hinted index from end to end, every workspace's entries, and filters afterwards (a
200-document workspace beside 5,000: 690 ms with the hint, 39 ms without). So reads there keep
the flat-filter shape and send no hint. The server says which it is: the embedded store's
``buildInfo`` carries ``secantusVersion``.
"""

from __future__ import annotations

from motor.motor_asyncio import AsyncIOMotorDatabase
from pymongo.errors import PyMongoError

EMBEDDED_MARKER = "secantusVersion"


async def honours_hints(db: AsyncIOMotorDatabase) -> bool | None:
    """True when ``db``'s server bounds a hinted read by its filter (MongoDB), False when a
    hint walks the whole index (the embedded store); None when the server could not be asked
    (ask again later)."""
    try:
        info = await db.command("buildInfo")
    except PyMongoError:
        return None
    return EMBEDDED_MARKER not in info
