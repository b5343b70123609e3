"""OAuth access tokens as every call checks them: what a token is bound to (user, workspace,
scopes, client, resource, grant), finding the live one a secret names, and whether it may be
used where it is presented (RFC 8707).

The authorization server that issues them is a service (``resolvers.services.auth.oauth``); checking
them is part of every call (``resolvers.framework.auth``, ``invoke``), so it lives here.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from mcp.server.auth.provider import AccessToken, RefreshToken
from mcp.shared.auth_utils import check_resource_allowed

from persistence.store import Store

ACCESS_PREFIX = "fat_"


def resource_covers(granted: str | None, presented_to: str) -> bool:
    """Whether a token granted for ``granted`` may be used at ``presented_to`` (RFC 8707):
    the same resource or one under it. Tokens granted before resources were recorded
    (``None``) cover the whole service."""
    return granted is None or check_resource_allowed(presented_to, granted)


class FincapRefreshToken(RefreshToken):
    user_id: str
    workspace_id: str
    family_id: str


class FincapAccessToken(AccessToken):
    user_id: str
    workspace_id: str
    family_id: str


def epoch(moment: datetime) -> int:
    return int(moment.timestamp())


def bound_fields(record: dict[str, Any]) -> dict[str, Any]:
    """What a stored token is bound to, as the SDK's token models name it."""
    return {
        "client_id": record["clientId"],
        "scopes": record["scopes"],
        "expires_at": epoch(record["expiresAt"]),
        "resource": record.get("resource"),
        "subject": record["userId"],
        "user_id": record["userId"],
        "workspace_id": record["workspaceId"],
        "family_id": record["familyId"],
    }


async def find_access_token(store: Store, token: str) -> FincapAccessToken | None:
    """The live access token of this secret (every face authenticates tokens with it)."""
    if not token.startswith(ACCESS_PREFIX) or len(token) > 256 or not token.isascii():
        return None
    record = await store.oauth_tokens.find_active(token, "access")
    if record is None:
        return None
    return FincapAccessToken(token=token, **bound_fields(record))
