"""Units of writes: several collections changed all together or not at all, where the store can.

A unit runs a body of ordinary repository calls inside one multi-document transaction: the
collections built with ``joined`` hand the running unit's session to every call they make,
so a repository method needs no session parameter to take part. The body may run more than
once (a write conflict with a concurrent unit is retried whole, for at most ``RETRY_FOR_S``);
what must happen only once the writes are visible to others (telling this process's live-event
subscribers, the queue's hint) is registered with ``after_commit``.

Where transactions exist: MongoDB replica sets and sharded clusters, and the embedded
SecantusDB, also as the standalone server ``fincap serve`` starts (checked: uncommitted writes
are invisible outside the session, an aborted unit leaves nothing, a conflicting write is a
``TransientTransactionError`` that the retry absorbs). Where they do not (a standalone MongoDB,
the in-memory test store): the body runs as plain writes, one after the other; callers that
need all-or-nothing there keep a journal and finish the unit after a crash (the intake does:
``resolvers.services.processing.intake``). Whether the store has them is asked once, by trying.

A process killed inside a transaction leaves it open on the server, holding what it wrote
(other writers of those records wait) until the server gives up on it (60 s by default on
MongoDB). A unit's session id can be written down before it starts (``Unit.session_id``), so
another process that knows the writer died ends it at once (``end``: ``killSessions``).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import inspect
import logging
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, TypeVar

from bson import Binary
from motor.motor_asyncio import AsyncIOMotorDatabase
from pymongo.errors import ConfigurationError, OperationFailure, PyMongoError

from persistence.durability import JOURNALED

log = logging.getLogger("fincap.units")
T = TypeVar("T")
C = TypeVar("C")
# A unit that keeps meeting conflicting writers gives up after this long (the caller's error).
RETRY_FOR_S = 10.0
AfterCommit = Callable[[], Awaitable[None] | None]


@dataclass
class _Running:
    session: Any
    after: list[AfterCommit] = field(default_factory=list)


_running: ContextVar[_Running | None] = ContextVar("fincap_unit", default=None)


def in_unit() -> bool:
    """Whether a unit's transaction is running in this context (a failed write then fails the
    whole unit: it must be raised, not logged and passed over)."""
    return _running.get() is not None


def after_commit(callback: AfterCommit) -> Awaitable[None] | None:
    """Call ``callback`` once the running unit is committed; outside a unit, now (its result,
    awaitable when it is a coroutine function, is returned for the caller to await)."""
    running = _running.get()
    if running is None:
        return callback()
    running.after.append(callback)
    return None


class _Joined:
    """A collection whose every call carries the running unit's session (none outside one).

    Like a plain collection, an instance takes attributes of its own (no ``__slots__``): a test
    that replaces one of its methods to watch the calls replaces it here."""

    def __init__(self, collection: Any) -> None:
        self._collection = collection

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._collection, name)
        if not callable(value):
            return value

        @functools.wraps(value)
        def call(*args: Any, **kwargs: Any) -> Any:
            running = _running.get()
            if running is not None:
                kwargs.setdefault("session", running.session)
            return value(*args, **kwargs)

        return call


def joined(collection: C) -> C:
    """``collection`` taking part in units: the same calls, given the running unit's session.
    (One session serves one call at a time: a body must not run calls of a unit concurrently.)"""
    return _Joined(collection)  # type: ignore[return-value]


def _transient(exc: BaseException) -> bool:
    return isinstance(exc, PyMongoError) and exc.has_error_label("TransientTransactionError")


class Unit:
    """A session for units of writes (``Units.open``); ``session_id`` is None without
    transactions."""

    def __init__(self, session: Any) -> None:
        self._session = session

    @property
    def session_id(self) -> dict[str, Any] | None:
        return None if self._session is None else dict(self._session.session_id)

    async def run(self, body: Callable[[], Awaitable[T]]) -> T:
        """``body()`` as one unit: its writes through joined collections all become visible
        together, journaled, or none does. Without transactions, ``body()`` as it is."""
        if self._session is None:
            return await body()
        session = self._session
        deadline = time.monotonic() + RETRY_FOR_S
        pause = 0.01
        while True:
            running = _Running(session)
            session.start_transaction(write_concern=JOURNALED)
            token = _running.set(running)
            try:
                result = await body()
            except Exception as exc:
                with contextlib.suppress(PyMongoError):
                    await session.abort_transaction()
                if _transient(exc) and time.monotonic() < deadline:
                    await asyncio.sleep(pause)
                    pause = min(pause * 2, 0.5)
                    continue
                raise
            finally:
                _running.reset(token)
            if await self._commit(deadline):
                break
            await asyncio.sleep(pause)
            pause = min(pause * 2, 0.5)
        for callback in running.after:
            outcome = callback()
            if inspect.isawaitable(outcome):
                await outcome
        return result

    async def _commit(self, deadline: float) -> bool:
        """Commit; False when the unit must run again (a transient failure)."""
        while True:
            try:
                await self._session.commit_transaction()
                return True
            except PyMongoError as exc:
                if time.monotonic() >= deadline:
                    raise
                if exc.has_error_label("UnknownTransactionCommitResult"):
                    continue  # the commit is idempotent: ask again
                if exc.has_error_label("TransientTransactionError"):
                    return False
                raise


class Units:
    """Runs units over one database (``store.units``)."""

    def __init__(self, db: AsyncIOMotorDatabase) -> None:
        self._db = db
        # None: not asked yet. Tests set False to run the plain-writes path on any store.
        self.supported_here: bool | None = None

    async def supported(self) -> bool:
        """Whether the store runs transactions (asked once, by running an empty one)."""
        if self.supported_here is None:
            self.supported_here = await self._try_one()
            if not self.supported_here:
                log.warning(
                    "the store has no transactions: units of writes run one write after the "
                    "other, and their journals finish them after a crash"
                )
        return self.supported_here

    async def _try_one(self) -> bool:
        try:
            async with (
                await self._db.client.start_session() as session,
                session.start_transaction(),
            ):
                await self._db["intakes"].find_one({"_id": None}, session=session)
        except (NotImplementedError, AttributeError, TypeError, ConfigurationError):
            return False  # the in-memory store: no sessions
        except OperationFailure as exc:
            log.info("transactions refused: %s", exc)
            return False  # a standalone MongoDB: "Transaction numbers are only allowed …"
        return True

    @contextlib.asynccontextmanager
    async def open(self) -> AsyncIterator[Unit]:
        """A session to run units on (its id can be written down before the first one)."""
        if not await self.supported():
            yield Unit(None)
            return
        async with await self._db.client.start_session() as session:
            yield Unit(session)

    async def run(self, body: Callable[[], Awaitable[T]]) -> T:
        """``body()`` as one unit, on a session of its own (see ``Unit.run``)."""
        async with self.open() as unit:
            return await unit.run(body)

    async def end(self, session_id: dict[str, Any]) -> None:
        """End the session ``session_id`` of a process that died: its open transaction is
        aborted, and what it held is free (no error when it is gone already)."""
        given = session_id.get("id")
        # Read back, the id may come as a native UUID, which the driver sends only as Binary.
        lsid = {"id": Binary.from_uuid(given) if isinstance(given, uuid.UUID) else given}
        try:
            await self._db.client.admin.command("killSessions", [lsid])
        except PyMongoError as exc:
            log.info("could not end a dead process's session: %s", exc)


__all__ = ["RETRY_FOR_S", "Unit", "Units", "after_commit", "in_unit", "joined"]
