"""WhatsApp end to end: signed webhook deliveries → media fetched from a fake Graph server on a
socket → documents and activity items → a reply with the total. Wire tests (GridFS)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime
from typing import Any

import pytest

from engines.connectors.whatsapp import sign
from persistence.store import Store
from resolvers.framework.registry import Registry
from tests.conftest import Tenant
from tests.graphql.helpers import gql
from tests.sources.conftest import (
    ACCESS_TOKEN,
    APP_SECRET,
    VERIFY_TOKEN,
    SourceApp,
    call,
    document,
    fixture,
    open_source_app,
    source_settings,
    stored,
)
from tests.sources.fake_graph import (
    VERSION,
    GraphState,
    document_message,
    fake_graph,
    image_message,
    text_message,
    webhook,
)

pytestmark = pytest.mark.wire
ALICE_PHONE = "4915123456789"


@pytest.fixture
def graph() -> Iterator[GraphState]:
    with fake_graph(ACCESS_TOKEN) as state:
        yield state


@pytest.fixture
async def wa_app(
    wire_store: Store, registry: Registry, graph: GraphState
) -> AsyncIterator[SourceApp]:
    settings = source_settings(whatsapp_graph_url=f"{graph.base}/{VERSION}", whatsapp_reply=True)
    async for opened in open_source_app(wire_store, registry, settings):
        yield opened


async def deliver(app: SourceApp, payload: dict[str, Any], secret: str = APP_SECRET) -> Any:
    body = json.dumps(payload).encode()
    return await app.http.post(
        "/v1/webhooks/whatsapp",
        content=body,
        headers={"Content-Type": "application/json", "X-Hub-Signature-256": sign(secret, body)},
    )


async def register_verified(
    app: SourceApp, tenant: Tenant, phone: str, shown: str | None = None
) -> dict[str, Any]:
    """Register ``phone`` in the tenant's workspace and send its code from that number."""
    pending = await call(
        app.http, tenant, "whatsapp.register-sender", {"phoneNumber": shown or phone}
    )
    assert pending["status"] == "pending" and pending["verificationCode"], pending
    verification = webhook(
        [text_message(f"wamid.code-{phone}", phone, pending["verificationCode"])]
    )
    response = await deliver(app, verification)
    assert response.json()["data"]["result"]["accepted"] == 1, response.text
    registered: dict[str, Any] = (await call(app.http, tenant, "whatsapp.list-senders", {}))[
        "senders"
    ][0]
    assert registered["status"] == "active", registered
    return registered


async def test_verification_handshake(wa_app: SourceApp) -> None:
    ok = await wa_app.http.get(
        "/v1/webhooks/whatsapp",
        params={
            "hub.mode": "subscribe",
            "hub.verify_token": VERIFY_TOKEN,
            "hub.challenge": "1158201444",
        },
    )
    assert ok.status_code == 200 and ok.text == "1158201444"
    wrong = await wa_app.http.get(
        "/v1/webhooks/whatsapp",
        params={"hub.mode": "subscribe", "hub.verify_token": "nope", "hub.challenge": "1"},
    )
    assert wrong.status_code == 403


