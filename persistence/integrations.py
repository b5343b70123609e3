"""Connections of workspaces to accounting integrations, and their settings.

One record per workspace and integration: the encrypted OAuth grant (``tokens``: ciphertext made
by the resolvers with the server keyring; this module never sees a plain token), the tenants it
reaches, the status and the workspace's mapping of categories to account codes and of tax
rates to tax codes. Token refreshes are compare-and-set on the previous ciphertext, so two
workers refreshing at once cannot overwrite each other's rotated refresh token.
"""

from __future__ import annotations

from typing import Any, cast

from motor.motor_asyncio import AsyncIOMotorDatabase
from pymongo import ASCENDING, IndexModel, ReturnDocument

from persistence.ids import new_id, utcnow

INDEXES = [
    IndexModel(
        [("workspaceId", ASCENDING), ("integrationId", ASCENDING)],
        unique=True,
        name="workspace_integration_unique",
    ),
]


class Integrations:
    """The ``integration_connections`` collection."""

    def __init__(self, db: AsyncIOMotorDatabase) -> None:
        self._col = db["integration_connections"]

    async def ensure_indexes(self) -> None:
        await self._col.create_indexes(INDEXES)

    async def list_for(self, workspace_id: str) -> list[dict[str, Any]]:
        return cast(
            list[dict[str, Any]],
            await self._col.find({"workspaceId": workspace_id}).to_list(None),
        )

    async def get(self, workspace_id: str, integration_id: str) -> dict[str, Any] | None:
        return cast(
            dict[str, Any] | None,
            await self._col.find_one(
                {"workspaceId": workspace_id, "integrationId": integration_id}
            ),
        )

    async def connect(
        self,
        workspace_id: str,
        integration_id: str,
        *,
        tokens: str,
        tenants: list[dict[str, Any]],
        by: str,
    ) -> dict[str, Any]:
        """Store a new grant (replacing an earlier one); settings are kept."""
        now = utcnow()
        return cast(
            dict[str, Any],
            await self._col.find_one_and_update(
                {"workspaceId": workspace_id, "integrationId": integration_id},
                {
                    "$set": {
                        "status": "connected",
                        "tokens": tokens,
                        "tenants": tenants,
                        "connectedBy": by,
                        "connectedAt": now,
                        "lastError": None,
                        "lastErrorReason": None,
                        "updatedAt": now,
                    },
                    "$setOnInsert": {"_id": new_id("con"), "settings": {}},
                },
                upsert=True,
                return_document=ReturnDocument.AFTER,
            ),
        )

    async def replace_tokens(
        self, workspace_id: str, integration_id: str, previous: str, tokens: str
    ) -> bool:
        """Store refreshed tokens if nobody else did first (False: reload and use theirs)."""
        result = await self._col.update_one(
            {"workspaceId": workspace_id, "integrationId": integration_id, "tokens": previous},
            {
                "$set": {
                    "tokens": tokens,
                    "status": "connected",
                    "lastError": None,
                    "lastErrorReason": None,
                    "updatedAt": utcnow(),
                }
            },
        )
        return result.modified_count == 1

    async def mark_error(
        self, workspace_id: str, integration_id: str, error: str, reason: str | None
    ) -> None:
        """The connection failed: ``error`` in words, ``reason`` its kind (a connector error's
        ``reason``)."""
        update = {"status": "error", "lastError": error[:1000], "lastErrorReason": reason}
        await self._col.update_one(
            {"workspaceId": workspace_id, "integrationId": integration_id},
            {"$set": {**update, "updatedAt": utcnow()}},
        )

    async def disconnect(self, workspace_id: str, integration_id: str) -> None:
        """Forget the grant and tenants; the workspace's settings stay for a reconnect."""
        await self._col.update_one(
            {"workspaceId": workspace_id, "integrationId": integration_id},
            {
                "$set": {"status": "disconnected", "tenants": [], "updatedAt": utcnow()},
                "$unset": {"tokens": ""},
            },
        )

    async def set_settings(
        self, workspace_id: str, integration_id: str, settings: dict[str, Any]
    ) -> dict[str, Any]:
        return cast(
            dict[str, Any],
            await self._col.find_one_and_update(
                {"workspaceId": workspace_id, "integrationId": integration_id},
                {
                    "$set": {"settings": settings, "updatedAt": utcnow()},
                    "$setOnInsert": {"_id": new_id("con"), "status": "available", "tenants": []},
                },
                upsert=True,
                return_document=ReturnDocument.AFTER,
            ),
        )
