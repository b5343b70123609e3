"""The MongoDB driver lives here and only here (motor today, PyMongo's async client later)."""

from __future__ import annotations

from motor.motor_asyncio import AsyncIOMotorClient, AsyncIOMotorDatabase

DEFAULT_DATABASE = "fincap"


def connect(
    uri: str, database: str | None = None
) -> tuple[AsyncIOMotorClient, AsyncIOMotorDatabase]:
    """A motor client for ``uri`` and its database (from the URI path, else ``fincap``)."""
    client: AsyncIOMotorClient = AsyncIOMotorClient(
        uri, tz_aware=True, uuidRepresentation="standard"
    )
    if database is None:
        default = client.get_default_database(default=DEFAULT_DATABASE)
        return client, default
    return client, client[database]
