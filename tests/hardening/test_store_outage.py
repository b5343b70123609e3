"""A store outage, honestly (issue 35, F2/F3): every face says 503 (or its own word for it)
within a few seconds while the store is away, never the driver's text, and serves again by
itself when the store is back.

The live test kills a store the test owns (SecantusDB, to ``fincap serve`` a MongoDB deployment
that goes away) under a steady load of calls, checks each face, starts the store again on the
same port and files and waits for the service to answer again, without restarting it. The
embedded store of ``fincap serve`` is its own child: killed, ``fincap serve`` starts it again.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import smtplib
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import psutil
import pytest
from websockets.sync.client import connect as ws_connect

from app.host.config import Settings
from app.inbound.smtp import start_smtp_server
from persistence.client import connect
from persistence.embedded import STATE_FILE, free_port
from persistence.store import Store
from tests.conftest import app_on, make_tenant, worker_pool
from tests.events.streams import SseReader
from tests.hardening.faults import FINCAP, OwnStore, admin, serve_env, until
from tests.live import Served, discard, refused_address, start_serve
from tests.sources.mail import message

pytestmark = pytest.mark.wire

# The bound: a face answers within this while the store is away.
ANSWER_WITHIN_S = 5.0
DRIVER_WORDS = ("Topology", "ServerSelection", "AutoReconnect", "pymongo", "Errno")
SEARCH = {"useSearch": False, "limit": 1}
GRAPHQL = {"query": "{ workspacesList { workspaces { id } } }"}
SUBSCRIPTION = "subscription { documentEvents { id type } }"


def mcp_call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    }


MCP_HEADERS = {"Accept": "application/json, text/event-stream"}


async def until_async(check: Callable[[], Awaitable[bool]], deadline_s: float = 60) -> None:
    deadline = time.monotonic() + deadline_s
    while not await check():
        assert time.monotonic() < deadline, "not reached in time"
        await asyncio.sleep(0.05)


async def _true(value: bool) -> bool:
    return value


def no_driver_text(text: str) -> None:
    for word in DRIVER_WORDS:
        assert word not in text, text


@dataclass
class Load:
    """Calls made over and over from threads for as long as the test runs: every answer's
    status, ``Retry-After``, body and time."""

    base: str
    headers: dict[str, str]
    seen: list[tuple[int, str | None, str, float]] = field(default_factory=list)
    stopping: threading.Event = field(default_factory=threading.Event)

    def run(self) -> None:
        with httpx.Client(timeout=30) as client:
            while not self.stopping.is_set():
                started = time.monotonic()
                try:
                    answer = client.post(
                        f"{self.base}/v1/capabilities/documents.search",
                        json=SEARCH,
                        headers=self.headers,
                    )
                except httpx.HTTPError as exc:
                    self.seen.append((0, None, repr(exc), time.monotonic() - started))
                    continue
                self.seen.append(
                    (
                        answer.status_code,
                        answer.headers.get("retry-after"),
                        answer.text,
                        time.monotonic() - started,
                    )
                )


@dataclass
class Outage:
    store: OwnStore
    served: Served
    headers: dict[str, str]
    address: str
    smtp_port: int


@pytest.fixture
def outage(tmp_path: Path) -> Iterator[Outage]:
    store = OwnStore(tmp_path / "store", tmp_path / "store.log")
    store.start()
    data_dir = tmp_path / "data"
    smtp_port = free_port()
    env = serve_env(
        data_dir,
        MONGODB_URI=store.uri,
        FINCAP_INBOUND_SMTP_PORT=str(smtp_port),
        FINCAP_INBOUND_DOMAIN="in.outage.test",
        FINCAP_EVENTS_POLL_SECONDS="0.1",
    )
    boot = admin(env, "bootstrap", "--email", "ops@example.com", "--workspace", "Ops")
    served = start_serve([*FINCAP, "serve"], env, tmp_path / "serve.log")
    headers = {"Authorization": f"Bearer {boot['apiKey']}", "X-Service-Org-Id": boot["orgId"]}
    try:
        address = httpx.post(
            f"{served.base}/v1/capabilities/workspaces.get-inbound-address",
            json={},
            headers=headers,
        ).json()["data"]["result"]["address"]
        yield Outage(store, served, headers, address, smtp_port)
    finally:
        discard(served.process)  # nothing here checks a clean stop
        store.stop()


def smtp_replies(port: int, recipient: str) -> list[tuple[int, str]]:
    """The receiver's replies to MAIL, RCPT and (when both were taken) DATA of one message."""
    replies: list[tuple[int, str]] = []
    with smtplib.SMTP("127.0.0.1", port, timeout=30) as client:
        client.ehlo()
        code, text = client.mail("carol@example.org")
        replies.append((code, text.decode()))
        if code == 250:
            code, text = client.rcpt(recipient)
            replies.append((code, text.decode()))
            if code == 250:
                code, text = client.data(message(to=recipient).as_bytes())
                replies.append((code, text.decode()))
        client.rset()
    return replies


