"""Live document events: latency from the processed write to the client, and what idle
subscribers cost other calls.

``fincap serve`` runs on a fresh data directory (embedded store, in-process workers) with
``--documents`` demo documents (200). Measured:

1. Upload to client: ``--uploads`` PDFs are uploaded (REST ``files.upload``, a pause between
   them); the in-process workers process them and write ``processed``. The latency of each is
   the arrival time at the client minus the event's ``at`` (stamped when the write is made,
   same machine clock): at an SSE client (httpx) and at the dashboard in headless Chromium
   (``live.js`` notes each event's arrival, ``browser_event_latencies``).
2. Another process's write: a store client in this process (what a ``fincap worker`` or
   another API replica is) marks ``--writes`` documents processed; they reach the SSE client
   through the server's poller (``FINCAP_EVENTS_POLL_SECONDS``, 0.2 s by default).
3. Idle subscribers: the median latency of another call (``documents.search``, 10 documents)
   with 0 and with ``--idle`` open, idle SSE streams, alternating ``--rounds`` times.

Every figure is printed with ``os.getloadavg()`` beside it.

    .venv/bin/python bench/events.py                      # 25 uploads, 25 writes, 500 idle
    .venv/bin/python bench/events.py --uploads 10 --writes 10 --idle 100   # quick

``--analysis thread`` runs the server's analysis in a thread instead of its process pool (whose
processes cost ~2 CPU-s each to start): the smoke test's tiny run. The figures start at the
processed write, after the analysis.

``--seed-on-server`` starts the server first and loads the demo documents on its store (one
store start and stop fewer: the smoke test's tiny run). The server is killed at the end, not
stopped cleanly: its data directory is thrown away.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from datetime import datetime
from functools import partial
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.harness import add_analysis_option
from persistence.client import connect
from persistence.embedded import running_server_uri
from persistence.store import Store
from tests.browser import CHROMIUM
from tests.events.streams import SseReader
from tests.web.dashboard_live import (
    LiveDashboard,
    Page,
    add_seed_on_server,
    chromium,
    prepare,
    prepared_and_serving,
)

PDF = (
    Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "extraction" / "text-layer.pdf"
)


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load {one:.2f} {five:.2f} {fifteen:.2f}"


def summary(name: str, values_ms: Sequence[float]) -> str:
    ordered = sorted(values_ms)
    p95 = ordered[max(0, round(0.95 * len(ordered)) - 1)]
    return (
        f"{name}: median {statistics.median(ordered):.0f} ms, p95 {p95:.0f} ms, "
        f"max {ordered[-1]:.0f} ms over {len(ordered)} events  [{load()}]"
    )


def epoch(at: str) -> float:
    return datetime.fromisoformat(at.replace("Z", "+00:00")).timestamp()


class SseClient:
    """An SSE client in a thread: every processed event's (at, arrival) by document id."""

    def __init__(self, live: LiveDashboard) -> None:
        self.live = live
        self.processed: dict[str, tuple[float, float]] = {}
        self.open = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()
        assert self.open.wait(30), "the event stream did not open"

    def _run(self) -> None:
        headers = {"Authorization": f"Bearer {self.live.api_key}"}
        headers["X-Service-Org-Id"] = self.live.org_id
        reader = SseReader()
        with httpx.stream("GET", f"{self.live.base}/v1/events", headers=headers, timeout=None) as r:
            self.open.set()
            for text in r.iter_text():
                arrived = time.time()
                reader.feed(text)
                while reader.pending:
                    message = reader.pending.pop(0)
                    if message.event == "document.processed":
                        data = message.data
                        self.processed[data["documentId"]] = (epoch(data["at"]), arrived)


def browser_event_latencies(
    page: Page, at_by_document: dict[str, float], timeout: float = 120
) -> list[float]:
    """Milliseconds from each document's processed write (``at_by_document``: epoch seconds)
    to its event's arrival in the dashboard open in ``page`` (``live.js`` notes arrivals in
    ``window.__fincapLive.times``). For bench/web.py too."""
    ids = json.dumps(list(at_by_document))
    page.wait(f"{ids}.every(id => window.__fincapLive.times[id]?.['document.processed'])", timeout)
    arrived: dict[str, float] = page.js(
        f"Object.fromEntries({ids}.map(id => "
        "[id, window.__fincapLive.times[id]['document.processed']]))"
    )
    return [arrived[doc] - at_by_document[doc] * 1000 for doc in at_by_document]


