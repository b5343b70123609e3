"""The services container: everything long-lived a capability call or a job may use.

Built in one place, ``app.services.build_services``, from the settings; the framework's
``Context`` carries it to every call.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from engines.billing.plans import PlanCatalog
from engines.connectors.catalog import Connectors
from engines.keyring import Keyring
from engines.outbound import OutboundPolicy
from engines.rules.config import AutomationConfig
from persistence.store import Store
from resolvers.framework.auth_cache import AuthCache
from resolvers.framework.throttle import ExpensiveCallGate
from resolvers.framework.usage_meter import ApiCallMeter
from resolvers.services.disk_space import DiskSpace, unlimited
from resolvers.services.events import EventHub
from resolvers.services.oauth_registration import HeldAddresses
from resolvers.services.search_indexes import SearchIndexes
from resolvers.services.sources_config import SourceConfig

if TYPE_CHECKING:
    from engines.currency import RateBook
    from engines.help_center import HelpCenter
    from resolvers.framework.registry import Registry
    from resolvers.services.processing import Analyzer


def _nothing() -> None:
    return None


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
    # Live document events: this process's subscribers and the fan-out to them.
    events: EventHub
    # Addresses whose OAuth client registrations are refused for now (oauth_registration).
    registration_holds: HeldAddresses = field(default_factory=HeldAddresses)
    # The store's free disk space: intake is refused below FINCAP_MIN_FREE_DISK_MB.
    disk: DiskSpace = field(default_factory=unlimited)
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
        # Live streams and sockets follow them too (stream_access); the changes of other
        # processes, read by the event hub's poller, reach the cache as well.
        self.store.api_keys.on_revoke.append(self.events.credential_ended)
        self.store.oauth_tokens.on_revoke.append(self.events.credential_ended)
        self.store.workspaces.on_membership_change.append(self.events.membership_changed)
        self.events.on_access_change.append(self.auth_cache.forget_change)

    def get_analyzer(self) -> Analyzer:
        from resolvers.services.processing import Analyzer

        return self.analyzer or Analyzer()

    def help_center(self) -> HelpCenter:
        """The process's help-center index (built at start-up by the app factory)."""
        from engines.help_center import default_help_center

        return default_help_center()

    def rate_book(self) -> RateBook:
        from engines.currency import default_rate_book

        return self.rates or default_rate_book()
