"""The GraphQL graph at 20k documents: the connection, a two-key aggregate and node(id:),
each against what REST needs for the same answer.

One workspace of demo documents (``bench.harness.bulk_load``) on the embedded store
(SecantusDB over the MongoDB wire protocol), the service in-process behind httpx's ASGI
transport, the same API key on both faces. With ``--served``, a ``fincap serve`` process over
the same store instead, called over TCP as a client elsewhere would: each call then carries
HTTP's own work (uvicorn, the socket) on both faces alike. With ``--also-served``, both: the
figures in process, then the same through a ``fincap serve`` process, on the one loaded store
(one load for the two; the test suite's tiny run does this).

- connection: ``documentsConnection`` — the 20 newest of a 3-field filter (docDate, category,
  amount) with ``totalCount`` — against REST ``documents.search`` (the same where, limit 20)
  followed by ``documents.count`` (the same where): the ratio GraphQL / REST.
- aggregate: ``documentsAggregate`` grouped by MONTH and CATEGORY over one year, median ms,
  twice: as a dashboard asks it (count, sums, converted sums: answered from the rollups) and
  forced onto the aggregation of the documents (the same query selecting ``min``/``max``,
  which no rollup row keeps). The two answers are checked equal before timing.
- node: ``node(id:)`` selecting the fields ``documents.get`` returns, against
  ``documents.get``: the ratio.

Each figure is the median of ``--runs`` runs (each the median of ``--calls`` calls after a
warm-up; ``--slow-calls`` for the forced aggregation, seconds a call). Every run measures the
three pairs in another order (the six orders in a seeded shuffle); within a pair the two
sides' calls are interleaved, which goes first alternating from call to call and run to run,
and a ratio is also given as the median of the ratios of interleaved calls ("paired"), the
figure a load that changes during the run moves least. ``uptime`` is printed before, beside
every figure, and after.

    .venv/bin/python bench/graphql_graph.py [--documents 20000] [--runs 5] [--calls 7]
        [--slow-calls 3] [--served | --also-served]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import httpx

# Run as a script, sys.path[0] is bench/, where this file would shadow the graphql package.
sys.path[0] = str(Path(__file__).resolve().parent.parent)

from app.host.config import Settings
from app.host.heap import frozen_start_up_heap
from bench.harness import Faces, bulk_load, discard, load_average, serving_app
from persistence.client import connect
from persistence.embedded import EmbeddedServer
from persistence.store import Store
from resolvers.services.auth import accounts
from tests.live import discard as live_discard
from tests.live import start_serve

CATEGORIES = ["Meals", "Travel", "Software"]
NODE_FIELDS = """id merchant amount currency preferredCurrency docDate category docType summary
  invoiceId receiptId paymentStatus paymentMethod taxAmount subtotal isRecurring entityId
  exportStatus source archived processingStatus createdAt updatedAt
  expenseLocation { primary { countryCode country city kind } }
  lineItems { description quantity unitPrice amount taxAmount }
  file { fileName mimeType size url } editHistory { field oldValue newValue via }"""
CONNECTION = """query($filter: DocumentFilter) {
  documentsConnection(filter: $filter, first: 20) {
    totalCount nodes { id merchant amount currency docDate category docType } } }"""
AGGREGATE = """query($filter: DocumentFilter) {
  documentsAggregate(filter: $filter, groupBy: [MONTH, CATEGORY]) {
    totalCount groupsTruncated groups { key { month category currency } count
      sum { amount taxAmount } avg { amount } converted { currency sum count unconverted } } } }"""
# The same, with what only the documents can answer: the aggregation path.
FORCED = AGGREGATE.replace("avg { amount }", "avg { amount } min { amount } max { amount }")
NODE = "query($id: ID!) { node(id: $id) { ... on Document { " + NODE_FIELDS + " } } }"


def uptime() -> str:
    found = subprocess.run(["uptime"], capture_output=True, text=True, check=False)
    return found.stdout.strip() or load_average()


async def timed(call: Callable[[], Awaitable[Any]]) -> float:
    started = time.perf_counter()
    await call()
    return (time.perf_counter() - started) * 1000


async def pair(
    run: int,
    first: Callable[[], Awaitable[Any]],
    second: Callable[[], Awaitable[Any]],
    calls: tuple[int, int],
) -> tuple[list[float], list[float]]:
    """The ms of each call of two, interleaved call by call (a load that changes during the
    run weighs on both alike), which goes first alternating from call to call and run to
    run; one warm-up each."""
    await first()
    await second()
    a: list[float] = []
    b: list[float] = []
    for i in range(max(calls)):
        sides = [(first, a, calls[0]), (second, b, calls[1])]
        if (run + i) % 2:
            sides.reverse()
        for call, samples, count in sides:
            if i < count:
                samples.append(await timed(call))
    return a, b


@contextlib.asynccontextmanager
async def service(
    server: EmbeddedServer, database: str, store: Store, served: bool
) -> AsyncIterator[httpx.AsyncClient]:
    """A client of the service over ``store``: in process behind httpx's ASGI transport, or
    (``served``) of a ``fincap serve`` process over the same database, through TCP."""
    if not served:
        transport = httpx.ASGITransport(app=serving_app(Settings(), store))
        # As `fincap serve` runs once started: the start-up heap out of the collector's passes.
        with frozen_start_up_heap():
            async with httpx.AsyncClient(transport=transport, base_url="http://bench.test") as http:
                yield http
        return
    with tempfile.TemporaryDirectory(prefix="fincap-bench-") as directory:
        env = {**os.environ, "MONGODB_URI": server.database_uri(database), "FINCAP_WORKERS": "0",
               "FINCAP_DATA_DIR": directory}  # fmt: skip
        command = [sys.executable, "-m", "app.cli", "serve"]
        running = start_serve(command, env, Path(directory) / "serve.log")
        try:
            async with httpx.AsyncClient(base_url=running.base, timeout=120) as http:
                yield http
        finally:
            # Killed, not stopped cleanly: nothing of its stop is measured, and its data
            # directory is thrown away (the database it used is dropped next).
            live_discard(running.process)


async def main(
    documents: int, runs: int, calls: int, slow_calls: int, served: bool, also_served: bool
) -> None:
    print(f"before: {uptime()}")
    server = EmbeddedServer(storage=":memory:").start()
    name = f"bench_graph_{uuid.uuid4().hex[:8]}"
    client, db = connect(server.uri, name)
    try:
        store = Store(db)
        await store.ensure_indexes()
        tenant = await accounts.bootstrap(store, "bench@example.com", "Bench")
        started = time.perf_counter()
        await bulk_load(store, tenant["orgId"], documents, seed=1)
        print(f"loaded {documents} documents in {time.perf_counter() - started:.1f} s")
        headers = {
            "Authorization": f"Bearer {tenant['apiKey']}",
            "X-Service-Org-Id": tenant["orgId"],
        }
        for over_tcp in (False, True) if also_served else (served,):
            print("service: " + ("fincap serve, over TCP" if over_tcp else "in process (ASGI)"))
            async with service(server, name, store, over_tcp) as http:
                await measure(http, headers, runs, calls, slow_calls)
    finally:
        await client.drop_database(name)
        client.close()
        discard(server)
    print(f"after: {uptime()}")


async def measure(
    http: httpx.AsyncClient, headers: dict[str, str], runs: int, calls: int, slow_calls: int
) -> None:
    """The three pairs, measured and printed, through ``http`` (in process or over TCP)."""
    year_ago = (date.today() - timedelta(days=365)).isoformat()
    typed = {
        "docDate": {"gte": year_ago},
        "category": {"in": CATEGORIES},
        "amount": {"gte": "10"},
    }
    where = {
        "conditions": [
            {"field": "docDate", "op": "gte", "value": year_ago},
            {"field": "category", "op": "in", "value": CATEGORIES},
            {"field": "amount", "op": "gte", "value": 10},
        ]
    }
    api = Faces(http, headers)
    gql, rest = api.gql, api.rest

    search = {"useSearch": False, "limit": 20, "where": where}
    page = await rest("documents.search", search)
    counted = await rest("documents.count", {"where": where})
    connection = (await gql(CONNECTION, {"filter": typed}))["documentsConnection"]
    assert [d["id"] for d in page["documents"]] == [n["id"] for n in connection["nodes"]]
    assert counted["count"] == connection["totalCount"]
    print(f"3-field filter matches {counted['count']} documents; page of 20 agrees")

    async def connection_call() -> None:
        await gql(CONNECTION, {"filter": typed})

    async def rest_pair() -> None:
        await rest("documents.search", search)
        await rest("documents.count", {"where": where})

    one_year = {"docDate": {"gte": year_ago}}
    groups = (await gql(AGGREGATE, {"filter": one_year}))["documentsAggregate"]
    forced = (await gql(FORCED, {"filter": one_year}))["documentsAggregate"]
    for group in forced["groups"]:
        del group["min"], group["max"]
    assert groups == forced, "rollups and aggregation disagree"
    print(
        f"aggregate answers agree (rollups = aggregation): {groups['totalCount']} "
        f"documents, {len(groups['groups'])} groups, truncated "
        f"{groups['groupsTruncated']}"
    )

    async def aggregate_call() -> None:
        await gql(AGGREGATE, {"filter": one_year})

    async def forced_call() -> None:
        await gql(FORCED, {"filter": one_year})

    document_id = page["documents"][0]["id"]

    async def node_call() -> None:
        found = await gql(NODE, {"id": document_id})
        assert found["node"]["id"] == document_id

    async def get_call() -> None:
        await rest("documents.get", {"id": document_id})

    pairs = {
        "connection": (connection_call, rest_pair, (calls, calls)),
        "aggregate": (aggregate_call, forced_call, (calls, slow_calls)),
        "node": (node_call, get_call, (calls, calls)),
    }
    # Per pair: each run's median of either side, and the ratio of every interleaved
    # call pair (its median is the figure least moved by a changing load).
    medians: dict[str, tuple[list[float], list[float]]] = {n: ([], []) for n in pairs}
    ratios: dict[str, list[float]] = {n: [] for n in pairs}
    # Every order of the three pairs in turn, from a shuffled start.
    orders = list(itertools.permutations(pairs))
    random.Random(37).shuffle(orders)
    for run in range(runs):
        order = orders[run % len(orders)]
        print(f"run {run + 1}: {', '.join(order)} ({load_average()})", flush=True)
        for name in order:
            first, second, counts = pairs[name]
            a, b = await pair(run, first, second, counts)
            medians[name][0].append(statistics.median(a))
            medians[name][1].append(statistics.median(b))
            ratios[name] += [x / y for x, y in zip(a, b, strict=False)]

    gql_runs, rest_runs = medians["connection"]
    gql_ms, rest_ms = statistics.median(gql_runs), statistics.median(rest_runs)
    print(
        f"connection (20 newest, 3-field filter, totalCount): GraphQL {gql_ms:.1f} ms, "
        f"REST search+count {rest_ms:.1f} ms, ratio {gql_ms / rest_ms:.2f}x, paired "
        f"{statistics.median(ratios['connection']):.2f}x [{uptime()}]"
    )
    print(f"  runs GraphQL {_listed(gql_runs)}; REST {_listed(rest_runs)}")
    fast_runs, slow_runs = medians["aggregate"]
    print(
        f"aggregate MONTH x CATEGORY, one year ({groups['totalCount']} documents, "
        f"{len(groups['groups'])} groups), rollups: {statistics.median(fast_runs):.1f} "
        f"ms median (runs {_listed(fast_runs)}) [{uptime()}]"
    )
    print(
        f"aggregate MONTH x CATEGORY, one year, forced aggregation (min/max selected): "
        f"{statistics.median(slow_runs):.1f} ms median (runs {_listed(slow_runs)}) "
        f"[{uptime()}]"
    )
    node_runs, get_runs = medians["node"]
    node_ms, get_ms = statistics.median(node_runs), statistics.median(get_runs)
    print(
        f"node(id:) {node_ms:.2f} ms vs documents.get {get_ms:.2f} ms, "
        f"ratio {node_ms / get_ms:.2f}x, paired "
        f"{statistics.median(ratios['node']):.2f}x [{uptime()}]"
    )
    print(f"  runs node {_listed(node_runs)}; get {_listed(get_runs)}")


def _listed(samples: list[float]) -> str:
    return ", ".join(f"{ms:.1f}" for ms in samples)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--documents", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--calls", type=int, default=7)
    parser.add_argument("--slow-calls", type=int, default=3)
    parser.add_argument(
        "--served", action="store_true", help="a fincap serve process, called over TCP"
    )
    parser.add_argument(
        "--also-served",
        action="store_true",
        help="in process, then through a fincap serve process, on the same loaded store",
    )
    options = parser.parse_args()
    asyncio.run(
        main(
            options.documents,
            options.runs,
            options.calls,
            options.slow_calls,
            options.served,
            options.also_served,
        )
    )
