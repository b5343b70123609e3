"""The task an assistant is asked most, end to end with the official MCP Python client on a
socket: sign in through OAuth, see which workspace it acts in, total last month's spend by
category, and fetch one receipt's original as a resource (GridFS: the wire store)."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta
from importlib.metadata import version
from typing import Any

import httpx2
import pytest
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

from persistence.embedded import EmbeddedServer
from persistence.ids import new_id
from persistence.store import Store
from tests.mcp.live import Live, live_server
from tests.mcp.test_mcp_socket import MemoryStorage, Person, signing_in, structured
from tests.sources.conftest import fixture

pytestmark = pytest.mark.wire


def last_month(today: date) -> tuple[date, date]:
    last = today.replace(day=1) - timedelta(days=1)
    return last.replace(day=1), last


async def plant(store: Store, workspace: str, receipt: bytes) -> str:
    """Four receipts: three last month (two Travel, one Meals, one with its original), one
    this month. Returns the id of the one with the original."""
    today = datetime.now(UTC).date()
    first, last = last_month(today)
    with_original = new_id("doc")
    ref = await store.files.put(workspace, with_original, receipt, "taxi.png", "image/png")
    rows: list[dict[str, Any]] = [
        {"_id": with_original, "file": ref, "merchant": "City Taxi", "amount": 120.5,
         "category": "Travel", "docDate": first},
        {"_id": new_id("doc"), "merchant": "Rail", "amount": 30.0, "category": "Travel",
         "docDate": last},
        {"_id": new_id("doc"), "merchant": "Bistro", "amount": 45.25, "category": "Meals",
         "docDate": first + timedelta(days=3)},
        {"_id": new_id("doc"), "merchant": "Rail", "amount": 999.0, "category": "Travel",
         "docDate": today.replace(day=1)},
    ]  # fmt: skip
    for row in rows:
        row.update(
            currency="EUR",
            docType="receipt",
            source="upload",
            processingStatus="processed",
            receivedAt=datetime.now(UTC),
            docDate=datetime.combine(row["docDate"], datetime.min.time(), tzinfo=UTC),
        )
    await store.documents.writes.insert_many(workspace, rows)
    return with_original


@pytest.fixture(scope="module")
def live(embedded_server: EmbeddedServer) -> Iterator[Live]:
    with live_server(embedded_server.uri) as server:
        yield server


async def test_an_assistant_totals_last_months_spend_and_reads_an_original(live: Live) -> None:
    receipt = fixture("receipt.png")
    document_id = live.run(plant(live.store, live.org_id, receipt))
    person = Person(live.base, live.org_id)
    storage = MemoryStorage()
    auth = signing_in(live, person, storage, "Assistant")
    async with (
        httpx2.AsyncClient(auth=auth, timeout=30) as http,
        streamable_http_client(f"{live.base}/mcp", http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        hello = await session.initialize()
        assert hello.server_info.name == "fincap"
        assert hello.server_info.version == version("fincap")
        assert hello.instructions is not None and "workspace_get_context" in hello.instructions

        # 1. Which workspace: the one the person chose on the consent page.
        context = structured(await session.call_tool("workspace_get_context", {}))
        assert context["workspace"] == {"id": live.org_id, "name": "Live Co", "role": "owner"}
        assert context["credential"] == "oauth"

        # 2. Last month's spend by category, as the documents_count description shows.
        first, last = last_month(datetime.now(UTC).date())
        where = {"conditions": [
            {"field": "docDate", "op": "gte", "value": first.isoformat()},
            {"field": "docDate", "op": "lte", "value": last.isoformat()},
        ]}  # fmt: skip
        counted = structured(
            await session.call_tool("documents_count", {"where": where, "groupBy": "category"})
        )
        assert counted["count"] == 3
        assert counted["totals"] == [{"currency": "EUR", "amount": 195.75}]
        by_category = {group["key"]: group for group in counted["groups"]}
        assert by_category["Travel"]["count"] == 2
        assert by_category["Travel"]["totals"] == [{"currency": "EUR", "amount": 150.5}]
        assert by_category["Meals"]["totals"] == [{"currency": "EUR", "amount": 45.25}]

        # 3. The original of one document, as a resource (the templates say how to name it).
        templates = (await session.list_resource_templates()).resource_templates
        assert {t.uri_template for t in templates} == {
            "fincap://documents/{id}",
            "fincap://documents/{id}/original",
        }
        listed = (await session.list_resources()).resources
        assert f"fincap://documents/{document_id}" in {str(r.uri) for r in listed}
        original = await session.read_resource(f"fincap://documents/{document_id}/original")
        blob = original.contents[0]
        assert blob.mime_type == "image/png"
        assert base64.b64decode(blob.blob) == receipt  # type: ignore[union-attr]
        fields = await session.read_resource(f"fincap://documents/{document_id}")
        document = json.loads(fields.contents[0].text)  # type: ignore[union-attr]
        assert document["merchant"] == "City Taxi" and document["category"] == "Travel"

        # A prompt that starts the same review.
        month = first.strftime("%Y-%m")
        prompt = await session.get_prompt("review_spend", {"month": month})
        text = prompt.messages[0].content.text  # type: ignore[union-attr]
        assert f'"value":"{first.isoformat()}"' in text and "documents_count" in text
