"""OAuth clients, authorization codes and tokens (the authorization server behind MCP).

Codes and tokens are stored only as SHA-256 digests of their secrets (each carries 256 random
bits, so a fast digest is enough, as for API keys). Every token belongs to a *family*: the
grant of one authorization code and all the refresh rotations that follow it. Revoking a family
ends every access and refresh token in it at once.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any, Literal

from motor.motor_asyncio import AsyncIOMotorDatabase
from pymongo import ASCENDING, IndexModel, ReturnDocument

from persistence.access_changes import AccessChanges
from persistence.api_keys import digest
from persistence.ids import utcnow

TokenKind = Literal["access", "refresh"]
# ``registeredFrom`` of a client the service runs itself (no address digest looks like it).
FIRST_PARTY = "first-party"

CLIENT_INDEXES = [
    # Registrations per address in a window (the registration rate limit counts with it).
    IndexModel([("registeredFrom", ASCENDING), ("createdAt", ASCENDING)], name="registered_from"),
    # A client no one has used by then goes away (MongoDB's and the embedded store's TTL
    # monitors run every 60 s); a used client has the field removed and stays.
    IndexModel([("unusedUntil", ASCENDING)], expireAfterSeconds=0, name="unused_ttl"),
]
CODE_INDEXES = [
    # Expired codes go away by themselves (a real MongoDB's TTL monitor; harmless elsewhere).
    IndexModel([("expiresAt", ASCENDING)], expireAfterSeconds=3600, name="code_ttl"),
]
TOKEN_INDEXES = [
    IndexModel([("familyId", ASCENDING)], name="family"),
    IndexModel([("userId", ASCENDING), ("workspaceId", ASCENDING)], name="user_workspace"),
    IndexModel([("expiresAt", ASCENDING)], expireAfterSeconds=86400, name="token_ttl"),
]


class OAuthClients:
    """The ``oauth_clients`` collection: dynamically registered clients (RFC 7591).

    Each record keeps where it was registered from (a digest of the address) and, until the
    client is first used (a user consents to it), ``unusedUntil``: a TTL index removes the
    client then, and reads treat it as gone from that moment.
    """

    def __init__(self, db: AsyncIOMotorDatabase) -> None:
        self._col = db["oauth_clients"]

    async def ensure_indexes(self) -> None:
        await self._col.create_indexes(CLIENT_INDEXES)

    async def create(
        self,
        client_id: str,
        metadata: dict[str, Any],
        *,
        registered_from: str,
        unused_until: datetime,
    ) -> None:
        """Store a client's registered metadata."""
        await self._col.insert_one(
            {
                "_id": client_id,
                "metadata": metadata,
                "registeredFrom": registered_from,
                "createdAt": utcnow(),
                "unusedUntil": unused_until,
            }
        )

    async def put_first_party(self, client_id: str, metadata: dict[str, Any]) -> None:
        """Store (or update) a client the service itself runs: registered from no address,
        never removed unused."""
        await self._col.update_one(
            {"_id": client_id},
            {
                "$set": {"metadata": metadata, "registeredFrom": FIRST_PARTY},
                "$setOnInsert": {"createdAt": utcnow()},
                "$unset": {"unusedUntil": ""},
            },
            upsert=True,
        )

    async def get(self, client_id: str) -> dict[str, Any] | None:
        """The client's metadata; None when unknown or expired unused (the TTL monitor may
        not have removed it yet)."""
        record = await self._col.find_one({"_id": client_id})
        if record is None:
            return None
        unused_until = record.get("unusedUntil")
        if unused_until is not None and unused_until <= utcnow():
            return None
        return dict(record["metadata"])

    async def mark_used(self, client_id: str) -> None:
        """A user consented to the client: it no longer expires unused."""
        await self._col.update_one({"_id": client_id}, {"$unset": {"unusedUntil": ""}})

    async def registered_since(
        self, registered_from: str, since: datetime, limit: int
    ) -> list[datetime]:
        """When the clients registered from this address since ``since`` were made, oldest
        first, at most ``limit`` (an index range: never the whole collection)."""
        cursor = (
            self._col.find(
                {"registeredFrom": registered_from, "createdAt": {"$gte": since}},
                {"createdAt": 1},
            )
            .sort("createdAt", ASCENDING)
            .limit(limit)
        )
        return [row["createdAt"] for row in await cursor.to_list(None)]

    async def unused_count(self, limit: int) -> int:
        """How many registered clients are still waiting for a first use (counted up to
        ``limit``, over the TTL index's range)."""
        return int(await self._col.count_documents({"unusedUntil": {"$gt": utcnow()}}, limit=limit))


