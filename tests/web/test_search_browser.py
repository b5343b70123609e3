"""The Documents page's search in headless Chromium against a live ``fincap serve`` with demo
documents: the box's own example finds the hotels' invoices first, and the count line says how
many the search found, the number the server gives and the pages go through."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import pytest

from tests.requires import requires
from tests.web.dashboard_live import LiveDashboard, Page
from tests.web.shared_dashboard import SharedDashboard, own_context, workspace_on

pytestmark = [requires("chromium"), requires("model"), pytest.mark.wire]
ROWS = "#doc-rows tr"


@pytest.fixture(scope="module")
def live(dashboard: SharedDashboard) -> LiveDashboard:
    return workspace_on(dashboard, "search", 120)


@pytest.fixture(scope="module")
def page(live: LiveDashboard, dashboard: SharedDashboard) -> Iterator[Page]:
    with own_context(dashboard) as tab:
        tab.go(f"{live.base}/app/")
        tab.wait("!!document.querySelector('#api-key')")
        tab.fill("#api-key", live.api_key)
        tab.js("document.querySelector('#key-form').requestSubmit()")
        tab.wait("!!document.querySelector('#chart-months')")
        yield tab


def every_found(live: LiveDashboard, query: str) -> tuple[int, list[dict[str, Any]]]:
    """What documents.search says it found for ``query``, and every document of its pages."""
    body: dict[str, Any] = {
        "query": query,
        "searchType": "similarity",
        "limit": 100,
        "requiredFields": ["id", "merchant", "category", "docType"],
    }
    documents: list[dict[str, Any]] = []
    while True:
        response = live.call("documents.search", body)
        assert response.status_code == 200, response.text
        page = response.json()["data"]["result"]
        documents += page["documents"]
        if not page.get("nextCursor"):
            return page["found"], documents
        body["cursor"] = page["nextCursor"]


@pytest.mark.parametrize("query", ["hotel invoice", "Hotel Rechnung"])
def test_the_search_finds_the_hotels_first_and_says_how_many(
    live: LiveDashboard, page: Page, query: str
) -> None:
    found, documents = every_found(live, query)
    assert found == len(documents) > 0
    hotels = [d for d in documents if d["category"] == "Lodging" and d["docType"] == "invoice"]
    assert hotels, "the demo documents have hotel invoices"
    assert {d["id"] for d in documents[: len(hotels)]} == {d["id"] for d in hotels}, [
        (d["merchant"], d["category"], d["docType"]) for d in documents[: len(hotels) + 3]
    ]
    page.go(f"{live.base}/app/#/documents?q={quote(query)}")
    page.wait(
        f"document.querySelectorAll('{ROWS}').length > 0 && "
        "(document.querySelector('#result-count')?.innerText || '')"
        f".includes({json.dumps(f'found for “{query}”')})"
    )
    said = page.js("document.querySelector('#result-count').innerText")
    assert said.startswith(f"{found:,} documents found for “{query}”"), said
    shown = page.js(f"[...document.querySelectorAll('{ROWS}')].map(r => r.dataset.id)")
    assert shown[: len(hotels)] == [d["id"] for d in documents[: len(hotels)]]
