"""The hostile tester's attacks (issue 8) against a live ``fincap serve``, measured.

Starts ``fincap serve`` on a fresh embedded store with two workspaces: the attacker's and the
victim's (200 demo documents each; ``--documents``). For each attack it samples, every 50 ms,
the resident memory of the serve process tree (serve, the embedded database, the analysis
process, the resource tracker), and meanwhile the victim keeps calling documents.search; the
victim's latency during the attack is compared with its latency at rest (the same sampling
for ``--rest-seconds``, 3 by default, with no attack running). Processing attacks
also time a victim upload from files.upload until its document is processed. Each attack runs
``--runs`` times; figures are medians over the runs (latency percentiles are over all of a
run's victim calls).

    .venv/bin/python bench/attacks.py [--runs 3] [--only NAME ...] [--documents 200]
        [--rest-seconds 3] [--seed-on-server] [--skip-prepare] [--analysis process]

``--seed-on-server`` starts the server first and makes the two workspaces on its store (one
store start and clean stop fewer: the smoke test's tiny run). The server is killed at the end,
not stopped cleanly: its data directory is thrown away. ``--skip-prepare`` leaves out the
attacker's prepared documents (an uploaded PDF processed, the 1,000-"a" summaries): for attacks
that use neither, as the smoke test's two. ``--analysis thread`` runs the server's analysis in
a thread: no analysis processes (their start, ~2 CPU-s, and their memory, which the figures of
the serve tree include otherwise; a server starts them with its first file).
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import html
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import psutil

from domain.documents import UNFINISHED

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.harness import add_analysis_option
from persistence.embedded import free_port
from tests.hardening.bombs import blank_pdf, many_recipients_mail, nested_mail, png_bomb
from tests.live import discard, start_serve
from tests.web.dashboard_live import add_seed_on_server, cli, one_store

FIXTURES = ROOT / "tests" / "fixtures" / "extraction"
MB = 1024 * 1024
INBOUND_SECRET = "bench-relay-secret"
VICTIM_EMAIL = "victor@example.com"
VICTIM_PASSWORD = "victor's long password"


# The server ------------------------------------------------------------------------------------


@dataclass
class Server:
    process: subprocess.Popen[bytes]
    base: str
    attacker: dict[str, str]
    victim: dict[str, str]
    data_dir: Path | None = None
    smtp_port: int = 0

    def tree(self) -> list[psutil.Process]:
        root = psutil.Process(self.process.pid)
        return [root, *root.children(recursive=True)]

    def tree_rss(self) -> int:
        total = 0
        for process in self.tree():
            with contextlib.suppress(psutil.NoSuchProcess):  # it exited meanwhile
                total += process.memory_info().rss
        return total


def start_server(
    data_dir: Path, documents: int = 200, seed_on_server: bool = False, analysis: str = "process"
) -> Server:
    env = {
        **os.environ,
        "FINCAP_DATA_DIR": str(data_dir),
        "MONGODB_URI": "",
        "FINCAP_LOG_LEVEL": "WARNING",
        "FINCAP_WORKERS": "1",
        "FINCAP_EXTRACTION_EXECUTOR": analysis,  # ``--analysis``
        # The inbound doors (issue 25's mail attacks): the relay's POST here, the SMTP port
        # (chosen again at each start, like the HTTP port) below.
        "FINCAP_INBOUND_SECRET": INBOUND_SECRET,
    }

    # The five set-up commands run in this process (`fincap` through click's runner, as the
    # browser tests prepare their data) on one store started for them, which they join as they
    # join a running `fincap serve`; stopped before the server starts. Each was a Python process
    # of its own importing the app: ~5 s apiece on the shared machine, 25 of the smoke run's 50.
    # With `seed_on_server` they run once the server is up, on its store: one store start and
    # clean stop fewer.
    def seed() -> tuple[dict[str, Any], dict[str, Any]]:
        with one_store(data_dir):
            attacker = cli(
                data_dir, "admin", "bootstrap", "--email", "mallory@example.com", "--workspace", "M"
            )
            victim = cli(
                data_dir, "admin", "bootstrap", "--email", VICTIM_EMAIL, "--workspace", "V"
            )
            for tenant in (attacker, victim):
                cli(data_dir, "demo", "load", "--org", tenant["orgId"], "--count", str(documents))
            # The victim signs in on the OAuth page during the sign-in burst (issue 35, H2).
            cli(data_dir, "admin", "set-password", "--email", VICTIM_EMAIL, stdin=VICTIM_PASSWORD)
        return attacker, victim

    if not seed_on_server:
        attacker, victim = seed()
    smtp_ports: list[int] = []

    def serve_env(base: str) -> dict[str, str]:
        smtp_ports.append(free_port())
        return {**env, "FINCAP_INBOUND_SMTP_PORT": str(smtp_ports[-1])}

    # The tests' own start: a port another process took is tried again, a server that exits
    # is reported with its log, and a slow start under load (30 s measured) is waited for.
    served = start_serve(
        [sys.executable, "-m", "app.cli", "serve"], serve_env, data_dir.parent / "serve.log"
    )
    if seed_on_server:
        attacker, victim = seed()
    return Server(served.process, served.base, attacker, victim, data_dir, smtp_ports[-1])


def headers(tenant: dict[str, str]) -> dict[str, str]:
    return {"Authorization": f"Bearer {tenant['apiKey']}", "X-Service-Org-Id": tenant["orgId"]}


# Measuring -------------------------------------------------------------------------------------


@dataclass
class Run:
    seconds: float
    peak_rss_mb: float
    victim_ms: list[float]
    extra: dict[str, float] = field(default_factory=dict)
    after_rss_mb: float = 0.0  # the serve tree as the attack ends: what it kept


class MemorySampler:
    """Peak RSS of the serve process tree while active (a thread, every 50 ms)."""

    def __init__(self, server: Server) -> None:
        self.server = server
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def _loop(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, self.server.tree_rss())
            self._stop.wait(0.05)

    def __enter__(self) -> MemorySampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


async def victim_calls(http: httpx.AsyncClient, server: Server, stop: asyncio.Event) -> list[float]:
    """documents.search in the victim's workspace, back to back, until ``stop``."""
    latencies = []
    body = {"useSearch": False, "limit": 5, "outputMode": "complete"}
    while not stop.is_set():
        started = time.perf_counter()
        response = await http.post(
            "/v1/capabilities/documents.search", json=body, headers=headers(server.victim)
        )
        response.raise_for_status()
        latencies.append((time.perf_counter() - started) * 1000)
        await asyncio.sleep(0.02)
    return latencies