def wait_for(predicate: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise SystemExit(f"timed out waiting for {what}")
        time.sleep(0.05)


def uploads(live: LiveDashboard, sse: SseClient, count: int) -> list[str]:
    """Upload ``count`` PDFs (each a little different, so none is a duplicate); their ids."""
    import base64

    ids = []
    for n in range(count):
        data = PDF.read_bytes() + f"\n% copy {n} {time.time()}\n".encode()
        body = {
            "fileName": f"bench-{n}.pdf",
            "mimeType": "application/pdf",
            "base64Data": base64.b64encode(data).decode(),
        }
        response = live.call("files.upload", body)
        assert response.status_code == 200, response.text
        ids.append(response.json()["data"]["result"]["documentId"])
        if n < count - 1:
            time.sleep(0.4)  # one at a time: the latency of each, not of a queue
    wait_for(lambda: all(i in sse.processed for i in ids), 300, "the uploads to be processed")
    return ids


async def write_elsewhere(data_dir: Path, org_id: str, count: int) -> list[str]:
    """Mark ``count`` new documents processed from this process (another client of the
    server's store, like a ``fincap worker``)."""
    uri = running_server_uri(data_dir)
    assert uri, "the server's embedded store is not running"
    client, db = connect(uri)
    store = Store(db)
    ids = [f"doc_bench_{n}_{int(time.time())}" for n in range(count)]
    fields = {"merchant": "Bench", "processingStatus": "queued", "source": "upload"}
    await store.documents.writes.insert_many(org_id, [{"_id": i, **fields} for i in ids])
    for document_id in ids:
        await asyncio.sleep(0.3)
        await store.documents.writes.set_processing(org_id, document_id, "processed", "bench")
    client.close()
    return ids


def call_latencies(live: LiveDashboard, calls: int) -> list[float]:
    with httpx.Client(timeout=30) as http:
        headers = {"Authorization": f"Bearer {live.api_key}", "X-Service-Org-Id": live.org_id}
        url = f"{live.base}/v1/capabilities/documents.search"
        times = []
        for _ in range(calls):
            started = time.perf_counter()
            assert http.post(url, json={"limit": 10}, headers=headers).status_code == 200
            times.append((time.perf_counter() - started) * 1000)
    return times


class IdleSubscribers:
    """``count`` open SSE streams that nothing is sent on, in a thread of their own."""

    def __init__(self, live: LiveDashboard, count: int) -> None:
        self.live, self.count = live, count
        self.opened = 0
        self.ready = threading.Event()
        self.loop = asyncio.new_event_loop()
        self.stop: asyncio.Event | None = None
        self.thread = threading.Thread(target=self.loop.run_until_complete, args=(self._run(),))
        self.thread.start()
        assert self.ready.wait(120), f"only {self.opened} of {count} streams opened"

    async def _one(self, http: httpx.AsyncClient, headers: dict[str, str]) -> None:
        async with http.stream("GET", f"{self.live.base}/v1/events", headers=headers) as r:
            assert r.status_code == 200, r.status_code
            self.opened += 1
            if self.opened == self.count:
                self.ready.set()
            assert self.stop is not None
            await self.stop.wait()

    async def _run(self) -> None:
        self.stop = asyncio.Event()
        headers = {
            "Authorization": f"Bearer {self.live.api_key}",
            "X-Service-Org-Id": self.live.org_id,
        }
        limits = httpx.Limits(max_connections=self.count + 10)
        async with httpx.AsyncClient(timeout=None, limits=limits) as http:
            await asyncio.gather(*(self._one(http, headers) for _ in range(self.count)))

    def close(self) -> None:
        assert self.stop is not None
        self.loop.call_soon_threadsafe(self.stop.set)
        self.thread.join(60)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--uploads", type=int, default=25)
    parser.add_argument("--writes", type=int, default=25)
    parser.add_argument("--idle", type=int, default=500)
    parser.add_argument("--calls", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--documents", type=int, default=200, help="demo documents in the workspace at start"
    )
    parser.add_argument("--raw", action="store_true", help="print every latency too")
    add_seed_on_server(parser)
    add_analysis_option(parser)
    args = parser.parse_args()
    if CHROMIUM is None:
        sys.exit("needs a chromium binary (make browser-deps)")
    os.environ["FINCAP_EXTRACTION_EXECUTOR"] = args.analysis  # the server's (and the seed's)
    # One key holds every idle stream here; a real deployment spreads them over many.
    os.environ["FINCAP_EVENTS_PER_KEY"] = str(args.idle + 10)

    with tempfile.TemporaryDirectory() as root:
        data_dir = Path(root) / "data"
        seed = partial(prepare, data_dir, args.documents)
        with (
            prepared_and_serving(data_dir, seed, args.seed_on_server, throwaway=True) as live,
            chromium(Path(root) / "profile") as page,
        ):
            page.go(f"{live.base}/app/")
            page.wait("!!document.querySelector('#key-form')")
            session = {"kind": "key", "secret": live.api_key, "orgId": live.org_id}
            page.js(f"sessionStorage.setItem('fincap.session', {json.dumps(json.dumps(session))})")
            page.go(f"{live.base}/app/#/")  # the overview listens: the stream opens
            page.wait("window.__fincapLive?.status === 'open'", timeout=60)
            sse = SseClient(live)

            ids = uploads(live, sse, args.uploads)
            at = {i: sse.processed[i][0] for i in ids}
            to_sse = [(sse.processed[i][1] - at[i]) * 1000 for i in ids]
            to_page = browser_event_latencies(page, at)
            if args.raw:
                print("SSE ms:", [round(v, 1) for v in to_sse])
                print("page ms:", [round(v, 1) for v in to_page])
            print(summary("upload → SSE client", to_sse))
            print(summary("upload → dashboard (Chromium)", to_page))

            written = asyncio.run(write_elsewhere(data_dir, live.org_id, args.writes))
            wait_for(lambda: all(i in sse.processed for i in written), 60, "the writes")
            print(
                summary(
                    "another process's write → SSE client (poller)",
                    [(sse.processed[i][1] - sse.processed[i][0]) * 1000 for i in written],
                )
            )

            call_latencies(live, 10)  # warm-up
            without, with_idle = [], []
            for _ in range(args.rounds):
                without.append(statistics.median(call_latencies(live, args.calls)))
                idle = IdleSubscribers(live, args.idle)
                with_idle.append(statistics.median(call_latencies(live, args.calls)))
                idle.close()
            base, loaded = statistics.median(without), statistics.median(with_idle)
            print(
                f"documents.search (10) with 0 idle subscribers: median {base:.1f} ms; with "
                f"{args.idle}: {loaded:.1f} ms; difference {loaded - base:+.1f} ms "
                f"(medians of {args.rounds} rounds × {args.calls} calls)  [{load()}]"
            )


if __name__ == "__main__":
    main()
