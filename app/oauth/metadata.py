"""Where the OAuth face lives, and what it says about itself: the endpoint paths, the
authorization server's metadata (RFC 8414) and the protected resource's (RFC 9728) for the MCP
endpoint. The MCP face names ``resource_metadata_url`` in its 401 challenge."""

from __future__ import annotations

from mcp.server.auth.handlers.metadata import MetadataHandler, ProtectedResourceMetadataHandler
from mcp.shared.auth import OAuthMetadata, ProtectedResourceMetadata
from starlette.requests import Request
from starlette.responses import Response

from resolvers.framework.registry import SCOPES

OAUTH = "/v1/oauth"


AUTHORIZE_PATH = f"{OAUTH}/authorize"
SIGN_IN_PATH = f"{OAUTH}/sign-in"
CONSENT_PATH = f"{OAUTH}/consent"
TOKEN_PATH = f"{OAUTH}/token"
REGISTER_PATH = f"{OAUTH}/register"
REVOKE_PATH = f"{OAUTH}/revoke"
DASHBOARD_CLIENT_PATH = f"{OAUTH}/dashboard-client"
SIGN_IN_LINK_PATH = f"{OAUTH}/sign-in-link"
MCP_PATH = "/mcp"


def issuer(request: Request) -> str:
    return str(request.app.state.settings.base_url)


def resource_metadata_url(base: str) -> str:
    """RFC 9728 §3.1: the well-known path inserted before the resource's path."""
    return f"{base}/.well-known/oauth-protected-resource{MCP_PATH}"


def server_metadata(base: str) -> OAuthMetadata:
    # Validated from plain strings: the models keep an empty path as is, and RFC 8414
    # compares the issuer as an exact string (no trailing slash added).
    return OAuthMetadata.model_validate(
        {
            "issuer": base,
            "authorization_endpoint": base + AUTHORIZE_PATH,
            "token_endpoint": base + TOKEN_PATH,
            "registration_endpoint": base + REGISTER_PATH,
            "revocation_endpoint": base + REVOKE_PATH,
            "revocation_endpoint_auth_methods_supported": [
                "client_secret_post",
                "client_secret_basic",
            ],
            "scopes_supported": list(SCOPES),
            "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code", "refresh_token"],
            "token_endpoint_auth_methods_supported": [
                "none",
                "client_secret_post",
                "client_secret_basic",
            ],
            "code_challenge_methods_supported": ["S256"],
        }
    )


def resource_metadata(base: str) -> ProtectedResourceMetadata:
    return ProtectedResourceMetadata.model_validate(
        {
            "resource": base + MCP_PATH,
            "authorization_servers": [base],
            "scopes_supported": list(SCOPES),
            "resource_name": "fincap",
        }
    )


async def authorization_server_metadata(request: Request) -> Response:
    return await MetadataHandler(server_metadata(issuer(request))).handle(request)


async def protected_resource_metadata(request: Request) -> Response:
    handler = ProtectedResourceMetadataHandler(resource_metadata(issuer(request)))
    return await handler.handle(request)
