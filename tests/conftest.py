"""Shared fixtures: in-memory store (unit), SecantusDB over TCP (wire), the ASGI app (e2e)."""

from __future__ import annotations

import collections
import gc
import os
import sys
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from mongomock_motor import AsyncMongoMockClient
from starlette.applications import Starlette

from app.host.config import Settings
from app.host.main import create_app
from app.host.services import build_services
from app.host.workers import WorkerPool
from engines.currency import default_rate_book
from persistence.client import connect
from persistence.embedded import EmbeddedServer
from persistence.store import Store
from persistence.workspaces import Role
from resolvers import build_job_kinds, default_registry
from resolvers.framework.job_kinds import JobKinds
from resolvers.framework.registry import Registry
from resolvers.framework.services import Services
from resolvers.services.auth import accounts
from resolvers.services.processing.analyzer import Analyzer
from tests import (
    hypothesis_profiles,  # noqa: F401  (loads the ci or full profile for every test)
    requires,
    staggered_imports,
)
from tests.live import Process, discard, launch

# The scopes that take longest (a module, or a class where a module has classes: what
# `--dist loadscope` hands to one worker), longest first, from a whole run's per-test times (issue
# 36 item 7): every scope of 5 s or more. `make test` deals scopes out in collection order
# (`--no-loadscope-reorder`: xdist's default order, most tests first, put one- and two-test
# modules last, where one ran alone for the last 40 s), a worker taking the next as it finishes
# one: longest first, what is left at the end is a scope of a few seconds, and the workers finish
# together (with the 20 longest only, a 7-8 s module still started in the run's last 15 s, on one
# worker while the others had stopped). The rest follow, most tests first. The order only changes
# how long the run takes, never what it checks.
LONG_SCOPES = (
    "tests/test_bench_smoke.py::TestServed",
    "tests/test_bench_smoke.py::TestInProcess",
    "tests/hardening/test_atomic_intake.py",
    "tests/hardening/test_store_outage.py",
    "tests/test_bench_smoke.py::TestInChromium",
    "tests/web/test_accessibility_browser.py",
    "tests/web/test_live_documents_browser.py",
    "tests/hardening/test_shutdown.py",
    "tests/web/test_dashboard_browser.py",
    "tests/test_cli_serve.py",
    "tests/cli/test_live.py",
    "tests/hardening/test_orphans.py",
    "tests/hardening/test_reliability.py",
    "tests/documents/test_search_candidates.py",
    "tests/web/test_documents_browser.py",
    "tests/web/test_tags_browser.py",
    "tests/web/test_dashboard_sign_in_browser.py",
    "tests/hardening/test_crash_recovery.py",
    "tests/web/test_integrations_browser.py",
    "tests/test_bench_smoke.py::TestOwnStores",
    "tests/documents/test_edit_history_wire.py",
    "tests/web/test_explorer_browser.py",
    "tests/mcp/test_oauth_hardening.py",
    "tests/web/test_live_browser.py",
    "tests/test_uploads_wire.py",
    "tests/integrations/test_xero.py",
    "tests/web/test_review_browser.py",
    "tests/documents/test_regex_reads.py",
    "tests/hardening/test_leases.py",
    "tests/web/test_rules_browser.py",
    "tests/web/test_keys_browser.py",
    "tests/web/test_reprocess_browser.py",
    "tests/documents/test_newest_pages.py",
    "tests/web/test_views_browser.py",
    "tests/web/test_bank_browser.py",
    "tests/web/test_notes_browser.py",
    "tests/test_preloaded.py",
    "tests/test_bench_smoke.py::TestWithModel",
    "tests/mcp/test_set_password.py",
    "tests/documents/test_query_shapes.py",
    "tests/hardening/test_disk_full.py",
    "tests/hardening/test_analysis.py",
    "tests/sources/test_mail_limits.py",
    "tests/sources/test_serve_smtp.py",
    "tests/hardening/test_outbound_policy.py",
    "tests/documents/test_load_order_wire.py",
    "tests/sources/test_inbound_email.py",
    "tests/hardening/test_protocol.py",
)


