"""What the full REST stack costs over a bare Starlette handler doing the same store read.

Both apps run in-process behind httpx's ASGI transport against one embedded SecantusDB, so the
difference is fincap's own work: request id middleware, key hashing and lookup, membership
check, input and output validation, the envelope. Prints medians of several runs and the ratio.

It also times the same stack with billing's API-call metering switched off (the tally in
``invoke()`` replaced by a no-op; the metered run flushes its tally every second, as a server
does every ``FINCAP_USAGE_FLUSH_SECONDS``), and the tally's own cost per call.

    .venv/bin/python bench/rest_overhead.py [--calls 300] [--runs 5]
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import statistics
import sys
import time
import timeit
from datetime import date
from pathlib import Path

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.config import Settings
from app.main import create_app
from persistence.client import connect
from persistence.embedded import EmbeddedServer
from persistence.store import Store
from resolvers import accounts
from resolvers.usage_meter import ApiCallMeter, flushing


class NoMeter(ApiCallMeter):
    """Counts nothing: the stack without billing's metering, for comparison."""

    def count(self, workspace_id: str) -> None:
        return None


def bare_app(store: Store, user_id: str) -> Starlette:
    async def handler(request: Request) -> JSONResponse:
        rows = await store.workspaces.list_for_user(user_id)
        return JSONResponse({"workspaces": [{"id": r["_id"], "name": r["name"]} for r in rows]})

    return Starlette(routes=[Route("/bare", handler, methods=["POST"])])


async def time_calls(
    client: httpx.AsyncClient, path: str, headers: dict[str, str], calls: int
) -> float:
    """Median milliseconds of ``calls`` sequential POSTs."""
    samples = []
    for _ in range(calls):
        started = time.perf_counter()
        response = await client.post(path, json={}, headers=headers)
        samples.append((time.perf_counter() - started) * 1000)
        assert response.status_code == 200, response.text
    return statistics.median(samples)


async def main(calls: int, runs: int) -> None:
    server = EmbeddedServer(storage=":memory:").start()
    try:
        motor_client, db = connect(server.uri, "bench")
        store = Store(db)
        await store.ensure_indexes()
        tenant = await accounts.bootstrap(store, "bench@example.com", "Bench")
        metered_app = create_app(Settings(), store=store)
        meter = metered_app.state.services.api_calls
        full = httpx.AsyncClient(
            transport=httpx.ASGITransport(app=metered_app), base_url="http://fincap.bench"
        )
        unmetered_app = create_app(Settings(), store=store)
        unmetered_app.state.services = dataclasses.replace(
            unmetered_app.state.services, api_calls=NoMeter()
        )
        unmetered = httpx.AsyncClient(
            transport=httpx.ASGITransport(app=unmetered_app), base_url="http://fincap.bench"
        )
        bare = httpx.AsyncClient(
            transport=httpx.ASGITransport(app=bare_app(store, tenant["userId"])),
            base_url="http://bare.bench",
        )
        headers = {
            "Authorization": f"Bearer {tenant['apiKey']}",
            "X-Service-Org-Id": tenant["orgId"],
        }
        await time_calls(full, "/v1/capabilities/workspaces.list", headers, 20)  # warm-up
        await time_calls(bare, "/bare", {}, 20)
        await time_calls(unmetered, "/v1/capabilities/workspaces.list", headers, 20)
        full_runs, bare_runs, unmetered_runs = [], [], []
        path = "/v1/capabilities/workspaces.list"
        async with flushing(meter, store.usage, 1.0):
            for _ in range(runs):
                full_runs.append(await time_calls(full, path, headers, calls))
                unmetered_runs.append(await time_calls(unmetered, path, headers, calls))
                bare_runs.append(await time_calls(bare, "/bare", {}, calls))
        full_ms, bare_ms = statistics.median(full_runs), statistics.median(bare_runs)
        unmetered_ms = statistics.median(unmetered_runs)
        print(
            f"workspaces.list full stack : {full_ms:7.3f} ms "
            f"(median of {runs} runs × {calls} calls)"
        )
        print(f"  … API calls not metered  : {unmetered_ms:7.3f} ms")
        print(f"bare Starlette, same read  : {bare_ms:7.3f} ms")
        print(f"ratio full / bare          : {full_ms / bare_ms:7.2f}×")
        tally = ApiCallMeter()
        per_call = min(timeit.repeat(lambda: tally.count("org_bench"), number=100_000, repeat=5))
        print(f"API-call tally per call    : {per_call / 100_000 * 1e6:7.3f} µs")
        counted = (await store.usage.totals(tenant["orgId"], date.min, date.max))["apiCalls"]
        print(f"API calls written to usage : {counted} (flushed every second)")
        await unmetered.aclose()
        await full.aclose()
        await bare.aclose()
        motor_client.close()
    finally:
        server.stop()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--runs", type=int, default=5)
    options = parser.parse_args()
    asyncio.run(main(options.calls, options.runs))