class SseStream:
    """``GET /v1/events`` read in a thread: its messages as they come, and whether it ended."""

    def __init__(self, base: str, headers: dict[str, str]) -> None:
        self.reader = SseReader()
        self.status = 0
        self.ended = threading.Event()
        self.opened = threading.Event()
        self.thread = threading.Thread(target=self._read, args=(base, headers), daemon=True)
        self.thread.start()

    def _read(self, base: str, headers: dict[str, str]) -> None:
        try:
            with (
                httpx.Client(timeout=httpx.Timeout(10, read=120)) as client,
                client.stream("GET", f"{base}/v1/events", headers=headers) as response,
            ):
                self.status = response.status_code
                self.opened.set()
                for text in response.iter_text():
                    self.reader.feed(text)
        except httpx.HTTPError:
            pass
        finally:
            self.opened.set()
            self.ended.set()


@contextlib.contextmanager
def subscribed(base: str, headers: dict[str, str]) -> Iterator[Any]:
    """A graphql-transport-ws socket subscribed to ``documentEvents``."""
    url = base.replace("http://", "ws://") + "/v1/graphql"
    with ws_connect(url, subprotocols=["graphql-transport-ws"]) as ws:  # type: ignore[list-item]
        ws.send(json.dumps({"type": "connection_init", "payload": headers}))
        assert json.loads(ws.recv(timeout=30))["type"] == "connection_ack"
        ws.send(json.dumps({"id": "1", "type": "subscribe", "payload": {"query": SUBSCRIPTION}}))
        yield ws


