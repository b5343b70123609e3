"""One-time sign-in links: the operator's way to put a person in the dashboard, signed in.

``fincap admin bootstrap`` prints one beside the key (``fincap admin sign-in-link`` makes
another). The link is the dashboard's address with the secret in the fragment
(``/app/#/sign-in-link/sil_…``), so it never reaches a server's or proxy's log; the dashboard
posts it to ``/v1/oauth/sign-in-link``, which consumes it (once, within ``LINK_TTL``) and opens
the same sign-in session a password would, bound to the link's user and workspace. The
dashboard's sign-in then goes through without a password, into that workspace.
"""

from __future__ import annotations

import secrets
from datetime import datetime, timedelta
from typing import Any

from persistence.ids import utcnow
from persistence.store import Store
from resolvers.framework.errors import BadRequest, NotFound
from resolvers.services.auth.oauth_first_party import DASHBOARD_CLIENT_ID, DASHBOARD_SCOPES

LINK_PREFIX = "sil_"
LINK_TTL = timedelta(minutes=15)
MAX_LINK_LENGTH = 100
LINK_REFUSED = (
    "This sign-in link was already used or has expired (a link works once, for "
    f"{int(LINK_TTL.total_seconds() // 60)} minutes). Sign in with your password, or ask the "
    "operator for a new link: fincap admin sign-in-link --email you@example.com"
)


def link_url(base_url: str, secret: str) -> str:
    """The address a person opens: the dashboard, with the secret in the fragment."""
    return f"{base_url.rstrip('/')}/app/#/sign-in-link/{secret}"


async def issue(
    store: Store, email: str, workspace_id: str | None = None, now: datetime | None = None
) -> dict[str, Any]:
    """A new link for the user with ``email`` into ``workspace_id`` (default: their first
    workspace): its secret and expiry. Only the secret's digest is stored."""
    user = await store.users.find_by_email(email)
    if user is None:
        raise NotFound(f"no user with email {email.strip().lower()!r}")
    workspaces = await store.workspaces.list_for_user(user["_id"], only=workspace_id)
    if not workspaces:
        where = f"workspace {workspace_id}" if workspace_id else "any workspace"
        raise BadRequest(f"{email} is not a member of {where}")
    secret = LINK_PREFIX + secrets.token_urlsafe(32)
    expires_at = (now or utcnow()) + LINK_TTL
    await store.sign_in_links.create(secret, user["_id"], workspaces[0]["_id"], expires_at)
    return {"secret": secret, "expiresAt": expires_at, "orgId": workspaces[0]["_id"]}


async def redeem(store: Store, secret: str) -> dict[str, Any] | None:
    """The link's record, now used; None when it is malformed, unknown, used, expired, or its
    person has left its workspace. The dashboard's next sign-in opens that workspace."""
    if not secret.startswith(LINK_PREFIX) or len(secret) > MAX_LINK_LENGTH:
        return None
    if not secret.isascii():
        return None
    record = await store.sign_in_links.consume(secret)
    if record is None:
        return None
    if await store.workspaces.role_of(record["userId"], record["workspaceId"]) is None:
        return None
    await store.oauth_consents.remember(
        record["userId"], DASHBOARD_CLIENT_ID, record["workspaceId"], list(DASHBOARD_SCOPES)
    )
    return record