async def measure(server: Server, attack: Callable[[], Awaitable[dict[str, float]]]) -> Run:
    async with httpx.AsyncClient(base_url=server.base, timeout=300) as http:
        stop = asyncio.Event()
        with MemorySampler(server) as memory:
            victim = asyncio.create_task(victim_calls(http, server, stop))
            started = time.perf_counter()
            extra = await attack()
            seconds = time.perf_counter() - started
            stop.set()
            latencies = await victim
    return Run(seconds, memory.peak / MB, latencies, extra, server.tree_rss() / MB)


async def wait_processed(http: httpx.AsyncClient, tenant: dict[str, str], document_id: str) -> str:
    while True:
        response = await http.post(
            "/v1/capabilities/documents.get", json={"id": document_id}, headers=headers(tenant)
        )
        status = response.json()["data"]["result"]["document"]["processingStatus"]
        if status not in UNFINISHED:
            return str(status)
        await asyncio.sleep(0.1)


async def upload(http: httpx.AsyncClient, tenant: dict[str, str], name: str, data: bytes) -> str:
    body = {"fileName": name, "base64Data": base64.b64encode(data).decode()}
    response = await http.post("/v1/capabilities/files.upload", json=body, headers=headers(tenant))
    response.raise_for_status()
    return str(response.json()["data"]["result"]["documentId"])


# Attacks ---------------------------------------------------------------------------------------