class OAuthCodes:
    """The ``oauth_codes`` collection: authorization codes, single-use and short-lived."""

    def __init__(self, db: AsyncIOMotorDatabase) -> None:
        self._col = db["oauth_codes"]

    async def ensure_indexes(self) -> None:
        await self._col.create_indexes(CODE_INDEXES)

    async def create(self, code: str, grant: dict[str, Any], expires_at: datetime) -> None:
        """``grant``: clientId, userId, workspaceId, scopes, codeChallenge, redirectUri, …"""
        await self._col.insert_one(
            {"_id": digest(code), **grant, "expiresAt": expires_at, "usedAt": None}
        )

    async def get(self, code: str) -> dict[str, Any] | None:
        return await self._col.find_one({"_id": digest(code)})

    async def consume(self, code: str) -> dict[str, Any] | None:
        """Mark the code used and return it; None when unknown or already used (atomic)."""
        return await self._col.find_one_and_update(
            {"_id": digest(code), "usedAt": None},
            {"$set": {"usedAt": utcnow()}},
            return_document=ReturnDocument.AFTER,
        )


class OAuthTokens:
    """The ``oauth_tokens`` collection: access and refresh tokens, grouped in families."""

    def __init__(self, db: AsyncIOMotorDatabase) -> None:
        self._col = db["oauth_tokens"]
        # Told every family revoked through this process (caches forget it at once).
        self.on_revoke: list[Callable[[str], None]] = []
        # Other processes' live streams learn of revoked and narrowed grants here.
        self._access = AccessChanges(db)

    async def ensure_indexes(self) -> None:
        await self._col.create_indexes(TOKEN_INDEXES)

    async def create(
        self, secret: str, kind: TokenKind, grant: dict[str, Any], expires_at: datetime
    ) -> None:
        """``grant``: familyId, clientId, userId, workspaceId, scopes, resource."""
        await self._col.insert_one(
            {
                "_id": digest(secret),
                "kind": kind,
                **grant,
                "createdAt": utcnow(),
                "expiresAt": expires_at,
                "rotatedAt": None,
                "revokedAt": None,
            }
        )
        if (
            kind == "access"
            and await self._col.count_documents(
                {"familyId": grant["familyId"], "kind": "access"}, limit=2
            )
            > 1
        ):
            # A refresh: the grant's scopes are now this token's (``family_scopes``), perhaps
            # fewer; the streams opened under the family check them again.
            for listener in self.on_revoke:
                listener(grant["familyId"])
            await self._access.credential_ended([grant["familyId"]])

    async def find(self, secret: str, kind: TokenKind) -> dict[str, Any] | None:
        """The token record (revoked and rotated ones too: the caller decides)."""
        return await self._col.find_one({"_id": digest(secret), "kind": kind})

    async def find_active(self, secret: str, kind: TokenKind) -> dict[str, Any] | None:
        """The token unless unknown, revoked, rotated or expired."""
        record = await self._col.find_one(
            {"_id": digest(secret), "kind": kind, "revokedAt": None, "rotatedAt": None}
        )
        if record is None or record["expiresAt"] <= utcnow():
            return None
        return record

    async def rotate(self, secret: str) -> bool:
        """Mark a refresh token used; False when it already was (a concurrent reuse)."""
        result = await self._col.update_one(
            {"_id": digest(secret), "kind": "refresh", "rotatedAt": None, "revokedAt": None},
            {"$set": {"rotatedAt": utcnow()}},
        )
        return result.modified_count == 1

    async def revoke_family(self, family_id: str) -> int:
        """End every token of one grant; the number of tokens that were still live."""
        result = await self._col.update_many(
            {"familyId": family_id, "revokedAt": None}, {"$set": {"revokedAt": utcnow()}}
        )
        for listener in self.on_revoke:
            listener(family_id)
        await self._access.credential_ended([family_id])
        return int(result.modified_count)

    async def revoke_for_membership(self, user_id: str, workspace_id: str) -> int:
        """End every token a user holds for a workspace (the membership was removed); the
        number of tokens that were still live. Listeners hear of each family."""
        live = {"userId": user_id, "workspaceId": workspace_id, "revokedAt": None}
        families = await self._col.distinct("familyId", live)
        result = await self._col.update_many(live, {"$set": {"revokedAt": utcnow()}})
        for family_id in families:
            for listener in self.on_revoke:
                listener(family_id)
        await self._access.credential_ended(list(families))
        return int(result.modified_count)

    async def family_alive(self, family_id: str) -> bool:
        """Whether the grant ``family_id`` still stands: a token of it is neither revoked nor
        expired (an API key minted through the grant lives as long, see
        ``resolvers.framework.auth``)."""
        found = await self._col.find_one(
            {"familyId": family_id, "revokedAt": None, "expiresAt": {"$gt": utcnow()}},
            {"_id": 1},
        )
        return found is not None

    async def family_scopes(self, family_id: str) -> list[str] | None:
        """The scopes of the grant's newest live token; None when the grant has ended."""
        cursor = (
            self._col.find(
                {"familyId": family_id, "revokedAt": None, "expiresAt": {"$gt": utcnow()}},
                {"scopes": 1},
            )
            .sort([("createdAt", -1)])
            .limit(1)
        )
        found = await cursor.to_list(1)
        return list(found[0]["scopes"]) if found else None


