"""The dashboard on live events (headless Chromium, ``fincap serve``): an uploaded receipt turns
processed through the event stream, with no status polling; the overview refreshes itself when
another client changes a document."""

from __future__ import annotations

import base64
import contextlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.requires import requires
from tests.web.dashboard_live import LiveDashboard, Page, signed_in_tab
from tests.web.shared_dashboard import SharedDashboard, workspace_on

pytestmark = [requires("chromium"), pytest.mark.wire]
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
def live(dashboard: SharedDashboard) -> LiveDashboard:
    return workspace_on(dashboard, "live", 20)


@pytest.fixture(scope="module")
def page(live: LiveDashboard, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Page]:
    with signed_in_tab(live, tmp_path_factory.mktemp("chromium")) as tab:
        yield tab


def requests_after(page: Page, start: int) -> list[dict[str, Any]]:
    made: list[dict[str, Any]] = page.js("window.__requests")[start:]
    return made


def test_an_upload_turns_processed_through_the_stream_without_polling(
    live: LiveDashboard, page: Page
) -> None:
    page.go(f"{live.base}/app/#/upload")
    page.wait("!!document.querySelector('#drop-zone')")
    # The navigation's review count follows the events: the tab's one stream is open already.
    page.wait("window.__fincapLive?.status === 'open'")
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
    # The same event stream (none opened again), the upload (XHR), and no status query:
    # nothing asked "is it done yet?".
    assert urls.count("/v1/events") == 0, made
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


def test_reloading_the_dashboard_gives_its_stream_back(live: LiveDashboard, page: Page) -> None:
    """Each page opens a stream; a page that is left must close its own at once. A browser
    holds at most six HTTP/1.1 connections per server, so before this, the seventh reload of the
    overview in a few seconds waited (streams of pages already left held every connection) and
    the page never loaded."""
    for n in range(8):
        page.go(f"{live.base}/app/?reload={n}#/")
        page.wait("window.__fincapLive?.status === 'open'", timeout=20)
    # The overview of the last one shows, read from the server on a free connection.
    page.wait("!!document.querySelector('main h1, main h2')", timeout=20)


def open_tab(page: Page, live: LiveDashboard) -> tuple[Page, str]:
    """Another tab of the same browser on the overview, signed in like the first (a tab's
    sessionStorage is its own); its page and target id."""
    target = page.devtools.call("Target.createTarget", url="about:blank")["targetId"]
    session = page.devtools.call("Target.attachToTarget", targetId=target, flatten=True)
    tab = Page(page.devtools, session["sessionId"])
    tab.call("Page.enable")
    tab.go(f"{live.base}/app/")
    tab.wait("document.readyState === 'complete'")
    signed_in = {"kind": "key", "secret": live.api_key, "orgId": live.org_id}
    tab.js(f"sessionStorage.setItem('fincap.session', {json.dumps(json.dumps(signed_in))})")
    tab.go(f"{live.base}/app/?tab={target}#/")
    return tab, target


def heard(tab: Page, document_id: str, kind: str) -> str:
    return f"!!window.__fincapLive.times[{json.dumps(document_id)}]?.[{json.dumps(kind)}]"


def test_the_tabs_of_a_workspace_share_one_stream(live: LiveDashboard, page: Page) -> None:
    """Eight tabs on the overview: all of them load (six streams would hold every HTTP/1.1
    connection the browser allows a server), one reads the stream and relays it, every tab
    hears an archive; when the reading tab closes, another takes over and hears the next."""
    page.go(f"{live.base}/app/#/")
    page.wait("window.__fincapLive?.status === 'open'", timeout=20)
    found = live.call("documents.search", {"limit": 2}).json()["data"]["result"]
    first, second = (d["id"] for d in found["documents"][:2])
    tabs = [(page, "")] + [open_tab(page, live) for _ in range(7)]
    try:
        for tab, _ in tabs:
            tab.wait("window.__fincapLive?.status === 'open'", timeout=20)
        roles = [tab.js("window.__fincapLive.role") for tab, _ in tabs]
        assert sorted(roles) == ["follower"] * 7 + ["leader"], roles
        assert live.call("documents.delete", {"id": first}).status_code == 200
        for tab, _ in tabs:
            tab.wait(heard(tab, first, "document.archived"), timeout=20)
        # The reading tab closes: its lock passes on, and the next event still reaches all.
        leader = roles.index("leader")
        if leader == 0:  # the module's own tab stays; make another one the reader first
            page.go(f"{live.base}/app/?again=1#/")
            page.wait("window.__fincapLive?.status === 'open'", timeout=20)
            roles = [tab.js("window.__fincapLive.role") for tab, _ in tabs]
            leader = roles.index("leader")
        page.devtools.call("Target.closeTarget", targetId=tabs[leader][1])
        rest = [tab for n, (tab, _) in enumerate(tabs) if n != leader]
        assert live.call("documents.delete", {"id": second}).status_code == 200
        for tab in rest:
            tab.wait(heard(tab, second, "document.archived"), timeout=20)
        roles = [tab.js("window.__fincapLive.role") for tab in rest]
        assert sorted(roles) == ["follower"] * 6 + ["leader"], roles
    finally:
        for _, target in tabs[1:]:
            with contextlib.suppress(Exception):  # the reader's tab is closed already
                page.devtools.call("Target.closeTarget", targetId=target)
        for doc in (first, second):
            live.call("documents.unarchive", {"id": doc})


def test_signing_out_stops_listening_at_once(live: LiveDashboard, page: Page) -> None:
    page.go(f"{live.base}/app/?signout=1#/")
    page.wait("window.__fincapLive?.status === 'open'", timeout=20)
    page.wait("!!document.querySelector('#sign-out') && !document.querySelector('#nav').hidden")
    page.click("#sign-out")
    page.wait("window.__fincapLive.status === 'idle'", timeout=5)
    archived = live.call("documents.search", {"limit": 1}).json()["data"]["result"]["documents"]
    doc = archived[0]["id"]
    # A tab still signed in is the sentinel: once it has heard the archive, so had the signed-out
    # tab, were it listening (reading the stream itself, it would relay it to this one).
    listening, target = open_tab(page, live)
    listening.wait("window.__fincapLive?.status === 'open'", timeout=20)
    assert live.call("documents.delete", {"id": doc}).status_code == 200
    try:
        listening.wait(heard(listening, doc, "document.archived"), timeout=20)
        assert not page.js(heard(page, doc, "document.archived")), "a signed-out tab still hears"
    finally:
        page.devtools.call("Target.closeTarget", targetId=target)
        live.call("documents.unarchive", {"id": doc})
        signed_in = {"kind": "key", "secret": live.api_key, "orgId": live.org_id}
        page.js(f"sessionStorage.setItem('fincap.session', {json.dumps(json.dumps(signed_in))})")
