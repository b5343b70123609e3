"""Graph answers that are not the documented ``{"error": {...}}`` shape (issue 25, item 11): a
refusal is recorded once on the item with a reason people can read (no crash, no five retries);
a server error is retried. Also: an image bomb sent as media is refused with the reason. Wire
tests (the fake Graph on a real socket)."""

from __future__ import annotations

import json

import pytest

from tests.conftest import Tenant
from tests.hardening.bombs import png_bomb
from tests.sources import test_whatsapp
from tests.sources.conftest import SourceApp
from tests.sources.fake_graph import VERSION, GraphState, document_message, image_message, webhook
from tests.sources.test_whatsapp import ALICE_PHONE, deliver, register_verified

pytestmark = pytest.mark.wire
# The fake Graph and the app pointed at it, from the WhatsApp tests next door.
graph = test_whatsapp.graph
wa_app = test_whatsapp.wa_app

REFUSALS = [
    # (status, body, content type, what the reasoning shows, the error's kind)
    (
        400,
        json.dumps({"error": "media id is not valid"}).encode(),
        "application/json",
        "HTTP 400: media id is not valid",
        "refused",
    ),
    (
        403,
        json.dumps({"error": ["denied"]}).encode(),
        "application/json",
        'HTTP 403: \'{"error": ["denied"]}\'',
        "refused",
    ),
    (
        404,
        b"<html><body><h1>Not Found</h1></body></html>",
        "text/html",
        "HTTP 404: '<html><body><h1>Not Found</h1></body></html>'",
        "remote_gone",
    ),
    (
        200,
        json.dumps(["not", "an", "object"]).encode(),
        "application/json",
        "HTTP 200 with a JSON array instead of a JSON object",
        "invalid_answer",
    ),
    (
        200,
        b"OK",
        "text/plain",
        "HTTP 200 with a body that is not JSON instead of a JSON object: 'OK'",
        "invalid_answer",
    ),
]


async def media_item(app: SourceApp, tenant: Tenant, wamid: str, media_id: str) -> str:
    await register_verified(app, tenant, ALICE_PHONE)
    answer = await deliver(app, webhook([document_message(wamid, ALICE_PHONE, media_id, "x.pdf")]))
    assert answer.status_code == 200, answer.text
    item = await app.store.db["activity"].find_one({"messageId": wamid})
    assert item is not None
    return str(item["_id"])


@pytest.mark.parametrize(("status", "body", "content_type", "shown", "reason"), REFUSALS)
async def test_a_refusal_in_any_shape_is_recorded_once(
    wa_app: SourceApp,
    graph: GraphState,
    tenants: tuple[Tenant, Tenant],
    status: int,
    body: bytes,
    content_type: str,
    shown: str,
    reason: str,
) -> None:
    alice, _ = tenants
    graph.canned[f"/{VERSION}/m-odd"] = (status, body, content_type)
    item_id = await media_item(wa_app, alice, "wamid.X1", "m-odd")
    assert await wa_app.workers().run_until_idle() == 1
    item = await wa_app.store.activity.get(alice.org_id, item_id)
    assert item is not None and item["status"] == "failed", item
    assert item["reasoning"].startswith("The media could not be downloaded: Graph answered")
    assert shown in item["reasoning"]
    assert item["details"]["errorReason"] == reason
    job = await wa_app.store.db["jobs"].find_one({"kind": "fetch-whatsapp-media"})
    assert job is not None and job["status"] == "done" and job["attempts"] == 1
    assert graph.calls.count(f"GET /{VERSION}/m-odd") == 1


async def test_a_server_error_in_any_shape_is_retried(
    wa_app: SourceApp, graph: GraphState, tenants: tuple[Tenant, Tenant]
) -> None:
    alice, _ = tenants
    graph.canned[f"/{VERSION}/m-down"] = (503, b"upstream connect error", "text/plain")
    item_id = await media_item(wa_app, alice, "wamid.X2", "m-down")
    assert await wa_app.workers().run_until_idle() == 1
    job = await wa_app.store.db["jobs"].find_one({"kind": "fetch-whatsapp-media"})
    assert job is not None and job["status"] == "queued" and job["attempts"] == 1
    assert "HTTP 503: 'upstream connect error'" in job["lastError"]
    item = await wa_app.store.activity.get(alice.org_id, item_id)
    assert item is not None and item["status"] == "queued"  # waiting for the retry


async def test_an_image_bomb_sent_as_media_is_refused_with_the_reason(
    wa_app: SourceApp, graph: GraphState, tenants: tuple[Tenant, Tenant]
) -> None:
    alice, _ = tenants
    await register_verified(wa_app, alice, ALICE_PHONE)
    graph.media["m-bomb"] = (png_bomb(13000), "image/png")
    await deliver(wa_app, webhook([image_message("wamid.X3", ALICE_PHONE, "m-bomb")]))
    await wa_app.workers().run_until_idle()
    item = await wa_app.store.db["activity"].find_one({"messageId": "wamid.X3"})
    assert item is not None and item["status"] == "failed" and item["documentIds"] == []
    assert item["reasoning"] == (
        "The media cannot be read: the image is 13000 × 13000 pixels (169 million); "
        "at most 50 million are read"
    )
    assert await wa_app.store.db["documents"].count_documents({}) == 0
