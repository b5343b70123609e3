"""documents.count (groupBy month) and a filtered, sorted documents.search at 10k and 100k
documents on the embedded store (SecantusDB), and how many documents each moved into the app.

"Moved" counts the documents in the server's replies to find/aggregate/getMore, observed with
pymongo command monitoring: count should move only its group rows, search only its page.

    .venv/bin/python bench/documents.py [--sizes 10000 100000] [--runs 5]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from pymongo import monitoring

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from persistence.client import connect
from persistence.embedded import EmbeddedServer
from persistence.store import Store
from resolvers import accounts, build_registry
from resolvers.context import Credentials, Services
from resolvers.invoke import invoke


class ReplyCounter(monitoring.CommandListener):
    """Counts documents the server sends back for reads."""

    def __init__(self) -> None:
        self.documents = 0

    def started(self, event: monitoring.CommandStartedEvent) -> None:
        pass

    def succeeded(self, event: monitoring.CommandSucceededEvent) -> None:
        cursor = event.reply.get("cursor") if isinstance(event.reply, dict) else None
        if event.command_name in ("find", "aggregate", "getMore") and cursor:
            self.documents += len(cursor.get("firstBatch", cursor.get("nextBatch", [])))

    def failed(self, event: monitoring.CommandFailedEvent) -> None:
        pass


COUNT_BODY: dict[str, Any] = {"groupBy": "month"}
SEARCH_BODY: dict[str, Any] = {
    "useSearch": False,
    "sortBy": "amount",
    "sortOrder": -1,
    "limit": 20,
    "where": {
        "conditions": [
            {"field": "currency", "op": "eq", "value": "EUR"},
            {"field": "docDate", "op": "gte", "value": "2025-06-01"},
        ]
    },
}


async def measure(size: int, runs: int, server: EmbeddedServer) -> None:
    counter = ReplyCounter()
    client, db = connect(server.uri, f"bench_{size}", event_listeners=[counter])
    store = Store(db)
    await client.drop_database(f"bench_{size}")
    await store.ensure_indexes()
    tenant = await accounts.bootstrap(store, "bench@example.com", "Bench")
    started = time.perf_counter()
    await accounts.load_demo(store, tenant["orgId"], size, seed=1)
    load_s = time.perf_counter() - started
    registry = build_registry()
    services = Services(store=store)
    credentials = Credentials(api_key=tenant["apiKey"], org_id=tenant["orgId"])

    async def timed(slug: str, body: dict[str, Any]) -> tuple[float, int]:
        samples, moved = [], 0
        for _ in range(runs):
            counter.documents = 0
            begin = time.perf_counter()
            await invoke(registry, slug, body, credentials, services)
            samples.append((time.perf_counter() - begin) * 1000)
            moved = counter.documents
        return statistics.median(samples), moved

    count_ms, count_moved = await timed("documents.count", COUNT_BODY)
    search_ms, search_moved = await timed("documents.search", SEARCH_BODY)
    print(f"{size:>7} docs (loaded in {load_s:5.1f} s)")
    print(
        f"  documents.count groupBy month : {count_ms:8.1f} ms median, "
        f"{count_moved} documents moved (group rows: 1 facet result)"
    )
    print(
        f"  documents.search filter+sort  : {search_ms:8.1f} ms median, "
        f"{search_moved} documents moved (page of {SEARCH_BODY['limit']} + 1 look-ahead, "
        f"+ auth reads)"
    )
    await client.drop_database(f"bench_{size}")
    client.close()


async def main(sizes: list[int], runs: int) -> None:
    server = EmbeddedServer(storage=":memory:").start()
    try:
        for size in sizes:
            await measure(size, runs, server)
    finally:
        server.stop()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--runs", type=int, default=5)
    options = parser.parse_args()
    asyncio.run(main(options.sizes, options.runs))
