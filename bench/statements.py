"""statements.import: how long reading and importing a statement takes, per format.

Generates one statement of ``--lines`` transactions in each format (CSV in the German layout,
MT940, CAMT.053, OFX 1.x), then prints, as medians of ``--runs`` runs in a varied order:
- reading the file (``engines.statements.read_statement``, what runs off the event loop);
- importing it end to end through REST on the embedded store (SecantusDB over the wire, a fresh
  database each run), and importing it again (every line already there: the idempotent path).

    .venv/bin/python bench/statements.py [--lines 20000] [--runs 3]
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import random
import statistics
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import httpx

from app.host.config import Settings
from bench.harness import discard, load_average, serving_app
from domain.transactions import MAX_STATEMENT_LINES
from engines.statements import read_statement
from persistence.client import connect
from persistence.embedded import EmbeddedServer
from persistence.store import Store
from resolvers.services.auth import accounts
from tests.statements.generated import FORMATS, rows_of


async def import_twice(uri: str, data: bytes) -> tuple[float, float, int]:
    """Seconds for the first import and the second, and how many the first added."""
    mongo, db = connect(uri, f"bench_{uuid.uuid4().hex[:8]}")
    store = Store(db)
    await store.ensure_indexes()
    created = await accounts.bootstrap(store, "bench@example.com", "Bench")
    headers = {"Authorization": f"Bearer {created['apiKey']}", "X-Service-Org-Id": created["orgId"]}
    body = {"fileName": "statement", "base64Data": base64.b64encode(data).decode()}
    app = serving_app(Settings(), store)
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://bench.test", timeout=600
    ) as client:
        timings = []
        added = 0
        for _ in range(2):
            began = time.perf_counter()
            response = await client.post(
                "/v1/capabilities/statements.import", json=body, headers=headers
            )
            timings.append(time.perf_counter() - began)
            assert response.status_code == 200, response.text[:300]
            added = added or response.json()["data"]["result"]["added"]
    await mongo.drop_database(db.name)
    mongo.close()
    return timings[0], timings[1], added


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lines", type=int, default=MAX_STATEMENT_LINES)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    rows = rows_of(args.lines, seed=42)
    files = {name: make(rows) for name, make in FORMATS.items()}
    print(f"statements of {args.lines:,} lines, {args.runs} runs, [{load_average()}]")
    reads: dict[str, list[float]] = {name: [] for name in files}
    first: dict[str, list[float]] = {name: [] for name in files}
    again: dict[str, list[float]] = {name: [] for name in files}
    order = list(files)
    server = EmbeddedServer(storage=":memory:").start()
    try:
        for run in range(args.runs):
            random.Random(run).shuffle(order)  # no format always first (warm caches)
            for name in order:
                began = time.perf_counter()
                read = read_statement(files[name], max_lines=args.lines)
                reads[name].append(time.perf_counter() - began)
                assert len(read.statement.lines) == args.lines
                once, twice, added = asyncio.run(import_twice(server.uri, files[name]))
                assert added == args.lines, (name, added)
                first[name].append(once)
                again[name].append(twice)
    finally:
        discard(server)
    for name in FORMATS:
        size = len(files[name]) / 1_000_000
        print(
            f"{name:8} {size:5.1f} MB: read {statistics.median(reads[name]) * 1000:7.0f} ms, "
            f"import {statistics.median(first[name]) * 1000:7.0f} ms, "
            f"again {statistics.median(again[name]) * 1000:7.0f} ms (median)"
        )
    print(f"[{load_average()}]")


if __name__ == "__main__":
    main()
