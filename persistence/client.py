"""The MongoDB driver lives here and only here (motor today, PyMongo's async client later)."""

from __future__ import annotations

from typing import Any

from motor.motor_asyncio import AsyncIOMotorClient, AsyncIOMotorDatabase

DEFAULT_DATABASE = "fincap"


def connect(
    uri: str, database: str | None = None, **options: Any
) -> tuple[AsyncIOMotorClient, AsyncIOMotorDatabase]:
    """A motor client for ``uri`` and its database (from the URI path, else ``fincap``).

    ``options`` go to the client (e.g. ``event_listeners`` for command monitoring).
    """
    client: AsyncIOMotorClient = AsyncIOMotorClient(
        uri, tz_aware=True, uuidRepresentation="standard", **options
    )
    if database is None:
        default = client.get_default_database(default=DEFAULT_DATABASE)
        return client, default
    return client, client[database]
