"""Documents as MCP resources (fields as JSON, the original as a size-bounded blob, scoped to
the caller's workspace) and the prompts that start common tasks."""

from __future__ import annotations

import base64
import json
from datetime import UTC, date, datetime
from typing import Any

import httpx
import pytest
from mcp.shared.exceptions import MCPError

from app.mcp import resources
from app.mcp.prompts import get_prompt
from persistence.ids import new_id
from persistence.store import Store
from tests.conftest import Tenant
from tests.mcp.test_mcp_toolsets import post

pytestmark = pytest.mark.wire
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 64


@pytest.fixture
def store(wire_store: Store) -> Store:
    """The wire store under every fixture of the package (the app, alice, bob): originals
    live in GridFS, which the in-memory store lacks."""
    return wire_store


async def plant(store: Store, tenant: Tenant, data: bytes | None = PNG) -> str:
    document_id = new_id("doc")
    row: dict[str, Any] = {
        "_id": document_id, "merchant": "Cafe", "amount": 4.5, "currency": "EUR",
        "source": "upload", "processingStatus": "processed", "receivedAt": datetime.now(UTC),
    }  # fmt: skip
    if data is not None:
        row["file"] = await store.files.put(tenant.org_id, document_id, data, "c.png", "image/png")
    await store.documents.writes.insert_many(tenant.org_id, [row])
    return document_id


async def read(http: httpx.AsyncClient, tenant: Tenant, uri: str) -> dict[str, Any]:
    response = await post(http, "resources/read", {"uri": uri},
                          Authorization=f"Bearer {tenant.api_key}")  # fmt: skip
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


async def test_a_document_reads_as_fields_and_as_its_original(
    http: httpx.AsyncClient, wire_store: Store, alice: Tenant
) -> None:
    document_id = await plant(wire_store, alice)
    fields = (await read(http, alice, f"fincap://documents/{document_id}"))["result"]
    content = fields["contents"][0]
    assert content["mimeType"] == "application/json"
    assert json.loads(content["text"])["merchant"] == "Cafe"
    original = (await read(http, alice, f"fincap://documents/{document_id}/original"))["result"]
    blob = original["contents"][0]
    assert blob["mimeType"] == "image/png" and base64.b64decode(blob["blob"]) == PNG
    listed = await post(http, "resources/list", {}, Authorization=f"Bearer {alice.api_key}")
    uris = [r["uri"] for r in listed.json()["result"]["resources"]]
    assert uris == [f"fincap://documents/{document_id}"]
    assert listed.json()["result"]["resources"][0]["name"] == "Cafe · 4.5 EUR"


async def test_another_workspaces_document_is_not_found(
    http: httpx.AsyncClient, wire_store: Store, alice: Tenant, bob: Tenant
) -> None:
    theirs = await plant(wire_store, bob)
    for uri in (f"fincap://documents/{theirs}", f"fincap://documents/{theirs}/original"):
        error = (await read(http, alice, uri))["error"]
        assert error["code"] == -32602
        assert theirs in error["message"] and "Cafe" not in error["message"]
    listed = await post(http, "resources/list", {}, Authorization=f"Bearer {alice.api_key}")
    assert listed.json()["result"]["resources"] == []


async def test_an_original_too_large_is_refused_with_where_to_get_it(
    http: httpx.AsyncClient, wire_store: Store, alice: Tenant, monkeypatch: pytest.MonkeyPatch
) -> None:
    document_id = await plant(wire_store, alice)
    monkeypatch.setattr(resources, "MAX_ORIGINAL_BYTES", len(PNG) - 1)
    error = (await read(http, alice, f"fincap://documents/{document_id}/original"))["error"]
    assert f"/v1/files/{document_id}" in error["message"]
    no_file = await plant(wire_store, alice, data=None)
    missing = (await read(http, alice, f"fincap://documents/{no_file}/original"))["error"]
    assert "No original file" in missing["message"]


async def test_resources_need_a_credential_and_a_known_uri(
    http: httpx.AsyncClient, alice: Tenant
) -> None:
    anonymous = await post(http, "resources/read", {"uri": "fincap://documents/doc_1"})
    assert anonymous.status_code == 401
    assert 'scope="read_documents"' in anonymous.headers["www-authenticate"]
    templates = (await post(http, "resources/templates/list")).json()["result"]
    assert [t["uriTemplate"] for t in templates["resourceTemplates"]] == [
        "fincap://documents/{id}", "fincap://documents/{id}/original",
    ]  # fmt: skip
    unknown = (await read(http, alice, "fincap://receipts/doc_1"))["error"]
    assert unknown["code"] == -32602 and "fincap://documents/{id}" in unknown["message"]


async def test_prompts_are_written_out_for_their_arguments(
    http: httpx.AsyncClient, alice: Tenant
) -> None:
    got = await post(
        http, "prompts/get", {"name": "review_spend", "arguments": {"month": "2026-02"}}
    )
    text = got.json()["result"]["messages"][0]["content"]["text"]
    # February 2026 in full, and January to compare.
    assert '"value":"2026-02-01"' in text and '"value":"2026-02-28"' in text
    assert '"value":"2026-01-01"' in text and '"value":"2026-01-31"' in text
    bad = await post(http, "prompts/get", {"name": "review_spend", "arguments": {"month": "Feb"}})
    assert bad.json()["error"]["code"] == -32602 and "YYYY-MM" in bad.json()["error"]["message"]
    needs = await post(http, "prompts/get", {"name": "check_document", "arguments": {}})
    assert "documentId" in needs.json()["error"]["message"]
    prose = {"name": "check_document", "arguments": {"documentId": "x" * 5000}}
    assert "document id" in (await post(http, "prompts/get", prose)).json()["error"]["message"]
    fine = {"name": "check_document", "arguments": {"documentId": "doc_1"}}
    assert "documents_get" in (await post(http, "prompts/get", fine)).text
    unknown = await post(http, "prompts/get", {"name": "taxes", "arguments": {}})
    assert "review_spend" in unknown.json()["error"]["message"]


async def test_one_original_at_a_time_per_key(
    http: httpx.AsyncClient, wire_store: Store, alice: Tenant
) -> None:
    """A second read while one runs is refused at once (memory: an original is held whole)."""
    document_id = await plant(wire_store, alice)
    key = await wire_store.api_keys.find_active(alice.api_key)
    assert key is not None
    gate = http._transport.app.state.services.expensive_calls  # type: ignore[attr-defined]
    with gate.slot(key["_id"], "a read already running", cost=0):
        busy = (await read(http, alice, f"fincap://documents/{document_id}/original"))["error"]
    assert "already running" in busy["message"]
    done = (await read(http, alice, f"fincap://documents/{document_id}/original"))["result"]
    assert base64.b64decode(done["contents"][0]["blob"]) == PNG


def test_missing_receipts_defaults_to_last_month() -> None:
    """Written out with the month before today's, in full (January's is last December)."""
    for today, first, last in (
        (date(2026, 3, 15), "2026-02-01", "2026-02-28"),
        (date(2026, 1, 10), "2025-12-01", "2025-12-31"),
    ):
        content = get_prompt("missing_receipts", {}, today).messages[0].content
        text = getattr(content, "text", "")
        assert f'"value":"{first}"' in text and f'"value":"{last}"' in text
        assert f"from {first} to {last}" in text
    with pytest.raises(MCPError, match="YYYY-MM"):
        get_prompt("missing_receipts", {"month": "last"}, date(2026, 3, 15))