class OAuthConsents:
    """The ``oauth_consents`` collection: what a user allowed a client, so the consent page is
    not shown again for the same client, workspace and scopes (one record per user and client).

    Asked again when a client wants a scope not allowed before; forgotten when the user revokes
    one of the client's grants (``/v1/oauth/revoke``) or leaves or is removed from the
    workspace (``members``), so the next sign-in asks again.
    """

    def __init__(self, db: AsyncIOMotorDatabase) -> None:
        self._col = db["oauth_consents"]

    async def ensure_indexes(self) -> None:
        await self._col.create_indexes(
            [IndexModel([("userId", ASCENDING), ("workspaceId", ASCENDING)], name="membership")]
        )

    async def remember(
        self, user_id: str, client_id: str, workspace_id: str, scopes: list[str]
    ) -> None:
        await self._col.update_one(
            {"_id": f"{user_id}|{client_id}"},
            {
                "$set": {
                    "userId": user_id,
                    "clientId": client_id,
                    "workspaceId": workspace_id,
                    "scopes": sorted(set(scopes)),
                    "decidedAt": utcnow(),
                }
            },
            upsert=True,
        )

    async def find(self, user_id: str, client_id: str) -> dict[str, Any] | None:
        return await self._col.find_one({"_id": f"{user_id}|{client_id}"})

    async def forget(self, user_id: str, client_id: str) -> bool:
        result = await self._col.delete_one({"_id": f"{user_id}|{client_id}"})
        return result.deleted_count == 1

    async def forget_for_membership(self, user_id: str, workspace_id: str) -> int:
        result = await self._col.delete_many({"userId": user_id, "workspaceId": workspace_id})
        return int(result.deleted_count)
