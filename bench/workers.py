"""Many machines, measured on one: ``fincap worker`` processes and two ``fincap serve`` replicas
(``--replicas``; ``FINCAP_WORKERS=0``: they only answer) over one SecantusDB server run on a
port as the shared store, every process pointed at it with ``MONGODB_URI``, as a deployment
shares MongoDB.

The documents are synthetic invoice PDFs with a text layer (``tests/extraction/synthetic``),
each one different, uploaded through the replicas' REST API (``files.upload``, alternately). The
workers run the real pipeline on them, analysis included: the text layer and parsing in each
worker's analysis child, the rest (categorization, the duplicate check, the embedding when the
model is installed, the rollups) in the worker; no OCR (a photo costs 1-4 s of OCR more:
``bench/extraction.py``). The constant analysis of ``bench/ingestion.py`` cannot be used here:
it is a function inside the bench's own process, and these workers are separate programs.

For 1, 2 and 3 worker processes (each ``--concurrency 1``), started afresh and warmed up (until
each has processed a document: imports, its analysis child, the model):

- **throughput**: ``--documents`` uploads are queued while the workers are held (SIGSTOP), then
  the workers go on (SIGCONT) and are timed until the last document is processed: documents per
  minute, median of ``--runs`` runs, and the ratio to one worker. Beside it the replicas' upload
  rate (the same uploads, timed on their own) and the CPU time per document the store's process
  and the workers' processes (their analysis children included) spent meanwhile: where the time
  goes;
- **fairness**: workspace A uploads ``--backlog`` documents; once the workers are busy with them,
  workspace B uploads one: how long until B's is processed, how many of A's were processed
  meanwhile, and, for comparison, one document's time with the workers idle (a worker process polls
  every second, so that is part of it). Median of ``--runs`` runs.

The machine's load average is printed beside every figure: other work on the machine shares its
cores with the store, the replicas and the workers.

    .venv/bin/python bench/workers.py [--workers 1 2 3] [--documents 60] [--backlog 60] [--runs 3]
        [--replicas 2]
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import os
import secrets
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.harness import discard, load_average
from persistence.client import connect
from persistence.embedded import EmbeddedServer
from persistence.store import Store
from resolvers.services.processing.pipeline import TERMINAL
from tests.conftest import Tenant, make_tenant, spawn_worker
from tests.extraction.synthetic import GeneratedInvoice, generate
from tests.live import Process, Served, start_serve, stop
from tests.live import discard as discard_process
from tests.test_uploads_wire import upload

DATABASE = "bench_workers"
# Uploads in flight at once (over all replicas).
UPLOADS_AT_ONCE = 4
POLL_S = 0.05
DEADLINE_S = 900.0
# The log line a worker writes for each document it finishes
# (resolvers/services/processing/pipeline.py).
PROCESSED_LINE = b'"document processed"'


class Invoices:
    """Fresh synthetic invoices, never the same twice (a repeated file would be a duplicate)."""

    def __init__(self) -> None:
        self._seed = 29_000
        self._ready: list[GeneratedInvoice] = []

    def take(self, count: int) -> list[GeneratedInvoice]:
        while len(self._ready) < count:
            self._seed += 1
            self._ready.extend(generate(50, seed=self._seed))
        taken, self._ready = self._ready[:count], self._ready[count:]
        return taken


@dataclass
class Cluster:
    """The shared store, the API replicas and their clients, the workspaces."""

    store: Store
    server: EmbeddedServer
    replicas: list[httpx.AsyncClient]
    a: Tenant
    b: Tenant
    invoices: Invoices = field(default_factory=Invoices)
    workers: list[subprocess.Popen[bytes]] = field(default_factory=list)
    turn: int = 0

    async def upload(self, tenant: Tenant, invoices: Sequence[GeneratedInvoice]) -> list[str]:
        """Upload ``invoices`` through the replicas in turn; the new documents' ids."""
        gate = asyncio.Semaphore(UPLOADS_AT_ONCE)

        async def one(invoice: GeneratedInvoice, replica: httpx.AsyncClient) -> str:
            async with gate:
                accepted = await upload(replica, tenant, invoice.name, invoice.pdf, None)
                return str(accepted["documentId"])

        replicas = [
            self.replicas[(self.turn + n) % len(self.replicas)] for n in range(len(invoices))
        ]
        self.turn += len(invoices)
        return list(await asyncio.gather(*map(one, invoices, replicas)))

    @property
    def store_process(self) -> list[subprocess.Popen[bytes]]:
        """The store's process (its launcher; the server is its child)."""
        return [self.server.process] if self.server.process is not None else []

    async def finished(self, document_ids: Sequence[str]) -> int:
        return int(
            await self.store.db["documents"].count_documents(
                {"_id": {"$in": list(document_ids)}, "processingStatus": {"$in": sorted(TERMINAL)}}
            )
        )

    async def wait_processed(self, document_ids: Sequence[str]) -> None:
        deadline = time.monotonic() + DEADLINE_S
        while await self.finished(document_ids) < len(document_ids):
            if time.monotonic() > deadline:
                raise TimeoutError(f"documents not processed after {DEADLINE_S:.0f} s")
            await asyncio.sleep(POLL_S)


