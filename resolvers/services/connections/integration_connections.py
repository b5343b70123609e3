"""Connecting a workspace to an accounting product (OAuth 2.0 authorization code) and keeping
its tokens: encrypted at rest with the server keyring, refreshed before they expire.

The flow: ``GET /v1/integrations/{id}/connect`` (the caller's API key and workspace) signs a
``state`` naming the workspace, the user and the integration (valid ten minutes) and redirects
to the provider; the provider redirects the browser back to
``/v1/integrations/{id}/callback?code&state`` (QuickBooks adds ``realmId``); the callback checks
the state, exchanges the code, lists the tenants the grant reaches and stores the connection.
A state is accepted once (its nonce is marked used before the code is exchanged), and only
while the user who started the flow is still an owner or admin of the workspace.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from engines.connectors.base import AccountingConnector, RemoteTenant, TokenSet
from engines.connectors.errors import GrantRevoked
from engines.keyring import InvalidToken
from resolvers.framework.context import Context
from resolvers.framework.errors import BadGateway, BadRequest, Forbidden, NotFound
from resolvers.framework.registry import MANAGERS
from resolvers.framework.services import Services
from resolvers.services.connections.gateway import provider_call

STATE_PURPOSE = "integration-connect-state"
TOKENS_PURPOSE = "integration-tokens"
STATE_TTL_S = 600
CONNECTORS_ONLY = "Only owners and admins of the workspace can connect integrations"
# Refresh this long before the access token expires (Xero's live 30 minutes, Intuit's 60).
REFRESH_MARGIN_S = 120


def connector_of(services: Services, integration_id: str) -> AccountingConnector:
    connector = services.connectors.get(integration_id)
    if connector is None:
        raise NotFound(f"Integration '{integration_id}' not found")
    return connector


def redirect_uri(services: Services, integration_id: str) -> str:
    return f"{services.base_url}/v1/integrations/{integration_id}/callback"


def _bound(workspace_id: str, integration_id: str) -> bytes:
    # The ciphertext only decrypts on its own record: it cannot be copied to another workspace.
    return f"{workspace_id}:{integration_id}".encode()


def seal(services: Services, workspace_id: str, integration_id: str, tokens: TokenSet) -> str:
    plain = json.dumps(
        {
            "access_token": tokens.access_token,
            "refresh_token": tokens.refresh_token,
            "expires_at": tokens.expires_at,
            "scope": tokens.scope,
        }
    ).encode()
    return services.keyring.encrypt(TOKENS_PURPOSE, plain, _bound(workspace_id, integration_id))


def unseal(services: Services, workspace_id: str, integration_id: str, sealed: str) -> TokenSet:
    raw = services.keyring.decrypt(TOKENS_PURPOSE, sealed, _bound(workspace_id, integration_id))
    data = json.loads(raw)
    return TokenSet(
        access_token=data["access_token"],
        refresh_token=data["refresh_token"],
        expires_at=float(data["expires_at"]),
        scope=data.get("scope", ""),
    )


# Where the callback may send the browser afterwards: a name, never a URL (no open redirect).
RETURNS = {"dashboard": "/app/#/integrations"}


def start(ctx: Context, integration_id: str, return_to: str | None = None) -> str:
    """The provider's authorization URL for this workspace (owners and admins connect);
    ``return_to`` (a name of ``RETURNS``) is where the callback sends the browser back to."""
    if return_to is not None and return_to not in RETURNS:
        raise BadRequest(
            f"Invalid request: return: '{return_to[:40]}' is not one of {', '.join(RETURNS)}"
        )
    connector = connector_of(ctx.services, integration_id)
    workspace_id = ctx.require_workspace()
    # A plain route, not a capability: the role is checked here, as @capability(roles=) would.
    if ctx.role not in MANAGERS:
        raise Forbidden(CONNECTORS_ONLY)
    if not connector.configured():
        raise BadRequest(
            f"{connector.name} is not configured on this server: set its client id and secret "
            "(see the docs: guide/integrations.md)"
        )
    payload = {
        "w": workspace_id,
        "u": ctx.user_id,
        "i": integration_id,
        "exp": int(time.time()) + STATE_TTL_S,
        "n": secrets.token_urlsafe(8),
        **({"r": return_to} if return_to else {}),
    }
    state = ctx.services.keyring.sign(STATE_PURPOSE, json.dumps(payload).encode())
    return connector.authorize_url(state, redirect_uri(ctx.services, integration_id))


def return_url(services: Services, params: Mapping[str, str]) -> str | None:
    """The page a flow started with ``return_to`` goes back to (the state's signature checked
    again); None for a flow that asked for none or a state this server did not sign."""
    try:
        payload = json.loads(services.keyring.verify(STATE_PURPOSE, params.get("state") or ""))
    except (InvalidToken, ValueError):
        return None
    path = RETURNS.get(payload.get("r") or "") if isinstance(payload, dict) else None
    return f"{services.base_url}{path}" if path else None


async def finish(
    services: Services, integration_id: str, params: Mapping[str, str]
) -> dict[str, Any]:
    """Complete the flow from the provider's redirect; the stored connection."""
    connector = connector_of(services, integration_id)
    if params.get("error"):
        raise BadRequest(
            f"{connector.name} did not grant access: {params.get('error')} "
            f"{params.get('error_description', '')}".strip()
        )
    code, state = params.get("code"), params.get("state")
    if not code or not state:
        raise BadRequest("Invalid request: the callback needs code and state")
    try:
        payload = json.loads(services.keyring.verify(STATE_PURPOSE, state))
    except (InvalidToken, ValueError):
        raise BadRequest("Invalid request: state: not issued by this server") from None
    if payload.get("i") != integration_id:
        raise BadRequest("Invalid request: state: issued for another integration")
    expires = int(payload.get("exp", 0))
    if expires < time.time():
        raise BadRequest("Invalid request: state: expired; start the connection again")
    workspace_id, user_id = payload["w"], payload["u"]
    if await services.store.workspaces.role_of(user_id, workspace_id) not in MANAGERS:
        raise Forbidden(CONNECTORS_ONLY)
    nonce = str(payload.get("n") or "")
    if not nonce or not await services.store.used_nonces.use(
        STATE_PURPOSE, nonce, datetime.fromtimestamp(expires, UTC)
    ):
        raise BadRequest("Invalid request: state: already used; start the connection again")
    with provider_call(connector.name):
        tokens = await connector.exchange_code(code, redirect_uri(services, integration_id))
        tenants = await connector.tenants(tokens, params)
    if not tenants:
        raise BadRequest(f"The {connector.name} grant reaches no organisation; connect one")
    return await services.store.integrations.connect(
        workspace_id,
        integration_id,
        tokens=seal(services, workspace_id, integration_id, tokens),
        tenants=[{"id": t.id, "name": t.name, "connectionId": t.connection_id} for t in tenants],
        by=user_id,
    )