def chunked_body(total: int, chunk: int = 64 * 1024) -> Iterator[bytes]:
    block = b" " * chunk
    for _ in range(total // chunk):
        yield block


def post_chunked(url: str, total: int) -> float:
    """A body of ``total`` bytes without Content-Length or key; seconds until the answer."""
    started = time.perf_counter()
    # The server answers 413 and closes the connection while the client is still sending.
    with contextlib.suppress(httpx.HTTPError):
        httpx.post(
            url,
            content=chunked_body(total),
            headers={"content-type": "application/json"},
            timeout=120,
        )
    return time.perf_counter() - started


def make_attacks(server: Server) -> dict[str, Callable[[], Awaitable[dict[str, float]]]]:
    base = server.base

    async def in_thread(function: Callable[[], float]) -> dict[str, float]:
        return {"answered_after_s": await asyncio.to_thread(function)}

    async def chunked_rest() -> dict[str, float]:
        url = f"{base}/v1/capabilities/files.upload"
        return await in_thread(lambda: post_chunked(url, 300 * MB))

    async def chunked_graphql() -> dict[str, float]:
        return await in_thread(lambda: post_chunked(f"{base}/v1/graphql", 300 * MB))

    async def graphql_comments() -> dict[str, float]:
        document = "{ __typename }\n" + "#" * 15_000_000
        async with httpx.AsyncClient(base_url=base, timeout=120) as http:
            answers = await asyncio.gather(
                *(http.post("/v1/graphql", json={"query": document}) for _ in range(4))
            )
        return {"status": float(answers[0].status_code)}

    async def nested_brackets() -> dict[str, float]:
        async with httpx.AsyncClient(base_url=base, timeout=120) as http:
            for path in ["/v1/capabilities/workspaces.list", "/v1/graphql"] * 10:
                answer = await http.post(
                    path, content=b"[" * 100_000, headers={"content-type": "application/json"}
                )
        return {"status": float(answer.status_code)}

    async def regex_worst_allowed() -> dict[str, float]:
        # The attacker's own documents, summaries of 1,000 "a" (the longest allowed), and the
        # costliest pattern the safe subset accepts.
        clause = {"conditions": [{"field": "summary", "op": "regex", "value": "a?[a-z]*!"}]}
        async with httpx.AsyncClient(base_url=base, timeout=300) as http:
            started = time.perf_counter()
            answer = await http.post(
                "/v1/capabilities/documents.count",
                json={"where": clause},
                headers=headers(server.attacker),
            )
        return {"query_s": time.perf_counter() - started, "status": float(answer.status_code)}

    async def regex_the_testers() -> dict[str, float]:
        clause = {"conditions": [{"field": "summary", "op": "regex", "value": "(a+)+$"}]}
        async with httpx.AsyncClient(base_url=base, timeout=300) as http:
            answer = await http.post(
                "/v1/capabilities/documents.count",
                json={"where": clause},
                headers=headers(server.attacker),
            )
        return {"status": float(answer.status_code)}

    async def inspect_flood() -> dict[str, float]:
        query = (
            "{ "
            + " ".join(
                f'i{n}: documentsInspect(input: {{id: "{inspectable}"}}) {{ documentId }}'
                for n in range(5)
            )
            + " }"
        )
        async with httpx.AsyncClient(base_url=base, timeout=300) as http:
            aliased = await http.post(
                "/v1/graphql", json={"query": query}, headers=headers(server.attacker)
            )
            answers = await asyncio.gather(
                *(
                    http.post(
                        "/v1/capabilities/documents.inspect",
                        json={"id": inspectable},
                        headers=headers(server.attacker),
                    )
                    for _ in range(5)
                )
            )
        codes = [a.status_code for a in answers]
        return {
            "aliased_status": float(aliased.status_code),
            "rest_200": float(codes.count(200)),
            "rest_429": float(codes.count(429)),
        }

    def bomb(name: str, data: bytes) -> Callable[[], Awaitable[dict[str, float]]]:
        async def attack() -> dict[str, float]:
            async with httpx.AsyncClient(base_url=base, timeout=300) as http:
                started = time.perf_counter()
                bomb_id = await upload(http, server.attacker, name, data)
                victim_id = await upload(
                    http, server.victim, "receipt.png", (FIXTURES / "receipt.png").read_bytes()
                )
                bomb_status = await wait_processed(http, server.attacker, bomb_id)
                bomb_s = time.perf_counter() - started
                await wait_processed(http, server.victim, victim_id)
                victim_s = time.perf_counter() - started
            return {
                "bomb_s": bomb_s,
                "victim_upload_s": victim_s,
                "bomb_failed": float(bomb_status == "failed"),
            }

        return attack

    async def victim_upload_alone() -> dict[str, float]:
        async with httpx.AsyncClient(base_url=base, timeout=300) as http:
            started = time.perf_counter()
            victim_id = await upload(
                http, server.victim, "receipt.png", (FIXTURES / "receipt.png").read_bytes()
            )
            await wait_processed(http, server.victim, victim_id)
        return {"victim_upload_s": time.perf_counter() - started}

    inspectable = ""

    async def prepare() -> None:
        nonlocal inspectable
        async with httpx.AsyncClient(base_url=base, timeout=300) as http:
            inspectable = await upload(
                http, server.attacker, "invoice.pdf", (FIXTURES / "text-layer.pdf").read_bytes()
            )
            await wait_processed(http, server.attacker, inspectable)
            # The attacker's demo documents get the longest summary allowed, all "a".
            cursor = None
            while True:
                body: dict[str, Any] = {"useSearch": False, "limit": 100}
                if cursor:
                    body["cursor"] = cursor
                page = (
                    await http.post(
                        "/v1/capabilities/documents.search",
                        json=body,
                        headers=headers(server.attacker),
                    )
                ).json()["data"]["result"]
                for document in page["documents"]:
                    await http.post(
                        "/v1/capabilities/documents.update",
                        json={"id": document["id"], "summary": "a" * 1000},
                        headers=headers(server.attacker),
                    )
                cursor = page["nextCursor"]
                if not cursor:
                    break

    attacks: dict[str, Callable[[], Awaitable[dict[str, float]]]] = {
        "rest: 300 MB chunked body, no key": chunked_rest,
        "graphql: 300 MB chunked body, no key": chunked_graphql,
        "graphql: 4 × 15 MB of comments": graphql_comments,
        "rest+graphql: 20 × 100,000 nested [": nested_brackets,
        "regex (a+)+$ (refused)": regex_the_testers,
        "regex a?[a-z]*! over ~200 × 1,000 a": regex_worst_allowed,
        "inspect: 5 aliased + 5 concurrent": inspect_flood,
        "upload: victim's receipt alone": victim_upload_alone,
        "upload: 6000 pt PDF page": bomb("page.pdf", blank_pdf(6000, 6000)),
        "upload: 14400 pt PDF page": bomb("poster.pdf", blank_pdf(14400, 14400)),
        "upload: 13000² 1-bit PNG": bomb("bomb.png", png_bomb(13000)),
    }
    attacks["_prepare"] = lambda: prepare_and_report(prepare)
    return attacks


async def prepare_and_report(prepare: Callable[[], Awaitable[None]]) -> dict[str, float]:
    await prepare()
    return {}


# Report ----------------------------------------------------------------------------------------


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))] if ordered else float("nan")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--only", nargs="*", default=None, help="substrings of attack names")
    parser.add_argument("--documents", type=int, default=200, help="demo documents per workspace")
    parser.add_argument(
        "--rest-seconds",
        type=float,
        default=3.0,
        help="how long the victim's latency and the serve tree's memory are sampled at rest",
    )
    parser.add_argument(
        "--skip-prepare",
        action="store_true",
        help="do not prepare the attacker's documents (a PDF uploaded and processed, every "
        "summary 1,000 'a'): only for attacks that use neither (the smoke test's refused regex "
        "and /healthz control); the others' figures mean nothing without them",
    )
    add_seed_on_server(parser)
    add_analysis_option(parser)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        # In a thread: the set-up commands run their own event loops.
        server = await asyncio.to_thread(
            start_server,
            Path(tmp) / "data",
            options.documents,
            options.seed_on_server,
            options.analysis,
        )
        try:
            attacks = {
                **make_attacks(server),
                **availability_attacks(server),
                **trust_attacks(server),
                **round3_attacks(server),
            }
            prepare = attacks.pop("_prepare")
            if not options.skip_prepare:
                print("preparing the attacker's documents …", flush=True)
                await prepare()
            rest = await measure(server, lambda: asyncio.sleep(options.rest_seconds, result={}))
            idle_rss = server.tree_rss() / MB
            print(f"load average: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
            print(
                f"serve tree at rest: {idle_rss:.0f} MB; victim documents.search "
                f"p50 {percentile(rest.victim_ms, 0.5):.0f} ms, "
                f"p95 {percentile(rest.victim_ms, 0.95):.0f} ms, "
                f"max {max(rest.victim_ms):.0f} ms; load {os.getloadavg()[0]:.2f}\n"
            )
            header = (
                f"{'attack':40} {'seconds':>8} {'peak MB':>8} {'+MB':>6} "
                f"{'victim p50':>10} {'p95':>6} {'max':>6} {'load1':>5}  other"
            )
            print(header)
            print("-" * len(header))
            for name, attack in attacks.items():
                if options.only and not any(part in name for part in options.only):
                    continue
                runs = [await measure(server, attack) for _ in range(options.runs)]
                seconds = statistics.median(r.seconds for r in runs)
                peak = statistics.median(r.peak_rss_mb for r in runs)
                p50 = statistics.median(percentile(r.victim_ms, 0.5) for r in runs)
                p95 = statistics.median(percentile(r.victim_ms, 0.95) for r in runs)
                worst = statistics.median(max(r.victim_ms or [float("nan")]) for r in runs)
                extra = {
                    key: statistics.median(r.extra[key] for r in runs) for key in runs[0].extra
                }
                extra["kept_mb"] = statistics.median(r.after_rss_mb for r in runs) - idle_rss
                other = ", ".join(f"{k} {v:.2f}" for k, v in extra.items())
                # The machine's load as the attack ends (1-minute average), beside its figures.
                other += f"; load {os.getloadavg()[0]:.2f}"
                print(
                    f"{name:40} {seconds:8.2f} {peak:8.0f} {peak - idle_rss:6.0f} "
                    f"{p50:10.0f} {p95:6.0f} {worst:6.0f} {os.getloadavg()[0]:5.2f}  {other}",
                    flush=True,
                )
            print(f"\n(median of {options.runs} runs; victim latencies in ms)")
        finally:
            # Killed with its children, not stopped cleanly: its stop is not measured and its
            # data directory is thrown away (a clean stop took 2-5 s here).
            discard(server.process)


# Issue 25: mail headers, thumbnails, fairness, MIME nesting ------------------------------------
#
# The attacker's mail goes to its workspace's own receiving address, over SMTP and through the
# relay's HTTP door; the victim keeps searching meanwhile (``measure``). "upload: victim's
# receipt behind 500 attachments" times the victim's upload from files.upload to processed while
# the attacker's message has queued its documents; the attacker's backlog is then cleared in
# the store, so that the attacks after it start from an idle queue.


def attachments_message(to: str, count: int, pdf: bytes) -> bytes:
    from email.message import EmailMessage

    mail = EmailMessage()
    mail["From"] = "mallory@example.com"
    mail["To"] = to
    mail["Subject"] = f"{count} invoices"
    mail["Message-ID"] = f"<many-{time.time_ns()}@example.com>"
    mail.set_content("Invoices attached.")
    for n in range(count):
        mail.add_attachment(pdf, maintype="application", subtype="pdf", filename=f"inv{n}.pdf")
    return mail.as_bytes()


def smtp_send(port: int, rcpt: str, data: bytes) -> tuple[int, float]:
    """DATA's reply code and the seconds until it came (the sender's wait)."""
    import smtplib

    started = time.perf_counter()
    with smtplib.SMTP("127.0.0.1", port, timeout=300) as client:
        client.ehlo()
        client.mail("mallory@example.com")
        client.rcpt(rcpt)
        code, _ = client.data(data)
    return code, time.perf_counter() - started


async def plant_original(server: Server, tenant: dict[str, str], name: str, data: bytes) -> str:
    """A processed document whose original is ``data``, written straight into the store: what
    an upload accepted before today's checks left behind."""
    from persistence.client import connect
    from persistence.ids import new_id, utcnow
    from persistence.store import Store

    assert server.data_dir is not None
    uri = json.loads((server.data_dir / "server.json").read_text())["uri"]
    client, db = connect(uri)
    try:
        store = Store(db)
        document_id = new_id("doc")
        ref = await store.files.put(tenant["orgId"], document_id, data, name, "image/png")
        await store.documents.writes.insert_many(
            tenant["orgId"],
            [
                {
                    "_id": document_id,
                    "file": ref,
                    "source": "upload",
                    "receivedAt": utcnow(),
                    "processingStatus": "processed",
                }
            ],
        )
    finally:
        client.close()
    return document_id


async def clear_backlog(server: Server, tenant: dict[str, str]) -> int:
    """Finish the tenant's queued jobs in the store without running them; how many."""
    from persistence.client import connect

    assert server.data_dir is not None
    uri = json.loads((server.data_dir / "server.json").read_text())["uri"]
    client, db = connect(uri)
    try:
        result = await db["jobs"].update_many(
            {"workspaceId": tenant["orgId"], "status": "queued"},
            {"$set": {"status": "done"}, "$unset": {"activeKey": ""}},
        )
    finally:
        client.close()
    return int(result.modified_count)


def availability_attacks(server: Server) -> dict[str, Callable[[], Awaitable[dict[str, float]]]]:
    base = server.base
    address = ""

    async def inbound_address() -> str:
        nonlocal address
        if not address:
            async with httpx.AsyncClient(base_url=base, timeout=60) as http:
                answer = await http.post(
                    "/v1/capabilities/workspaces.get-inbound-address",
                    json={},
                    headers=headers(server.attacker),
                )
            address = str(answer.json()["data"]["result"]["address"])
        return address

    async def post_mail(data: bytes, to: str) -> tuple[int, float]:
        started = time.perf_counter()
        async with httpx.AsyncClient(base_url=base, timeout=300) as http:
            answer = await http.post(
                "/v1/inbound/email",
                content=data,
                params={"to": to},
                headers={
                    "Authorization": f"Bearer {INBOUND_SECRET}",
                    "Content-Type": "message/rfc822",
                },
            )
        return answer.status_code, time.perf_counter() - started

    def mail_attack(build: Callable[[str], bytes]) -> Callable[[], Awaitable[dict[str, float]]]:
        async def attack() -> dict[str, float]:
            to = await inbound_address()
            smtp_code, smtp_s = await asyncio.to_thread(smtp_send, server.smtp_port, to, build(to))
            http_status, http_s = await post_mail(build(to), to)
            return {
                "smtp_code": float(smtp_code),
                "smtp_s": smtp_s,
                "http_status": float(http_status),
                "http_s": http_s,
            }

        return attack

    async def thumbnail_bomb() -> dict[str, float]:
        bomb = png_bomb(13000)
        async with httpx.AsyncClient(base_url=base, timeout=300) as http:
            refused = await http.post(
                "/v1/capabilities/files.upload",
                json={"fileName": "bomb.png", "base64Data": base64.b64encode(bomb).decode()},
                headers=headers(server.attacker),
            )
            document_id = await plant_original(server, server.attacker, "bomb.png", bomb)
            url = f"/v1/files/{document_id}/thumbnail"
            started = time.perf_counter()
            answers = await asyncio.gather(
                *(http.get(url, headers=headers(server.attacker)) for _ in range(2))
            )
            first_s = time.perf_counter() - started
            # A stored thumbnail (or its placeholder) is served from then on.
            for _ in range(100):
                again = await http.get(url, headers=headers(server.attacker))
                if again.status_code != 202:
                    break
                await asyncio.sleep(0.2)
        return {
            "upload_status": float(refused.status_code),
            "thumb_status": float(answers[0].status_code),
            "both_answered_s": first_s,
            "later_status": float(again.status_code),
        }

    async def attachments_then_victim() -> dict[str, float]:
        to = await inbound_address()
        mail = attachments_message(to, 500, (FIXTURES / "text-layer.pdf").read_bytes())
        async with httpx.AsyncClient(base_url=base, timeout=600) as http:
            status, _ = await post_mail(mail, to)
            started = time.perf_counter()
            victim_id = await upload(
                http, server.victim, "receipt.png", (FIXTURES / "receipt.png").read_bytes()
            )
            await wait_processed(http, server.victim, victim_id)
            victim_s = time.perf_counter() - started
        cleared = await clear_backlog(server, server.attacker)
        return {"mail_status": float(status), "victim_upload_s": victim_s, "cleared": cleared}

    return {
        "mail: 40,000 To addresses": mail_attack(
            lambda to: many_recipients_mail(to, 40_000, f"<rcpt-{time.time_ns()}@example.com>")
        ),
        "mail: MIME nested 1,000 levels": mail_attack(
            lambda to: nested_mail(to, 1000, message_id=f"<nested-{time.time_ns()}@example.com>")
        ),
        "thumbnail: 13000² PNG stored, 2 GETs": thumbnail_bomb,
        "upload: victim's receipt behind 500 attachments": attachments_then_victim,
    }


# Issue 25, part B: outbound connections, OAuth registration and sign-in, rules.prepare -------
#
# Appended to the table by main(). Each attack is measured like the others (victim latency and
# the serve tree's memory while it runs); the extra columns say what the attacker got.


def data_dir_of(server: Server) -> Path:
    return Path(psutil.Process(server.process.pid).environ()["FINCAP_DATA_DIR"])


def stored_mb(server: Server) -> float:
    """The embedded store's files on disk, in MB."""
    root = data_dir_of(server) / "db"
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file()) / MB