@contextlib.contextmanager
def replicas_running(server: EmbeddedServer, root: Path, count: int) -> Iterator[list[Served]]:
    """``count`` ``fincap serve`` processes over the shared store, no workers of their own.
    They start, and stop, side by side: one after the other, their starts (~8 s each on the
    shared machine) and their stops (~2.5 s each) added up to over half of a tiny run."""
    uri = server.database_uri(DATABASE)

    def start(n: int) -> Served:
        env = {
            **os.environ,
            "MONGODB_URI": uri,
            "FINCAP_WORKERS": "0",
            "FINCAP_DATA_DIR": str(root / f"replica{n}"),
        }
        command = [sys.executable, "-m", "app.cli", "serve"]
        return start_serve(command, env, root / f"replica{n}.log")

    with ThreadPoolExecutor(count) as pool:
        starting = [pool.submit(start, n) for n in range(count)]
        wait(starting)
    started = [f.result() for f in starting if f.exception() is None]
    try:
        for failed in starting:
            failed.result()  # the first start that failed, raised (the others stop below)
        yield started
    finally:
        # Killed, not stopped: they hold no data (the store is shared and thrown away next)
        # and nothing of their stop is measured; a clean stop took ~1-2.5 s each here.
        stop_all([served.process for served in started], clean=False)


def stop_all(processes: Sequence[Process], clean: bool = True) -> None:
    """Stop ``processes`` and their children side by side: cleanly (``tests.live.stop``), or
    killed (``tests.live.discard``) where what they would finish cleanly is thrown away."""
    with ThreadPoolExecutor(max(1, len(processes))) as pool:
        list(pool.map(stop if clean else discard_process, processes))


@contextlib.asynccontextmanager
async def workers_running(
    cluster: Cluster, count: int, root: Path, last: bool = False
) -> AsyncIterator[None]:
    """``count`` ``fincap worker`` processes, each warmed up by a document of its own.

    Stopped cleanly at the end, so that the next set starts from a queue no lease holds;
    killed where they are the ``last`` set: the store is thrown away next."""
    logs = [root / f"worker{count}-{n}.log" for n in range(count)]
    for log in logs:
        log.unlink(missing_ok=True)
    processes = [spawn_worker(cluster.server, cluster.store, lease_s=60, log=log) for log in logs]
    cluster.workers = processes
    try:
        for _ in range(10):
            if all(PROCESSED_LINE in log.read_bytes() for log in logs):
                break
            for process, log in zip(processes, logs, strict=True):
                if process.poll() is not None:  # it failed to start: say why, not wait
                    tail = log.read_bytes()[-2000:].decode(errors="replace")
                    raise RuntimeError(f"a worker exited ({process.returncode}): {tail}")
            await cluster.wait_processed(
                await cluster.upload(cluster.a, cluster.invoices.take(count))
            )
        else:
            raise RuntimeError(f"a worker processed nothing while warming up: {logs}")
        yield
    finally:
        stop_all(processes, clean=not last)


def cpu_seconds(processes: Sequence[subprocess.Popen[bytes]]) -> float:
    """User and system CPU seconds of ``processes`` and their children so far."""
    total = 0.0
    for process in processes:
        parent = psutil.Process(process.pid)
        for each in [parent, *parent.children(recursive=True)]:
            with contextlib.suppress(psutil.NoSuchProcess):
                times = each.cpu_times()
                total += times.user + times.system
    return total


@dataclass
class Run:
    processed_per_min: float
    uploads_per_min: float
    store_cpu_ms: float  # per document
    workers_cpu_ms: float  # per document


async def throughput(cluster: Cluster, documents: int) -> Run:
    """Documents per minute the workers process from a queue of ``documents``, uploads per
    minute the replicas took them in at, CPU per document of the store and of the workers."""
    batch = cluster.invoices.take(documents)
    for worker in cluster.workers:  # idle (the last batch is done): they hold no lease
        os.kill(worker.pid, signal.SIGSTOP)
    try:
        begin = time.perf_counter()
        ids = await cluster.upload(cluster.a, batch)
        uploaded = time.perf_counter() - begin
        store_before = cpu_seconds(cluster.store_process)
        workers_before = cpu_seconds(cluster.workers)
    finally:
        for worker in cluster.workers:
            os.kill(worker.pid, signal.SIGCONT)
    begin = time.perf_counter()
    await cluster.wait_processed(ids)
    elapsed = time.perf_counter() - begin
    return Run(
        documents / elapsed * 60,
        documents / uploaded * 60,
        (cpu_seconds(cluster.store_process) - store_before) / documents * 1000,
        (cpu_seconds(cluster.workers) - workers_before) / documents * 1000,
    )


async def one_alone(cluster: Cluster) -> float:
    """Seconds from B's upload to its document processed, the workers idle."""
    begin = time.perf_counter()
    await cluster.wait_processed(await cluster.upload(cluster.b, cluster.invoices.take(1)))
    return time.perf_counter() - begin