async def connection_of(
    services: Services, workspace_id: str, integration_id: str
) -> dict[str, Any]:
    """The workspace's live connection; a 400 saying how to connect when there is none."""
    connector = connector_of(services, integration_id)
    connection = await services.store.integrations.get(workspace_id, integration_id)
    if connection is None or not connection.get("tokens"):
        raise BadRequest(
            f"Invalid request: integrationId: {connector.name} is not connected in this "
            f"workspace; open GET /v1/integrations/{integration_id}/connect"
        )
    return connection


def tenants_of(connection: dict[str, Any]) -> list[RemoteTenant]:
    return [
        RemoteTenant(t["id"], t.get("name", t["id"]), t.get("connectionId"))
        for t in connection.get("tenants") or []
    ]


async def access_token(
    services: Services, workspace_id: str, integration_id: str, *, now: float | None = None
) -> str:
    """A valid access token, refreshed first when it expires within ``REFRESH_MARGIN_S``.

    A refresh is stored only if the stored tokens are still the ones refreshed (another worker
    may have rotated them meanwhile; then its tokens are used).
    """
    connector = connector_of(services, integration_id)
    for _ in range(3):
        connection = await connection_of(services, workspace_id, integration_id)
        sealed = connection["tokens"]
        tokens = unseal(services, workspace_id, integration_id, sealed)
        if tokens.expires_at - (now or time.time()) > REFRESH_MARGIN_S:
            return tokens.access_token
        # A revoked grant is the connection's end, not the provider's failure: recorded on it,
        # and a 400 (connect again); any other failure of the refresh is a 502.
        with provider_call(connector.name, "refreshing the token failed"):
            try:
                fresh = await connector.refresh(tokens.refresh_token)
            except GrantRevoked as exc:
                await services.store.integrations.mark_error(
                    workspace_id, integration_id, str(exc), exc.reason
                )
                # Chained, so that a caller recording the failure can read its kind.
                raise BadRequest(f"{connector.name}: {exc}") from exc
        stored = seal(services, workspace_id, integration_id, fresh)
        if await services.store.integrations.replace_tokens(
            workspace_id, integration_id, sealed, stored
        ):
            return fresh.access_token
    raise BadGateway(f"{connector.name}: the tokens kept changing while refreshing; try again")