def test_a_store_killed_under_load_is_answered_503_and_the_service_recovers_by_itself(
    outage: Outage,
) -> None:
    base, headers = outage.served.base, outage.headers
    load = Load(base, headers)
    threads = [threading.Thread(target=load.run, daemon=True) for _ in range(2)]
    for thread in threads:
        thread.start()
    stream = SseStream(base, headers)
    assert stream.opened.wait(60) and stream.status == 200
    with contextlib.ExitStack() as cleanup:
        socket_ = cleanup.enter_context(subscribed(base, headers))
        cleanup.callback(load.stopping.set)
        until(lambda: len(load.seen) >= 4, 60, "the load made no calls")
        assert {status for status, *_ in load.seen} == {200}

        outage.store.kill()
        killed_at = time.monotonic()
        failed_at = len(load.seen)

        # REST: 503 with Retry-After and the envelope, within the bound, no driver text.
        started = time.monotonic()
        answer = httpx.post(
            f"{base}/v1/capabilities/documents.search", json=SEARCH, headers=headers, timeout=60
        )
        assert time.monotonic() - started <= ANSWER_WITHIN_S
        assert answer.status_code == 503, answer.text
        assert int(answer.headers["retry-after"]) > 0
        error = answer.json()["error"]
        assert error["errorCode"] == 503 and error["reason"] == "service_unavailable"
        no_driver_text(answer.text)

        # GraphQL: 503 with Retry-After, the error's extensions say why.
        started = time.monotonic()
        answer = httpx.post(f"{base}/v1/graphql", json=GRAPHQL, headers=headers, timeout=60)
        assert time.monotonic() - started <= ANSWER_WITHIN_S
        assert answer.status_code == 503, answer.text
        assert int(answer.headers["retry-after"]) > 0
        [graphql_error] = answer.json()["errors"]
        assert graphql_error["extensions"]["code"] == "SERVICE_UNAVAILABLE"
        assert graphql_error["extensions"]["retryAfter"] > 0
        no_driver_text(answer.text)

        # MCP: a JSON-RPC error saying the same.
        started = time.monotonic()
        answer = httpx.post(
            f"{base}/mcp",
            json=mcp_call("documents_search", SEARCH),
            headers={**headers, **MCP_HEADERS},
            timeout=60,
        )
        assert time.monotonic() - started <= ANSWER_WITHIN_S
        rpc = answer.json()
        assert rpc["error"]["code"] == -32004, rpc
        assert rpc["error"]["data"]["reason"] == "service_unavailable"
        no_driver_text(answer.text)

        # SMTP, through a real client: a temporary 451 4.3.0, never a 5xx or the driver's text.
        started = time.monotonic()
        replies = smtp_replies(outage.smtp_port, outage.address)
        assert time.monotonic() - started <= ANSWER_WITHIN_S
        assert replies[-1][0] == 451 and replies[-1][1].startswith("4.3.0"), replies
        assert all(code < 500 for code, _ in replies), replies
        no_driver_text(str(replies))

        # The live streams: SSE sends an error event and ends; the subscription ends in error.
        assert stream.ended.wait(30), "the event stream stayed open with the store gone"
        last = stream.reader.pending[-1]
        assert last.event == "error" and last.data["error"]["reason"] == "service_unavailable"
        assert last.data["error"]["retryAfter"] > 0
        received = [json.loads(socket_.recv(timeout=30)) for _ in range(2)]
        assert [m["type"] for m in received] == ["next", "complete"], received
        [stream_error] = received[0]["payload"]["errors"]
        assert stream_error["extensions"]["code"] == "SERVICE_UNAVAILABLE"

        # Readiness fails, liveness answers and names the store's state.
        ready = httpx.get(f"{base}/readyz", timeout=60)
        assert ready.status_code == 503 and ready.json()["checks"]["store"] is False
        health = httpx.get(f"{base}/healthz", timeout=60)
        assert health.status_code == 200
        assert health.json()["status"] == "degraded"
        assert health.json()["store"]["state"] == "down"

        # Under load, every call answered 503 within the bound while the store was away.
        until(lambda: len(load.seen) >= failed_at + 4, 60, "the load stopped")
        during = load.seen[failed_at:]
        assert all(status in (200, 503) for status, *_ in during), during
        assert any(status == 503 for status, *_ in during)
        for status, retry_after, text, took in during:
            if status == 503:
                assert retry_after and took <= ANSWER_WITHIN_S, (retry_after, took)
                no_driver_text(text)

        # The store comes back on the same port and files: the service answers again by
        # itself, no restart of fincap.
        outage.store.start()
        restarted_at = time.monotonic()
        until(
            lambda: (
                httpx.post(
                    f"{base}/v1/capabilities/documents.search", json=SEARCH, headers=headers
                ).status_code
                == 200
            ),
            60,
            "REST did not recover",
        )
        settled = time.monotonic() - restarted_at
        assert httpx.post(f"{base}/v1/graphql", json=GRAPHQL, headers=headers).status_code == 200
        rpc = httpx.post(
            f"{base}/mcp",
            json=mcp_call("documents_search", SEARCH),
            headers={**headers, **MCP_HEADERS},
        ).json()
        assert "error" not in rpc and not rpc["result"].get("isError"), rpc
        until(
            lambda: httpx.get(f"{base}/readyz").status_code == 200, 60, "readiness did not recover"
        )
        until(
            lambda: httpx.get(f"{base}/healthz").json()["store"]["state"] == "up",
            60,
            "health did not say the store is up",
        )
        replies = smtp_replies(outage.smtp_port, outage.address)
        assert [code for code, _ in replies] == [250, 250, 250], replies
        again = SseStream(base, headers)
        assert again.opened.wait(60) and again.status == 200
        load.stopping.set()
        for thread in threads:
            thread.join(60)
        assert load.seen[-1][0] == 200
        sys.stderr.write(
            f"store outage of {restarted_at - killed_at:.1f} s: answering again "
            f"{settled:.2f} s after the store restarted\n"
        )


