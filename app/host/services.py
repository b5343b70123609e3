"""The one services factory: ``Settings`` and a store in, the process's ``Services`` out.

The API process (``app.host.serving``), the worker processes
(``app.host.processing.running_workers``) and the tests all build their services here, so what a
test runs against is wired the way a server is. A caller replaces a part by passing it (a test's
fake connector, a worker pool's analyzer, the server's keyring); everything else comes from the
settings. ``Services`` itself has no defaults to fall back on: nothing else builds one
(``tests/test_services.py``)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from app.host.config import Settings
from engines.billing.plans import PlanCatalog
from engines.connectors.catalog import Connectors, build_connectors
from engines.connectors.registry import CONNECTORS
from engines.currency import RateBook
from engines.keyring import Keyring
from engines.outbound import OutboundPolicy
from engines.rules.config import AutomationConfig
from engines.rules.llm import RuleModelConfig
from engines.rules.notify import SmtpConfig
from persistence.disk import free_bytes_at, reported_free_bytes
from persistence.ids import utcnow
from persistence.store import Store
from resolvers.framework.auth_cache import AuthCache
from resolvers.framework.registry import Registry
from resolvers.framework.services import Services
from resolvers.framework.sources_config import SourceConfig
from resolvers.framework.throttle import ExpensiveCallGate
from resolvers.framework.usage_meter import ApiCallMeter
from resolvers.services.auth.oauth_registration import HeldAddresses
from resolvers.services.documents.search_indexes import SearchIndexes
from resolvers.services.events.hub import EventHub
from resolvers.services.processing.analyzer import Analyzer
from resolvers.services.processing.disk_space import CACHE_S, MB, DiskSpace


def build_services(
    settings: Settings,
    store: Store,
    *,
    keyring: Keyring | None = None,
    registry: Registry | None = None,
    analyzer: Analyzer | None = None,
    rates: RateBook | None = None,
    connectors: Connectors | None = None,
    automation: AutomationConfig | None = None,
    sources: SourceConfig | None = None,
    outbound: OutboundPolicy | None = None,
    search: SearchIndexes | None = None,
    plans: PlanCatalog | None = None,
    api_calls: ApiCallMeter | None = None,
    expensive_calls: ExpensiveCallGate | None = None,
    clock: Callable[[], datetime] = utcnow,
    disk: DiskSpace | None = None,
) -> Services:
    """The services of one process over ``store``.

    ``keyring``: a server passes the one it loaded (``app.host.secret_key``); without it the
    configured ``FINCAP_SECRET_KEY``, else a random key (never a file). ``analyzer`` and
    ``rates`` left out are made on first use (in-process analysis, the shipped ECB rates).
    """
    # Every process that writes documents writes their events, and trims them (the cap).
    store.documents.events.kept_per_workspace = settings.events_kept_per_workspace
    return Services(
        store=store,
        base_url=settings.base_url,
        keyring=keyring or keyring_of(settings),
        registry=registry,
        analyzer=analyzer,
        rates=rates,
        auth_cache=AuthCache(ttl=settings.auth_cache_seconds),
        expensive_calls=expensive_calls or ExpensiveCallGate(),
        automation=automation or automation_config(settings),
        sources=sources or settings.sources,
        search=search or SearchIndexes(settings.search_config()),
        plans=plans or settings.plan_catalog(),
        api_calls=api_calls or ApiCallMeter(clock),
        clock=clock,
        connectors=connectors or connectors_from(settings),
        outbound=outbound or settings.outbound_policy(),
        events=EventHub(store, settings.base_url, settings.event_limits()),
        registration_holds=HeldAddresses(),
        new_analyzer=Analyzer,
        disk=disk or disk_space_of(settings, store),
    )


def disk_space_of(settings: Settings, store: Store) -> DiskSpace:
    """The intake's free-space floor (``FINCAP_MIN_FREE_DISK_MB``) over the store's disk: the
    embedded store's data directory, or what MongoDB reports (``persistence.disk``)."""
    embedded = settings.mongodb_uri is None
    storage = settings.data_dir / "db"

    async def probe() -> int | None:
        if embedded:
            return free_bytes_at(storage)
        return await reported_free_bytes(store.db)

    # statvfs costs microseconds: read every time; dbStats is a call to MongoDB: kept a while.
    return DiskSpace(settings.min_free_disk_mb * MB, probe, cache_s=0 if embedded else CACHE_S)


def keyring_of(settings: Settings) -> Keyring:
    """``FINCAP_SECRET_KEY``'s keyring, else a random one (for processes that keep no secret)."""
    secret = settings.secret_key
    return Keyring.from_text(secret.get_secret_value()) if secret else Keyring.generate()


def automation_config(settings: Settings) -> AutomationConfig:
    """What automation rules may reach, from the ``FINCAP_RULES_LLM_*``/``FINCAP_SMTP_*``
    settings."""
    model = None
    if settings.rules_llm_url and settings.rules_llm_model:
        key = settings.rules_llm_api_key
        model = RuleModelConfig(
            url=settings.rules_llm_url,
            model=settings.rules_llm_model,
            api_key=key.get_secret_value() if key else None,
            timeout_s=settings.rules_llm_timeout_s,
        )
    smtp = None
    if settings.smtp_host:
        password = settings.smtp_password
        smtp = SmtpConfig(
            host=settings.smtp_host,
            port=settings.smtp_port,
            sender=settings.smtp_from,
            username=settings.smtp_username,
            password=password.get_secret_value() if password else None,
            starttls=settings.smtp_starttls,
        )
    return AutomationConfig(
        rule_model=model, smtp=smtp, webhook_timeout_s=settings.webhook_timeout_s
    )


def connectors_from(settings: Settings) -> Connectors:
    """Every declared accounting connector (engines.connectors.registry) with the configured
    app credentials and URLs."""
    return build_connectors(
        {connector.id: settings.connector_settings(connector) for connector in CONNECTORS},
        # The configured URLs pass the policy like any other (README, Outbound connections).
        settings.outbound_policy(),
    )
