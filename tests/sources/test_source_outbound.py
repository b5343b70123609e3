"""The sources' doors to the outside under the outbound policy, through their capabilities and
jobs: mailboxes.connect, the mailbox poll and the WhatsApp media download refuse this machine
and its network in any notation, say only "could not connect to <host>:<port>", and store
nothing; the allow-list lets the tests' own servers through. Wire tests (a real Dovecot)."""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar

import pytest

from app.host.config import Settings
from app.host.services import build_services
from persistence.store import Store
from resolvers.framework.registry import Registry
from resolvers.resources.mailboxes import poll_mailbox
from tests.conftest import Tenant
from tests.outbound import target
from tests.requires import requires
from tests.sources.conftest import (
    ACCESS_TOKEN,
    SourceApp,
    call,
    fixture,
    open_source_app,
    source_settings,
    stored,
)
from tests.sources.dovecot import Imap
from tests.sources.fake_graph import VERSION, GraphState, document_message, fake_graph, webhook
from tests.sources.mail import message
from tests.sources.test_mailboxes import PASSWORD, USER, imap
from tests.sources.test_whatsapp import ALICE_PHONE, deliver, register_verified

pytestmark = [
    pytest.mark.wire,
    requires("dovecot"),
]
__all__ = ["imap"]  # test_mailboxes' Dovecot fixture, one server for this module too
# How a tenant may spell the machine the server runs on.
THIS_MACHINE = ["127.0.0.1", "127.1", "2130706433", "0x7f.1", "0", "localhost"]


@pytest.fixture
async def strict_app(wire_store: Store, registry: Registry) -> AsyncIterator[SourceApp]:
    """The service as shipped: FINCAP_OUTBOUND_ALLOW unset, public addresses only."""
    async for opened in open_source_app(wire_store, registry, source_settings(outbound_allow=None)):
        yield opened


def body(server: str, port: int) -> dict[str, Any]:
    return {
        "server": server,
        "port": port,
        "security": "none",
        "username": USER,
        "password": PASSWORD,
        "importSince": "2000-01-01",
    }


@pytest.mark.parametrize("server", THIS_MACHINE)
async def test_mailboxes_connect_refuses_this_machine_and_stores_nothing(
    strict_app: SourceApp, imap: Imap, tenants: tuple[Tenant, Tenant], server: str
) -> None:
    alice, _ = tenants
    before = await stored(strict_app.store)
    response = await strict_app.http.post(
        "/v1/capabilities/mailboxes.connect",
        json=body(server, imap.port),  # a working IMAP server with the right password
        headers=alice.headers(),
    )
    assert response.status_code == 400, response.text
    assert response.json()["error"]["errorMessage"] == (
        f"Invalid request: server: could not connect to {server}:{imap.port}"
    )
    assert await stored(strict_app.store) == before
    assert await strict_app.store.db["mailboxes"].count_documents({}) == 0


async def test_the_allow_list_lets_the_test_server_through(
    wire_app: SourceApp, imap: Imap, tenants: tuple[Tenant, Tenant]
) -> None:
    alice, _ = tenants
    connected = await call(wire_app.http, alice, "mailboxes.connect", body("127.1", imap.port))
    assert connected["status"] == "active" and connected["server"] == "127.1"


async def test_a_refusal_reads_like_a_closed_port_or_another_service(
    wire_app: SourceApp, tenants: tuple[Tenant, Tenant]
) -> None:
    """Through mailboxes.connect (admitting 127.0.0.1, as the tests do): a private address the
    policy refuses, a closed port and an SSH banner all answer the same sentence."""
    alice, _ = tenants
    answers = {}
    for kind in ("refused by the policy", "closed port", "banner"):
        with target(kind) as (host, port):
            response = await wire_app.http.post(
                "/v1/capabilities/mailboxes.connect",
                json=body(host, port),
                headers=alice.headers(),
            )
        assert response.status_code == 400
        answers[kind] = response.json()["error"]["errorMessage"].replace(f"{host}:{port}", "H:P")
    assert set(answers.values()) == {"Invalid request: server: could not connect to H:P"}