async def test_a_pdf_from_a_registered_member_becomes_a_document_and_a_reply(
    wa_app: SourceApp, graph: GraphState, tenants: tuple[Tenant, Tenant]
) -> None:
    alice, bob = tenants
    registered = await register_verified(wa_app, alice, ALICE_PHONE, "+49 151 2345 6789")
    assert registered["phoneNumber"] == ALICE_PHONE and registered["userId"] == alice.user_id
    graph.media["media-pdf-1"] = (fixture("text-layer.pdf"), "application/pdf")
    payload = webhook([document_message("wamid.A1", ALICE_PHONE, "media-pdf-1", "invoice.pdf")])

    response = await deliver(wa_app, payload)
    assert response.status_code == 200, response.text
    assert response.json()["data"]["result"] == {"accepted": 1, "duplicates": 0, "ignored": 0}
    item = await wa_app.store.db["activity"].find_one({"messageId": "wamid.A1"})
    assert item is not None and item["sourceType"] == "whatsapp" and item["status"] == "queued"
    assert item["messageId"] == "wamid.A1" and item["details"]["from"] == "+" + ALICE_PHONE

    # Meta retries a delivery it thinks failed: nothing is taken twice.
    again = await deliver(wa_app, payload)
    assert again.json()["data"]["result"]["duplicates"] == 1

    await wa_app.workers().run_until_idle()
    assert (
        f"GET /{VERSION}/media-pdf-1" in graph.calls and "GET /download/media-pdf-1" in graph.calls
    )
    settled = await wa_app.store.activity.get(alice.org_id, item["_id"])
    assert settled is not None and settled["status"] == "processed", settled["reasoning"]
    doc = await document(wa_app.http, alice, settled["documentIds"][0])
    assert doc["source"] == "whatsapp" and doc["merchant"] == "Northwind Consulting GmbH"
    assert doc["file"]["fileName"] == "invoice.pdf"

    # The sender is told the total, as a reply to their message, from the business number.
    assert len(graph.sent) == 1
    reply = graph.sent[0]
    assert reply["phoneNumberId"] == "109876543210" and reply["to"] == ALICE_PHONE
    assert reply["context"] == {"message_id": "wamid.A1"} and reply["type"] == "text"
    assert "1190.00 EUR" in reply["text"]["body"] and "Northwind" in reply["text"]["body"]
    # The whole sentence: the merchant, the document's date and the total as the API shows them.
    assert reply["text"]["body"] == (
        f"Receipt saved: Northwind Consulting GmbH, {doc['docDate']}, total 1190.00 EUR."
    )
    assert await wa_app.store.db["activity"].count_documents({"workspaceId": bob.org_id}) == 0


async def test_an_image_message_is_read_with_ocr(
    wa_app: SourceApp, graph: GraphState, tenants: tuple[Tenant, Tenant]
) -> None:
    alice, _ = tenants
    await register_verified(wa_app, alice, ALICE_PHONE)
    graph.media["media-img-1"] = (fixture("receipt.png"), "image/png")
    response = await deliver(
        wa_app, webhook([image_message("wamid.I1", ALICE_PHONE, "media-img-1")])
    )
    assert response.status_code == 200
    await wa_app.workers().run_until_idle()
    item = await wa_app.store.db["activity"].find_one({"messageId": "wamid.I1"})
    assert item is not None and item["status"] in {"processed", "warning"}, item["reasoning"]
    doc = await document(wa_app.http, alice, item["documentIds"][0])
    assert doc["file"]["mimeType"] == "image/png" and doc["amount"] is not None


async def test_text_and_other_messages_are_skipped_with_the_reason(
    wa_app: SourceApp, tenants: tuple[Tenant, Tenant]
) -> None:
    alice, _ = tenants
    await register_verified(wa_app, alice, ALICE_PHONE)
    text = {
        "from": ALICE_PHONE,
        "id": "wamid.T1",
        "timestamp": "1",
        "type": "text",
        "text": {"body": "hello there"},
    }
    sticker = {
        "from": ALICE_PHONE,
        "id": "wamid.S1",
        "timestamp": "1",
        "type": "sticker",
        "sticker": {"id": "st-1", "mime_type": "image/webp"},
    }
    response = await deliver(wa_app, webhook([text, sticker]))
    assert response.json()["data"]["result"]["accepted"] == 2
    items = {
        i["messageId"]: i
        for i in await wa_app.store.db["activity"].find({"workspaceId": alice.org_id}).to_list(None)
    }
    assert (
        items["wamid.T1"]["status"] == "skipped"
        and "shows no amount" in items["wamid.T1"]["reasoning"]
    )
    assert items["wamid.S1"]["status"] == "skipped" and "sticker" in items["wamid.S1"]["reasoning"]
    assert await wa_app.store.db["documents"].count_documents({}) == 0


