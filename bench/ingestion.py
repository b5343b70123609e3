"""Ingestion with many documents stored against an empty store: the pipeline's own work per
document, on the embedded store (SecantusDB).

Two databases share one embedded server: a workspace holding ``--stored`` demo documents and an
empty one. The same ``--documents`` new documents are ingested into each, alternately (so both
see the same machine load), through the service's own path: ``pipeline.receive`` (original in
GridFS, the document, its activity item, its job, the rollup rows), then a worker's
``run_one``: the job's claim, ``pipeline.process_document`` (read the original, preferences,
analysis, conversion, the duplicate check, the fields saved with their rollup rows moved, the
outcome) and the job's completion. The full store also holds one finished job per stored
document, as a store that ingested them would. Analysis is replaced by a constant-time function
returning demo fields (OCR is measured by ``bench/extraction.py``).

Printed: median and p95 ms per document for receive and for the worker's run, the commands
each sent, documents per minute per worker, and the ratio of the full store to the empty one.

    .venv/bin/python bench/ingestion.py [--stored 20000] [--documents 40]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from collections.abc import Mapping
from contextlib import AsyncExitStack
from datetime import date
from pathlib import Path
from typing import Any

from pymongo import monitoring

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.host.config import Settings
from app.host.services import build_services
from app.host.workers import WorkerPool
from bench.harness import Loaded, Workspace, discard, load_average, loaded, percentile
from engines.analysis import Analysis
from engines.demo import demo_documents
from engines.extraction.fields.field_types import ParsedFields
from engines.extraction.fields.scoring import FieldEvidence
from persistence.embedded import EmbeddedServer
from persistence.ids import utcnow
from resolvers import build_job_kinds
from resolvers.services.processing import pipeline
from resolvers.services.processing.analyzer import Analyzer

SURE = FieldEvidence(confidence=0.99)


class CommandCounter(monitoring.CommandListener):
    def __init__(self) -> None:
        self.count = 0

    def started(self, event: monitoring.CommandStartedEvent) -> None:
        self.count += 1

    def succeeded(self, event: monitoring.CommandSucceededEvent) -> None:
        pass

    def failed(self, event: monitoring.CommandFailedEvent) -> None:
        pass


def analysis_of(fields: Mapping[str, Any]) -> Analysis:
    """What the engines would have read from a document with these demo ``fields``."""
    doc_date = fields.get("docDate")
    return Analysis(
        fields=ParsedFields(
            merchant=fields.get("merchant"),
            doc_date=doc_date if isinstance(doc_date, date) else None,
            amount=fields.get("amount"),
            subtotal=fields.get("subtotal"),
            tax_amount=fields.get("taxAmount"),
            currency=fields.get("currency"),
            invoice_id=fields.get("invoiceId"),
            doc_type=fields.get("docType") or "receipt",
            summary=fields.get("summary") or "",
            evidence={"amount": SURE, "doc_date": SURE, "merchant": SURE},
        ),
        category=fields.get("category"),
        category_confidence=0.9,
        engine="bench",
        ocr_used=False,
        page_count=1,
        pages_read=1,
        text="",
    )


class Ingest:
    """One database and its workspace, ingesting documents one at a time."""

    def __init__(self, data: Loaded, counter: CommandCounter, analyses: dict[bytes, Any]):
        self.data = data
        self.counter = counter
        self.workspace_id = data.tenants[0]["orgId"]

        def analyze(raw: bytes, mime: str, **hints: Any) -> Analysis:
            return analyses[raw]

        services = build_services(Settings(), data.store, analyzer=Analyzer(function=analyze))
        self.services = services
        self.worker = WorkerPool(services, build_job_kinds())
        self.receive_ms: list[float] = []
        self.process_ms: list[float] = []
        self.commands: list[int] = []
        self.statuses: dict[str, int] = {}

    async def one(self, raw: bytes) -> None:
        self.counter.count = 0
        begin = time.perf_counter()
        document_id, _ = await pipeline.receive(
            self.services,
            self.workspace_id,
            data=raw,
            file_name="receipt.pdf",
            mime_type="application/pdf",
            source="upload",
            details={},
        )
        received = time.perf_counter()
        assert await self.worker.run_one("bench"), "the document's job was not claimed"
        done = time.perf_counter()
        self.receive_ms.append((received - begin) * 1000)
        self.process_ms.append((done - received) * 1000)
        self.commands.append(self.counter.count)
        record = await self.data.store.documents.reads.get(self.workspace_id, document_id) or {}
        status = str(record.get("processingStatus"))
        self.statuses[status] = self.statuses.get(status, 0) + 1

    def report(self, label: str) -> float:
        totals = [r + p for r, p in zip(self.receive_ms, self.process_ms, strict=True)]
        total = statistics.median(totals)
        print(
            f"  {label:22} receive {statistics.median(self.receive_ms):6.1f} / "
            f"{percentile(self.receive_ms, 0.95):6.1f}  process "
            f"{statistics.median(self.process_ms):6.1f} / {percentile(self.process_ms, 0.95):6.1f}"
            f"  total {total:6.1f} / {percentile(totals, 0.95):6.1f} ms  "
            f"({statistics.median(self.commands):.0f} commands, "
            f"{60_000 / total:.0f} documents/min per worker)  {self.statuses}"
        )
        return total


async def finished_jobs(data: Loaded, count: int) -> None:
    """One finished ``process-document`` job per stored document."""
    now = utcnow()
    workspace_id = data.tenants[0]["orgId"]
    for start in range(0, count, 1000):
        await data.db["jobs"].insert_many(
            [
                {
                    "_id": f"job_done{n}",
                    "workspaceId": workspace_id,
                    "kind": pipeline.PROCESS_DOCUMENT,
                    "payload": {"documentId": f"doc_done{n}", "activityId": f"act_done{n}"},
                    "status": "done",
                    "attempts": 1,
                    "maxAttempts": 5,
                    "runAfter": now,
                    "leaseOwner": None,
                    "leaseUntil": None,
                    "lastError": None,
                    "createdAt": now,
                    "updatedAt": now,
                }
                for n in range(start, min(count, start + 1000))
            ]
        )


async def main(stored: int, documents: int) -> None:
    fields = demo_documents(documents + 1, seed=7)
    analyses = {f"bench document {i}".encode(): analysis_of(f) for i, f in enumerate(fields)}
    warm_up, *measured = analyses
    server = EmbeddedServer(storage=":memory:").start()
    try:
        async with AsyncExitStack() as stack:
            sides: list[tuple[str, Ingest]] = []
            for size in (0, stored):
                counter = CommandCounter()
                data = await stack.enter_async_context(
                    loaded(
                        server,
                        f"ingest_{size}",
                        [Workspace("ingest@example.com", "Ingest", size)],
                        [counter],
                    )
                )
                await finished_jobs(data, size)
                sides.append((f"{size} documents stored", Ingest(data, counter, analyses)))
            print(
                f"{documents} documents ingested beside {stored} stored (loaded in "
                f"{sides[1][1].data.load_seconds:.0f} s) and into an empty store, alternately; "
                f"median / p95 ({load_average()})"
            )
            # Warm-up: imports, the rate book, the first GridFS bucket.
            for _, side in sides:
                await side.one(warm_up)
                side.receive_ms.clear(), side.process_ms.clear(), side.commands.clear()
                side.statuses.clear()
            for index, raw in enumerate(measured):
                order = sides if index % 2 == 0 else sides[::-1]
                for _, side in order:
                    await side.one(raw)
            empty, full = (side.report(label) for label, side in sides)
            print(f"  ratio full / empty (median total): {full / empty:.2f} ({load_average()})")
    finally:
        discard(server)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--stored", type=int, default=20_000)
    parser.add_argument("--documents", type=int, default=40)
    options = parser.parse_args()
    asyncio.run(main(options.stored, options.documents))
