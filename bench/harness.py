"""What the store benchmarks share: one embedded server for the run, a fresh database per size
with its workspaces loaded with demo documents (from ``BULK_FROM`` documents in bulk), the
``--sizes``/``--runs`` options, median/p95 timing and the load average.

A bench script imports it after putting the repository on ``sys.path``::

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from bench.harness import Loaded, loaded, run_sizes, timed
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import os
import statistics
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from motor.motor_asyncio import AsyncIOMotorClient, AsyncIOMotorDatabase
from starlette.applications import Starlette

from app.host.config import Settings
from app.host.main import create_app
from app.host.services import build_services
from engines.demo import demo_documents
from persistence.client import connect
from persistence.documents.rollups import Recount
from persistence.embedded import EmbeddedServer
from persistence.store import Store
from resolvers import build_registry
from resolvers.framework.registry import Registry
from resolvers.services.auth import accounts
from resolvers.services.auth.accounts import DEMO_BATCH
from tests.live import discard as discard_process

# From this many documents a workspace is loaded in bulk (``bulk_load``): the service's own
# inserts move rollup rows batch by batch, which took over an hour for 100k on the shared
# machine.
BULK_FROM = 50_000


@dataclass(frozen=True)
class Workspace:
    """A workspace to create: its owner's email, its name, how many demo documents, the seed."""

    email: str
    name: str
    documents: int
    seed: int = 1


@dataclass(frozen=True)
class Loaded:
    """A database ready to measure: its store and the bootstrap answer of each workspace
    (``orgId``, ``apiKey``, …) in the order asked."""

    client: AsyncIOMotorClient
    db: AsyncIOMotorDatabase
    store: Store
    tenants: list[dict[str, Any]]
    load_seconds: float


@asynccontextmanager
async def loaded(
    server: EmbeddedServer,
    name: str,
    workspaces: Sequence[Workspace],
    event_listeners: Sequence[Any] = (),
) -> AsyncIterator[Loaded]:
    """A fresh database ``name`` on ``server`` with ``workspaces`` bootstrapped and loaded
    (through ``accounts.load_demo``: the same inserts and rollup writes as the service);
    dropped afterwards."""
    client, db = connect(server.uri, name, event_listeners=list(event_listeners))
    await client.drop_database(name)
    store = Store(db)
    await store.ensure_indexes()
    tenants = [await accounts.bootstrap(store, w.email, w.name) for w in workspaces]
    started = time.perf_counter()
    for workspace, tenant in zip(workspaces, tenants, strict=True):
        if workspace.documents >= BULK_FROM:
            await bulk_load(store, tenant["orgId"], workspace.documents, seed=workspace.seed)
        elif workspace.documents:
            await accounts.load_demo(
                store, tenant["orgId"], workspace.documents, seed=workspace.seed
            )
    try:
        yield Loaded(client, db, store, tenants, time.perf_counter() - started)
    finally:
        await client.drop_database(name)
        client.close()


async def bulk_load(store: Store, org_id: str, count: int, seed: int) -> None:
    """The state ``accounts.load_demo`` leaves, written faster: the same demo documents
    (``DocumentWrites.prepare``, inserted in batches), and their rollup rows (and packed records)
    added up and inserted once at the end, as ``rebuild_rollups`` writes them (the rollup
    property test proves rows kept write by write equal such a recount). Demo documents carry
    no edit history and the bench embeds nothing, so nothing else is left out."""
    documents = demo_documents(count, seed=seed)
    recount = Recount(org_id)
    for start in range(0, len(documents), DEMO_BATCH):
        records = [
            store.documents.writes.prepare(org_id, d) for d in documents[start : start + DEMO_BATCH]
        ]
        await store.db["documents"].insert_many(records, ordered=False)
        recount.add(records)
    kept = recount.records()
    for start in range(0, len(kept), DEMO_BATCH):
        await store.db["document_rollups"].insert_many(kept[start : start + DEMO_BATCH])


def add_analysis_option(parser: argparse.ArgumentParser) -> None:
    """``--analysis``: where the served process analyses uploads (``FINCAP_EXTRACTION_EXECUTOR``).
    ``process`` by default, as deployed; ``thread`` spares the pool's processes (the
    forkserver's import of the extraction engines and a child, ~2 CPU-s) where the analysis is
    not what is measured (the smoke test's tiny runs)."""
    parser.add_argument(
        "--analysis",
        choices=["process", "thread"],
        default="process",
        help="where fincap serve analyses the uploads (FINCAP_EXTRACTION_EXECUTOR); process by "
        "default, as deployed; thread: no analysis processes started (the smoke test's tiny run)",
    )


