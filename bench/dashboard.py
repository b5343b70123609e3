"""Dashboard calls on the embedded store (SecantusDB): a big workspace and a 1k one beside it.

For each size N a workspace of N demo documents and one of 1,000 share the database. Each
dashboard call runs through ``invoke()`` (validation, auth, store, output model) ``--runs``
times, and the GraphQL dashboard query through the ASGI app; medians and p95 are printed
next to two floors: the store's own count of the workspace's active documents, and one
indexed point read (what any command costs the store under the machine's current load).

    .venv/bin/python bench/dashboard.py [--sizes 1000 5000] [--runs 7]
    .venv/bin/python bench/dashboard.py --sizes 20000 100000     # the issue's sizes (slow load)
"""

from __future__ import annotations

import sys
from datetime import date, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import httpx

from app.config import Settings
from app.services import build_services
from bench.harness import Loaded, Workspace, load_average, loaded, run_sizes, serving_app, timed
from persistence.embedded import EmbeddedServer
from resolvers import build_registry
from resolvers.framework.context import Credentials
from resolvers.framework.invoke import invoke

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
}


# documentCount + counts by month + the 20 newest, in one request.
DASHBOARD = """{ workspace { documentCount
  counts(input: {groupBy: month}) { count groups { key count } }
  documents(input: {useSearch: false, limit: 20}) { documents { id merchant amount } } } }"""


async def measure(size: int, runs: int, server: EmbeddedServer) -> None:
    workspaces = [
        Workspace("big@example.com", "Big", size, seed=1),
        Workspace("small@example.com", "Small", SMALL, seed=2),
    ]
    async with loaded(server, f"dashboard_{size}", workspaces) as data:
        await measure_loaded(size, runs, data)


async def measure_loaded(size: int, runs: int, data: Loaded) -> None:
    big, small = data.tenants
    store, db = data.store, data.db
    registry = build_registry()
    services = build_services(Settings(), store)
    app = serving_app(Settings(), store, registry=registry)
    print(
        f"{size:>7} documents beside {SMALL} (loaded in {data.load_seconds:.1f} s); median / p95 ms"
        f" ({load_average()})"
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
            headers = {
                "Authorization": f"Bearer {tenant['apiKey']}",
                "X-Service-Org-Id": tenant["orgId"],
            }

            async def graph(headers: dict[str, str] = headers) -> None:
                response = await http.post(
                    "/v1/graphql", json={"query": DASHBOARD}, headers=headers
                )
                assert "errors" not in response.json(), response.text[:300]

            median, p95 = await timed(runs, graph)
            print(f"    {'GraphQL dashboard':28} {median:8.1f} / {p95:7.1f}")
        for call, (slug, body) in CALLS.items():

            async def run(
                slug: str = slug, body: dict[str, Any] = body, who: Credentials = credentials
            ) -> None:
                await invoke(registry, slug, body, who, services)

            median, p95 = await timed(runs, run)
            print(f"    {call:28} {median:8.1f} / {p95:7.1f}")
        print(f"    ({load_average()})")


if __name__ == "__main__":
    run_sizes(__doc__, measure, sizes=[1_000, 5_000], runs=7)
