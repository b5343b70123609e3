"""Exports to Xero: preview latency, the approval gate's cost, and worker delivery per export.

Everything real but the provider: the app in-process behind httpx's ASGI transport, the
embedded MongoDB-wire server (originals in GridFS) reached over TCP, and the fake Xero of the
tests on a loopback socket (the fake answers in well under a millisecond, so the figures are
fincap's own work plus loopback HTTP). Per run:

- ``preview``: ``integrations.send`` with ``dryRun: true`` (load, map, one contact look-up);
- ``gate``: the same call with ``dryRun: false``, answered ``approval_required`` (preview plus
  storing the request);
- ``deliver``: a worker delivering queued exports (bill + attachment, two provider calls each),
  time per export.

Prints the median over runs of each per-call median (milliseconds).

    .venv/bin/python bench/exports.py [--documents 20] [--runs 3]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
import uuid
from pathlib import Path

import httpx

sys.path[0] = str(Path(__file__).resolve().parent.parent)


from app.host.services import build_services
from app.host.workers import WorkerPool
from bench.harness import discard, load_average, serving_app
from persistence.client import connect
from persistence.embedded import EmbeddedServer
from persistence.store import Store
from resolvers import build_job_kinds, build_registry
from tests.conftest import make_tenant
from tests.integrations.conftest import Api, add_document, fake_settings
from tests.integrations.fakes import FakeQuickBooks, FakeXero, serving


async def one_run(
    uri: str, xero: FakeXero, quickbooks: FakeQuickBooks, documents: int
) -> dict[str, float]:
    settings = fake_settings(xero, quickbooks)
    name = f"bench_{uuid.uuid4().hex[:8]}"
    client, db = connect(uri, name)
    store = Store(db)
    await store.ensure_indexes()
    tenant = await make_tenant(store, "bench@example.com", "Bench")
    for i in range(documents):
        await add_document(store, tenant, f"doc_{i}", receiptId=f"R-{i}")
    app = serving_app(settings, store, registry=build_registry())
    assert settings.secret_key is not None  # the app's keyring, so its tokens open here
    workers = WorkerPool(build_services(settings, store), build_job_kinds())
    transport = httpx.ASGITransport(app=app)
    figures: dict[str, float] = {}
    async with httpx.AsyncClient(transport=transport, base_url="http://fincap.test") as http:
        api = Api(http, tenant)
        await api.connect("xero")

        async def timed(body: dict[str, object]) -> float:
            started = time.perf_counter()
            await api.ok("integrations.send", body)
            return (time.perf_counter() - started) * 1000

        sends = [
            {"documentId": f"doc_{i}", "integrationId": "xero", "tenantId": "tenant-acme"}
            for i in range(documents)
        ]
        figures["preview"] = statistics.median([await timed(body) for body in sends])
        figures["gate"] = statistics.median(
            [await timed({**body, "dryRun": False}) for body in sends]
        )
        await api.ok("approvals.configure", {"capabilitySlug": "integrations.send", "gated": False})
        for body in sends:
            await api.ok("integrations.send", {**body, "dryRun": False})
        started = time.perf_counter()
        delivered = await workers.run_until_idle()
        figures["deliver"] = (time.perf_counter() - started) * 1000 / max(1, delivered)
        assert len(xero.bills) >= documents, "every export should have become one bill"
    await client.drop_database(name)
    client.close()
    return figures


async def main(documents: int, runs: int) -> None:
    server = EmbeddedServer(storage=":memory:").start()
    try:
        results: list[dict[str, float]] = []
        for _ in range(runs):
            with serving(FakeXero("xero")) as xero, serving(FakeQuickBooks("qb")) as qb:
                results.append(await one_run(server.uri, xero, qb, documents))  # type: ignore[arg-type]
    finally:
        discard(server)
    print(f"{documents} documents, {runs} runs (median of per-call medians, ms)")
    for key in ("preview", "gate", "deliver"):
        print(f"  {key:8s} {statistics.median(r[key] for r in results):8.1f}")
    print(f"  ({load_average()})")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--documents", type=int, default=20)
    parser.add_argument("--runs", type=int, default=3)
    options = parser.parse_args()
    asyncio.run(main(options.documents, options.runs))
