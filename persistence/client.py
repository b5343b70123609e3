"""The MongoDB driver lives here and only here (motor today, PyMongo's async client later).

Every client is made with bounded waits (``timeouts``): with the store unreachable a call fails
within a few seconds (``StoreUnavailable`` once classified, ``persistence.errors``) instead of
the driver's 30 s server selection, and the driver checks the store every few seconds. Queries
keep their own ``maxTimeMS``: no socket timeout is set, since a legitimate aggregate may run for
up to a minute.
"""

from __future__ import annotations

from typing import Any

from motor.motor_asyncio import AsyncIOMotorClient, AsyncIOMotorDatabase

DEFAULT_DATABASE = "fincap"
DEFAULT_TIMEOUT_S = 2.0
# Opening a connection, and the monitor's check of a busy store (its socket timeout: a check
# that times out marks the store unreachable and interrupts the calls in flight). Kept well
# above the selection wait: a store slowed by load is not a store that is gone.
CONNECT_TIMEOUT_S = 10.0


def timeouts(timeout_s: float = DEFAULT_TIMEOUT_S) -> dict[str, int]:
    """The driver's waits: ``timeout_s`` for choosing a server (what a call waits while the
    store is unreachable) and between the monitor's checks; ``CONNECT_TIMEOUT_S`` for opening
    a connection. No limit on waiting for a free pooled connection: under load a call waits
    its turn rather than failing."""
    ms = max(1, round(timeout_s * 1000))
    return {
        "serverSelectionTimeoutMS": ms,
        "connectTimeoutMS": max(ms, round(CONNECT_TIMEOUT_S * 1000)),
        # pymongo does not accept a check interval under 500 ms.
        "heartbeatFrequencyMS": max(500, ms),
    }


def connect(
    uri: str, database: str | None = None, *, timeout_s: float = DEFAULT_TIMEOUT_S, **options: Any
) -> tuple[AsyncIOMotorClient, AsyncIOMotorDatabase]:
    """A motor client for ``uri`` and its database (from the URI path, else ``fincap``).

    ``timeout_s`` bounds the driver's waits (``timeouts``), except those the URI sets itself
    (an operator's ``?serverSelectionTimeoutMS=`` is kept); ``options`` go to the client (e.g.
    ``event_listeners`` for command monitoring) and win over both.
    """
    query = uri.partition("?")[2].lower()
    waits = {name: ms for name, ms in timeouts(timeout_s).items() if name.lower() not in query}
    client: AsyncIOMotorClient = AsyncIOMotorClient(
        uri, tz_aware=True, uuidRepresentation="standard", **{**waits, **options}
    )
    if database is None:
        default = client.get_default_database(default=DEFAULT_DATABASE)
        return client, default
    return client, client[database]