def test_a_killed_embedded_store_is_started_again_by_serve(tmp_path: Path) -> None:
    """``fincap serve``'s own store (SecantusDB, its child) killed: serve starts it again on
    the same port and files, announces it to other processes, and answers again."""
    data_dir = tmp_path / "data"
    env = serve_env(data_dir)
    served = start_serve([*FINCAP, "serve"], env, tmp_path / "serve.log")
    try:
        # Joins serve's store (before serve, it would start and stop a private one).
        boot = admin(env, "bootstrap", "--email", "ops@example.com", "--workspace", "Ops")
        headers = {"Authorization": f"Bearer {boot['apiKey']}", "X-Service-Org-Id": boot["orgId"]}
        state = json.loads((data_dir / STATE_FILE).read_text())
        supervisor = psutil.Process(state["pid"])
        for process in [*supervisor.children(recursive=True), supervisor]:
            process.kill()
        killed_at = time.monotonic()
        until(
            lambda: json.loads((data_dir / STATE_FILE).read_text())["pid"] != state["pid"],
            60,
            "serve did not start its store again",
        )
        until(
            lambda: (
                httpx.post(
                    f"{served.base}/v1/capabilities/documents.search", json=SEARCH, headers=headers
                ).status_code
                == 200
            ),
            60,
            "the service did not answer again",
        )
        settled = time.monotonic() - killed_at
        restarted = json.loads((data_dir / STATE_FILE).read_text())
        assert restarted["uri"] == state["uri"] and psutil.pid_exists(restarted["pid"])
        health = httpx.get(f"{served.base}/healthz").json()
        assert health["store"]["restarts"] == 1
        assert "ended" in health["store"]["lastRestart"]
        sys.stderr.write(f"embedded store killed: answering again after {settled:.2f} s\n")
    finally:
        discard(served.process)


async def test_every_face_answers_an_unreachable_store_with_503_and_no_driver_text() -> None:
    """In-process, on a store whose address refuses connections: REST, GraphQL, MCP and a
    plain route each say 503 with ``Retry-After`` within the store timeout (not the driver's
    30 s), never the driver's words."""
    with refused_address() as address:
        client, db = connect(
            f"mongodb://{address}/?directConnection=true", serverSelectionTimeoutMS=500
        )
        store = Store(db)
        app = app_on(store, settings=Settings(inbound_secret="relay-secret-for-tests"))
        headers = {"Authorization": "Bearer sk_" + "x" * 40, "X-Service-Org-Id": "org_x"}
        transport = httpx.ASGITransport(app=app)
        try:
            async with httpx.AsyncClient(transport=transport, base_url="http://t") as http:
                started = time.monotonic()
                rest = await http.post(
                    "/v1/capabilities/documents.search", json=SEARCH, headers=headers
                )
                graphql = await http.post("/v1/graphql", json=GRAPHQL, headers=headers)
                mcp = await http.post(
                    "/mcp",
                    json=mcp_call("documents_search", {}),
                    headers={**headers, **MCP_HEADERS},
                )
                document = await http.get("/v1/documents/doc_x", headers=headers)
                relay = await http.post(
                    "/v1/inbound/email",
                    params={"to": "someone@inbound.localhost"},
                    content=message(to="someone@inbound.localhost").as_bytes(),
                    headers={"Authorization": "Bearer relay-secret-for-tests"},
                )
                took = time.monotonic() - started
        finally:
            client.close()
    assert took < 4 * ANSWER_WITHIN_S
    for answer in (rest, graphql, mcp, document, relay):
        assert answer.status_code == 503, answer.text
        assert int(answer.headers["retry-after"]) > 0
        no_driver_text(answer.text)
    assert rest.json()["error"]["reason"] == "service_unavailable"
    assert graphql.json()["errors"][0]["extensions"]["code"] == "SERVICE_UNAVAILABLE"
    assert mcp.json()["error"]["code"] == -32004


