"""Thumbnails are made once, in the analysis process, stored and served from storage (issue 25,
item 7): the route never decodes an image; an image over the pixel budget gets a placeholder
saying why (and is refused at upload); a document older than stored previews gets one from a
job. Wire tests (originals live in GridFS)."""

from __future__ import annotations

import base64
import io
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest
from PIL import Image, ImageFile

from persistence.ids import new_id, utcnow
from persistence.store import Store
from resolvers.framework.registry import Registry
from tests.conftest import Tenant, asgi_client, make_tenant, worker_pool
from tests.hardening.bombs import png_bomb
from tests.sources.conftest import fixture

pytestmark = pytest.mark.wire


@pytest.fixture
async def alice(wire_store: Store) -> Tenant:
    return await make_tenant(wire_store, "alice@example.com", "Alice Co")


@pytest.fixture
async def http(wire_store: Store, registry: Registry) -> AsyncIterator[httpx.AsyncClient]:
    async with asgi_client(wire_store, registry) as client:
        yield client


class Decodes:
    """Counts image decodes (Pillow's ``ImageFile.load``) in this process; ``forbid`` makes
    one an error, for code that must never decode."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        self.forbidden = False
        original = ImageFile.ImageFile.load

        def counted(image: Any) -> Any:
            self.count += 1
            if self.forbidden:
                raise AssertionError("an image was decoded here")
            return original(image)

        monkeypatch.setattr(ImageFile.ImageFile, "load", counted)


@pytest.fixture
def decodes(monkeypatch: pytest.MonkeyPatch) -> Iterator[Decodes]:
    yield Decodes(monkeypatch)


async def plant(store: Store, tenant: Tenant, name: str, data: bytes, mime: str) -> str:
    """A processed document whose original is ``data``, written straight into the store: what
    an upload accepted before previews were stored (or before the pixel budget) left behind."""
    document_id = new_id("doc")
    ref = await store.files.put(tenant.org_id, document_id, data, name, mime)
    await store.documents.writes.insert_many(
        tenant.org_id,
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
    return document_id


async def get_thumbnail(http: httpx.AsyncClient, tenant: Tenant, document_id: str) -> Any:
    return await http.get(f"/v1/files/{document_id}/thumbnail", headers=tenant.headers())


async def test_a_stored_image_bomb_gets_a_placeholder_and_is_never_decoded(
    http: httpx.AsyncClient, wire_store: Store, alice: Tenant, decodes: Decodes
) -> None:
    bomb_id = await plant(wire_store, alice, "bomb.png", png_bomb(13000), "image/png")
    decodes.forbidden = True  # neither the route nor the job may decode it
    first = await get_thumbnail(http, alice, bomb_id)
    assert first.status_code == 202 and first.headers["x-thumbnail"] == "pending"
    assert first.headers["retry-after"] and first.headers["cache-control"] == "no-store"
    assert Image.open(io.BytesIO(first.content)).format == "JPEG"
    # Asked again before the job ran: still one job.
    assert (await get_thumbnail(http, alice, bomb_id)).status_code == 202
    assert await wire_store.db["jobs"].count_documents({"kind": "make-thumbnail"}) == 1

    assert await worker_pool(wire_store).run_until_idle() == 1
    later = await get_thumbnail(http, alice, bomb_id)
    assert later.status_code == 200 and later.headers["x-thumbnail"] == "unavailable"
    assert later.headers["x-thumbnail-reason"] == (
        "the image is 13000 x 13000 pixels (169 million); at most 50 million are read"
    )
    placeholder = Image.open(io.BytesIO(later.content))
    assert placeholder.format == "JPEG" and placeholder.size == (320, 320)
    assert decodes.count == 0


async def test_a_processed_upload_is_served_from_storage(
    http: httpx.AsyncClient, wire_store: Store, alice: Tenant, decodes: Decodes
) -> None:
    body = {
        "fileName": "receipt.png",
        "base64Data": base64.b64encode(fixture("receipt.png")).decode(),
    }
    answer = await http.post("/v1/capabilities/files.upload", json=body, headers=alice.headers())
    document_id = answer.json()["data"]["result"]["documentId"]
    # Still queued: the pipeline will draw it, so no job is asked for.
    waiting = await get_thumbnail(http, alice, document_id)
    assert waiting.status_code == 202
    assert await wire_store.db["jobs"].count_documents({"kind": "make-thumbnail"}) == 0
    assert await worker_pool(wire_store).run_until_idle() == 1  # the pipeline made it
    stored = await wire_store.thumbnails.get(alice.org_id, document_id)
    assert stored is not None and stored["status"] == "ready"

    decodes.forbidden = True  # serving reads the stored JPEG
    served = await get_thumbnail(http, alice, document_id)
    assert served.status_code == 200 and served.headers["x-thumbnail"] == "ready"
    assert served.content == stored["jpeg"]
    assert served.headers["etag"] == f'"thumb-{stored["sha256"]}"'
    decodes.forbidden = False
    image = Image.open(io.BytesIO(served.content))
    assert image.format == "JPEG" and max(image.size) == 320


async def test_an_older_document_gets_its_preview_from_a_job(
    http: httpx.AsyncClient, wire_store: Store, alice: Tenant, bob_on_wire: Tenant
) -> None:
    pdf_id = await plant(
        wire_store, alice, "invoice.pdf", fixture("text-layer.pdf"), "application/pdf"
    )
    assert (await get_thumbnail(http, alice, pdf_id)).status_code == 202
    # Another workspace sees no such document, and queues nothing.
    assert (await get_thumbnail(http, bob_on_wire, pdf_id)).status_code == 404
    assert await worker_pool(wire_store).run_until_idle() == 1
    served = await get_thumbnail(http, alice, pdf_id)
    assert served.status_code == 200 and served.headers["x-thumbnail"] == "ready"
    assert max(Image.open(io.BytesIO(served.content)).size) == 320


@pytest.fixture
async def bob_on_wire(wire_store: Store) -> Tenant:
    return await make_tenant(wire_store, "bob@example.com", "Bob Ltd")


async def test_an_image_bomb_is_refused_at_upload(
    http: httpx.AsyncClient, wire_store: Store, alice: Tenant
) -> None:
    body = {"fileName": "bomb.png", "base64Data": base64.b64encode(png_bomb(13000)).decode()}
    answer = await http.post("/v1/capabilities/files.upload", json=body, headers=alice.headers())
    assert answer.status_code == 400, answer.text
    assert answer.json()["error"]["errorMessage"] == (
        "Invalid request: base64Data: the image is 13000 × 13000 pixels (169 million); "
        "at most 50 million are read"
    )
    assert await wire_store.db["documents"].count_documents({}) == 0
    assert await wire_store.db["originals.files"].count_documents({}) == 0
