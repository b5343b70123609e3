"""Capabilities of the api-keys resource: a user manages their own API keys from a workspace.

Keys belong to a user; a key is either restricted to one workspace or acts in every workspace
of its user. Seen from workspace W, the caller's keys are those restricted to W, plus the
unrestricted ones when the caller itself is unrestricted or is the person in the dashboard (the
first-party client): a third-party key or OAuth token bound to W can never see, create or
revoke a key that also acts elsewhere. Another workspace's key, or another user's, is "not
found". A new key's scopes are chosen when it is made, by default what the creator's role in W
allows (``Registry.scopes_of_role``), and never more than that role allows nor than the
credential making it holds. A key made in the dashboard belongs to the person and lives until
revoked, whatever happens to the browser's sign-in; one made through a third-party OAuth
client's token (or with a key made that way) ends with that client's grant. Revocation reaches
this process's auth cache at once (``persistence.api_keys`` tells
``AuthCache.forget_credential``); other processes follow within FINCAP_AUTH_CACHE_SECONDS.
"""

from __future__ import annotations

from typing import Any, cast, get_args

from resolvers.framework.auth import new_api_key_secret
from resolvers.framework.context import Context, Principal
from resolvers.framework.errors import BadRequest, Forbidden, MissingScope, NotFound
from resolvers.framework.registry import MEMBERS, SCOPES, capability
from resolvers.services.auth.oauth_first_party import DASHBOARD_CLIENT_ID
from schema.api_keys import (
    ApiKey,
    ApiKeyList,
    CreateApiKey,
    CreatedApiKey,
    KeyOrigin,
    ListApiKeys,
    RevokeApiKey,
    RevokedApiKey,
)

UNRESTRICTED_NEEDS_UNRESTRICTED = (
    "Only an unrestricted API key can create a key for every workspace; "
    "send restricted: true for a key of this workspace"
)


def first_party(principal: Principal) -> bool:
    """The person in the dashboard (the service's own OAuth client): they act for themselves,
    so their keys are theirs, not a client's."""
    return principal.via == "oauth" and principal.client_id == DASHBOARD_CLIENT_ID


def _origin(record: dict[str, Any]) -> KeyOrigin:
    """Where a key was made; keys stored before origins were recorded are told apart by what
    they kept (the names the operator commands give, the grant a client's key ends with)."""
    origin = record.get("origin")
    if origin in get_args(KeyOrigin):
        return cast(KeyOrigin, origin)
    if record.get("grantFamily"):
        return "oauth"
    named: dict[str, KeyOrigin] = {"bootstrap": "bootstrap", "created by an operator": "operator"}
    return named.get(record.get("name") or "", "api_key")


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
        origin=_origin(record),
        originName=record.get("originName"),
        endsWithGrant=record.get("grantFamily") is not None,
        lastUsedAt=record.get("lastUsedAt"),
    )


def _sees_everywhere(ctx: Context) -> bool:
    """Whether the caller may see and manage the keys that act in every workspace."""
    return ctx.principal.restricted_to is None or first_party(ctx.principal)


def _visible(ctx: Context, record: dict[str, Any] | None) -> bool:
    """Whether ``record`` is one of the caller's keys as seen from this workspace."""
    if record is None:
        return False
    restricted_to = record.get("restrictedTo")
    if restricted_to is None:
        return _sees_everywhere(ctx)
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
    """Creates an API key of yours, for this workspace unless restricted is false; the secret
    (apiKey) is shown once. Scopes: at most your role's and this credential's. Made via an
    OAuth client, it ends with its grant.
    """
    workspace_id = ctx.require_workspace()
    if not args.restricted and not _sees_everywhere(ctx):
        raise Forbidden(UNRESTRICTED_NEEDS_UNRESTRICTED)
    scopes = _chosen_scopes(ctx, args.scopes)
    origin, origin_name, grant = await _made_by(ctx)
    secret = new_api_key_secret()
    record = await ctx.store.api_keys.create(
        ctx.user_id,
        secret,
        restricted_to=workspace_id if args.restricted else None,
        name=args.name.strip() or "key",
        scopes=scopes,
        grant_family=grant,
        origin=origin,
        origin_name=origin_name,
    )
    return CreatedApiKey(apiKey=secret, key=_view(ctx, record))


def _within(scope: str, held: frozenset[str] | set[str]) -> bool:
    return "all" in held or scope in held


def _chosen_scopes(ctx: Context, wanted: list[str]) -> list[str]:
    """The new key's scopes: ``wanted`` (400 for an unknown name, 403 naming one beyond the
    role or the credential), or, none named, what both the role and the credential allow."""
    assert ctx.registry is not None  # invoke() always passes it
    role_allows = frozenset(ctx.registry.scopes_of_role(ctx.role))
    held = ctx.principal.scopes
    if not wanted:
        candidates = [s for s in SCOPES if _within(s, role_allows) and _within(s, held)]
        return ["all"] if "all" in candidates else candidates
    unknown = [s for s in wanted if s not in SCOPES]
    if unknown:
        raise BadRequest(f"scopes: unknown scope {', '.join(unknown)}; known: {', '.join(SCOPES)}")
    beyond_role = [s for s in wanted if not _within(s, role_allows)]
    if beyond_role:
        raise Forbidden(
            f"scopes: your role here ({ctx.role}) does not allow the scope {', '.join(beyond_role)}"
        )
    beyond_credential = tuple(s for s in wanted if not _within(s, held))
    if beyond_credential:
        raise MissingScope(beyond_credential)
    return ["all"] if "all" in wanted else [s for s in SCOPES if s in wanted]


async def _made_by(ctx: Context) -> tuple[str, str | None, str | None]:
    """Where a new key comes from (origin, its name) and the grant it ends with, if any."""
    principal = ctx.principal
    if first_party(principal):
        return "dashboard", None, None
    if principal.via == "oauth" and principal.client_id is not None:
        client = await ctx.store.oauth_clients.get(principal.client_id) or {}
        return "oauth", client.get("client_name") or principal.client_id, principal.grant_id
    parent = await ctx.store.api_keys.get_active(principal.key_id)
    # Made with a key made through a client's grant: it ends with that grant too.
    return "api_key", (parent or {}).get("name"), principal.grant_id


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
        include_unrestricted=_sees_everywhere(ctx),
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
