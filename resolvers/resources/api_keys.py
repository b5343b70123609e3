"""Capabilities of the api-keys resource: a user manages their own API keys from a workspace.

Keys belong to a user; a key is either restricted to one workspace or acts in every workspace
of its user. Seen from workspace W, the caller's keys are those restricted to W, plus the
unrestricted ones when the caller itself is unrestricted: a key or OAuth token bound to W can
never see, create or revoke a key that also acts elsewhere. Another workspace's key, or another
user's, is "not found". A new key never grants more than its creator: it gets the creator's
scopes. Revocation reaches this process's auth cache at once (``persistence.api_keys`` tells
``AuthCache.forget_credential``); other processes follow within FINCAP_AUTH_CACHE_SECONDS.
"""

from __future__ import annotations

from typing import Any

from resolvers.framework.auth import new_api_key_secret
from resolvers.framework.context import Context
from resolvers.framework.errors import Forbidden, NotFound
from resolvers.framework.registry import MEMBERS, capability
from schema.api_keys import (
    ApiKey,
    ApiKeyList,
    CreateApiKey,
    CreatedApiKey,
    ListApiKeys,
    RevokeApiKey,
    RevokedApiKey,
)

UNRESTRICTED_NEEDS_UNRESTRICTED = (
    "Only an unrestricted API key can create a key for every workspace; "
    "send restricted: true for a key of this workspace"
)


def _view(ctx: Context, record: dict[str, Any]) -> ApiKey:
    return ApiKey(
        id=record["_id"],
        name=record.get("name") or "",
        prefix=record.get("prefix") or "sk_",
        restrictedTo=record.get("restrictedTo"),
        scopes=list(record.get("scopes") or ["all"]),
        createdAt=record["createdAt"],
        revokedAt=record.get("revokedAt"),
        isCurrent=record["_id"] == ctx.principal.key_id,
    )


def _visible(ctx: Context, record: dict[str, Any] | None) -> bool:
    """Whether ``record`` is one of the caller's keys as seen from this workspace."""
    if record is None:
        return False
    restricted_to = record.get("restrictedTo")
    if restricted_to is None:
        return ctx.principal.restricted_to is None
    return bool(restricted_to == ctx.require_workspace())


@capability(
    "api-keys.create",
    input=CreateApiKey,
    output=CreatedApiKey,
    permissions=["write_api_keys"],
    effect="write",
    roles=MEMBERS,
)
async def create(ctx: Context, args: CreateApiKey) -> CreatedApiKey:
    """Creates an API key for the calling user, restricted to this workspace unless restricted is
    false. The secret (apiKey, sk_…) is returned this once. The key has the scopes of the
    credential creating it, never more; one created with an OAuth token ends with that
    authorization.
    """
    workspace_id = ctx.require_workspace()
    if not args.restricted and ctx.principal.restricted_to is not None:
        raise Forbidden(UNRESTRICTED_NEEDS_UNRESTRICTED)
    scopes = ["all"] if "all" in ctx.principal.scopes else sorted(ctx.principal.scopes)
    secret = new_api_key_secret()
    record = await ctx.store.api_keys.create(
        ctx.user_id,
        secret,
        restricted_to=workspace_id if args.restricted else None,
        name=args.name.strip() or "key",
        scopes=scopes,
        # Made with an OAuth token (or with a key made with one): it ends with that grant.
        grant_family=ctx.principal.grant_id,
    )
    return CreatedApiKey(apiKey=secret, key=_view(ctx, record))


@capability(
    "api-keys.list",
    input=ListApiKeys,
    output=ApiKeyList,
    permissions=["read_api_keys"],
    effect="read",
)
async def list_keys(ctx: Context, args: ListApiKeys) -> ApiKeyList:
    """Lists the calling user's API keys that act in this workspace, newest first, without secrets
    (prefix shows their start).
    """
    records = await ctx.store.api_keys.list_usable_in(
        ctx.user_id,
        ctx.require_workspace(),
        include_unrestricted=ctx.principal.restricted_to is None,
        include_revoked=args.includeRevoked,
    )
    return ApiKeyList(keys=[_view(ctx, record) for record in records])


@capability(
    "api-keys.revoke",
    input=RevokeApiKey,
    output=RevokedApiKey,
    permissions=["write_api_keys"],
    effect="destructive",
    roles=MEMBERS,
)
async def revoke(ctx: Context, args: RevokeApiKey) -> RevokedApiKey:
    """Revokes one of the calling user's API keys: it stops working at once (within
    FINCAP_AUTH_CACHE_SECONDS on other servers). A key of another user or workspace is not
    found.
    """
    record = await ctx.store.api_keys.get(ctx.user_id, args.id)
    if not _visible(ctx, record):
        raise NotFound(f"API key '{args.id}' not found")
    await ctx.store.api_keys.revoke(ctx.user_id, args.id)
    revoked = await ctx.store.api_keys.get(ctx.user_id, args.id)
    assert revoked is not None
    return RevokedApiKey(key=_view(ctx, revoked))
