"""What the full REST stack costs over a bare Starlette handler doing the same store read.

Both apps run in-process behind httpx's ASGI transport against one embedded SecantusDB, so the
difference is fincap's own work: request id middleware, key hashing and lookup, membership
check, input and output validation, the envelope. Prints medians of several runs and the ratio.

It also times the same stack with billing's API-call metering switched off (the tally in
``invoke()`` replaced by a no-op; the metered run flushes its tally every second, as a server
does every ``FINCAP_USAGE_FLUSH_SECONDS``), and the tally's own cost per call.

Last, what a write pays for never trusting the auth cache: ``authorize()`` as a read does it
(credential and membership from the cache) and as a write does it (both read from the store).

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

from app.host.config import Settings
from bench.harness import discard, load_average, percentile, serving_app
from persistence.client import connect
from persistence.embedded import EmbeddedServer
from persistence.store import Store
from resolvers.framework.context import Credentials
from resolvers.framework.invoke import authorize
from resolvers.framework.services import Services
from resolvers.framework.usage_meter import ApiCallMeter, flushing
from resolvers.services.auth import accounts


class NoMeter(ApiCallMeter):
    """Counts nothing: the stack without billing's metering, for comparison."""

    def count(self, workspace_id: str) -> None:
        return None


def bare_app(store: Store, user_id: str) -> Starlette:
    async def handler(request: Request) -> JSONResponse:
        rows = await store.workspaces.list_for_user(user_id)
        return JSONResponse({"workspaces": [{"id": r["_id"], "name": r["name"]} for r in rows]})

    return Starlette(routes=[Route("/bare", handler, methods=["POST"])])


Stack = tuple[httpx.AsyncClient, str, dict[str, str]]


async def time_calls(stacks: list[Stack], calls: int) -> list[list[float]]:
    """Milliseconds of ``calls`` sequential POSTs to each stack, taken in turns (one call to
    each, then the next round), so a change of the machine's load hits all alike."""
    samples: list[list[float]] = [[] for _ in stacks]
    for _ in range(calls):
        for (client, path, headers), taken in zip(stacks, samples, strict=True):
            started = time.perf_counter()
            response = await client.post(path, json={}, headers=headers)
            taken.append((time.perf_counter() - started) * 1000)
            assert response.status_code == 200, response.text
    return samples


async def time_authorize(
    services: Services, headers: dict[str, str], org_id: str, calls: int, runs: int
) -> None:
    """Median µs of ``authorize()`` with the cache (a read) and from the store (a write)."""
    credentials = Credentials(
        api_key=headers["Authorization"].removeprefix("Bearer "), org_id=org_id
    )
    medians: dict[bool, list[float]] = {False: [], True: []}
    for _ in range(runs):
        for fresh in (False, True):
            taken = []
            for _ in range(calls):
                started = time.perf_counter()
                await authorize(credentials, services, (), needs_workspace=True, fresh=fresh)
                taken.append((time.perf_counter() - started) * 1e6)
            medians[fresh].append(statistics.median(taken))
    cached, fresh = (statistics.median(medians[flag]) for flag in (False, True))
    print(f"authorize, cached (a read) : {cached:7.1f} µs")
    print(
        f"authorize, fresh (a write) : {fresh:7.1f} µs  (+{(fresh - cached) / 1000:.3f} ms per "
        f"write; {load_average()})"
    )


async def main(calls: int, runs: int) -> None:
    server = EmbeddedServer(storage=":memory:").start()
    try:
        motor_client, db = connect(server.uri, "bench")
        store = Store(db)
        await store.ensure_indexes()
        tenant = await accounts.bootstrap(store, "bench@example.com", "Bench")
        metered_app = serving_app(Settings(), store)
        meter = metered_app.state.services.api_calls
        full = httpx.AsyncClient(
            transport=httpx.ASGITransport(app=metered_app), base_url="http://fincap.bench"
        )
        unmetered_app = serving_app(Settings(), store)
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
        path = "/v1/capabilities/workspaces.list"
        stacks: list[Stack] = [
            (full, path, headers),
            (unmetered, path, headers),
            (bare, "/bare", {}),
        ]
        await time_calls(stacks, 20)  # warm-up
        medians: list[list[float]] = [[], [], []]  # per stack, one median per run
        every: list[list[float]] = [[], [], []]  # per stack, every call
        async with flushing(meter, store.usage, 1.0):
            for _ in range(runs):
                for stack, taken in enumerate(await time_calls(stacks, calls)):
                    medians[stack].append(statistics.median(taken))
                    every[stack] += taken
        full_ms, unmetered_ms, bare_ms = (statistics.median(m) for m in medians)
        full_p95, unmetered_p95, bare_p95 = (percentile(e, 0.95) for e in every)
        print(
            f"workspaces.list full stack : {full_ms:7.3f} ms, p95 {full_p95:.3f} "
            f"(median of {runs} runs × {calls} calls)"
        )
        print(f"  … API calls not metered  : {unmetered_ms:7.3f} ms, p95 {unmetered_p95:.3f}")
        print(f"bare Starlette, same read  : {bare_ms:7.3f} ms, p95 {bare_p95:.3f}")
        print(f"ratio full / bare          : {full_ms / bare_ms:7.2f}×  ({load_average()})")
        tally = ApiCallMeter()
        per_call = min(timeit.repeat(lambda: tally.count("org_bench"), number=100_000, repeat=5))
        print(f"API-call tally per call    : {per_call / 100_000 * 1e6:7.3f} µs")
        counted = (await store.usage.totals(tenant["orgId"], date.min, date.max))["apiCalls"]
        print(f"API calls written to usage : {counted} (flushed every second)")
        await time_authorize(metered_app.state.services, headers, tenant["orgId"], calls, runs)
        await unmetered.aclose()
        await full.aclose()
        await bare.aclose()
        motor_client.close()
    finally:
        discard(server)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--runs", type=int, default=5)
    options = parser.parse_args()
    asyncio.run(main(options.calls, options.runs))
