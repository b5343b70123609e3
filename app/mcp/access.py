"""Who calls ``/mcp``, and in which workspace: OAuth access tokens and API keys.

OAuth is the default path: a client that sends no credential is answered 401 on a call, with
``WWW-Authenticate`` pointing at the protected-resource metadata, and signs the person in.
Many clients also let a person paste a header, so an API key (``sk_…``) is accepted in the same
places as a token (``Authorization: Bearer``, ``X-Service-API-Key``, ``x-api-key``), with the
same scopes and workspace rules as on REST: a key restricted to a workspace acts there; an
unrestricted key acts in the workspace ``X-Service-Org-Id`` names, and, when none is named, in
the person's only workspace (with several, a call that needs one says how to pick it).
A token acts in the workspace it is bound to.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from starlette.requests import HTTPConnection

from app.http.credentials import api_key_from_headers, org_id
from app.http.request_context import services_of
from resolvers.framework.access_tokens import resource_covers
from resolvers.framework.auth import authenticate, resolve_workspace
from resolvers.framework.context import MCP_AUDIENCE, Credentials, Principal
from resolvers.framework.errors import (
    ORG_REQUIRED,
    CapabilityError,
    Unauthenticated,
    WorkspaceRequired,
)

# Where the gate leaves what it found, for the handlers of the same request.
STATE_KEY = "mcp_caller"


@dataclass(frozen=True)
class Caller:
    """An authenticated caller of ``/mcp``."""

    secret: str
    principal: Principal
    org_id: str | None  # X-Service-Org-Id, when sent
    request_id: str = ""

    @property
    def by_key(self) -> bool:
        return self.principal.via == "api_key"

    def credentials(self) -> Credentials:
        """What ``invoke()`` takes (with no workspace named, ``invoke()`` infers the one a
        restricted key or a person with a single workspace acts in)."""
        return Credentials(
            api_key=self.secret,
            org_id=self.org_id,
            request_id=self.request_id,
            audience=MCP_AUDIENCE,
        )


class Refused(Exception):
    """The credential sent is not one ``/mcp`` takes; ``reason`` says why (for the 401)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


async def authenticate_request(conn: HTTPConnection) -> Caller | None:
    """The caller behind the request's credential, None when it sends none, or ``Refused``."""
    secret = api_key_from_headers(conn)
    if not secret:
        return None
    services = services_of(conn)
    credentials = Credentials(api_key=secret, audience=MCP_AUDIENCE)
    try:
        principal = await authenticate(services.store, credentials, services.auth_cache)
    except Unauthenticated as exc:
        raise Refused(exc.message) from None
    if not resource_covers(principal.resource, services.base_url + MCP_AUDIENCE):
        # RFC 8707: a token granted for another resource of this service (the REST API, say)
        # is not one for MCP.
        raise Refused("the token was issued for another resource")
    request_id = conn.scope.get("state", {}).get("request_id", "")
    return Caller(secret, principal, org_id(conn), request_id)


def caller_of(conn: HTTPConnection) -> Caller | None:
    """What the gate found for this request (None: no credential was sent)."""
    caller: Caller | None = conn.scope.get("state", {}).get(STATE_KEY)
    return caller


def explain(exc: CapabilityError, caller: Caller) -> str:
    """The message an assistant gets for a failed call: REST's, and for an API key that may
    act in several workspaces and named none, how to name one."""
    if not exc.exposed:
        return "Internal server error"
    if caller.by_key and isinstance(exc, WorkspaceRequired):
        return (
            f"{ORG_REQUIRED}: this API key may act in several workspaces. Send the header "
            "X-Service-Org-Id: org_… with it (workspaces_list lists the ids), or use a key "
            "restricted to one workspace"
        )
    return exc.message


async def context_of(conn: HTTPConnection, caller: Caller) -> dict[str, Any]:
    """workspace_get_context: who and where this connection acts (403s as REST would)."""
    store = services_of(conn).store
    principal = caller.principal
    workspace_id, role = await resolve_workspace(
        store, principal, caller.org_id, required=False, cache=services_of(conn).auth_cache
    )
    user = await store.users.get(principal.user_id) or {}
    context: dict[str, Any] = {
        "userId": principal.user_id,
        "email": user.get("email", ""),
        "credential": "api_key" if caller.by_key else "oauth",
        "workspace": None,
        "scopes": sorted(principal.scopes),
    }
    if workspace_id is not None:
        found = await store.workspaces.list_for_user(principal.user_id, only=workspace_id)
        name = found[0].get("name", "") if found else ""
        context["workspace"] = {"id": workspace_id, "name": name, "role": role or ""}
    if principal.client_id is not None:
        context["clientId"] = principal.client_id
    if principal.expires_at is not None:
        context["tokenExpiresAt"] = principal.expires_at
    return context


__all__ = ["Caller", "Refused", "authenticate_request", "caller_of", "context_of", "explain"]
