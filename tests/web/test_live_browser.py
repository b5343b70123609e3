"""The dashboard on live events (headless Chromium, ``fincap serve``): an uploaded receipt turns
processed through the event stream, with no status polling; the overview refreshes itself when
another client changes a document."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.browser import needs_chromium
from tests.web.dashboard_live import LiveDashboard, Page, chromium, prepare, serving

pytestmark = [needs_chromium, pytest.mark.wire]
FIXTURES = Path(__file__).parents[1] / "fixtures" / "extraction"

# Every request the page makes with fetch or XHR, with the GraphQL operation it carries.
SPY = """(() => {
  window.__requests = [];
  const original = window.fetch;
  window.fetch = (url, options = {}) => {
    window.__requests.push({url: String(url), body: String(options.body || '').slice(0, 120)});
    return original(url, options);
  };
  const send = XMLHttpRequest.prototype.send;
  XMLHttpRequest.prototype.send = function (body) {
    window.__requests.push({url: 'xhr', body: String(body || '').slice(0, 120)});
    return send.call(this, body);
  };
})()"""


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveDashboard]:
    data_dir = tmp_path_factory.mktemp("live") / "data"
    boot = prepare(data_dir, 20)
    with serving(data_dir, boot) as server:
        yield server


@pytest.fixture(scope="module")
def page(live: LiveDashboard, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Page]:
    with chromium(tmp_path_factory.mktemp("chromium")) as tab:
        tab.go(f"{live.base}/app/")  # sessionStorage belongs to the origin: be on it first
        tab.wait("document.readyState === 'complete'")
        signed_in = {"kind": "key", "secret": live.api_key, "orgId": live.org_id}
        tab.js(f"sessionStorage.setItem('fincap.session', {json.dumps(json.dumps(signed_in))})")
        yield tab


def requests_after(page: Page, start: int) -> list[dict[str, Any]]:
    made: list[dict[str, Any]] = page.js("window.__requests")[start:]
    return made


def test_an_upload_turns_processed_through_the_stream_without_polling(
    live: LiveDashboard, page: Page
) -> None:
    page.go(f"{live.base}/app/#/upload")
    page.wait("!!document.querySelector('#drop-zone')")
    page.js(SPY)
    data = base64.b64encode((FIXTURES / "text-layer.pdf").read_bytes()).decode()
    page.js(
        f"(() => {{ const bytes = Uint8Array.from(atob({json.dumps(data)}), c => c.charCodeAt(0));"
        "const transfer = new DataTransfer();"
        "transfer.items.add(new File([bytes], 'northwind.pdf', {type: 'application/pdf'}));"
        "document.querySelector('#drop-zone').dispatchEvent(new DragEvent('drop', "
        "{dataTransfer: transfer, bubbles: true, cancelable: true})); })()"
    )
    item = "document.querySelector('#uploads li[data-file=\"northwind.pdf\"]')"
    page.wait(f"['processed', 'warning'].includes({item}?.dataset.status)", timeout=120)
    text = page.js(f"{item}.innerText")
    assert "Northwind Consulting GmbH" in text, text
    made = page.js("window.__requests")
    urls = [r["url"] for r in made]
    # One event stream, the upload (XHR), and no status query: nothing asked "is it done yet?".
    assert urls.count("/v1/events") == 1, made
    assert any(r["url"] == "xhr" and "filesUpload" in r["body"] for r in made), made
    assert not [r for r in made if "documentsGet" in r["body"]], made
    assert page.js("window.__fincapLive.received") >= 2  # created … processed, as they happened


def test_the_overview_refreshes_when_a_document_changes_elsewhere(
    live: LiveDashboard, page: Page
) -> None:
    page.go(f"{live.base}/app/#/?range=all")
    page.wait("!!document.querySelector('#doc-count')")
    page.js("window.__fincapOverviewRefreshes = 0")
    before = int(page.js("document.querySelector('#doc-count').innerText").replace(",", ""))
    # Another client (REST, another key holder) archives a document of the workspace.
    found = live.call("documents.search", {"limit": 1})
    document_id = found.json()["data"]["result"]["documents"][0]["id"]
    assert live.call("documents.delete", {"id": document_id}).status_code == 200  # archives it
    page.wait("window.__fincapOverviewRefreshes >= 1", timeout=30)
    after = int(page.js("document.querySelector('#doc-count').innerText").replace(",", ""))
    assert after == before - 1
