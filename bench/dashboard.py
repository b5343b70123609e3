"""Dashboard calls on the embedded store (SecantusDB): a big workspace and a 1k one beside it.

For each size N a workspace of N demo documents and one of 1,000 (``--small``) share the
database. Each dashboard call runs through ``invoke()`` (validation, auth, store, output model)
``--runs`` times, and the GraphQL dashboard queries through the ASGI app; medians and p95 are
printed next to two floors: the store's own count of the workspace's active documents, and one
indexed point read (what any command costs the store under the machine's current load).

Issue 29's two calls (``ISSUE_SEARCH`` through ``invoke()``, ``ISSUE_GRAPHQL`` through the
app) are also measured **cold**, as a restarted server answers its first visitor: each
sample restarts the embedded store (its data on disk, in a temporary directory), builds a
fresh process state (a new ``Store``, services and app) and times its first call;
``--cold`` samples per call and workspace, median and worst printed.

    .venv/bin/python bench/dashboard.py [--sizes 1000 5000] [--runs 7] [--cold 5] [--small 1000]
    .venv/bin/python bench/dashboard.py --sizes 20000 --runs 10   # the issue's table
    .venv/bin/python bench/dashboard.py --sizes 20000 100000     # the issue's sizes (slow load)
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from datetime import date, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import httpx
from motor.motor_asyncio import AsyncIOMotorDatabase

from app.host.config import Settings
from app.host.services import build_services
from bench.harness import Loaded, Workspace, load_average, loaded, run_sizes, serving_app, timed
from persistence.client import connect
from persistence.embedded import EmbeddedServer
from persistence.store import Store
from resolvers import build_registry
from resolvers.framework.context import Credentials
from resolvers.framework.invoke import invoke
from resolvers.framework.registry import Registry

SMALL = 1_000
SINCE = (date.today() - timedelta(days=90)).isoformat()
CALLS: dict[str, tuple[str, dict[str, Any]]] = {
    "count by month": ("documents.count", {"groupBy": "month"}),
    "count by category, 90 days": (
        "documents.count",
        {
            "groupBy": "category",
            "where": {"conditions": [{"field": "docDate", "op": "gte", "value": SINCE}]},
        },
    ),
    "20 newest, filtered": (
        "documents.search",
        {
            "useSearch": False,
            "limit": 20,
            "sortBy": "docDate",
            "sortOrder": -1,
            "where": {"conditions": [{"field": "currency", "op": "eq", "value": "EUR"}]},
        },
    ),
    "issue 29: 20 newest, amount gt 5": (
        "documents.search",
        {
            "useSearch": False,
            "limit": 20,
            "sortBy": "docDate",
            "sortOrder": -1,
            "where": {"conditions": [{"field": "amount", "op": "gt", "value": 5}]},
        },
    ),
}
ISSUE_SEARCH = "issue 29: 20 newest, amount gt 5"


# documentCount + counts by month + the 20 newest, in one request.
DASHBOARD = """{ workspace { documentCount
  counts(input: {groupBy: month}) { count groups { key count } }
  documents(input: {useSearch: false, limit: 20}) { documents { id merchant amount } } } }"""
# Issue 29's GraphQL dashboard, as the issue wrote it.
ISSUE_GRAPHQL = """{ workspace { documentCount
  counts(input:{groupBy: month}) { groups { key count } }
  documents(input:{limit: 20, useSearch: false}) {
    documents { id merchant amount currency docDate category } } } }"""
GRAPHQL: dict[str, str] = {"GraphQL dashboard": DASHBOARD, "issue 29: GraphQL": ISSUE_GRAPHQL}


COLD_RUNS = 5


async def measure(size: int, runs: int, server: EmbeddedServer) -> None:
    workspaces = [
        Workspace("big@example.com", "Big", size, seed=1),
        Workspace("small@example.com", "Small", SMALL, seed=2),
    ]
    async with loaded(server, f"dashboard_{size}", workspaces) as data:
        # One registry for the size's two parts: the loaded part's app shares the schema and
        # OpenAPI document the cold part's apps built (``Registry.derived``, seconds of CPU)
        # instead of building them again. Not across sizes: the schema keeps the GraphQL
        # documents it parsed, and each size's cold part starts without them, as before.
        registry = build_registry()
        await measure_cold(size, data, server, COLD_RUNS, registry)
        await measure_loaded(size, runs, data, registry)


def headers_of(tenant: dict[str, Any]) -> dict[str, str]:
    return {"Authorization": f"Bearer {tenant['apiKey']}", "X-Service-Org-Id": tenant["orgId"]}


async def graphql_call(http: httpx.AsyncClient, query: str, headers: dict[str, str]) -> None:
    response = await http.post("/v1/graphql", json={"query": query}, headers=headers)
    assert "errors" not in response.json(), response.text[:300]


Fresh = Callable[[AsyncIOMotorDatabase], Callable[[], Awaitable[Any]]]


async def first_call(make: Fresh, server: EmbeddedServer, database: str, samples: int) -> str:
    """Median and worst ms of the first call of ``samples`` fresh process states, each after
    a restart of the store: a new client (connected, as a server is before it is ready), and
    ``make`` builds the rest over its database and returns the call."""
    times = []
    for _ in range(samples):
        await asyncio.to_thread(restart, server)
        client, db = connect(server.uri, database)
        try:
            await db.command("ping")
            call = make(db)
            begin = time.perf_counter()
            await call()
            times.append((time.perf_counter() - begin) * 1000)
        finally:
            client.close()
    return f"{statistics.median(times):8.1f} / {max(times):7.1f}"


def restart(server: EmbeddedServer) -> None:
    server.stop()
    server.start()


async def measure_cold(
    size: int, data: Loaded, server: EmbeddedServer, samples: int, registry: Registry
) -> None:
    """Issue 29's two calls, each the first call of a restarted store and process state."""
    slug, body = CALLS[ISSUE_SEARCH]
    print(
        f"{size:>7} documents beside {SMALL}: cold (store restarted, fresh process state),"
        f" first call, median / worst ms of {samples}"
    )
    tenants = ((f"{size} workspace", data.tenants[0]), (f"{SMALL} beside it", data.tenants[1]))
    for label, tenant in tenants:
        credentials = Credentials(api_key=tenant["apiKey"], org_id=tenant["orgId"])

        def fresh_search(
            db: AsyncIOMotorDatabase, who: Credentials = credentials
        ) -> Callable[[], Awaitable[Any]]:
            services = build_services(Settings(), Store(db), registry=registry)
            return lambda: invoke(registry, slug, body, who, services)

        def fresh_graph(
            db: AsyncIOMotorDatabase, tenant: dict[str, Any] = tenant
        ) -> Callable[[], Awaitable[Any]]:
            app = serving_app(Settings(), Store(db), registry=registry)

            async def call() -> None:
                transport = httpx.ASGITransport(app=app)
                async with httpx.AsyncClient(transport=transport, base_url="http://b") as http:
                    await graphql_call(http, ISSUE_GRAPHQL, headers_of(tenant))

            return call

        name = data.db.name
        search = await first_call(fresh_search, server, name, samples)
        graph = await first_call(fresh_graph, server, name, samples)
        print(f"  {label}: {ISSUE_SEARCH:34} {search}  ({load_average()})")
        print(f"  {label}: {'issue 29: GraphQL':34} {graph}  ({load_average()})")