async def behind_a_backlog(cluster: Cluster, backlog: int) -> tuple[float, int]:
    """B's one upload behind A's ``backlog``: seconds until it is processed, and how many of A's
    were processed meanwhile (the ones in the workers' hands when it came, and any taken
    before it)."""
    queued = await cluster.upload(cluster.a, cluster.invoices.take(backlog))
    # The workers are busy with A's backlog (a job running) before B uploads.
    while not await cluster.store.db["jobs"].count_documents(
        {"workspaceId": cluster.a.org_id, "status": "running"}
    ):
        await asyncio.sleep(POLL_S)
    before = await cluster.finished(queued)
    begin = time.perf_counter()
    [upload_id] = await cluster.upload(cluster.b, cluster.invoices.take(1))
    await cluster.wait_processed([upload_id])
    waited = time.perf_counter() - begin
    ahead = await cluster.finished(queued) - before
    await cluster.wait_processed(queued)  # the backlog drains before the next run
    return waited, ahead


async def measure(options: argparse.Namespace, server: EmbeddedServer, root: Path) -> None:
    client, db = connect(server.uri, DATABASE)
    await client.drop_database(DATABASE)
    store = Store(db)
    await store.ensure_indexes()
    a = await make_tenant(store, "a@example.com", "Workspace A")
    b = await make_tenant(store, "b@example.com", "Workspace B")
    try:
        with replicas_running(server, root, options.replicas) as replicas:
            async with contextlib.AsyncExitStack() as stack:
                # A connection idle for a while is not reused: uvicorn closes one after 5 s, and
                # a request sent as it closes fails (httpx.ReadError, seen between two runs).
                limits = httpx.Limits(keepalive_expiry=2.0)
                clients = [
                    await stack.enter_async_context(
                        httpx.AsyncClient(base_url=r.base, timeout=120, limits=limits)
                    )
                    for r in replicas
                ]
                cluster = Cluster(store, server, clients, a, b)
                await report(cluster, options, root)
    finally:
        await client.drop_database(DATABASE)
        client.close()


async def report(cluster: Cluster, options: argparse.Namespace, root: Path) -> None:
    print(
        f"{options.replicas} fincap serve replica{'s' if options.replicas > 1 else ''} (no "
        f"workers) and N fincap worker processes "
        f"over one SecantusDB on a port; synthetic text-layer invoice PDFs, real analysis, no OCR; "
        f"median of {options.runs} runs ({load_average()})"
    )
    print(f"throughput: {options.documents} documents queued, then processed")
    first: float | None = None
    fairness: list[str] = []
    for n, count in enumerate(options.workers):
        async with workers_running(cluster, count, root, last=n == len(options.workers) - 1):
            runs = [await throughput(cluster, options.documents) for _ in range(options.runs)]
            rates = [run.processed_per_min for run in runs]
            rate = statistics.median(rates)
            first = first or rate
            uploads = statistics.median(run.uploads_per_min for run in runs)
            store_ms = statistics.median(run.store_cpu_ms for run in runs)
            workers_ms = statistics.median(run.workers_cpu_ms for run in runs)
            print(
                f"  {count} worker process{'es' if count > 1 else ''}: {rate:6.1f} documents/min "
                f"(runs {', '.join(f'{r:.1f}' for r in rates)}; {rate / first:.2f}x one worker; "
                f"CPU per document: store {store_ms:.0f} ms, workers {workers_ms:.0f} ms; "
                f"the replicas took {uploads:.0f} uploads/min) "
                f"({load_average()})"
            )
            alone = statistics.median([await one_alone(cluster) for _ in range(options.runs)])
            behind = [await behind_a_backlog(cluster, options.backlog) for _ in range(options.runs)]
            waited = statistics.median(seconds for seconds, _ in behind)
            fairness.append(
                f"  {count} worker process{'es' if count > 1 else ''}: B waited {waited:5.2f} s "
                f"behind A's {options.backlog} (alone: {alone:5.2f} s); A's processed meanwhile: "
                f"{', '.join(str(ahead) for _, ahead in behind)} of {options.backlog}; "
                f"all {options.backlog} would take ~{options.backlog / rate * 60:.0f} s at this "
                f"throughput ({load_average()})"
            )
    print("fairness: workspace B's one upload behind workspace A's backlog")
    print("\n".join(fairness))


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--documents", type=int, default=60)
    parser.add_argument("--backlog", type=int, default=60)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument(
        "--replicas", type=int, default=2, help="fincap serve processes the uploads go through"
    )
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="fincap-bench-workers-") as directory:
        root = Path(directory)
        # Every process shares one server secret, as replicas on MongoDB must; nothing is written
        # to the working directory's data dir.
        os.environ["FINCAP_SECRET_KEY"] = base64.b64encode(secrets.token_bytes(32)).decode()
        os.environ["FINCAP_DATA_DIR"] = str(root / "workers")
        server = EmbeddedServer(storage=str(root / "db"), log_path=root / "db.log").start()
        try:
            asyncio.run(measure(options, server, root))
        finally:
            discard(server)


if __name__ == "__main__":
    main()
