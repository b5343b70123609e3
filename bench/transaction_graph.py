"""The transaction graph on the embedded store: the connection, the totals and the links, each
against what REST needs for the same answer.

One workspace of generated bank transactions (a year, three currencies, money out and in,
``--matched`` of the payments matched to ``--documents`` demo documents) on the embedded store
(SecantusDB over the MongoDB wire protocol), the service in-process behind httpx's ASGI
transport, one API key.

- connection: ``workspace { transactions }`` — the 20 newest unmatched payments with
  ``totalCount`` — against REST ``transactions.search`` (the same where, limit 20) followed
  by ``transactions.count``: the ratio GraphQL / REST.
- totals: ``transactionTotals(groupBy: [MONTH])`` over the year (one aggregation: spent,
  receipted, missing, received per month and currency) against REST ``transactions.count``
  (one aggregation: debits and credits per currency): the ratio, and the ms.
- links: a page of 50 transactions selecting their matched ``documents`` (one batched read
  of documents) against the same page without them: the ratio.

Each figure is the median of ``--runs`` runs (each the median of ``--calls`` interleaved
calls after a warm-up, ``bench.graphql_graph.pair``); every run measures the pairs in another
order, and a ratio is also given as the median of the interleaved calls' ratios ("paired").
``uptime`` is printed before, beside every figure, and after.

    .venv/bin/python bench/transaction_graph.py [--transactions 10000] [--documents 2000]
        [--runs 5] [--calls 7] [--matched 0.6]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import random
import statistics
import sys
import time
import uuid
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx

# Run as a script, sys.path[0] is bench/, where this file would shadow the graphql package.
sys.path[0] = str(Path(__file__).resolve().parent.parent)

from app.host.config import Settings
from bench.graphql_graph import _listed, pair, uptime
from bench.harness import Faces, bulk_load, discard, load_average, serving_app
from persistence.client import connect
from persistence.embedded import EmbeddedServer
from persistence.store import Store
from resolvers.services.auth import accounts

CONNECTION = """query($filter: TransactionFilter) { workspace {
  transactions(filter: $filter, first: 20) {
    totalCount nodes { id bookingDate amount currency counterparty matched } } } }"""
TOTALS = """{ workspace { transactionTotals(groupBy: [MONTH]) { totalCount groups {
  key { month currency } count spent { count sum } receipted { count sum }
  missing { count sum } received { count sum } } } } }"""
PAGE = """query($documents: Boolean!) { workspace { transactions(first: 50,
  filter: {matched: {eq: true}}) { nodes { id amount
    documents @include(if: $documents) { id merchant amount } } } } }"""
START = datetime(2025, 1, 1, tzinfo=UTC)


def transactions(count: int, matched: float, document_ids: list[str], seed: int) -> list[Any]:
    """``count`` stored transactions over a year; ``matched`` of the payments matched."""
    rng = random.Random(seed)
    rows = []
    for i in range(count):
        booked = START + timedelta(days=rng.randrange(365))
        outgoing = rng.random() < 0.85
        cents = rng.randrange(100, 50_000) * (-1 if outgoing else 1)
        paired = outgoing and rng.random() < matched
        rows.append(
            {
                "_id": f"txn_bench{i:06d}",
                "key": f"bench-{i}",
                "account": "DE00 0001",
                "bookingDate": booked,
                "valueDate": booked,
                "amount": cents,
                "currency": rng.choice(["EUR", "EUR", "EUR", "USD", "GBP"]),
                "counterparty": rng.choice(["Shell", "Lidl", "Cloud AG", "Taxi Hansa"]),
                "reference": None,
                "bank": {},
                "matched": paired,
                "matches": (
                    [{"documentIds": [rng.choice(document_ids)], "kind": "single"}]
                    if paired
                    else []
                ),
                "source": {
                    "format": "csv",
                    "fileName": "bench.csv",
                    "place": f"line {i + 2}",
                    "importedAt": START,
                },
                "editHistory": [],
            }
        )
    return rows


async def main(count: int, documents: int, runs: int, calls: int, matched: float) -> None:
    print(f"before: {uptime()}")
    server = EmbeddedServer(storage=":memory:").start()
    name = f"bench_txn_{uuid.uuid4().hex[:8]}"
    client, db = connect(server.uri, name)
    try:
        store = Store(db)
        await store.ensure_indexes()
        tenant = await accounts.bootstrap(store, "bench@example.com", "Bench")
        org = tenant["orgId"]
        await bulk_load(store, org, documents, seed=1)
        document_ids = [
            row["_id"]
            for row in await store.documents.collection.docs.find(
                {"workspaceId": org}, {"_id": 1}
            ).to_list(None)
        ]
        started = time.perf_counter()
        rows = transactions(count, matched, document_ids, 7)
        for at in range(0, len(rows), 1_000):
            await store.transactions.insert_new(org, rows[at : at + 1_000])
        print(f"loaded {count} transactions in {time.perf_counter() - started:.1f} s (seed 7)")
        headers = {"Authorization": f"Bearer {tenant['apiKey']}", "X-Service-Org-Id": org}
        app = serving_app(Settings(), store)
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://bench.test") as http:
            api = Faces(http, headers)
            gql, rest = api.gql, api.rest

            typed = {"amount": {"lt": "0"}, "matched": {"eq": False}}
            where = {
                "conditions": [
                    {"field": "amount", "op": "lt", "value": 0},
                    {"field": "matched", "op": "eq", "value": False},
                ]
            }
            page = await rest("transactions.search", {"limit": 20, "where": where})
            counted = await rest("transactions.count", {"where": where})
            connection = (await gql(CONNECTION, {"filter": typed}))["workspace"]["transactions"]
            assert [t["id"] for t in page["transactions"]] == [n["id"] for n in connection["nodes"]]
            assert counted["count"] == connection["totalCount"]
            totals = (await gql(TOTALS, {}))["workspace"]["transactionTotals"]
            everything = await rest("transactions.count", {})
            assert totals["totalCount"] == everything["count"] == count
            print(
                f"unmatched payments: {counted['count']}; totals: {len(totals['groups'])} "
                "groups; both agree with REST"
            )

            async def connection_call() -> None:
                await gql(CONNECTION, {"filter": typed})

            async def rest_pair() -> None:
                await rest("transactions.search", {"limit": 20, "where": where})
                await rest("transactions.count", {"where": where})

            async def totals_call() -> None:
                await gql(TOTALS, {})

            async def count_call() -> None:
                await rest("transactions.count", {})

            async def with_documents() -> None:
                await gql(PAGE, {"documents": True})

            async def without_documents() -> None:
                await gql(PAGE, {"documents": False})

            pairs: dict[str, tuple[Callable[[], Awaitable[None]], ...]] = {
                "connection": (connection_call, rest_pair),
                "totals": (totals_call, count_call),
                "links": (with_documents, without_documents),
            }
            medians: dict[str, tuple[list[float], list[float]]] = {n: ([], []) for n in pairs}
            ratios: dict[str, list[float]] = {n: [] for n in pairs}
            orders = list(itertools.permutations(pairs))
            random.Random(42).shuffle(orders)
            for run in range(runs):
                order = orders[run % len(orders)]
                print(f"run {run + 1}: {', '.join(order)} ({load_average()})", flush=True)
                for pair_name in order:
                    first, second = pairs[pair_name]
                    a, b = await pair(run, first, second, (calls, calls))
                    medians[pair_name][0].append(statistics.median(a))
                    medians[pair_name][1].append(statistics.median(b))
                    ratios[pair_name] += [x / y for x, y in zip(a, b, strict=False)]
            labels = {
                "connection": ("GraphQL connection (20, totalCount)", "REST search+count"),
                "totals": ("transactionTotals by MONTH", "REST transactions.count"),
                "links": ("page of 50 with documents", "the same page without"),
            }
            for pair_name, (first_label, second_label) in labels.items():
                a_runs, b_runs = medians[pair_name]
                a_ms, b_ms = statistics.median(a_runs), statistics.median(b_runs)
                print(
                    f"{pair_name}: {first_label} {a_ms:.1f} ms, {second_label} {b_ms:.1f} ms, "
                    f"ratio {a_ms / b_ms:.2f}x, paired "
                    f"{statistics.median(ratios[pair_name]):.2f}x [{uptime()}]"
                )
                print(f"  runs {_listed(a_runs)}; {_listed(b_runs)}")
    finally:
        await client.drop_database(name)
        client.close()
        discard(server)
    print(f"after: {uptime()}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--transactions", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--calls", type=int, default=7)
    parser.add_argument("--documents", type=int, default=2_000)
    parser.add_argument("--matched", type=float, default=0.6)
    options = parser.parse_args()
    asyncio.run(
        main(options.transactions, options.documents, options.runs, options.calls, options.matched)
    )
