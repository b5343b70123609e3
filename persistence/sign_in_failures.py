"""Failed sign-ins, counted per account and per address (the sign-in throttle's memory).

One record per key (``account:<digest>`` or ``address:<digest>``; digests, so neither e-mail
addresses nor client addresses are written): how many sign-ins failed in a row, the last one,
and until when the key must wait. A record expires a day after its last failure (TTL index).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any, NamedTuple

from motor.motor_asyncio import AsyncIOMotorDatabase
from pymongo import ASCENDING, IndexModel
from pymongo.errors import DuplicateKeyError

from persistence.ids import utcnow

FORGET_AFTER = timedelta(days=1)
# Compare-and-set rounds one attempt tries before it is told to wait a moment.
ADMIT_ATTEMPTS = 5
INDEXES = [IndexModel([("expiresAt", ASCENDING)], expireAfterSeconds=0, name="failures_ttl")]


class Admission(NamedTuple):
    """An attempt counted against ``key``, and the wait it set (None: none)."""

    key: str
    locked_until: datetime | None
    wait: timedelta | None = None


class SignInFailures:
    """The ``sign_in_failures`` collection."""

    def __init__(self, db: AsyncIOMotorDatabase) -> None:
        self._col = db["sign_in_failures"]

    async def ensure_indexes(self) -> None:
        await self._col.create_indexes(INDEXES)

    async def admit(
        self,
        key: str,
        fresh_after: timedelta,
        wait_after: Callable[[int], timedelta | None],
    ) -> Admission | datetime:
        """Count one more attempt of ``key`` before its password is checked, atomically: the
        ``Admission`` when it may go ahead, or the moment it must wait until.

        The attempt is counted as a failure at once, and the wait that failure would start
        (``wait_after(failures)``) is set in the same write, so of concurrent attempts only as
        many go ahead as the key has left; each write is a compare-and-set on the count, and
        one that loses reads again. A success gives its count back (``give_back``). A run older
        than ``fresh_after`` starts over.
        """
        for _ in range(ADMIT_ATTEMPTS):
            # Milliseconds, as the store keeps them: ``give_back`` finds its wait by equality.
            now = utcnow()
            now = now.replace(microsecond=now.microsecond // 1000 * 1000)
            record: dict[str, Any] | None = await self._col.find_one({"_id": key})
            stale = record is None or record["lastFailureAt"] < now - fresh_after
            if record is not None and not stale:
                until = record.get("lockedUntil")
                if until is not None and until > now:
                    return until
            failures = 1 if stale else int(record["failures"]) + 1  # type: ignore[index]
            wait = wait_after(failures)
            locked_until = now + wait if wait is not None else None
            fields = {
                "failures": failures,
                "lastFailureAt": now,
                "expiresAt": now + FORGET_AFTER,
                "lockedUntil": locked_until,
            }
            if record is None:
                try:
                    await self._col.insert_one({"_id": key, **fields})
                except DuplicateKeyError:
                    continue  # a concurrent first attempt: read it
            else:
                seen = {"_id": key, "failures": record["failures"]}
                seen["lockedUntil"] = record.get("lockedUntil")
                result = await self._col.update_one(seen, {"$set": fields})
                if result.modified_count != 1:
                    continue  # another attempt counted meanwhile: read again
            return Admission(key, locked_until, wait)
        # Contended beyond reason: a burst; this one waits a moment.
        return utcnow() + timedelta(seconds=1)

    async def failed(self, admission: Admission) -> None:
        """The admitted attempt failed: its wait starts now (it was set when the attempt was
        admitted, before the password was hashed), unless a later attempt has set another."""
        if admission.wait is None:
            return
        now = utcnow()
        await self._col.update_one(
            {"_id": admission.key, "lockedUntil": admission.locked_until},
            {
                "$set": {
                    "lockedUntil": now.replace(microsecond=now.microsecond // 1000 * 1000)
                    + admission.wait
                }
            },
        )

    async def give_back(self, admission: Admission) -> None:
        """The admitted attempt did not fail (or was not made): its count is taken back, and
        the wait it set, unless a later attempt has set another."""
        update: dict[str, Any] = {"$inc": {"failures": -1}}
        mine = await self._col.update_one(
            {"_id": admission.key, "lockedUntil": admission.locked_until},
            {**update, "$set": {"lockedUntil": None}},
        )
        if mine.matched_count == 0:
            await self._col.update_one({"_id": admission.key, "failures": {"$gt": 0}}, update)

    async def forget(self, key: str) -> None:
        """A successful sign-in: the account's run of failures ends."""
        await self._col.delete_one({"_id": key})
