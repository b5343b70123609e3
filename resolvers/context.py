"""What a capability handler receives: who calls, in which workspace, with which services."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Literal

from engines.billing.plans import PlanCatalog
from engines.connectors.catalog import Connectors
from engines.keyring import Keyring
from engines.outbound import OutboundPolicy
from engines.rules.config import AutomationConfig
from persistence.store import Store
from resolvers.auth_cache import AuthCache
from resolvers.errors import ORG_REQUIRED, BadRequest
from resolvers.oauth_registration import HeldAddresses
from resolvers.search_indexes import SearchIndexes
from resolvers.sources_config import SourceConfig
from resolvers.throttle import ExpensiveCallGate
from resolvers.usage_meter import ApiCallMeter

if TYPE_CHECKING:
    from engines.currency import RateBook
    from engines.help_center import HelpCenter
    from resolvers.processing import Analyzer
    from resolvers.registry import Registry


def _nothing() -> None:
    return None


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
class Services:
    """Long-lived dependencies shared by every request and job of a process.

    Built in one place, ``app.services.build_services``, from the settings (the API process,
    the workers and the tests alike); the fields that may be absent say so.
    """

    store: Store
    base_url: str
    # Signs cursors, CSRF and OAuth state, and encrypts secrets at rest.
    keyring: Keyring
    auth_cache: AuthCache
    expensive_calls: ExpensiveCallGate
    automation: AutomationConfig
    # Inbound sources: receiving domain, WhatsApp Graph, mailbox polling.
    sources: SourceConfig
    # Ranked search: per-workspace indexes in memory and query embeddings.
    search: SearchIndexes
    # Billing: the plan catalog (FINCAP_BILLING_PLANS), the API-call tally invoke() adds to,
    # and the clock billing periods are measured with (tests move it).
    plans: PlanCatalog
    api_calls: ApiCallMeter
    clock: Callable[[], datetime]
    # Accounting connectors (Xero, QuickBooks Online) configured from the settings.
    connectors: Connectors
    # Every connection opened on a tenant's behalf goes through it (FINCAP_OUTBOUND_ALLOW).
    outbound: OutboundPolicy
    # Addresses whose OAuth client registrations are refused for now (oauth_registration).
    registration_holds: HeldAddresses = field(default_factory=HeldAddresses)
    # None: made on first use (``rate_book``, ``get_analyzer``).
    rates: RateBook | None = None
    analyzer: Analyzer | None = None
    # The capabilities, for work that calls one on a user's behalf (automation rules send
    # documents through integrations.send); None where no registry was built.
    registry: Registry | None = None
    # Called after a job is queued, so in-process workers start at once instead of polling.
    wake_workers: Callable[[], None] = _nothing

    def __post_init__(self) -> None:
        # Revocations written through this process reach the cache at once.
        self.store.api_keys.on_revoke.append(self.auth_cache.forget_credential)
        self.store.oauth_tokens.on_revoke.append(self.auth_cache.forget_credential)
        self.store.workspaces.on_membership_change.append(self.auth_cache.forget_member)

    def get_analyzer(self) -> Analyzer:
        from resolvers.processing import Analyzer

        return self.analyzer or Analyzer()

    def help_center(self) -> HelpCenter:
        """The process's help-center index (built at start-up by the app factory)."""
        from engines.help_center import default_help_center

        return default_help_center()

    def rate_book(self) -> RateBook:
        from engines.currency import default_rate_book

        return self.rates or default_rate_book()


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

    @property
    def store(self) -> Store:
        return self.services.store

    @property
    def user_id(self) -> str:
        return self.principal.user_id

    def require_workspace(self) -> str:
        if self.workspace_id is None:
            raise BadRequest(ORG_REQUIRED)
        return self.workspace_id
