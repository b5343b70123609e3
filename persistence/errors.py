"""Errors the persistence layer raises instead of the driver's, so no caller imports pymongo.

    QueryTimeout       a query ran past its ``maxTimeMS`` (typically an expensive regex)
    StoreUnavailable   the store cannot be reached, or is failing as a whole, right now: the
                       call may be repeated later (``store_error_of`` recognises the driver's
                       connection and server-selection errors)

The where-clause compiler's ``WhereError`` (``persistence/where.py``) is the other error a
query can raise: a clause that cannot be compiled.
"""

from __future__ import annotations

from pymongo.errors import ConnectionFailure, InvalidOperation, OperationFailure

# Server answers that mean "this server is going away or not serving", not "your request is
# wrong" (MongoDB's error codes: HostUnreachable, HostNotFound, NetworkTimeout,
# ShutdownInProgress, InterruptedAtShutdown, InterruptedDueToReplStateChange, NotWritablePrimary,
# NotPrimaryNoSecondaryOk, NotPrimaryOrSecondary, PrimarySteppedDown).
UNAVAILABLE_CODES = frozenset({6, 7, 89, 91, 11600, 11602, 10107, 13435, 13436, 189})


class QueryTimeout(Exception):
    """A query ran past its ``maxTimeMS`` (typically an expensive regex); ``fields`` names the
    fields its regexes test, when it had any."""

    def __init__(self, message: str, fields: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.fields = fields


class StoreUnavailable(Exception):
    """The store cannot be reached or is failing as a whole; the call may be repeated later.

    Its message names no host, no driver and no topology: faces may show it as it is.
    """

    def __init__(self, message: str = "The database is unavailable") -> None:
        super().__init__(message)
        self.message = message


def store_error_of(exc: BaseException) -> StoreUnavailable | None:
    """``exc`` as the persistence error it stands for, when it is the driver's way of saying
    the store is unreachable (no server selected in time, a connection refused, reset or timed
    out, a server shutting down or stepping down, a client already closed); else None.

    The driver's text (hosts, ports, its topology description) is logged by whoever handles
    the error, never shown: the ``StoreUnavailable`` says only what a client may know.
    """
    if isinstance(exc, StoreUnavailable):
        return exc
    if isinstance(exc, ConnectionFailure):  # selection timeouts, AutoReconnect, NetworkTimeout
        return StoreUnavailable()
    if isinstance(exc, OperationFailure) and exc.code in UNAVAILABLE_CODES:
        return StoreUnavailable()
    if isinstance(exc, InvalidOperation) and "after close" in str(exc):
        # The process is shutting down and has closed its client: the store is gone for it.
        # The driver's own words, read because it says this no other way: pymongo raises a
        # bare InvalidOperation ("Cannot use MongoClient after close"), no code, no subclass.
        return StoreUnavailable()
    return None
