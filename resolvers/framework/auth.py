"""Authentication (who calls) and workspace resolution (where they act)."""

from __future__ import annotations

import secrets
from datetime import timedelta

from persistence.ids import utcnow
from persistence.store import Store
from resolvers.framework.access_tokens import ACCESS_PREFIX, find_access_token
from resolvers.framework.auth_cache import AuthCache
from resolvers.framework.context import Credentials, Principal
from resolvers.framework.errors import (
    KEY_RESTRICTED,
    TOKEN_BOUND,
    NotAMember,
    Unauthenticated,
    WorkspaceRequired,
    WorkspaceRestricted,
)

KEY_PREFIX = "sk_"
MAX_KEY_LENGTH = 256
GRANT_ENDED = "This API key was made through an OAuth authorization that was revoked or ended"
# How stale a key's recorded last use may be (the keys screen shows it): one write per key and
# minute at most, and none while the auth cache answers.
LAST_USE_EVERY = timedelta(minutes=1)


def new_api_key_secret() -> str:
    """``sk_`` followed by 256 random bits, URL-safe; shown to its owner once."""
    return KEY_PREFIX + secrets.token_urlsafe(32)


async def authenticate(
    store: Store, credentials: Credentials, cache: AuthCache | None = None, *, fresh: bool = False
) -> Principal:
    """The caller behind the API key or OAuth access token, or 401.

    Both arrive the same ways (``Authorization: Bearer`` first); the prefix tells them apart:
    ``sk_`` API keys, ``fat_`` access tokens (``resolvers.services.auth.oauth``). With ``cache``, a
    principal found in the last seconds is reused (``resolvers.framework.auth_cache``), unless
    ``fresh`` (the lookup is then made and remembered).
    """
    secret = credentials.api_key
    # Only well-formed secrets meet the cache (both kinds are short ASCII).
    if cache is None or not secret or not secret.isascii() or len(secret) > MAX_KEY_LENGTH:
        return await lookup_principal(store, secret)
    known = None if fresh else cache.principal(secret)
    if known is not None:
        return known
    principal = await lookup_principal(store, secret)
    cache.remember_principal(secret, principal)
    return principal


async def lookup_principal(store: Store, secret: str | None) -> Principal:
    if secret and secret.startswith(ACCESS_PREFIX):
        return await authenticate_token(store, secret)
    if (
        not secret
        or not secret.startswith(KEY_PREFIX)
        or len(secret) > MAX_KEY_LENGTH
        or not secret.isascii()  # keys are URL-safe base64; "sk_\ud800" could not be hashed
    ):
        raise Unauthenticated()
    record = await store.api_keys.find_active(secret)
    if record is None:
        raise Unauthenticated()
    grant = record.get("grantFamily")
    if grant is not None and not await store.oauth_tokens.family_alive(grant):
        # Made with a third-party client's OAuth token: it lives as long as the grant that made
        # it (a key made in the dashboard has none: it belongs to the person).
        raise Unauthenticated(GRANT_ENDED)
    await store.api_keys.mark_used(record, utcnow(), LAST_USE_EVERY)
    return Principal(
        user_id=record["userId"],
        key_id=record["_id"],
        restricted_to=record.get("restrictedTo"),
        scopes=frozenset(record.get("scopes") or ["all"]),
        grant_id=grant,
    )


async def authenticate_token(store: Store, secret: str) -> Principal:
    """The user behind an OAuth access token, acting in the token's workspace only."""
    token = await find_access_token(store, secret)
    if token is None:
        raise Unauthenticated("The access token is invalid, expired or revoked")
    return Principal(
        user_id=token.user_id,
        key_id=token.family_id,
        restricted_to=token.workspace_id,
        scopes=frozenset(token.scopes),
        via="oauth",
        client_id=token.client_id,
        expires_at=token.expires_at,
        grant_id=token.family_id,
        resource=token.resource,
    )


async def resolve_workspace(
    store: Store,
    principal: Principal,
    org_id: str | None,
    *,
    required: bool,
    cache: AuthCache | None = None,
    fresh: bool = False,
) -> tuple[str | None, str | None]:
    """The workspace id and the caller's role in it.

    When no org is named: a key restricted to one workspace (or an OAuth token, always bound
    to one) acts there, since it can act nowhere else; a person who belongs to exactly one
    workspace acts in it. Otherwise the call has no workspace (``WorkspaceRequired`` when it
    needs one). A named org must match the restriction (403) and have the caller as a member
    (403). ``fresh``: memberships are read from the store even when the cache knows them.
    """
    org_id = (org_id or "").strip() or None
    if org_id is None:
        org_id = principal.restricted_to
    if org_id is None:
        org_id = await sole_workspace(store, principal.user_id, cache, fresh=fresh)
    if org_id is None:
        if required:
            raise WorkspaceRequired()
        return None, None
    if principal.restricted_to is not None and org_id != principal.restricted_to:
        raise WorkspaceRestricted(TOKEN_BOUND if principal.via == "oauth" else KEY_RESTRICTED)
    role = cache.role(principal.user_id, org_id) if cache is not None and not fresh else None
    if role is None:
        role = await store.workspaces.role_of(principal.user_id, org_id)
        if role is None:
            raise NotAMember()
        if cache is not None:
            cache.remember_role(principal.user_id, org_id, role)
    return org_id, role


async def sole_workspace(
    store: Store, user_id: str, cache: AuthCache | None, *, fresh: bool = False
) -> str | None:
    """The workspace of a person who belongs to exactly one (their role is remembered with
    it), else None. Cached like roles: joining a second workspace forgets it at once in this
    process (``AuthCache.forget_member``)."""
    known = cache.sole_workspace(user_id) if cache is not None and not fresh else None
    if known is not None:
        return known or None
    sole = await store.workspaces.sole_membership(user_id)
    if cache is not None:
        cache.remember_sole_workspace(user_id, sole[0] if sole else "")
        if sole is not None:
            cache.remember_role(user_id, sole[0], sole[1])
    return sole[0] if sole else None