async def test_media_graph_refuses_marks_the_item_failed(
    wire_store: Store, registry: Registry, graph: GraphState, tenants: tuple[Tenant, Tenant]
) -> None:
    alice, _ = tenants
    settings = source_settings(
        whatsapp_graph_url=f"{graph.base}/{VERSION}", whatsapp_access_token="expired-token"
    )
    async for app in open_source_app(wire_store, registry, settings):
        await register_verified(app, alice, ALICE_PHONE)
        graph.media["m-2"] = (fixture("text-layer.pdf"), "application/pdf")
        await deliver(app, webhook([document_message("wamid.E1", ALICE_PHONE, "m-2", "x.pdf")]))
        await app.workers().run_until_idle()
        item = await app.store.db["activity"].find_one({"messageId": "wamid.E1"})
        assert item is not None and item["status"] == "failed"
        assert "Invalid OAuth access token" in item["reasoning"] and "401" in item["reasoning"]


async def test_bad_input_leaves_nothing_stored(
    wa_app: SourceApp, graph: GraphState, tenants: tuple[Tenant, Tenant]
) -> None:
    alice, _ = tenants
    await register_verified(wa_app, alice, ALICE_PHONE)
    graph.media["m-1"] = (fixture("text-layer.pdf"), "application/pdf")
    payload = webhook([document_message("wamid.B1", ALICE_PHONE, "m-1", "x.pdf")])
    before = await stored(wa_app.store)

    bad = await deliver(wa_app, payload, secret="not-the-app-secret")
    assert bad.status_code == 401 and "X-Hub-Signature-256" in bad.text
    body = json.dumps(payload).encode()
    unsigned = await wa_app.http.post("/v1/webhooks/whatsapp", content=body)
    assert unsigned.status_code == 401
    # A body changed after signing.
    tampered = await wa_app.http.post(
        "/v1/webhooks/whatsapp",
        content=body.replace(b"wamid.B1", b"wamid.B2"),
        headers={"X-Hub-Signature-256": sign(APP_SECRET, body)},
    )
    assert tampered.status_code == 401
    # Signed but not a WhatsApp payload, or not JSON.
    assert (await deliver(wa_app, {"object": "page", "entry": []})).status_code == 400
    garbage = b"{not json"
    response = await wa_app.http.post(
        "/v1/webhooks/whatsapp",
        content=garbage,
        headers={"X-Hub-Signature-256": sign(APP_SECRET, garbage)},
    )
    assert response.status_code == 400
    # An unregistered number: acknowledged (Meta must not retry) but nothing kept.
    stranger = webhook([document_message("wamid.X1", "15550001111", "m-1", "x.pdf")])
    assert (await deliver(wa_app, stranger)).json()["data"]["result"]["ignored"] == 1

    assert await stored(wa_app.store) == before
    assert graph.calls == []


async def test_senders_through_rest_and_graphql(
    wa_app: SourceApp, tenants: tuple[Tenant, Tenant]
) -> None:
    alice, bob = tenants
    await register_verified(wa_app, alice, ALICE_PHONE)
    bad = await wa_app.http.post(
        "/v1/capabilities/whatsapp.register-sender",
        json={"phoneNumber": "12"},
        headers=alice.headers(),
    )
    assert bad.status_code == 400 and "phoneNumber" in bad.text
    # Bob cannot take Alice's number into his workspace.
    taken = await wa_app.http.post(
        "/v1/capabilities/whatsapp.register-sender",
        json={"phoneNumber": ALICE_PHONE},
        headers=bob.headers(),
    )
    assert taken.status_code == 400 and "registered in another workspace" in taken.text
    listed = await gql(
        wa_app.http,
        "{ whatsappListSenders { senders { phoneNumber userId status } } }",
        headers=alice.headers(),
    )
    assert listed["data"]["whatsappListSenders"]["senders"] == [
        {"phoneNumber": ALICE_PHONE, "userId": alice.user_id, "status": "active"}
    ]
    assert (await call(wa_app.http, bob, "whatsapp.list-senders", {}))["senders"] == []
    removed = await gql(
        wa_app.http,
        'mutation { whatsappRemoveSender(input: {phoneNumber: "+4915123456789"}) { removed } }',
        headers=alice.headers(),
    )
    assert removed["data"]["whatsappRemoveSender"]["removed"] is True


