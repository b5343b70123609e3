"""Workspaces (organizations, ids ``org_…``) and their memberships.

A workspace is reachable only through a membership of the caller, so every read here is
scoped by user: nobody can list or open a workspace they do not belong to.
"""

from __future__ import annotations

from typing import Any, Literal

from motor.motor_asyncio import AsyncIOMotorDatabase
from pymongo import ASCENDING, IndexModel

from persistence.ids import new_id, utcnow

Role = Literal["owner", "admin", "member"]

MEMBERSHIP_INDEXES = [
    IndexModel(
        [("workspaceId", ASCENDING), ("userId", ASCENDING)],
        unique=True,
        name="workspace_user_unique",
    ),
    IndexModel([("userId", ASCENDING)], name="user"),
]


class Workspaces:
    """The ``workspaces`` and ``memberships`` collections."""

    def __init__(self, db: AsyncIOMotorDatabase) -> None:
        self._workspaces = db["workspaces"]
        self._memberships = db["memberships"]

    async def ensure_indexes(self) -> None:
        await self._memberships.create_indexes(MEMBERSHIP_INDEXES)

    async def create(self, name: str, owner_id: str) -> dict[str, Any]:
        """A new workspace with ``owner_id`` as its owner."""
        now = utcnow()
        workspace: dict[str, Any] = {
            "_id": new_id("org"),
            "name": name,
            "createdBy": owner_id,
            "createdAt": now,
            "preferredCurrency": None,
        }
        await self._workspaces.insert_one(workspace)
        await self.add_member(workspace["_id"], owner_id, "owner")
        return workspace

    async def add_member(self, workspace_id: str, user_id: str, role: Role) -> None:
        await self._memberships.update_one(
            {"workspaceId": workspace_id, "userId": user_id},
            {"$set": {"role": role}, "$setOnInsert": {"_id": new_id("mem"), "createdAt": utcnow()}},
            upsert=True,
        )

    async def role_of(self, user_id: str, workspace_id: str) -> Role | None:
        """The user's role in the workspace, or None when they are not a member."""
        membership = await self._memberships.find_one(
            {"workspaceId": workspace_id, "userId": user_id}, {"role": 1}
        )
        return membership["role"] if membership else None

    async def list_for_user(self, user_id: str, only: str | None = None) -> list[dict[str, Any]]:
        """The user's workspaces with their role, oldest first; ``only`` narrows to one id."""
        query: dict[str, Any] = {"userId": user_id}
        if only is not None:
            query["workspaceId"] = only
        memberships = await self._memberships.find(query).to_list(None)
        roles = {m["workspaceId"]: m["role"] for m in memberships}
        if not roles:
            return []
        workspaces = (
            await self._workspaces.find({"_id": {"$in": list(roles)}})
            .sort([("createdAt", ASCENDING), ("_id", ASCENDING)])
            .to_list(None)
        )
        return [{**w, "role": roles[w["_id"]]} for w in workspaces]

    async def member_count(self, workspace_id: str) -> int:
        """How many people belong to the workspace (the seats it uses)."""
        return int(await self._memberships.count_documents({"workspaceId": workspace_id}))

    async def ids_unscoped(self) -> list[str]:
        """Every workspace id, for operator and background work only (no caller to scope by)."""
        return [row["_id"] for row in await self._workspaces.find({}, {"_id": 1}).to_list(None)]

    async def get_unscoped(self, workspace_id: str) -> dict[str, Any] | None:
        """The workspace by id, for operator commands only (no caller to scope by)."""
        return await self._workspaces.find_one({"_id": workspace_id})

    async def get_for_member(self, user_id: str, workspace_id: str) -> dict[str, Any] | None:
        """The workspace when the user belongs to it."""
        found = await self.list_for_user(user_id, only=workspace_id)
        return found[0] if found else None

    async def ungated(self, workspace_id: str) -> set[str]:
        """Slugs of the capabilities this workspace has switched approval off for."""
        found = await self._workspaces.find_one({"_id": workspace_id}, {"approvalsOff": 1})
        return set((found or {}).get("approvalsOff") or ())

    async def set_gated(self, workspace_id: str, slug: str, gated: bool) -> None:
        """Switch approval on (the default) or off for capability ``slug``."""
        # A list, not a map keyed by slug: slugs contain dots, which field names should not.
        operator = "$pull" if gated else "$addToSet"
        await self._workspaces.update_one({"_id": workspace_id}, {operator: {"approvalsOff": slug}})
