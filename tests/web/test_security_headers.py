"""What the browser is told about every page and file: GraphiQL and the other HTML pages cannot
be framed and run only their own scripts; originals and thumbnails are never sniffed, and a
type that could run script is an attachment, never shown inline."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from persistence.store import Store
from resolvers.framework.registry import Registry
from tests.conftest import Tenant, asgi_client, make_tenant, worker_pool
from tests.documents.conftest import doc

FIXTURES = Path(__file__).parent.parent / "fixtures" / "extraction"


def csp_directives(header: str) -> dict[str, list[str]]:
    directives = {}
    for part in header.split(";"):
        name, *values = part.split()
        directives[name] = values
    return directives


async def test_graphiql_runs_only_its_own_scripts_and_cannot_be_framed(
    client: httpx.AsyncClient,
) -> None:
    page = await client.get("/v1/graphql", headers={"accept": "text/html"})
    assert page.status_code == 200
    assert page.headers["x-frame-options"] == "DENY"
    assert page.headers["x-content-type-options"] == "nosniff"
    policy = csp_directives(page.headers["content-security-policy"])
    assert policy["frame-ancestors"] == ["'none'"] and policy["default-src"] == ["'none'"]
    assert policy["connect-src"] == ["'self'"]
    # Scripts: this server's files only; the page has no inline script to allow.
    assert policy["script-src"] == ["'self'"]
    assert re.findall(r"<script>", page.text) == []
    assert policy["object-src"] == ["'none'"] and policy["base-uri"] == ["'none'"]
    assert policy["img-src"] == ["data:"] and policy["font-src"] == ["data:"]


@pytest.mark.parametrize("path", ["/", "/api", "/app/", "/help"])
async def test_every_page_refuses_frames(client: httpx.AsyncClient, path: str) -> None:
    response = await client.get(path)
    assert response.status_code == 200
    assert response.headers["x-frame-options"] == "DENY"
    assert "frame-ancestors 'none'" in response.headers["content-security-policy"]
    assert response.headers["x-content-type-options"] == "nosniff"


async def test_the_integration_callback_page_refuses_frames(client: httpx.AsyncClient) -> None:
    page = await client.get("/v1/integrations/xero/callback?error=access_denied")
    assert page.status_code == 400 and page.headers["content-type"].startswith("text/html")
    assert page.headers["x-frame-options"] == "DENY"
    assert "frame-ancestors 'none'" in page.headers["content-security-policy"]


@pytest.fixture
async def wire_client(wire_store: Store, registry: Registry) -> AsyncIterator[httpx.AsyncClient]:
    async with asgi_client(wire_store, registry) as http:
        yield http


async def stored_original(
    store: Store, tenant: Tenant, doc_id: str, data: bytes, name: str, mime: str
) -> None:
    file_ref = await store.files.put(tenant.org_id, doc_id, data, name, mime)
    await store.documents.writes.insert_many(tenant.org_id, [doc(doc_id, file=file_ref)])


@pytest.mark.wire
@pytest.mark.parametrize(
    ("name", "mime", "data", "disposition", "served_as"),
    [
        (
            "receipt.png",
            "image/png",
            (FIXTURES / "receipt.png").read_bytes(),
            "inline",
            "image/png",
        ),
        ("invoice.pdf", "application/pdf", b"%PDF-1.4\n%%EOF\n", "inline", "application/pdf"),
        (
            "message.txt",
            "text/plain",
            b"<script>alert(1)</script>",
            "inline",
            "text/plain; charset=utf-8",
        ),
        (
            "logo.svg",
            "image/svg+xml",
            b'<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>',
            "attachment",
            "image/svg+xml",
        ),
        (
            "page.html",
            "text/html",
            b"<script>alert(document.cookie)</script>",
            "attachment",
            "text/html",
        ),
    ],
)
async def test_originals_are_never_sniffed_and_active_types_are_attachments(
    wire_client: httpx.AsyncClient,
    wire_store: Store,
    name: str,
    mime: str,
    data: bytes,
    disposition: str,
    served_as: str,
) -> None:
    alice = await make_tenant(wire_store, "alice@example.com", "Alice Co")
    await stored_original(wire_store, alice, "doc_o", data, name, mime)
    response = await wire_client.get("/v1/files/doc_o", headers=alice.headers())
    assert response.status_code == 200 and response.content == data
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["content-type"].startswith(served_as)
    assert response.headers["content-disposition"] == f"{disposition}; filename*=UTF-8''{name}"


@pytest.mark.wire
async def test_thumbnails_are_never_sniffed(
    wire_client: httpx.AsyncClient, wire_store: Store
) -> None:
    alice = await make_tenant(wire_store, "alice@example.com", "Alice Co")
    await stored_original(
        wire_store, alice, "doc_t", (FIXTURES / "receipt.png").read_bytes(), "r.png", "image/png"
    )
    # The first request queues the preview (202 with a placeholder); a worker makes it.
    pending = await wire_client.get("/v1/files/doc_t/thumbnail", headers=alice.headers())
    assert pending.status_code == 202 and pending.headers["x-content-type-options"] == "nosniff"
    assert await worker_pool(wire_store).run_until_idle() == 1
    response = await wire_client.get("/v1/files/doc_t/thumbnail", headers=alice.headers())
    assert response.status_code == 200 and response.headers["content-type"] == "image/jpeg"
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["content-disposition"].startswith("inline")
