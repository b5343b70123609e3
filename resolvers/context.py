"""What a capability handler receives: who calls, in which workspace, with which services."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Literal

from engines.billing.plans import PlanCatalog, default_catalog
from engines.connectors.catalog import Connectors, unconfigured
from engines.keyring import Keyring
from engines.outbound import OutboundPolicy
from engines.rules.config import AutomationConfig
from persistence.ids import utcnow
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
    """Long-lived dependencies built by the app factory and shared by every request."""

    store: Store
    base_url: str = "http://127.0.0.1:8000"
    rates: RateBook | None = None
    analyzer: Analyzer | None = None
    # Called after a job is queued, so in-process workers start at once instead of polling.
    wake_workers: Callable[[], None] = _nothing
    # Signs cursors (and later CSRF/OAuth state) and encrypts secrets at rest. The default, a
    # random key per Services, suits tests; the app factory hands in the server's keyring.
    keyring: Keyring = field(default_factory=Keyring.generate)
    expensive_calls: ExpensiveCallGate = field(default_factory=ExpensiveCallGate)
    auth_cache: AuthCache = field(default_factory=AuthCache)
    # The capabilities, for work that calls one on a user's behalf (automation rules send
    # documents through integrations.send); None where no registry was built.
    registry: Registry | None = None
    automation: AutomationConfig = field(default_factory=AutomationConfig)
    # Inbound sources: receiving domain, WhatsApp Graph, mailbox polling.
    sources: SourceConfig = field(default_factory=SourceConfig)
    # Ranked search: per-workspace indexes in memory and query embeddings.
    search: SearchIndexes = field(default_factory=SearchIndexes)
    # Billing: the plan catalog (FINCAP_BILLING_PLANS), the API-call tally invoke() adds to,
    # and the clock billing periods are measured with (tests move it).
    plans: PlanCatalog = field(default_factory=default_catalog)
    api_calls: ApiCallMeter = field(default_factory=ApiCallMeter)
    clock: Callable[[], datetime] = utcnow
    # Accounting connectors (Xero, QuickBooks Online) configured from the settings.
    connectors: Connectors = field(default_factory=unconfigured)
    # Every connection opened on a tenant's behalf goes through it (FINCAP_OUTBOUND_ALLOW);
    # the default admits public addresses only.
    outbound: OutboundPolicy = field(default_factory=OutboundPolicy)
    # Addresses whose OAuth client registrations are refused for now (oauth_registration).
    registration_holds: HeldAddresses = field(default_factory=HeldAddresses)

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