def registration(client_name: str) -> dict[str, Any]:
    return {
        "client_name": client_name,
        "redirect_uris": ["http://127.0.0.1:33418/callback"],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
    }


def trust_attacks(server: Server) -> dict[str, Callable[[], Awaitable[dict[str, float]]]]:
    base = server.base

    async def registration_flood_big() -> dict[str, float]:
        before = stored_mb(server)
        async with httpx.AsyncClient(base_url=base, timeout=300) as http:
            codes = [
                (
                    await http.post("/v1/oauth/register", json=registration("x" * 10 * MB))
                ).status_code
                for _ in range(20)
            ]
        return {"accepted": float(codes.count(201)), "stored_mb": stored_mb(server) - before}

    async def registration_flood_small() -> dict[str, float]:
        limits = httpx.Limits(max_connections=10)
        async with httpx.AsyncClient(base_url=base, timeout=600, limits=limits) as http:
            answers = await asyncio.gather(
                *(http.post("/v1/oauth/register", json=registration(f"c{n}")) for n in range(200))
            )
        codes = [a.status_code for a in answers]
        return {"accepted": float(codes.count(201)), "refused_429": float(codes.count(429))}

    async def healthz_burst() -> dict[str, float]:
        """The floor for a burst: the cheapest request there is, at the registration floods'
        rate (200 requests over 10 connections)."""
        limits = httpx.Limits(max_connections=10)
        async with httpx.AsyncClient(base_url=base, timeout=600, limits=limits) as http:
            answers = await asyncio.gather(*(http.get("/healthz") for _ in range(200)))
        return {"ok": float(sum(a.status_code == 200 for a in answers))}

    async def sign_in_guessing() -> dict[str, float]:
        async with httpx.AsyncClient(base_url=base, timeout=60) as http:
            client = await http.post("/v1/oauth/register", json=registration("guesser"))
            if client.status_code != 201:  # the registration limit of an earlier attack
                return {"guesses": 0.0}
            params = {
                "response_type": "code",
                "client_id": client.json()["client_id"],
                "redirect_uri": "http://127.0.0.1:33418/callback",
                "code_challenge": "x" * 43,
                "code_challenge_method": "S256",
                "scope": "read_documents",
            }
            start = await http.get("/v1/oauth/authorize", params=params)
            page = await http.get(start.headers["location"])
            fields = dict(re.findall(r'name="(request|csrf)" value="([^"]*)"', page.text))
            codes = []
            started = time.perf_counter()
            for n in range(199):
                form = {**{k: html.unescape(v) for k, v in fields.items()}}
                form |= {"email": "victor@example.com", "password": f"guess-{n}"}
                codes.append((await http.post("/v1/oauth/sign-in", data=form)).status_code)
            seconds = time.perf_counter() - started
        return {
            "wrong_401": float(codes.count(401)),
            "held_429": float(codes.count(429)),
            "checked_per_s": codes.count(401) / seconds,
        }

    sentence = (
        "When an invoice from Acme or Globex or Initech or Umbrella or Hooli or Stark or Wayne "
        "arrives over 100 EUR between monday and friday in Germany or France or Spain, set the "
        "category to Office and notify ops@example.com and archive it "
    )

    async def prepare_flood() -> dict[str, float]:
        """Six keys of the attacker's (five minted with api-keys.create), each reading new
        sentences back to back for 10 s."""
        codes: list[int] = []
        stop_at = time.monotonic() + 10

        async def keep_parsing(worker: int, key: str, http: httpx.AsyncClient) -> None:
            n = 0
            while time.monotonic() < stop_at:
                n += 1  # a new sentence each time: no cached reading
                text = f"{sentence} {worker} {n} " + sentence
                answer = await http.post(
                    "/v1/capabilities/rules.prepare",
                    json={"naturalLanguageRule": text[:1000]},
                    headers={"Authorization": f"Bearer {key}", "X-Service-Org-Id": org},
                )
                codes.append(answer.status_code)
                if answer.status_code == 429:
                    await asyncio.sleep(float(answer.headers.get("retry-after", "1")))

        org = server.attacker["orgId"]
        async with httpx.AsyncClient(base_url=base, timeout=120) as http:
            keys = [server.attacker["apiKey"]]
            for n in range(5):
                minted = await http.post(
                    "/v1/capabilities/api-keys.create",
                    json={"name": f"flood-{n}-{time.time_ns()}"},
                    headers=headers(server.attacker),
                )
                keys.append(minted.json()["data"]["result"]["apiKey"])
            await asyncio.gather(*(keep_parsing(w, k, http) for w, k in enumerate(keys)))
        return {"parsed": float(codes.count(200)), "refused_429": float(codes.count(429))}

    async def ssrf_probes() -> dict[str, float]:
        state = json.loads((data_dir_of(server) / "server.json").read_text())
        store_port = int(state["uri"].rsplit(":", 1)[1].split("/")[0].split("?")[0])
        api_port = int(base.rsplit(":", 1)[1])
        targets = [
            ("127.0.0.1", store_port),  # the database: another service's bytes
            ("127.1", api_port),  # the API itself: an HTTP banner
            ("2130706433", free_port()),  # a closed port: refused
            ("0", 22),
            ("localhost", 25),
            ("10.255.255.1", 143),  # nothing answers: a timeout
        ]
        texts = set()
        async with httpx.AsyncClient(base_url=base, timeout=120) as http:
            for host, port in targets:
                answer = await http.post(
                    "/v1/capabilities/mailboxes.connect",
                    json={
                        "server": host,
                        "port": port,
                        "security": "none",
                        "username": "u",
                        "password": "p",
                    },
                    headers=headers(server.attacker),
                )
                failure = answer.json().get("error", {})
                message = failure.get("errorMessage", str(answer.status_code))
                texts.add(message.replace(f"{host}:{port}", "H:P").replace(host, "H"))
            # As a workspace may: saving rules does not wait for approval (else the rule's
            # webhook is checked only when an owner approves it).
            await http.post(
                "/v1/capabilities/approvals.configure",
                json={"capabilitySlug": "rules.execute", "gated": False},
                headers=headers(server.attacker),
            )
            hook = await http.post(
                "/v1/capabilities/rules.execute",
                json={
                    "naturalLanguageRule": f"Post to http://127.1:{store_port}/x when a receipt "
                    "arrives",
                    "confirm": True,
                },
                headers=headers(server.attacker),
            )
        saved = hook.is_success and hook.json()["data"]["result"].get("status") == "created"
        return {"distinct_errors": float(len(texts)), "webhook_saved": float(saved)}

    # In this order: the registration floods last, since what they leave behind (stored
    # clients, the address's spent registrations) would change the attacks after them.
    return {
        "ssrf: mailbox probes, loopback webhook": ssrf_probes,
        "rules.prepare: 6 keys, 10 s": prepare_flood,
        "oauth: 199 sign-in guesses": sign_in_guessing,
        "control: 200 × GET /healthz, 10 at once": healthz_burst,
        "oauth: 200 registrations, one address": registration_flood_small,
        "oauth: 20 registrations, 10 MB names": registration_flood_big,
    }


