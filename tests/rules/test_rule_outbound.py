"""The rules' doors to the outside under the outbound policy: a webhook on this machine is
refused when the rule is saved (nothing stored) and when it fires (nothing sent), the e-mail
relay and the language model are reached only if the policy admits them, and each says only
"could not connect to <host>:<port>"."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from app.host.config import Settings
from app.host.services import build_services
from engines.outbound import OutboundPolicy
from engines.rules.config import AutomationConfig
from engines.rules.notify import SmtpConfig
from persistence.store import Store
from resolvers import build_registry
from resolvers.framework.registry import Registry
from resolvers.services.rules.rule_runner import run_document_rules
from tests.conftest import Tenant, app_on
from tests.documents.conftest import doc
from tests.outbound import resolving
from tests.rules.local_servers import Recorder, chat_completion, serve
from tests.rules.test_firing import rule_stats
from tests.rules.test_notifications import PROCESSED, Inbox, execute, smtp

__all__ = ["smtp"]  # the relay fixture of test_notifications, used here too
THIS_MACHINE = ["127.0.0.1", "127.1", "2130706433", "0x7f.1", "0", "localhost", "[::1]"]


@pytest.fixture
def receiver() -> Iterator[tuple[Recorder, int]]:
    recorder = Recorder()
    recorder.answer = lambda request: (204, "")
    with serve(recorder, "/hooks/fincap") as base:
        yield recorder, int(base.rsplit(":", 1)[1])


@pytest.mark.parametrize("host", THIS_MACHINE)
async def test_a_webhook_on_this_machine_is_refused_when_saved(
    client: httpx.AsyncClient, alice: Tenant, store: Store, host: str
) -> None:
    sentence = f"Post to http://{host}:8080/hooks/fincap whenever an invoice arrives"
    response = await client.post(
        "/v1/capabilities/rules.execute",
        json={"naturalLanguageRule": sentence, "confirm": True},
        headers=alice.headers(),
    )
    assert response.status_code == 400, response.text
    message = response.json()["error"]["errorMessage"]
    assert message.startswith("Invalid request: naturalLanguageRule: the webhook URL http://")
    assert "webhooks go to public addresses" in message
    assert await store.db["rules"].count_documents({}) == 0
    preview = await client.post(
        "/v1/capabilities/rules.prepare",
        json={"naturalLanguageRule": sentence},
        headers=alice.headers(),
    )
    warnings = preview.json()["data"]["result"]["warnings"]
    assert any("webhooks go to public addresses" in warning for warning in warnings)


async def test_a_webhook_whose_name_leads_inside_is_not_called(
    client: httpx.AsyncClient,
    alice: Tenant,
    store: Store,
    receiver: tuple[Recorder, int],
    registry: Registry,
) -> None:
    """Saved with a name (nothing to refuse then); when the rule fires, the name resolves to
    this machine: nothing is sent, and the failure is the one sentence."""
    recorder, port = receiver
    await store.documents.writes.insert_many(alice.org_id, [doc("doc_w", merchant="Acme")])
    url = f"http://hooks.example.test:{port}/hooks/fincap"
    saved = await execute(client, alice, f"Notify {url} when a receipt arrives")
    services = build_services(
        Settings(),
        store,
        registry=registry,
        keyring=client._transport.app.state.services.keyring,
        outbound=OutboundPolicy(resolver=resolving({"hooks.example.test": ["127.0.0.1"]})),
    )
    said = await run_document_rules(services, alice.org_id, "doc_w", PROCESSED)
    expected = (
        f"notify-webhook: webhook http://hooks.example.test:{port}/hooks/fincap: "
        f"could not connect to hooks.example.test:{port}"
    )
    failed = expected.replace(": webhook", " failed: webhook", 1)
    assert said == [f"Rule '{saved['rule']['name']}': {failed}."]
    assert recorder.requests == []
    assert (await rule_stats(client, alice, saved["rule"]["id"]))["lastError"] == expected


async def test_the_relay_is_reached_only_when_the_policy_admits_it(
    client: httpx.AsyncClient, alice: Tenant, store: Store, smtp: tuple[Inbox, int]
) -> None:
    inbox, port = smtp
    await store.documents.writes.insert_many(alice.org_id, [doc("doc_m", merchant="Acme")])
    saved = await execute(client, alice, "Email finance@example.com when a receipt arrives")
    relay = SmtpConfig(host="127.0.0.1", port=port, starttls=False)
    strict = build_services(
        Settings(), store, registry=build_registry(), automation=AutomationConfig(smtp=relay)
    )
    await run_document_rules(strict, alice.org_id, "doc_m", PROCESSED)
    assert inbox.messages == []
    assert (await rule_stats(client, alice, saved["rule"]["id"]))["lastError"] == (
        f"notify-email: e-mail to finance@example.com was not sent: "
        f"could not connect to 127.0.0.1:{port}"
    )
    admitted = build_services(
        Settings(),
        store,
        registry=build_registry(),
        automation=AutomationConfig(smtp=relay),
        outbound=OutboundPolicy.allowing(["127.0.0.1"]),
    )
    await store.documents.writes.insert_many(alice.org_id, [doc("doc_m2", merchant="Acme")])
    await run_document_rules(admitted, alice.org_id, "doc_m2", PROCESSED)
    assert len(inbox.messages) == 1


async def test_the_language_model_on_this_machine_needs_the_allow_list(
    store: Store, registry: Registry, alice: Tenant
) -> None:
    recorder = Recorder()
    recorder.answer = lambda request: (200, chat_completion("{}"))
    with serve(recorder, "/v1/chat/completions") as base:
        settings = Settings(rules_llm_url=f"{base}/v1", rules_llm_model="m")
        app = app_on(store, registry, settings)
        async with httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url="http://fincap.test"
        ) as http:
            preview = await http.post(
                "/v1/capabilities/rules.prepare",
                json={"naturalLanguageRule": "Flag the strange ones from last week somehow"},
                headers=alice.headers(),
            )
    warnings = preview.json()["data"]["result"]["warnings"]
    port = base.rsplit(":", 1)[1]
    assert any(f"could not connect to 127.0.0.1:{port}" in w for w in warnings), warnings
    assert recorder.requests == []