async def test_a_number_of_a_former_member_is_ignored(
    wa_app: SourceApp, graph: GraphState, tenants: tuple[Tenant, Tenant]
) -> None:
    alice, _ = tenants
    await register_verified(wa_app, alice, ALICE_PHONE)
    await wa_app.store.db["memberships"].delete_one(
        {"workspaceId": alice.org_id, "userId": alice.user_id}
    )
    before = await stored(wa_app.store)
    payload = webhook([document_message("wamid.F1", ALICE_PHONE, "m-9", "x.pdf")])
    assert (await deliver(wa_app, payload)).json()["data"]["result"]["ignored"] == 1
    assert await stored(wa_app.store) == before


async def member_of(store: Store, workspace: Tenant, other: Tenant) -> Tenant:
    """``other`` as a plain member of ``workspace`` (keeping their own workspace too)."""
    await store.workspaces.add_member(workspace.org_id, other.user_id, "member")
    return Tenant(other.user_id, workspace.org_id, other.api_key)


async def test_a_member_cannot_take_the_owners_number(
    wa_app: SourceApp, graph: GraphState, tenants: tuple[Tenant, Tenant]
) -> None:
    """The reported attack: a plain member removed the owner's number, registered it in a
    workspace of their own, and the owner's next receipt landed there."""
    alice, bob = tenants
    # Alice's number, registered (as any number registered before verification existed).
    now = datetime.now(UTC)
    await wa_app.store.db["whatsapp_senders"].insert_one(
        {
            "_id": ALICE_PHONE,
            "workspaceId": alice.org_id,
            "userId": alice.user_id,
            "createdAt": now,
            "updatedAt": now,
        }
    )
    mallory = await member_of(wa_app.store, alice, bob)
    for slug, body in (
        ("whatsapp.remove-sender", {"phoneNumber": ALICE_PHONE}),
        ("whatsapp.register-sender", {"phoneNumber": "+15550001234"}),
        ("whatsapp.list-senders", {}),
    ):
        refused = await wa_app.http.post(
            f"/v1/capabilities/{slug}", json=body, headers=mallory.headers()
        )
        assert refused.status_code == 403, refused.text
        assert "owners and admins; your role here is member" in refused.text
    # From his own workspace (where he is owner) the number cannot be claimed either.
    claimed = await wa_app.http.post(
        "/v1/capabilities/whatsapp.register-sender",
        json={"phoneNumber": ALICE_PHONE},
        headers=bob.headers(),
    )
    assert claimed.status_code == 400 and "registered in another workspace" in claimed.text
    # Alice's next receipt still lands in her workspace.
    graph.media["m-owner"] = (fixture("text-layer.pdf"), "application/pdf")
    await deliver(wa_app, webhook([document_message("wamid.O1", ALICE_PHONE, "m-owner", "a.pdf")]))
    item = await wa_app.store.db["activity"].find_one({"messageId": "wamid.O1"})
    assert item is not None and item["workspaceId"] == alice.org_id


