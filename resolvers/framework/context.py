"""What a capability handler receives: who calls, in which workspace, with which services."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from persistence.store import Store
from resolvers.framework.errors import WorkspaceRequired

if TYPE_CHECKING:
    from resolvers.framework.registry import Registry
    from resolvers.framework.services import Services


# Where on this service a credential is presented (the path under its base URL): an OAuth
# token bound to another resource (RFC 8707) is refused there. The MCP face is ``/mcp``.
API_AUDIENCE = "/v1"
MCP_AUDIENCE = "/mcp"


@dataclass(frozen=True)
class Credentials:
    """What a face extracted from the request, before anything is checked."""

    api_key: str | None = None
    org_id: str | None = None
    request_id: str = ""
    audience: str = API_AUDIENCE


@dataclass(frozen=True)
class Principal:
    """An authenticated caller: a user acting through one API key (or token)."""

    user_id: str
    key_id: str  # the API key's id, or the OAuth token family's (throttling counts per id)
    restricted_to: str | None = None  # a restricted key's workspace, or a token's
    scopes: frozenset[str] = field(default_factory=lambda: frozenset({"all"}))
    via: Literal["api_key", "oauth", "rule"] = "api_key"  # rule: an automation rule acting
    client_id: str | None = None  # the OAuth client acting for the user
    expires_at: int | None = None  # an OAuth access token's expiry (epoch seconds)
    # The OAuth grant (token family) this credential depends on: a token's own, or the grant an
    # API key was made through (the key ends with it).
    grant_id: str | None = None
    resource: str | None = None  # an OAuth token's resource (RFC 8707); None: the service

    def allows(self, permissions: tuple[str, ...]) -> bool:
        """``all`` satisfies every scope; otherwise every listed scope must be granted."""
        return "all" in self.scopes or all(p in self.scopes for p in permissions)


@dataclass(frozen=True)
class Context:
    """The context one capability call runs in."""

    services: Services
    principal: Principal
    workspace_id: str | None
    role: str | None
    request_id: str = ""
    # The registry the call came through (approvals run stored calls with it).
    registry: Registry | None = None
    # The fields of each listed document the face will show (GraphQL: the query's selection,
    # which is its output mode); None: the input's outputMode decides. Only these are read.
    selected_fields: frozenset[str] | None = None
    # Who approved this call, when it runs as an approved request (an export records it).
    approved_by: str | None = None

    @property
    def store(self) -> Store:
        return self.services.store

    @property
    def user_id(self) -> str:
        return self.principal.user_id

    def require_workspace(self) -> str:
        if self.workspace_id is None:
            raise WorkspaceRequired()
        return self.workspace_id
