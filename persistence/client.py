"""The MongoDB driver lives here and only here (motor today, PyMongo's async client later).

Every client is made with bounded waits (``timeouts``): with the store unreachable a call fails
within a few seconds (``StoreUnavailable`` once classified, ``persistence.errors``) instead of
the driver's 30 s server selection and 20 s connection timeouts, and a hung server is noticed
by the monitor within a heartbeat. Queries keep their own ``maxTimeMS``: no socket timeout is
set, since a legitimate aggregate may run for up to a minute.
"""

from __future__ import annotations

from typing import Any

from motor.motor_asyncio import AsyncIOMotorClient, AsyncIOMotorDatabase

DEFAULT_DATABASE = "fincap"
DEFAULT_TIMEOUT_S = 2.0


def timeouts(timeout_s: float = DEFAULT_TIMEOUT_S) -> dict[str, int]:
    """The driver's waits, each ``timeout_s``: choosing a server, opening a connection, waiting
    for one from the pool, and the monitor's heartbeat (which also interrupts the calls in
    flight on a server that stopped answering)."""
    ms = max(1, round(timeout_s * 1000))
    return {
        "serverSelectionTimeoutMS": ms,
        "connectTimeoutMS": ms,
        "waitQueueTimeoutMS": ms,
        # The monitor's check interval; pymongo does not accept less than 500 ms.
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