@pytest.mark.parametrize("security", ["none", "starttls", "tls"])
async def test_control_characters_in_the_sign_in_are_a_400_naming_the_field(
    strict_app: SourceApp, tenants: tuple[Tenant, Tenant], security: str
) -> None:
    alice, _ = tenants
    for field, value in (
        ("username", "carol@mail.test\r\na2 DELETE INBOX"),
        ("password", "pw\r\na2 LOGOUT"),
        ("folder", "INBOX\n"),
        ("server", "imap.example.com\r\n"),
    ):
        response = await strict_app.http.post(
            "/v1/capabilities/mailboxes.connect",
            json={**body("imap.example.com", 993), "security": security, field: value},
            headers=alice.headers(),
        )
        assert response.status_code == 400, (field, response.text)
        assert response.json()["error"]["errorMessage"].startswith(f"Invalid request: {field}: ")
    assert await strict_app.store.db["mailboxes"].count_documents({}) == 0


async def test_the_poll_asks_the_policy_every_time(
    wire_app: SourceApp, imap: Imap, tenants: tuple[Tenant, Tenant]
) -> None:
    """A mailbox connected while its address was admitted is not read once the policy no
    longer admits it: the poll records the one sentence, and nothing comes in."""
    alice, _ = tenants
    mailbox = await call(wire_app.http, alice, "mailboxes.connect", body("127.0.0.1", imap.port))
    imap.append(USER, message(to=USER, subject="Invoice", text="Total 12.00 EUR"))
    strict = build_services(
        Settings(),
        wire_app.store,
        keyring=wire_app.services.keyring,
        sources=wire_app.services.sources,
    )
    taken = await poll_mailbox(strict, alice.org_id, mailbox["id"])
    assert taken == []
    row = await wire_app.store.mailboxes.get(alice.org_id, mailbox["id"])
    assert row is not None and row["status"] == "error"
    assert row["lastError"] == f"could not connect to 127.0.0.1:{imap.port}"
    assert row["lastErrorReason"] == "unreachable"
    assert await wire_app.store.db["documents"].count_documents({}) == 0


# -- WhatsApp: Graph answers where the media is; the policy decides whether to go there ----


class _Internal(BaseHTTPRequestHandler):
    heard: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        _Internal.heard.append(self.path)
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"%PDF-1.4 internal secret")

    def log_message(self, format: str, *args: Any) -> None:
        return


@pytest.fixture
def internal_service() -> Iterator[str]:
    """An HTTP service on 127.0.0.2 (this machine, not admitted by the tests' allow-list)."""
    _Internal.heard = []
    server = ThreadingHTTPServer(("127.0.0.2", 0), _Internal)
    # shutdown() returns at the server's next poll: every 50 ms, not the default 0.5 s.
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"127.0.0.2:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


@pytest.fixture
def graph() -> Iterator[GraphState]:
    with fake_graph(ACCESS_TOKEN) as state:
        yield state


async def test_a_media_url_inside_the_network_is_not_fetched(
    wire_store: Store,
    registry: Registry,
    graph: GraphState,
    internal_service: str,
    tenants: tuple[Tenant, Tenant],
) -> None:
    alice, _ = tenants
    settings = source_settings(whatsapp_graph_url=f"{graph.base}/{VERSION}")
    async for app in open_source_app(wire_store, registry, settings):
        await register_verified(app, alice, ALICE_PHONE)
        graph.media["m-in"] = (fixture("text-layer.pdf"), "application/pdf")
        graph.urls["m-in"] = f"http://{internal_service}/latest/meta-data/"
        await deliver(app, webhook([document_message("wamid.I1", ALICE_PHONE, "m-in", "x.pdf")]))
        await app.workers().run_until_idle()
        assert _Internal.heard == []  # Graph was asked; the inside address never was
        assert f"GET /{VERSION}/m-in" in graph.calls
        job = await app.store.db["jobs"].find_one({"kind": "fetch-whatsapp-media"})
        assert job is not None
        assert f"failed: could not connect to {internal_service}'" in job["lastError"]
        assert await app.store.db["documents"].count_documents({}) == 0
        assert await app.store.db["originals.files"].count_documents({}) == 0
