"""documents.count (groupBy month) and a filtered, sorted documents.search at 10k and 100k
documents on the embedded store (SecantusDB), and how many documents each moved into the app.

"Moved" counts the documents in the server's replies to find/aggregate/getMore, observed with
pymongo command monitoring: count should move only rollup rows (a count the documents answer:
one facet result), search only its page.

    .venv/bin/python bench/documents.py [--sizes 10000 100000] [--runs 5]
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path
from typing import Any

from pymongo import monitoring

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.host.config import Settings
from app.host.services import build_services
from bench.harness import Workspace, load_average, loaded, run_sizes
from persistence.embedded import EmbeddedServer
from resolvers import build_registry
from resolvers.framework.context import Credentials
from resolvers.framework.invoke import invoke


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
    workspace = Workspace("bench@example.com", "Bench", size)
    async with loaded(server, f"bench_{size}", [workspace], [counter]) as data:
        tenant = data.tenants[0]
        registry = build_registry()
        services = build_services(Settings(), data.store)
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
    print(f"{size:>7} docs (loaded in {data.load_seconds:5.1f} s)")
    print(
        f"  documents.count groupBy month : {count_ms:8.1f} ms median, "
        f"{count_moved} moved (rollup rows, added up in the app)"
    )
    print(
        f"  documents.search filter+sort  : {search_ms:8.1f} ms median, "
        f"{search_moved} documents moved (page of {SEARCH_BODY['limit']} + 1 look-ahead, "
        f"+ auth reads)"
    )
    print(f"  ({load_average()})")


if __name__ == "__main__":
    run_sizes(__doc__, measure, sizes=[10_000, 100_000], runs=5)
