"""How many inbound messages per minute fincap accepts, and processes, on this machine.

Three figures, each the median of ``--runs`` runs of ``--messages`` messages (each a short
email with the one-page text-layer PDF invoice of the test fixtures), on the embedded store
(SecantusDB over TCP, GridFS included):

- SMTP accepted: smtplib → the aiosmtpd receiver on a socket → parsed, original in GridFS,
  activity item, document and job written → ``250``. One client connection per message, sent
  one after another (a relay's single queue).
- HTTP accepted: ``POST /v1/inbound/email`` with the raw message, through the ASGI app in
  process (no network hop), one after another.
- Processed: the queued documents run through the pipeline by one in-process worker (PDF text
  layer, fields, category, currency, duplicate check), extraction in a thread.

    .venv/bin/python bench/inbound.py [--messages 30] [--runs 3]
"""

from __future__ import annotations

import argparse
import asyncio
import smtplib
import statistics
import sys
import time
import uuid
from email.message import EmailMessage
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.host.config import Settings
from app.host.services import build_services
from app.host.workers import WorkerPool
from app.inbound.smtp import start_smtp_server
from bench.harness import discard, load_average, serving_app
from engines.currency import default_rate_book
from persistence.client import connect
from persistence.embedded import EmbeddedServer
from persistence.store import Store
from resolvers import build_job_kinds, build_registry
from resolvers.framework.services import Services
from resolvers.services.auth import accounts
from resolvers.services.processing.analyzer import Analyzer

PDF = (
    Path(__file__).resolve().parent.parent / "tests/fixtures/extraction/text-layer.pdf"
).read_bytes()
SECRET = "bench-secret"


def mail(to: str, number: int) -> EmailMessage:
    message = EmailMessage()
    message["From"] = "billing@northwind.test"
    message["To"] = to
    message["Subject"] = f"Invoice {number}"
    message["Message-ID"] = f"<bench-{uuid.uuid4().hex}@northwind.test>"
    message.set_content("Invoice attached.")
    message.add_attachment(PDF, maintype="application", subtype="pdf", filename="invoice.pdf")
    return message


def send_all(port: int, address: str, messages: list[EmailMessage]) -> None:
    for message in messages:
        with smtplib.SMTP("127.0.0.1", port, timeout=60) as client:
            refused = client.send_message(message)
            assert refused == {}, refused


async def one_run(server: EmbeddedServer, count: int) -> tuple[float, float, float]:
    name = f"bench_inbound_{uuid.uuid4().hex[:8]}"
    client, db = connect(server.uri, name)
    store = Store(db)
    await store.ensure_indexes()
    try:
        boot = await accounts.bootstrap(store, "bench@example.com", "Bench")
        settings = Settings(inbound_domain="in.bench.test", inbound_secret=SECRET)
        app = serving_app(settings, store, registry=build_registry())
        services: Services = app.state.services
        alias = (await store.inbound_addresses.get_or_create(boot["orgId"]))["alias"]
        address = f"{alias}@in.bench.test"

        smtp = await start_smtp_server(services, "127.0.0.1", 0)
        port = smtp.sockets[0].getsockname()[1]
        batch = [mail(address, n) for n in range(count)]
        started = time.perf_counter()
        await asyncio.to_thread(send_all, port, address, batch)
        smtp_s = time.perf_counter() - started
        smtp.close()
        await smtp.wait_closed()

        raws = [mail(address, n).as_bytes() for n in range(count)]
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://bench") as http:
            started = time.perf_counter()
            for raw in raws:
                response = await http.post(
                    "/v1/inbound/email",
                    content=raw,
                    headers={"Authorization": f"Bearer {SECRET}"},
                )
                assert response.status_code == 200, response.text
            http_s = time.perf_counter() - started

        pool = WorkerPool(
            build_services(
                Settings(),
                store,
                rates=default_rate_book(),
                analyzer=Analyzer(),
                sources=services.sources,
            ),
            build_job_kinds(),
            count=1,
        )
        started = time.perf_counter()
        processed = await pool.run_until_idle()
        work_s = time.perf_counter() - started
        assert processed == 2 * count, processed
        return count / smtp_s * 60, count / http_s * 60, processed / work_s * 60
    finally:
        await client.drop_database(name)
        client.close()


async def main(count: int, runs: int) -> None:
    server = EmbeddedServer(storage=":memory:").start()
    try:
        figures = [await one_run(server, count) for _ in range(runs)]
    finally:
        discard(server)
    smtp, http, work = (statistics.median(column) for column in zip(*figures, strict=True))
    print(f"{count} messages per run, {runs} runs, medians (per minute):")
    print(f"  SMTP accepted (smtplib -> aiosmtpd -> stored and queued): {smtp:8.0f} messages/min")
    print(f"  HTTP accepted (POST /v1/inbound/email, in process):       {http:8.0f} messages/min")
    print(f"  processed into documents (1 worker, text-layer PDF):      {work:8.0f} documents/min")
    print(f"  ({load_average()})")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=30)
    parser.add_argument("--runs", type=int, default=3)
    options = parser.parse_args()
    asyncio.run(main(options.messages, options.runs))
