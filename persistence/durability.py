"""What "acknowledged" means for the writes a sender waits for: on disk, not only in memory.

A MongoDB write is acknowledged once applied in memory (``w: 1``); the journal reaches the disk
a moment later. A process (or machine) killed in between loses writes that were answered. The
writes of an intake (an upload, an e-mail, a WhatsApp message: the original, the document, its
activity item, its job) are what a sender was told "accepted" for, so they ask for the journal
(``j: true``): the server answers only once they are in its on-disk journal. Other writes keep
the cheaper default.
"""

from __future__ import annotations

from typing import Any

from pymongo import WriteConcern

JOURNALED = WriteConcern(w=1, j=True)


def journaled(collection: Any) -> Any:
    """``collection`` writing with ``JOURNALED`` (the same collection, another write concern)."""
    return collection.with_options(write_concern=JOURNALED)


__all__ = ["JOURNALED", "journaled"]
