"""The services container: everything long-lived a capability call or a job may use.

Built in one place, ``app.host.services.build_services``, from the settings; the framework's
``Context`` carries it to every call.

It lives in the framework because ``Context``, ``invoke()`` and the job kinds name it, and the
framework imports nothing above it (type hints included: the ``resolvers-rooms`` contract
counts them). The parts implemented by a service room (the event hub, the search indexes, the
disk-space floor, the OAuth registration holds, the analyzer) are named here by the Protocols
below: what the framework and the container's users outside that room call on them. The room
that owns one gets its own class back where it needs more (``events.hub.hub_of``,
``documents.search_indexes.indexes_of``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

from engines.billing.plans import PlanCatalog
from engines.connectors.catalog import Connectors
from engines.keyring import Keyring
from engines.outbound import OutboundPolicy
from engines.rules.config import AutomationConfig
from persistence.store import Store
from resolvers.framework.auth_cache import AuthCache
from resolvers.framework.sources_config import SourceConfig
from resolvers.framework.throttle import ExpensiveCallGate
from resolvers.framework.usage_meter import ApiCallMeter

# Types the Protocols and fields name, for type checkers only: the container loads none of them
# (numpy, the extraction engine, the search index) at run time; the rooms that use them do.
if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from engines.analysis import Analysis
    from engines.currency import RateBook
    from engines.help_center import HelpCenter
    from engines.ranking.search_index import SearchIndex
    from engines.thumbnail import Preview
    from persistence.access_changes import AccessChange
    from resolvers.framework.registry import Registry


class LiveEvents(Protocol):
    """The process's live event hub (``resolvers.services.events.hub.EventHub``), as the container
    wires it to the store's revocations and membership changes, and as a server stops it.
    Subscribing and watching are the events room's own (``events.hub.hub_of``)."""

    on_access_change: list[Callable[[AccessChange], None]]

    def credential_ended(self, key_id: str) -> None: ...

    def membership_changed(self, user_id: str, workspace_id: str) -> None: ...

    def subscribers(self, workspace_id: str | None = None) -> int: ...

    async def close(self) -> None: ...


class RankedSearch(Protocol):
    """The per-workspace search indexes
    (``resolvers.services.documents.search_indexes.SearchIndexes``): a workspace's fresh index, and
    a query's vector."""

    async def fresh(self, store: Store, workspace_id: str) -> SearchIndex: ...

    async def query_vector(self, text: str) -> npt.NDArray[np.float32] | None: ...


class FreeSpace(Protocol):
    """The store's free disk space and the intake's floor
    (``resolvers.services.processing.disk_space.DiskSpace``)."""

    min_free_bytes: int

    async def free_bytes(self) -> int | None: ...

    def last_seen(self) -> int | None: ...

    async def low(self, incoming: int = 0) -> bool: ...

    async def require_room(self, incoming: int = 0) -> None: ...


class AddressHolds(Protocol):
    """Addresses refused OAuth client registration lately
    (``resolvers.services.auth.oauth_registration.HeldAddresses``)."""

    def wait(self, address: str) -> int | None: ...

    def hold(self, address: str, seconds: int) -> None: ...


class DocumentAnalyzer(Protocol):
    """Analysis off the event loop (``resolvers.services.processing.analyzer.Analyzer``)."""

    async def __call__(self, data: bytes, mime: str, **hints: Any) -> Analysis: ...

    async def preview(self, data: bytes, mime: str) -> Preview: ...

    def ready(self) -> bool: ...


def _nothing() -> None:
    return None


@dataclass(frozen=True)
class Services:
    """Long-lived dependencies shared by every request and job of a process.

    Built in one place, ``app.host.services.build_services``, from the settings (the API process,
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
    search: RankedSearch
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
    events: LiveEvents
    # Addresses whose OAuth client registrations are refused for now (oauth_registration).
    registration_holds: AddressHolds
    # The store's free disk space: intake is refused below FINCAP_MIN_FREE_DISK_MB.
    disk: FreeSpace
    # Makes the analyzer of a process that was given none (``get_analyzer``).
    new_analyzer: Callable[[], DocumentAnalyzer]
    # None: made on first use (``rate_book``, ``get_analyzer``).
    rates: RateBook | None = None
    analyzer: DocumentAnalyzer | None = None
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

    def get_analyzer(self) -> DocumentAnalyzer:
        return self.analyzer or self.new_analyzer()

    def help_center(self) -> HelpCenter:
        """The process's help-center index (built at start-up by the app factory)."""
        from engines.help_center import default_help_center

        return default_help_center()

    def rate_book(self) -> RateBook:
        from engines.currency import default_rate_book

        return self.rates or default_rate_book()