async def test_smtp_answers_451_at_rcpt_and_at_data_while_the_store_is_away(
    tmp_path: Path,
) -> None:
    """The real receiver and a real SMTP client (smtplib): the store killed before ``RCPT``
    (the receiver's view of the store still says up) and between ``RCPT`` and ``DATA``; each
    stage answers ``451 4.3.0``, never aiosmtpd's ``500`` quoting the exception."""
    own = OwnStore(tmp_path / "store", tmp_path / "store.log")
    own.start()
    from persistence.health import StoreHealth

    health = StoreHealth()  # what the driver sees of the store, as a server wires it
    client, db = connect(own.uri, serverSelectionTimeoutMS=1000, event_listeners=[health.listener])
    store = Store(db, health=health)
    await store.ensure_indexes()
    tenant = await make_tenant(store, "alice@example.com", "Alice Co")
    services = worker_pool(store).services
    record = await store.inbound_addresses.get_or_create(tenant.org_id)
    address = f"{record['alias']}@{services.sources.inbound_domain}"
    server = await start_smtp_server(services, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    mail = message(to=address).as_bytes()

    def transaction(kill_before: str | None) -> list[tuple[int, str]]:
        """MAIL, RCPT and DATA of one message, the store killed before ``kill_before``."""
        replies: list[tuple[int, str]] = []
        with smtplib.SMTP("127.0.0.1", port, timeout=30) as smtp:
            smtp.ehlo()
            for stage in ("mail", "rcpt", "data"):
                if stage == kill_before:
                    own.kill()
                if stage == "mail":
                    code, text = smtp.mail("carol@example.org")
                elif stage == "rcpt":
                    code, text = smtp.rcpt(address)
                else:
                    code, text = smtp.data(mail)
                replies.append((code, text.decode()))
                if code != 250:
                    break
        return replies

    try:
        # Killed before RCPT: the recipient cannot be looked up; refused for now.
        replies = await asyncio.to_thread(transaction, "rcpt")
        assert [code for code, _ in replies] == [250, 451], replies
        assert replies[-1][1].startswith("4.3.0")
        no_driver_text(str(replies))
        # Back, then killed between RCPT and DATA: the message is refused for now.
        own.start()
        await until_async(lambda: _true(health.state == "up"))
        replies = await asyncio.to_thread(transaction, "data")
        assert [code for code, _ in replies] == [250, 250, 451], replies
        assert replies[-1][1].startswith("4.3.0")
        no_driver_text(str(replies))
        # Known to be away: refused at MAIL already, without waiting for the store.
        await until_async(lambda: _true(health.state == "down"))
        replies = await asyncio.to_thread(transaction, None)
        assert [code for code, _ in replies] == [451], replies
    finally:
        server.close()
        await server.wait_closed()
        client.close()
        own.stop()


def test_server_commands_say_in_one_line_that_the_database_does_not_answer() -> None:
    """``fincap admin …`` on an unreachable MONGODB_URI: one line naming the setting, within
    the store timeout, never a traceback with the driver's topology."""
    from click.testing import CliRunner

    from app.cli import main

    with refused_address() as address:
        env = {
            "MONGODB_URI": f"mongodb://{address}/fincap",
            "FINCAP_STORE_TIMEOUT_SECONDS": "0.5",
        }
        result = CliRunner().invoke(
            main, ["admin", "create-key", "--email", "ops@example.com"], env=env
        )
    assert result.exit_code == 1, result.output
    assert "the database (MONGODB_URI) does not answer within 0.5 s" in result.output
    assert "Traceback" not in result.output
    no_driver_text(result.output)