def scope_of(item: pytest.Item) -> str:
    """The unit `--dist loadscope` keeps on one worker (xdist's own split of the node id)."""
    return item.nodeid.rsplit("::", 1)[0]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    sizes = collections.Counter(scope_of(item) for item in items)

    def rank(item: pytest.Item) -> tuple[int, int]:
        scope = scope_of(item)
        if scope in LONG_SCOPES:
            return LONG_SCOPES.index(scope), 0
        return len(LONG_SCOPES), -sizes[scope]

    items.sort(key=rank)  # stable: every scope keeps its own order
    requires.skip_missing(items)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """A test marked ``requires(...)`` fails in CI when what it needs is missing (elsewhere it
    was marked to skip at collection; tests/requires.py): before its fixtures start anything."""
    requires.fail_missing(item)


def shared_registry() -> Registry:
    """The capabilities, built once per test process: the process's own (``default_registry``,
    which ``fincap serve``'s app uses too). A registry is frozen once built and keeps what the
    faces derive from it (the GraphQL schema, 0.7 s to build; OpenAPI; the MCP catalog), so the
    apps the tests make share those instead of each building its own. A test that needs a
    registry of its own calls ``build_registry()``."""
    return default_registry()


@pytest.fixture(scope="session")
def registry() -> Registry:
    return shared_registry()


@pytest.fixture
async def store() -> Store:
    """A fresh in-memory store (mongomock-motor) with its indexes."""
    client = AsyncMongoMockClient(tz_aware=True)
    created = Store(client[f"fincap_{uuid.uuid4().hex[:8]}"])
    await created.ensure_indexes()
    return created


@pytest.fixture(scope="session")
def embedded_server() -> Iterator[EmbeddedServer]:
    """One ephemeral SecantusDB process for the whole wire-test session, killed at the end: its
    data is in memory, and a clean stop (~2 s) came at the end of every worker's run."""
    server = EmbeddedServer(storage=":memory:").start()
    yield server
    assert server.process is not None
    discard(server.process)


@pytest.fixture
async def wire_store(embedded_server: EmbeddedServer) -> AsyncIterator[Store]:
    """A fresh database on the embedded server, reached by motor over TCP."""
    name = f"wire_{uuid.uuid4().hex[:10]}"
    client, db = connect(embedded_server.uri, name)
    created = Store(db)
    await created.ensure_indexes()
    yield created
    await client.drop_database(name)
    client.close()


@dataclass
class Tenant:
    """A user with one workspace and an unrestricted API key."""

    user_id: str
    org_id: str
    api_key: str

    def headers(self, org: str | None = "self") -> dict[str, str]:
        headers = {"Authorization": f"Bearer {self.api_key}"}
        if org is not None:
            headers["X-Service-Org-Id"] = self.org_id if org == "self" else org
        return headers


async def make_tenant(store: Store, email: str, workspace: str) -> Tenant:
    created = await accounts.bootstrap(store, email, workspace)
    return Tenant(created["userId"], created["orgId"], created["apiKey"])


async def member_of(store: Store, workspace: Tenant, email: str, role: Role = "member") -> Tenant:
    """A new person (with a workspace and key of their own) who is also ``role`` in
    ``workspace``, acting there."""
    person = await make_tenant(store, email, f"{email}'s own")
    await store.workspaces.add_member(workspace.org_id, person.user_id, role)
    return Tenant(person.user_id, workspace.org_id, person.api_key)


async def second_workspace(store: Store, person: Tenant, name: str = "Side project") -> str:
    """Make ``person`` the owner of another workspace too: with two, a call that names none
    has no workspace (with one it acts there, ``resolve_workspace``)."""
    workspace = await store.workspaces.create(name, person.user_id)
    return str(workspace["_id"])


