"""Workspaces (organizations, ids ``org_…``) and their memberships.

A workspace is reachable only through a membership of the caller, so every read here is
scoped by user: nobody can list or open a workspace they do not belong to.

A workspace always keeps an owner, and no reader ever sees it without one. An owner steps down
(is demoted or removed) in three steps, none of which is ever undone:

1. mark: the owner's membership gets ``stepDown`` (a token and a time) in one conditional write;
   it stays an owner meanwhile, so a role check made now (an admin may not remove an owner)
   still reads "owner";
2. count the *other* owners that are not marked themselves;
3. none: the mark is taken off and the change refused (the role never changed). Some: the change
   is written, conditional on the mark still being this one.

Two owners stepping down at once cannot both pass step 2: whichever counts second sees the
first one's mark. A mark whose process died holds for ``STEP_DOWN_HOLD`` only; after that the
owner counts again and may be marked anew. Changes of a role that is not "owner" are one write
conditional on the role read, so a caller who may not touch an owner never does, even when the
member became one a moment before. (Before 2026-11-28 a refused step-down was written and then
undone; in between the owner read as a member and an admin's removal went through.)
Every membership change tells ``on_membership_change`` (the auth cache forgets the role).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import timedelta
from typing import Any, Literal

from motor.motor_asyncio import AsyncIOMotorDatabase
from pymongo import ASCENDING, IndexModel

from domain.roles import Role
from persistence.access_changes import AccessChanges
from persistence.ids import new_id, utcnow

# What a guarded membership change did (``change_role``, ``remove_member``): ``owners-only``
# when the caller may not touch an owner and the member is (or would become) one; ``busy`` when
# another change of the same owner kept the way blocked through every attempt.
MembershipChange = Literal["changed", "unchanged", "missing", "last-owner", "owners-only", "busy"]

# How long a step-down's mark keeps its owner out of the other owners' counts (a process that
# died between marking and finishing leaves its mark behind; it stops counting after this).
STEP_DOWN_HOLD = timedelta(seconds=30)
# A change that found the membership changed under it reads it again, this many times in all.
_ATTEMPTS = 20

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

    async def _changed(self, user_id: str, workspace_id: str) -> None:
        """Tell this process's listeners, and other processes' streams (``access_changes``).
        Only changes that were made are told: a refused one never wrote anything."""
        for listener in self.on_membership_change:
            listener(user_id, workspace_id)
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
        """The workspace's memberships (userId, role, createdAt), oldest first; people who joined
        in the same millisecond by user id, the order ``Workspace.members`` pages in."""
        cursor = self._memberships.find({"workspaceId": workspace_id}).sort(
            [("createdAt", ASCENDING), ("userId", ASCENDING)]
        )
        return list(await cursor.to_list(None))

    async def owner_count(self, workspace_id: str) -> int:
        return int(
            await self._memberships.count_documents({"workspaceId": workspace_id, "role": "owner"})
        )

    async def change_role(
        self, workspace_id: str, user_id: str, role: Role, *, may_touch_owner: bool
    ) -> MembershipChange:
        """Set a member's role. ``last-owner`` (and nothing changed) when that would leave the
        workspace without an owner; ``owners-only`` when the member is or would become an owner
        and ``may_touch_owner`` is false (decided on the role the write itself matches)."""
        if role == "owner" and not may_touch_owner:
            return "owners-only"
        return await self._change(workspace_id, user_id, {"$set": {"role": role}}, may_touch_owner)

    async def remove_member(
        self, workspace_id: str, user_id: str, *, may_touch_owner: bool
    ) -> MembershipChange:
        """Remove a membership; ``last-owner`` (and nothing changed) when it is the workspace's
        only owner, ``owners-only`` when it is an owner's and ``may_touch_owner`` is false."""
        return await self._change(workspace_id, user_id, None, may_touch_owner)

    async def _change(
        self,
        workspace_id: str,
        user_id: str,
        update: dict[str, Any] | None,
        may_touch_owner: bool,
    ) -> MembershipChange:
        """Apply ``update`` to the membership (``None``: delete it), guarded as the module
        docstring says."""
        for attempt in range(_ATTEMPTS):
            current = await self._memberships.find_one(
                {"workspaceId": workspace_id, "userId": user_id}
            )
            if current is None:
                return "missing"
            was = current["role"]
            if update is not None and was == update["$set"]["role"]:
                return "unchanged"
            if was == "owner" and not may_touch_owner:
                return "owners-only"
            if was == "owner":
                outcome = await self._step_down(current, update)
            else:
                outcome = await self._write({"_id": current["_id"], "role": was}, update)
            if outcome is not None:
                if outcome == "changed":
                    await self._changed(user_id, workspace_id)
                return outcome
            # Changed (or marked) meanwhile: read it again, after a moment when it is marked.
            await asyncio.sleep(0.01 * min(attempt, 5))
        return "busy"

    async def _write(
        self, match: dict[str, Any], update: dict[str, Any] | None
    ) -> MembershipChange | None:
        """One conditional write; ``changed``, or None when ``match`` matched nothing."""
        if update is None:
            done = (await self._memberships.delete_one(match)).deleted_count
        else:
            done = (await self._memberships.update_one(match, update)).matched_count
        return "changed" if done else None

    async def _step_down(
        self, owner: dict[str, Any], update: dict[str, Any] | None
    ) -> MembershipChange | None:
        """Mark, count the other owners, then refuse or change (the module docstring)."""
        now = utcnow()
        unmarked = {"stepDown.at": {"$not": {"$gt": now - STEP_DOWN_HOLD}}}
        token = new_id("stp")
        marked = await self._memberships.update_one(
            {"_id": owner["_id"], "role": "owner", **unmarked},
            {"$set": {"stepDown": {"token": token, "at": now}}},
        )
        if not marked.matched_count:
            return None
        # Two flat counts (the store plans each on the workspace index): the other owners, less
        # those marked now — the marked ones counted first. An owner whose own step-down
        # finishes between the two counts (marked, then no longer an owner) then lowers the
        # result; counted the other way round it raised it, and two owners demoted at once
        # could both go (seen under load). A mark that lands between them raises it, but that
        # owner's own count, made after its mark, sees this one's mark and refuses.
        others = {
            "workspaceId": owner["workspaceId"],
            "role": "owner",
            "_id": {"$ne": owner["_id"]},
        }
        marked_others = await self._memberships.count_documents(
            {**others, "stepDown.at": {"$gt": now - STEP_DOWN_HOLD}}
        )
        standing = await self._memberships.count_documents(others) - marked_others
        mine = {"_id": owner["_id"], "stepDown.token": token}
        if standing <= 0:
            await self._memberships.update_one(mine, {"$unset": {"stepDown": ""}})
            return "last-owner"
        if update is not None:
            update = {**update, "$unset": {"stepDown": ""}}
        return await self._write(mine, update)

    async def role_of(self, user_id: str, workspace_id: str) -> Role | None:
        """The user's role in the workspace, or None when they are not a member."""
        membership = await self._memberships.find_one(
            {"workspaceId": workspace_id, "userId": user_id}, {"role": 1}
        )
        return membership["role"] if membership else None

    async def sole_membership(self, user_id: str) -> tuple[str, Role] | None:
        """The user's workspace and role when they belong to exactly one, else None (one
        read on the ``user`` index, at most two memberships)."""
        found = (
            await self._memberships.find({"userId": user_id}, {"workspaceId": 1, "role": 1})
            .limit(2)
            .to_list(2)
        )
        if len(found) != 1:
            return None
        return found[0]["workspaceId"], found[0]["role"]

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

    async def matching(self, workspace_id: str) -> dict[str, Any]:
        """The workspace's automatic-matching choices as stored (``autoMatch``, ``threshold``,
        ``margin``), each absent until someone sets it."""
        found = await self._workspaces.find_one({"_id": workspace_id}, {"matching": 1})
        return dict((found or {}).get("matching") or {})

    async def set_matching(self, workspace_id: str, changes: dict[str, Any]) -> None:
        """Set some of ``autoMatch``, ``threshold`` and ``margin``; the others keep theirs."""
        if changes:
            await self._workspaces.update_one(
                {"_id": workspace_id},
                {"$set": {f"matching.{name}": value for name, value in changes.items()}},
            )

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
