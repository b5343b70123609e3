"""Upload → processed, through the whole service, per document.

    .venv/bin/python bench/extraction_pipeline.py [DATASET_DIR] [--limit 40] [--synthetic 20]
        [--in-thread]

Each document goes through ``files.upload`` on the ASGI app (validation, GridFS, document,
activity item, job) and is then processed by a worker with the production executor (a
process pool of one, forked from a preloaded forkserver: ``app.host.processing``, warmed up
first): read from GridFS, analysed in the worker
process, converted, checked for duplicates, saved. The store is an embedded SecantusDB over
TCP. Printed per folder: p50 / p95 wall seconds from the upload request to the processed
document, and the statuses. Queue waiting is left out (the worker runs the job as soon as
the upload answers; a polling worker adds up to its poll interval, 1 s by default).
``--in-thread`` analyses in a thread of this process instead (the smoke test's tiny run: no
process started; the figures are the production executor's without it).
Wall time: run it on a quiet machine; the load average is printed before and after.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import dataclasses
import os
import statistics
import sys
import time
from collections import Counter, defaultdict
from concurrent.futures import Executor, ProcessPoolExecutor, ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import httpx
from extraction_data import DEFAULT_DATASET, Sample, load_dev, synthetic_samples

from app.host.config import Settings
from app.host.processing import analysis_context
from app.host.workers import WorkerPool
from bench.harness import discard, serving_app
from engines.currency import default_rate_book
from persistence.client import connect
from persistence.embedded import EmbeddedServer
from persistence.store import Store
from resolvers import build_job_kinds, build_registry
from resolvers.services.auth import accounts
from resolvers.services.processing.analyzer import Analyzer


async def run(samples: list[Sample], in_thread: bool = False) -> None:
    server = EmbeddedServer(storage=":memory:").start()
    # ``in_thread``: the analysis in a thread of this process (the smoke test's tiny run: the
    # forkserver and its process cost ~2 CPU-s to start, importing the engines).
    executor: Executor = (
        ThreadPoolExecutor(max_workers=1, thread_name_prefix="extract")
        if in_thread
        else ProcessPoolExecutor(max_workers=1, mp_context=analysis_context())
    )
    try:
        client, db = connect(server.uri, "bench_pipeline")
        store = Store(db)
        await store.ensure_indexes()
        tenant = await accounts.bootstrap(store, "bench@example.com", "Bench")
        headers = {
            "Authorization": f"Bearer {tenant['apiKey']}",
            "X-Service-Org-Id": tenant["orgId"],
        }
        app = serving_app(Settings(), store, registry=build_registry())
        # The app's services with the production analyzer (the process pool) and rates.
        services = dataclasses.replace(
            app.state.services, analyzer=Analyzer(executor), rates=default_rate_book()
        )
        pool = WorkerPool(services, build_job_kinds(), count=1)
        async with httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url="http://fincap.bench"
        ) as http:

            async def process(sample: Sample) -> tuple[float, str]:
                started = time.perf_counter()
                response = await http.post(
                    "/v1/capabilities/files.upload",
                    json={
                        "fileName": sample.name,
                        "mimeType": sample.mime,
                        "base64Data": base64.b64encode(sample.data).decode(),
                    },
                    headers=headers,
                )
                response.raise_for_status()
                await pool.run_until_idle()
                elapsed = time.perf_counter() - started
                document_id = response.json()["data"]["result"]["documentId"]
                record = await store.documents.reads.get(tenant["orgId"], document_id)
                return elapsed, str((record or {}).get("processingStatus"))

            # Loads the OCR models and the brand list in the worker process.
            await process(samples[0])
            by_folder: dict[str, list[float]] = defaultdict(list)
            statuses: dict[str, Counter[str]] = defaultdict(Counter)
            for sample in samples:
                elapsed, status = await process(sample)
                by_folder[sample.folder].append(elapsed)
                statuses[sample.folder][status] += 1
        for folder, times in by_folder.items():
            ordered = sorted(times)
            p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
            print(
                f"  {folder:9} n={len(times):3}  upload→processed p50="
                f"{statistics.median(times):.2f}s p95={p95:.2f}s max={max(times):.2f}s  "
                f"{dict(statuses[folder])}"
            )
        client.close()
    finally:
        executor.shutdown(wait=True)
        discard(server)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dataset", nargs="?", type=Path, default=DEFAULT_DATASET)
    parser.add_argument(
        "--limit", type=int, default=40, help="documents per dev folder (0: synthetic ones only)"
    )
    parser.add_argument("--synthetic", type=int, default=20, help="generated invoice PDFs")
    parser.add_argument(
        "--in-thread",
        action="store_true",
        help="analyse in a thread instead of the production analysis process (the smoke test's "
        "tiny run: no process started)",
    )
    args = parser.parse_args()
    samples: list[Sample] = []
    for folder in ("sroie", "de", "invoices") if args.limit else ():
        samples.extend(load_dev(args.dataset, folder)[: args.limit])
    samples.extend(synthetic_samples(args.synthetic))
    print(f"load average before: {_load()}")
    asyncio.run(run(samples, args.in_thread))
    print(f"load average after: {_load()}")


def _load() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


if __name__ == "__main__":
    main()
