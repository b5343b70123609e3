"""Notification actions: a signed webhook POST to a local server, and an e-mail through a
local SMTP server (aiosmtpd); failures land in the rule's stats."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from decimal import Decimal
from email import message_from_bytes, policy
from typing import Any

import httpx
import pytest
from aiosmtpd.controller import Controller

from app.host.config import Settings
from app.host.services import build_services
from engines.rules.config import AutomationConfig
from engines.rules.notify import SIGNATURE_HEADER, SmtpConfig, signature
from persistence.embedded import free_port
from persistence.store import Store
from resolvers import build_registry
from resolvers.framework.registry import Registry
from resolvers.services.rules.rule_runner import RuleEvent, run_document_rules
from tests.conftest import Tenant, app_on
from tests.documents.conftest import doc
from tests.outbound import LOOPBACK_FAKES, loopback_fakes
from tests.rules.local_servers import Recorder, serve
from tests.rules.test_firing import rule_stats

PROCESSED = RuleEvent(trigger="document-processed", key="processed")


async def execute(client: httpx.AsyncClient, tenant: Tenant, sentence: str) -> dict[str, Any]:
    response = await client.post(
        "/v1/capabilities/rules.execute",
        json={"naturalLanguageRule": sentence, "confirm": True},
        headers=tenant.headers(),
    )
    assert response.status_code == 200, response.text
    saved: dict[str, Any] = response.json()["data"]["result"]
    return saved


@pytest.fixture
async def client(store: Store, registry: Registry) -> AsyncIterator[httpx.AsyncClient]:
    """The app admitting the tests' loopback receivers (rules.execute refuses a webhook on a
    loopback address unless FINCAP_OUTBOUND_ALLOW admits it)."""
    app = app_on(store, registry, Settings(outbound_allow=LOOPBACK_FAKES))
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://fincap.test") as http:
        yield http


@pytest.fixture
def receiver() -> Iterator[tuple[Recorder, str]]:
    recorder = Recorder()
    recorder.answer = lambda request: (204, "")
    with serve(recorder, "/hooks/fincap") as base:
        yield recorder, base


async def test_a_webhook_gets_a_signed_post(
    client: httpx.AsyncClient, alice: Tenant, store: Store, receiver: tuple[Recorder, str]
) -> None:
    recorder, base = receiver
    await store.documents.writes.insert_many(
        alice.org_id,
        [
            doc(
                "doc_inv",
                merchant="Acme",
                docType="invoice",
                amount=Decimal("2600.00"),
                currency="USD",
            )
        ],
    )
    saved = await execute(
        client, alice, f"Post to {base}/hooks/fincap whenever an invoice over $2,500 arrives"
    )
    services = build_services(
        Settings(),
        store,
        registry=build_registry(),
        keyring=_keyring(client),
        outbound=loopback_fakes(),
    )
    said = await run_document_rules(services, alice.org_id, "doc_inv", PROCESSED)
    assert said == [f"Rule '{saved['rule']['name']}': webhook notified (HTTP 204)."]

    (request,) = recorder.requests
    header = request.headers[SIGNATURE_HEADER.lower()]
    parts = dict(part.split("=", 1) for part in header.split(","))
    assert parts["v1"] == signature(saved["webhookSecret"], int(parts["t"]), request.body)
    assert parts["v1"] != signature("another secret", int(parts["t"]), request.body)
    payload = json.loads(request.body)
    assert payload["event"] == "rule.matched" and payload["ruleId"] == saved["rule"]["id"]
    assert payload["workspaceId"] == alice.org_id and payload["trigger"] == "document-processed"
    assert payload["document"]["id"] == "doc_inv" and payload["document"]["amount"] == 2600.0
    assert request.headers["x-fincap-event"] == "rule.matched"


async def test_a_failing_webhook_is_an_error_in_the_stats(
    client: httpx.AsyncClient, alice: Tenant, store: Store, receiver: tuple[Recorder, str]
) -> None:
    recorder, base = receiver
    recorder.answer = lambda request: (500, "down")
    await store.documents.writes.insert_many(alice.org_id, [doc("doc_r", merchant="Acme")])
    saved = await execute(client, alice, f"Notify {base}/hooks/fincap when a receipt arrives")
    services = build_services(
        Settings(),
        store,
        registry=build_registry(),
        keyring=_keyring(client),
        outbound=loopback_fakes(),
    )
    said = await run_document_rules(services, alice.org_id, "doc_r", PROCESSED)
    assert said == [
        f"Rule '{saved['rule']['name']}': notify-webhook failed: webhook "
        f"{base}/hooks/fincap answered HTTP 500."
    ]
    stats = await rule_stats(client, alice, saved["rule"]["id"])
    assert stats["actionsFailed"] == 1
    assert stats["lastError"] == f"notify-webhook: webhook {base}/hooks/fincap answered HTTP 500"


class Inbox:
    """An aiosmtpd handler keeping every message."""

    def __init__(self) -> None:
        self.messages: list[tuple[str, list[str], bytes]] = []

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        self.messages.append((envelope.mail_from, list(envelope.rcpt_tos), envelope.content))
        return "250 Message accepted for delivery"


@pytest.fixture
def smtp() -> Iterator[tuple[Inbox, int]]:
    inbox = Inbox()
    port = free_port()
    controller = Controller(inbox, hostname="127.0.0.1", port=port)
    controller.start()
    try:
        yield inbox, port
    finally:
        controller.stop()


async def test_an_email_goes_through_the_relay(
    client: httpx.AsyncClient, alice: Tenant, store: Store, smtp: tuple[Inbox, int]
) -> None:
    inbox, port = smtp
    await store.documents.writes.insert_many(
        alice.org_id,
        [
            doc(
                "doc_de",
                merchant="Hotel Adlon",
                amount=Decimal("320.00"),
                expenseLocation={"primary": {"countryCode": "DE", "country": "Germany"}},
            )
        ],
    )
    saved = await execute(
        client, alice, "Notify me by email when a receipt over 200 EUR from Germany arrives"
    )
    assert saved["rule"]["definition"]["actions"][0]["email"] == "alice@example.com"
    relay = SmtpConfig(host="127.0.0.1", port=port, sender="rules@fincap.test", starttls=False)
    services = build_services(
        Settings(),
        store,
        registry=build_registry(),
        automation=AutomationConfig(smtp=relay),
        outbound=loopback_fakes(),
    )
    said = await run_document_rules(services, alice.org_id, "doc_de", PROCESSED)
    assert said == [f"Rule '{saved['rule']['name']}': e-mailed alice@example.com."]
    ((sender, recipients, content),) = inbox.messages
    assert (sender, recipients) == ("rules@fincap.test", ["alice@example.com"])
    message = message_from_bytes(content, policy=policy.default)
    assert message["Subject"] == f"[fincap] {saved['rule']['name']}: Hotel Adlon 320.0 EUR"
    assert "merchant: Hotel Adlon" in message.get_content()  # type: ignore[attr-defined]


async def test_without_a_relay_the_email_action_fails_with_the_reason(
    client: httpx.AsyncClient, alice: Tenant, store: Store
) -> None:
    await store.documents.writes.insert_many(alice.org_id, [doc("doc_x", merchant="Acme")])
    saved = await execute(client, alice, "Email finance@example.com when a receipt arrives")
    services = build_services(Settings(), store, registry=build_registry())
    await run_document_rules(services, alice.org_id, "doc_x", PROCESSED)
    stats = await rule_stats(client, alice, saved["rule"]["id"])
    assert stats["lastError"] == (
        "notify-email: e-mail notifications need an SMTP relay (FINCAP_SMTP_HOST)"
    )


def _keyring(client: httpx.AsyncClient) -> Any:
    """The keyring of the app behind ``client`` (it sealed the rule's webhook secret)."""
    transport = client._transport
    assert isinstance(transport, httpx.ASGITransport)
    return transport.app.state.services.keyring  # type: ignore[attr-defined]