async def measure_loaded(size: int, runs: int, data: Loaded, registry: Registry) -> None:
    big, small = data.tenants
    store, db = data.store, data.db
    services = build_services(Settings(), store, registry=registry)
    app = serving_app(Settings(), store, registry=registry)
    print(
        f"{size:>7} documents beside {SMALL} (loaded in {data.load_seconds:.1f} s); warm,"
        f" median / p95 ms of {runs} after one call ({load_average()})"
    )
    for label, tenant in ((f"{size} workspace", big), (f"{SMALL} beside it", small)):
        credentials = Credentials(api_key=tenant["apiKey"], org_id=tenant["orgId"])

        async def floor(org: str = tenant["orgId"]) -> None:
            await db["documents"].count_documents({"workspaceId": org, "archived": False})

        async def round_trip(org: str = tenant["orgId"]) -> None:
            await db["workspaces"].find_one({"_id": org})

        floor_median, floor_p95 = await timed(runs, floor)
        trip_median, trip_p95 = await timed(runs, round_trip)
        print(
            f"  {label}: store floor (count its documents) {floor_median:.1f} / {floor_p95:.1f};"
            f" one indexed read {trip_median:.1f} / {trip_p95:.1f}"
        )
        async with httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url="http://bench"
        ) as http:
            headers = headers_of(tenant)
            for name, query in GRAPHQL.items():

                async def graph(query: str = query, headers: dict[str, str] = headers) -> None:
                    await graphql_call(http, query, headers)

                median, p95 = await timed(runs, graph)
                print(f"    {name:34} {median:8.1f} / {p95:7.1f}")
        for call, (slug, body) in CALLS.items():

            async def run(
                slug: str = slug, body: dict[str, Any] = body, who: Credentials = credentials
            ) -> None:
                await invoke(registry, slug, body, who, services)

            median, p95 = await timed(runs, run)
            print(f"    {call:34} {median:8.1f} / {p95:7.1f}")
        print(f"    ({load_average()})")


if __name__ == "__main__":
    # --cold and --small are this script's own; the harness parses the rest.
    own = argparse.ArgumentParser(add_help=False)
    own.add_argument("--cold", type=int, default=COLD_RUNS)
    own.add_argument("--small", type=int, default=SMALL)
    known, sys.argv[1:] = own.parse_known_args()
    COLD_RUNS, SMALL = known.cold, known.small
    run_sizes(__doc__, measure, sizes=[1_000, 5_000], runs=7, on_disk=True)
