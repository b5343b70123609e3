"""The dashboard as a first-party OAuth client: one client per server, not one per browser.

Third-party applications register themselves (RFC 7591, ``oauth_registration``); the dashboard
is part of the service, so the server knows it already. Its record in ``oauth_clients`` has a
fixed id (``DASHBOARD_CLIENT_ID``) and is written on first use and whenever the service's public
address changes (``ensure_dashboard_client``): a restart, or another API process, finds the same
client. Because there is one client, the consent a person gave it (``oauth_consents``, per user,
client and scopes) holds for every browser they sign in from.

It asks for every scope and gets those the person's role allows in the workspace it opens;
there is no consent page (only the choice of workspace, for a person with several and none
chosen before, or when the dashboard asks to choose again).

Its only redirect URI is the dashboard's page on the service's public address
(``Settings.base_url``, never the request's ``Host`` header, which a caller chooses): a code for
this client can never be sent anywhere else. It is a public client (no secret; PKCE S256), it
never expires unused, and it does not count against any address's registrations.
"""

from __future__ import annotations

from typing import Any

from mcp.shared.auth import OAuthClientInformationFull

from persistence.store import Store
from resolvers.framework.registry import SCOPES, Registry

# A registered client's id is a random UUID (the SDK issues it), so it can never be this one.
DASHBOARD_CLIENT_ID = "fincap-dashboard"
DASHBOARD_PATH = "/app/"
# The dashboard is the person: it asks for every scope, and its grant holds those the person's
# role in the chosen workspace allows (``dashboard_scopes``). No consent page: a person does not
# consent to themselves (only a choice of workspace is asked, when there is one to make).
DASHBOARD_SCOPES = SCOPES


def dashboard_scopes(registry: Registry, asked: list[str] | None, role: str | None) -> list[str]:
    """What a dashboard sign-in as ``role`` gets of the scopes it ``asked`` for: those the role
    allows (``Registry.scopes_of_role``; every one when it allows ``all``)."""
    allowed = set(registry.scopes_of_role(role))
    return [s for s in asked or [] if "all" in allowed or s in allowed]


async def dashboard_workspace(store: Store, user_id: str) -> str | None:
    """The workspace a dashboard sign-in opens without asking: the one last chosen, while the
    person is still a member there, else their only one; None when there is a choice to make."""
    remembered = await store.oauth_consents.find(user_id, DASHBOARD_CLIENT_ID)
    if (
        remembered is not None
        and await store.workspaces.role_of(user_id, remembered["workspaceId"]) is not None
    ):
        return str(remembered["workspaceId"])
    workspaces = await store.workspaces.list_for_user(user_id)
    return str(workspaces[0]["_id"]) if len(workspaces) == 1 else None


def dashboard_redirect_uri(base_url: str) -> str:
    """Where the dashboard receives its code: its page on the service's public address."""
    return base_url.rstrip("/") + DASHBOARD_PATH


def dashboard_metadata(base_url: str) -> dict[str, Any]:
    """The dashboard's client metadata (RFC 7591 fields) for a service at ``base_url``."""
    client = OAuthClientInformationFull.model_validate(
        {
            "client_id": DASHBOARD_CLIENT_ID,
            "client_name": "fincap dashboard",
            "redirect_uris": [dashboard_redirect_uri(base_url)],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": "none",
            "scope": " ".join(DASHBOARD_SCOPES),
        }
    )
    return client.model_dump(mode="json", exclude_none=True)


async def ensure_dashboard_client(store: Store, base_url: str) -> dict[str, Any]:
    """The dashboard client's metadata, stored first if it is missing or names another
    address (idempotent: concurrent callers write the same record)."""
    wanted = dashboard_metadata(base_url)
    if await store.oauth_clients.get(DASHBOARD_CLIENT_ID) != wanted:
        await store.oauth_clients.put_first_party(DASHBOARD_CLIENT_ID, wanted)
    return wanted