@pytest.fixture
async def alice(store: Store) -> Tenant:
    return await make_tenant(store, "alice@example.com", "Alice Co")


@pytest.fixture
async def bob(store: Store) -> Tenant:
    return await make_tenant(store, "bob@example.com", "Bob Ltd")


def app_on(
    store: Store,
    registry: Registry | None = None,
    settings: Settings | None = None,
    **parts: Any,
) -> Starlette:
    """The service over ``store``, its services built by the server's own factory
    (``app.host.services.build_services``; ``parts`` replace some of them, e.g. an analyzer)."""
    settings = settings or Settings()
    services = build_services(settings, store, registry=registry or shared_registry(), **parts)
    return create_app(settings, services=services)


def asgi_client(store: Store, registry: Registry) -> httpx.AsyncClient:
    app = app_on(store, registry)
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://fincap.test")


@pytest.fixture
async def client(store: Store, registry: Registry) -> AsyncIterator[httpx.AsyncClient]:
    async with asgi_client(store, registry) as http:
        yield http


def worker_pool(
    store: Store,
    kinds: JobKinds | None = None,
    like: Services | None = None,
    analyzer: Analyzer | None = None,
    **options: Any,
) -> WorkerPool:
    """Workers over ``store`` running the service's job kinds (or ``kinds``); in-process OCR
    (or ``analyzer``). ``like``: an app's services whose keyring, sources and outbound policy
    they share."""
    shared = (
        {}
        if like is None
        else {"keyring": like.keyring, "sources": like.sources, "outbound": like.outbound}
    )
    services = build_services(
        Settings(), store, rates=default_rate_book(), analyzer=analyzer or Analyzer(), **shared
    )
    return WorkerPool(services, kinds or build_job_kinds(), **options)


def spawn_worker(
    server: EmbeddedServer, store: Store, lease_s: int | None, log: Path | None = None
) -> Process:
    """A ``fincap worker`` process (analysis in spawned processes) over ``store``'s database on
    the embedded ``server``: a real process for tests to kill (and for ``bench/workers.py`` to
    count), forked with the service imported (``tests/live.py`` ``launch``). Its log lines go
    to ``log`` when given; ``lease_s`` None: the default lease."""
    env = {
        **os.environ,
        "MONGODB_URI": server.database_uri(store.db.name),
        "FINCAP_EXTRACTION_EXECUTOR": "process",
    }
    env.pop("FINCAP_JOB_LEASE_SECONDS", None)
    if lease_s is not None:
        env["FINCAP_JOB_LEASE_SECONDS"] = str(lease_s)
    return launch([sys.executable, "-m", "app.cli", "worker"], env, log or Path(os.devnull))


@pytest.fixture(scope="session")
def graphql_live() -> Iterator[Any]:
    """The app with the GraphQL test registry on a real socket (in-memory store, one tenant),
    shared by the tests that drive it from outside ASGI (node's audit, Chromium's GraphiQL)."""
    from tests.graphql.helpers import live_server

    with live_server() as server:
        yield server


@pytest.hookimpl(tryfirst=True)
def pytest_collection(session: pytest.Session) -> None:
    """A worker of a fresh clone rewrites a third of the test modules' asserts, not all of them
    (``tests/staggered_imports.py``)."""
    staggered_imports.import_from_this_workers_share(session.config.args)


def pytest_collection_finish(session: pytest.Session) -> None:
    """Keep the cyclic garbage collector off what every test shares. After collection a worker
    holds the service's modules and the collected tests: objects that live to the end, which
    each full collection walked again (28 of them, ~0.3 s each, in 718 in-process tests: 8.7 of
    their 10 GC CPU-seconds). Frozen, and with collections less frequent (the tests make apps
    and schemas by the thousand, most of it cycles freed together), GC took 3.9 s there
    (docs/development/testing.md)."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(50_000, 20, 20)