def add_warm_up_option(parser: argparse.ArgumentParser) -> None:
    """``--warm-ups``: uncounted rounds before the timed ones (1 by default: caches warm, as the
    figures quoted were measured; 0 in the smoke test's tiny runs, which judge no figure)."""
    parser.add_argument(
        "--warm-ups",
        type=int,
        default=1,
        help="uncounted rounds before the timed ones (default 1; 0: the smoke test's tiny run)",
    )


def discard(server: EmbeddedServer) -> None:
    """End a store whose data the run throws away (in memory, or in a temporary directory
    deleted next): killed with its supervisor, not stopped cleanly. A clean stop closes the
    storage engine's files, ~2 s even for an idle in-memory store, waited for at the end of
    every run, for data nobody reads again (``tests.live.discard``, which the tests use)."""
    if server.process is not None:
        discard_process(server.process)


def load_average() -> str:
    """The machine's 1-, 5- and 15-minute load averages: figures mean little without it."""
    return "load " + " ".join(f"{value:.2f}" for value in os.getloadavg())


def percentile(samples: Sequence[float], share: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


async def timed(runs: int, call: Callable[[], Awaitable[Any]]) -> tuple[float, float]:
    """Median and p95 milliseconds of ``runs`` calls, after one warm-up call."""
    await call()
    samples = []
    for _ in range(runs):
        begin = time.perf_counter()
        await call()
        samples.append((time.perf_counter() - begin) * 1000)
    return statistics.median(samples), percentile(samples, 0.95)


def run_sizes(
    doc: str | None,
    measure: Callable[[int, int, EmbeddedServer], Awaitable[None]],
    *,
    sizes: Sequence[int],
    runs: int,
    on_disk: bool = False,
) -> None:
    """Parse ``--sizes`` and ``--runs`` (defaults ``sizes``, ``runs``) and call
    ``measure(size, runs, server)`` for each size on one embedded server: in memory, or
    ``on_disk`` in a temporary directory (a server that can be restarted with its data)."""
    parser = argparse.ArgumentParser(description=(doc or "").split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=list(sizes))
    parser.add_argument("--runs", type=int, default=runs)
    options = parser.parse_args()

    async def main(storage: str) -> None:
        server = EmbeddedServer(storage=storage).start()
        try:
            for size in options.sizes:
                await measure(size, options.runs, server)
        finally:
            discard(server)

    if not on_disk:
        asyncio.run(main(":memory:"))
        return
    with tempfile.TemporaryDirectory(prefix="fincap-bench-") as directory:
        asyncio.run(main(directory))


def serving_app(
    settings: Settings, store: Store, registry: Registry | None = None, **parts: Any
) -> Starlette:
    """The service over ``store``, its services built by the server's own factory
    (``app.host.services.build_services``); ``parts`` replace some of them. Without
    ``registry``, the process's ``shared_registry()``."""
    services = build_services(settings, store, registry=registry or shared_registry(), **parts)
    return create_app(settings, services=services)


@functools.cache
def shared_registry() -> Registry:
    """One registry for every app a bench process makes without its own: they share its
    GraphQL schema, OpenAPI document and MCP tools (``Registry.derived``), built by the first
    app (seconds of CPU) instead of by each (``bench/statements.py`` made four apps a run, one
    per format). Apps are made before anything is timed. The schema keeps the GraphQL
    documents it parsed: a bench that times a first GraphQL call passes a registry of its own
    (``bench/dashboard.py``)."""
    return build_registry()


@dataclass(frozen=True)
class Faces:
    """One API key's calls to the GraphQL and REST faces of a served app (``serving_app``
    behind httpx's ASGI transport, or a ``fincap serve`` over TCP): what a bench comparing the
    two sends."""

    http: Any  # httpx.AsyncClient (httpx is a test and bench dependency, not the service's)
    headers: dict[str, str]

    async def gql(self, query: str, variables: dict[str, Any]) -> dict[str, Any]:
        """The ``data`` of a GraphQL request; an answer with errors fails the bench."""
        response = await self.http.post(
            "/v1/graphql", json={"query": query, "variables": variables}, headers=self.headers
        )
        body: dict[str, Any] = response.json()
        assert "errors" not in body, body["errors"][:2]
        return body["data"]

    async def rest(self, slug: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """The ``result`` of a capability called over REST; anything but a 200 fails it."""
        response = await self.http.post(
            f"/v1/capabilities/{slug}", json=arguments, headers=self.headers
        )
        assert response.status_code == 200, response.text
        result: dict[str, Any] = response.json()["data"]["result"]
        return result