# Issue 35: streams and sockets that follow authorization, the sign-in burst, memory per tenant
# ------------------------------------------------------------------------------------------------
#
# The probe's attacks of round 3, appended to the table. "kept_mb" (every row) is the serve
# tree's memory as the attack ends, over its memory at rest: what the attack left behind.


async def new_key(http: httpx.AsyncClient, tenant: dict[str, str], name: str) -> dict[str, str]:
    minted = await http.post(
        "/v1/capabilities/api-keys.create",
        json={"name": f"{name}-{time.time_ns()}"},
        headers=headers(tenant),
    )
    result = minted.json()["data"]["result"]
    return {**tenant, "apiKey": result["apiKey"], "keyId": result["key"]["id"]}


def round3_attacks(server: Server) -> dict[str, Callable[[], Awaitable[dict[str, float]]]]:
    base = server.base
    ws_base = base.replace("http://", "ws://") + "/v1/graphql"

    async def busy_updates(http: httpx.AsyncClient, stop: asyncio.Event) -> int:
        """The attacker's documents updated back to back: a workspace that never goes quiet."""
        ids = [
            d["id"]
            for d in (
                await http.post(
                    "/v1/capabilities/documents.search",
                    json={"useSearch": False, "limit": 20},
                    headers=headers(server.attacker),
                )
            ).json()["data"]["result"]["documents"]
        ]
        n = 0
        while not stop.is_set():
            await http.post(
                "/v1/capabilities/documents.update",
                json={"id": ids[n % len(ids)], "merchant": f"Busy {n}"},
                headers=headers(server.attacker),
            )
            n += 1
        return n

    async def revocation_latency() -> dict[str, float]:
        """H1: an SSE stream of a key revoked while its workspace is busy; seconds from the
        revocation's answer to the stream's end, and events received after the revocation."""
        async with httpx.AsyncClient(base_url=base, timeout=120) as http:
            key = await new_key(http, server.attacker, "h1")
            stop = asyncio.Event()
            writer = asyncio.create_task(busy_updates(http, stop))
            after = 0
            revoked_at = 0.0
            async with http.stream("GET", "/v1/events", headers=headers(key)) as stream:
                lines = stream.aiter_lines()
                async for line in lines:
                    if line.startswith("event: document"):
                        break  # the stream receives: now revoke
                await http.post(
                    "/v1/capabilities/api-keys.revoke",
                    json={"id": key["keyId"]},
                    headers=headers(server.attacker),
                )
                revoked_at = time.perf_counter()
                with contextlib.suppress(httpx.HTTPError):
                    async for line in lines:
                        after += line.startswith("event: document")
                        if time.perf_counter() - revoked_at > 60:
                            break
                ended = time.perf_counter() - revoked_at
            stop.set()
            await writer
        return {"ended_after_s": ended, "events_after": float(after)}

    async def sign_in_burst() -> dict[str, float]:
        """H2: 100 wrong passwords for the victim at once from one address, and the victim's
        own sign-in meanwhile (another address is not possible on loopback; a second client)."""
        async with httpx.AsyncClient(base_url=base, timeout=120) as http:
            client = await http.post("/v1/oauth/register", json=registration("burst"))
            if client.status_code != 201:
                return {"skipped": 1.0}
            params = {
                "response_type": "code",
                "client_id": client.json()["client_id"],
                "redirect_uri": "http://127.0.0.1:33418/callback",
                "code_challenge": "x" * 43,
                "code_challenge_method": "S256",
                "scope": "read_documents",
            }
            start = await http.get("/v1/oauth/authorize", params=params)
            page = await http.get(start.headers["location"])
            fields = dict(re.findall(r'name="(request|csrf)" value="([^"]*)"', page.text))
            form = {k: html.unescape(v) for k, v in fields.items()}

            async def guess(password: str) -> tuple[int, float]:
                started = time.perf_counter()
                answer = await http.post(
                    "/v1/oauth/sign-in", data={**form, "email": VICTIM_EMAIL, "password": password}
                )
                return answer.status_code, time.perf_counter() - started

            answers = await asyncio.gather(*(guess(f"guess {n}") for n in range(100)))
            codes = [code for code, _ in answers]
        return {
            "wrong_401": float(codes.count(401)),
            "held_429": float(codes.count(429)),
            "errors_5xx": float(sum(c >= 500 for c in codes)),
            "slowest_s": max(seconds for _, seconds in answers),
        }

    async def unique_documents() -> dict[str, float]:
        """M1: 600 unique ~64 KB GraphQL documents, no credential."""
        async with httpx.AsyncClient(base_url=base, timeout=120) as http:
            codes = []
            for n in range(600):
                document = f"query Q{n} {{ " + " ".join(f"a{i}: __typename" for i in range(600))
                document += " }\n#" + "c" * (60_000 - len(document))
                codes.append((await http.post("/v1/graphql", json={"query": document})).status_code)
        return {"answered_200": float(codes.count(200))}

    async def bulk_edit_long_summaries() -> dict[str, float]:
        """M2: bulk edits of the attacker's documents, whose summaries are 1,000 characters:
        every edited document is embedded again."""
        async with httpx.AsyncClient(base_url=base, timeout=300) as http:
            await http.post(
                "/v1/capabilities/approvals.configure",
                json={"capabilitySlug": "documents.bulk-edit", "gated": False},
                headers=headers(server.attacker),
            )
            preview = await http.post(
                "/v1/capabilities/documents.bulk-edit",
                json={"changes": {"merchant": "x"}, "query": "receipt", "dryRun": True},
                headers=headers(server.attacker),
            )
            categories = (preview.json().get("data", {}).get("result", {}) or {}).get(
                "categories"
            ) or []
            edited = 0
            for n, category in enumerate(categories[:3]):
                answer = await http.post(
                    "/v1/capabilities/documents.bulk-edit",
                    json={
                        "changes": {"merchant": f"Bulk {n} {time.time_ns()}"},
                        "category": category,
                        "dryRun": False,
                    },
                    headers=headers(server.attacker),
                )
                edited += int(answer.json().get("data", {}).get("result", {}).get("modified") or 0)
        return {"edited": float(edited)}

    def regex(pattern: str) -> Callable[[], Awaitable[dict[str, float]]]:
        async def attack() -> dict[str, float]:
            clause = {"conditions": [{"field": "summary", "op": "regex", "value": pattern}]}
            async with httpx.AsyncClient(base_url=base, timeout=600) as http:
                started = time.perf_counter()
                answers = await asyncio.gather(
                    *(
                        http.post(
                            "/v1/capabilities/documents.count",
                            json={"where": clause},
                            headers=headers(server.attacker),
                        )
                        for _ in range(4)
                    )
                )
            return {
                "query_s": time.perf_counter() - started,
                "status": float(answers[0].status_code),
            }

        return attack

    async def streams_over_keys() -> dict[str, float]:
        """M5: 100 keys of the attacker's, 10 streams each, then a bulk edit of the attacker's
        documents while they are open."""
        async with httpx.AsyncClient(base_url=base, timeout=300) as http:
            keys = [await new_key(http, server.attacker, f"m5-{n}") for n in range(100)]
        limits = httpx.Limits(max_connections=1100, max_keepalive_connections=0)
        opened: list[int] = []
        async with contextlib.AsyncExitStack() as stack:
            streamer = await stack.enter_async_context(
                httpx.AsyncClient(base_url=base, timeout=300, limits=limits)
            )

            async def open_one(key: dict[str, str]) -> None:
                response = await stack.enter_async_context(
                    streamer.stream("GET", "/v1/events", headers=headers(key))
                )
                opened.append(response.status_code)

            await asyncio.gather(*(open_one(k) for k in keys for _ in range(10)))
            await bulk_edit_long_summaries()
        return {"open_200": float(opened.count(200)), "refused_429": float(opened.count(429))}

    async def socket_messages() -> dict[str, float]:
        """16 MB WebSocket messages before connection_init, 40 sockets (uvicorn's default bound
        was 16 MB; the app parsed them)."""
        import websockets

        closed = 0

        async def one() -> None:
            nonlocal closed
            try:
                async with websockets.connect(
                    ws_base, subprotocols=["graphql-transport-ws"], max_size=None
                ) as ws:
                    await ws.send('{"type":"connection_init","payload":{"x":"' + "a" * 16 * MB)
                    await asyncio.wait_for(ws.recv(), 30)
            except Exception:
                closed += 1

        async def all_of_them() -> None:
            await asyncio.gather(*(one() for _ in range(40)))

        # In a thread of its own: sending 640 MB would otherwise hold the event loop the
        # victim's calls are timed on.
        await asyncio.to_thread(asyncio.run, all_of_them())
        return {"closed": float(closed)}

    async def socket_operations() -> dict[str, float]:
        """2,000 operations sent on one socket at once, and 100,000 nested brackets."""
        import websockets

        async with websockets.connect(ws_base, subprotocols=["graphql-transport-ws"]) as ws:
            init = {
                "Authorization": f"Bearer {server.attacker['apiKey']}",
                "X-Service-Org-Id": server.attacker["orgId"],
            }
            await ws.send(json.dumps({"type": "connection_init", "payload": init}))
            await ws.recv()
            query = "subscription { documentEvents { type } }"
            for n in range(2000):
                await ws.send(
                    json.dumps({"id": str(n), "type": "subscribe", "payload": {"query": query}})
                )
            refused = 0
            with contextlib.suppress(Exception):
                while True:
                    message = json.loads(await asyncio.wait_for(ws.recv(), 5))
                    refused += message.get("type") == "error"
                    if refused >= 1900:
                        break
        deep_closed = 0.0
        with contextlib.suppress(Exception):
            async with websockets.connect(ws_base, subprotocols=["graphql-transport-ws"]) as ws:
                await ws.send(json.dumps({"type": "connection_init", "payload": init}))
                await ws.recv()
                await ws.send("[" * 100_000)
                await asyncio.wait_for(ws.recv(), 10)
        with contextlib.suppress(Exception):
            deep_closed = float(ws.close_code or 0)
        return {"refused": float(refused), "deep_json_close": deep_closed}

    return {
        "H1: SSE key revoked in a busy workspace": revocation_latency,
        "H2: 100 wrong passwords at once": sign_in_burst,
        "M1: 600 × 64 KB unique GraphQL, no key": unique_documents,
        "M2: bulk edits, 1,000-char summaries": bulk_edit_long_summaries,
        "M3: 4 × count, regex a?[a-z]*! (now 400)": regex("a?[a-z]*!"),
        "M3: 4 × count, regex [a-z]{0,15}!": regex("[a-z]{0,15}!"),
        "M5: 100 keys × 10 streams + bulk edit": streams_over_keys,
        "ws: 40 × 16 MB before connection_init": socket_messages,
        "ws: 2,000 operations, deep JSON": socket_operations,
    }


if __name__ == "__main__":
    asyncio.run(main())