async def test_a_number_is_pending_until_it_sends_its_code(
    wa_app: SourceApp, graph: GraphState, tenants: tuple[Tenant, Tenant]
) -> None:
    alice, _ = tenants
    pending = await call(
        wa_app.http, alice, "whatsapp.register-sender", {"phoneNumber": ALICE_PHONE}
    )
    assert pending["status"] == "pending" and pending["expiresAt"]
    code = pending["verificationCode"]
    assert len(code) == 9 and code[4] == "-"
    # Listed as pending, never with its code; only a digest of the code is stored.
    (listed,) = (await call(wa_app.http, alice, "whatsapp.list-senders", {}))["senders"]
    assert listed["status"] == "pending" and listed["verificationCode"] is None
    assert code not in str(await wa_app.store.db["whatsapp_sender_claims"].find_one({}))

    # A receipt before verification lands nowhere; the workspace is told why.
    graph.media["m-early"] = (fixture("text-layer.pdf"), "application/pdf")
    early = webhook([document_message("wamid.P1", ALICE_PHONE, "m-early", "early.pdf")])
    assert (await deliver(wa_app, early)).json()["data"]["result"]["ignored"] == 1
    note = await wa_app.store.db["activity"].find_one({"messageId": "wamid.P1"})
    assert note is not None and note["status"] == "skipped" and note["documentIds"] == []
    assert "waiting for verification" in note["reasoning"]
    assert await wa_app.store.db["jobs"].count_documents({}) == 0

    # The code from another number, or a wrong code from this one, registers nothing.
    wrong = webhook(
        [
            text_message("wamid.W1", "15550009999", code),
            text_message("wamid.W2", ALICE_PHONE, "ZZZZ-ZZZZ"),
        ]
    )
    await deliver(wa_app, wrong)
    assert await wa_app.store.whatsapp_senders.lookup(ALICE_PHONE) is None

    # The right code, in a sentence and lower case, from the number: registered.
    right = webhook([text_message("wamid.R1", ALICE_PHONE, f"my code is {code.lower()} thanks")])
    assert (await deliver(wa_app, right)).json()["data"]["result"]["accepted"] == 1
    (active,) = (await call(wa_app.http, alice, "whatsapp.list-senders", {}))["senders"]
    assert active["status"] == "active" and active["userId"] == alice.user_id
    said = await wa_app.store.db["activity"].find_one({"messageId": "wamid.R1"})
    assert said is not None and "now registered" in said["reasoning"]
    # The code is used up.
    assert await wa_app.store.db["whatsapp_sender_claims"].count_documents({}) == 0


async def test_a_strangers_claim_neither_locks_out_nor_reads_the_owner(
    wa_app: SourceApp, tenants: tuple[Tenant, Tenant]
) -> None:
    alice, bob = tenants
    # Bob claims Alice's number first: it stays pending (he cannot send from her phone).
    await call(wa_app.http, bob, "whatsapp.register-sender", {"phoneNumber": ALICE_PHONE})
    message = document_message("wamid.S1", ALICE_PHONE, "m-secret", "salary.pdf")
    await deliver(wa_app, webhook([message]))
    # Bob's workspace learns only that a message came, never what it said or carried.
    note = await wa_app.store.db["activity"].find_one({"workspaceId": bob.org_id})
    assert note is not None and note["status"] == "skipped"
    assert set(note["details"]) == {"from", "messageType", "receivedAt"}
    assert "salary" not in str(note) and "Northwind" not in str(note)
    # Alice registers and verifies her number: Bob's claim does not stand in the way, and ends.
    await register_verified(wa_app, alice, ALICE_PHONE)
    assert (await call(wa_app.http, bob, "whatsapp.list-senders", {}))["senders"] == []


async def test_two_verifications_at_once_register_the_number_once(
    wa_app: SourceApp, tenants: tuple[Tenant, Tenant]
) -> None:
    """Unique in the store: two workspaces with a claim each, both codes sent at once."""
    alice, bob = tenants
    store = wa_app.store
    codes = {}
    for tenant in (alice, bob):
        claim = await call(
            wa_app.http, tenant, "whatsapp.register-sender", {"phoneNumber": ALICE_PHONE}
        )
        codes[tenant.org_id] = claim["verificationCode"]
    outcomes = await asyncio.gather(
        *(store.whatsapp_senders.verify(ALICE_PHONE, [code]) for code in codes.values())
    )
    kinds = sorted(outcome[1] for outcome in outcomes if outcome is not None)
    assert kinds in (["held-elsewhere", "registered"], ["registered"]), outcomes
    registered = await store.whatsapp_senders.lookup(ALICE_PHONE)
    assert registered is not None and registered["workspaceId"] in codes
    assert await store.db["whatsapp_senders"].count_documents({}) == 1
