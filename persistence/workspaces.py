"""Workspaces (organizations, ids ``org_…``) and their memberships.

A workspace is reachable only through a membership of the caller, so every read here is
scoped by user: nobody can list or open a workspace they do not belong to.

A workspace always keeps an owner. Demoting or removing an owner is one atomic write followed by
a count of the owners; when that count is zero (the last owner, or two owners demoting each
other at once) the write is undone and the change refused. Of concurrent changes, every one
that saw no owner left undoes itself, so at least one owner remains whatever the interleaving.
Every membership change tells ``on_membership_change`` (the auth cache forgets the role).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from motor.motor_asyncio import AsyncIOMotorDatabase
from pymongo import ASCENDING, IndexModel, ReturnDocument

from persistence.access_changes import AccessChanges
from persistence.ids import new_id, utcnow

Role = Literal["owner", "admin", "member"]
# What a guarded membership change did (``change_role``, ``remove_member``).
MembershipChange = Literal["changed", "unchanged", "missing", "last-owner"]

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
        # Told (user id, workspace id) of every membership added, changed or removed through
        # this process (the auth cache forgets the role at once).
        self.on_membership_change: list[Callable[[str, str], None]] = []
        # Other processes' live streams learn of membership changes here.
        self._access = AccessChanges(db)

    async def _changed(self, user_id: str, workspace_id: str, *, stands: bool = True) -> None:
        """Tell this process's listeners; and, when the change stands (it is not undone at
        once, see ``change_role``), other processes' streams (``access_changes``)."""
        for listener in self.on_membership_change:
            listener(user_id, workspace_id)
        if stands:
            await self._access.membership_changed(user_id, workspace_id)

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
        await self._changed(user_id, workspace_id)

    async def join(
        self, workspace_id: str, user_id: str, role: Role, invited_by: str | None = None
    ) -> bool:
        """Add a member unless they already are one (their role is then left alone); True
        when they joined now. Atomic on the (workspace, user) unique index."""
        result = await self._memberships.update_one(
            {"workspaceId": workspace_id, "userId": user_id},
            {
                "$setOnInsert": {
                    "_id": new_id("mem"),
                    "role": role,
                    "createdAt": utcnow(),
                    "invitedBy": invited_by,
                }
            },
            upsert=True,
        )
        joined = result.upserted_id is not None
        if joined:
            await self._changed(user_id, workspace_id)
        return joined

    async def membership(self, workspace_id: str, user_id: str) -> dict[str, Any] | None:
        """One membership (userId, role, createdAt), or None."""
        return await self._memberships.find_one({"workspaceId": workspace_id, "userId": user_id})

    async def members(self, workspace_id: str) -> list[dict[str, Any]]:
        """The workspace's memberships (userId, role, createdAt), oldest first."""
        cursor = self._memberships.find({"workspaceId": workspace_id}).sort(
            [("createdAt", ASCENDING), ("_id", ASCENDING)]
        )
        return list(await cursor.to_list(None))

    async def owner_count(self, workspace_id: str) -> int:
        return int(
            await self._memberships.count_documents({"workspaceId": workspace_id, "role": "owner"})
        )

    async def change_role(self, workspace_id: str, user_id: str, role: Role) -> MembershipChange:
        """Set a member's role; ``last-owner`` (and nothing changed) when that would leave the
        workspace without an owner."""
        before = await self._memberships.find_one_and_update(
            {"workspaceId": workspace_id, "userId": user_id},
            {"$set": {"role": role}},
            return_document=ReturnDocument.BEFORE,
        )
        if before is None:
            return "missing"
        if before["role"] == role:
            return "unchanged"
        if before["role"] == "owner" and await self.owner_count(workspace_id) == 0:
            await self._memberships.update_one(
                {"_id": before["_id"], "role": role}, {"$set": {"role": "owner"}}
            )
            await self._changed(user_id, workspace_id, stands=False)
            return "last-owner"
        await self._changed(user_id, workspace_id)
        return "changed"

    async def remove_member(self, workspace_id: str, user_id: str) -> MembershipChange:
        """Remove a membership; ``last-owner`` (and nothing changed) when it is the workspace's
        only owner."""
        removed = await self._memberships.find_one_and_delete(
            {"workspaceId": workspace_id, "userId": user_id}
        )
        if removed is None:
            return "missing"
        if removed["role"] == "owner" and await self.owner_count(workspace_id) == 0:
            await self._memberships.update_one(
                {"workspaceId": workspace_id, "userId": user_id},
                {
                    "$set": {"role": "owner"},
                    "$setOnInsert": {
                        k: v
                        for k, v in removed.items()
                        if k not in ("role", "workspaceId", "userId")
                    },
                },
                upsert=True,
            )
            await self._changed(user_id, workspace_id, stands=False)
            return "last-owner"
        await self._changed(user_id, workspace_id)
        return "changed"

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
        off: set[str] = (await self.approval_policy(workspace_id))["off"]
        return off

    async def approval_policy(self, workspace_id: str) -> dict[str, Any]:
        """The workspace's approval settings: ``off`` (slugs whose gate is switched off) and
        ``otherApprover`` (a request must be approved by someone other than its requester)."""
        found = await self._workspaces.find_one(
            {"_id": workspace_id}, {"approvalsOff": 1, "approvalsNeedOtherApprover": 1}
        )
        found = found or {}
        return {
            "off": set(found.get("approvalsOff") or ()),
            "otherApprover": bool(found.get("approvalsNeedOtherApprover", False)),
        }

    async def set_other_approver(self, workspace_id: str, required: bool) -> None:
        """Whether a requester may approve their own request (False, the default) or not."""
        await self._workspaces.update_one(
            {"_id": workspace_id}, {"$set": {"approvalsNeedOtherApprover": required}}
        )

    async def set_gated(self, workspace_id: str, slug: str, gated: bool) -> None:
        """Switch approval on (the default) or off for capability ``slug``."""
        # A list, not a map keyed by slug: slugs contain dots, which field names should not.
        operator = "$pull" if gated else "$addToSet"
        await self._workspaces.update_one({"_id": workspace_id}, {operator: {"approvalsOff": slug}})
