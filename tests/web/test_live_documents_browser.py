"""The Documents table and a document's page follow changes made elsewhere (headless Chromium on
a live ``fincap serve``, in an English and a German browser): a merchant renamed through REST
shows in an open table and an open document within 2 s (stretched in proportion when the
machine has more runnable processes than cores), the row in place (same element, focus,
selection and scroll kept); a new upload joins the top of an open table and a later date of 2019
keeps it first; an archive through REST takes its row away and counts again; a document's page
says when it was archived elsewhere, and never overwrites a correction being typed."""

from __future__ import annotations

import base64
import json
import os
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tests.requires import requires
from tests.web.accessibility import assert_accessible
from tests.web.dashboard_live import LiveDashboard, Page, result
from tests.web.shared_dashboard import SharedDashboard, signed_in_context, workspace_on

pytestmark = [requires("chromium"), pytest.mark.wire]
FIXTURES = Path(__file__).parents[1] / "fixtures" / "extraction"
LOCALES = ["en-US", "de-DE"]
ROWS = "#doc-rows tr"
NOTE = "document.querySelector('#changed-elsewhere')?.innerText"
LIVE_S = 2.0  # seconds: what "live" means here (issue 38), on a machine with a core to spare


def live_bound() -> float:
    """``LIVE_S`` stretched by how oversubscribed the machine is now: with more runnable
    processes than cores (two suites side by side: load 13-15 on two cores), the server, the
    event stream and the browser each get a share of a core, and the same work takes that much
    longer (the upload's row took over 2 s there, in both suites; issue 36). On a machine with a
    core to spare, the bound is 2 s."""
    return LIVE_S * max(1.0, os.getloadavg()[0] / (os.cpu_count() or 1))


@pytest.fixture(scope="module")
def live(dashboard: SharedDashboard) -> LiveDashboard:
    return workspace_on(dashboard, "live-documents", 70)  # more than a page of 50


@pytest.fixture(scope="module")
def tab(live: LiveDashboard, dashboard: SharedDashboard) -> Iterator[Page]:
    with signed_in_context(dashboard, live) as page:
        yield page


@pytest.fixture(params=LOCALES)
def page(tab: Page, request: pytest.FixtureRequest) -> Iterator[Page]:
    """The module's tab in the locale (numbers, dates); the next navigation applies it."""
    tab.call("Emulation.setLocaleOverride", locale=request.param)
    tab.go("about:blank")
    try:
        yield tab
    finally:
        tab.call("Emulation.setLocaleOverride")


def open_list(page: Page, live: LiveDashboard) -> None:
    page.go(f"{live.base}/app/#/documents")
    page.wait(
        "document.querySelector('#doc-list')?.dataset.hash === location.hash "
        "&& window.__fincapLive?.status === 'open'",
        timeout=30,
    )


def row_ids(page: Page) -> list[str]:
    return list(page.js(f"[...document.querySelectorAll('{ROWS}')].map(r => r.dataset.id)"))


def count(page: Page) -> int:
    return int(page.js("document.querySelector('#result-count').dataset.count"))


def row(document_id: str) -> str:
    return f"document.querySelector('tr[data-id={json.dumps(document_id)}]')"


def within(page: Page, expression: str, seconds: float | None = None) -> float:
    """Wait until ``expression`` holds, at most ``seconds`` (``live_bound()`` unless given); how
    long it took."""
    started = time.monotonic()
    page.wait(expression, timeout=live_bound() if seconds is None else seconds)
    return time.monotonic() - started


def upload(live: LiveDashboard, path: Path) -> str:
    started = result(
        live.call(
            "files.upload",
            {"fileName": path.name, "base64Data": base64.b64encode(path.read_bytes()).decode()},
        )
    )
    return str(started["documentId"])


def test_a_rename_elsewhere_updates_its_row_in_place(live: LiveDashboard, page: Page) -> None:
    open_list(page, live)
    ids = row_ids(page)
    target = ids[5]
    # A person's place on the page: a ticked box, the focus on the row's link, a scroll.
    tick = "b => { b.checked = true; b.dispatchEvent(new Event('change')); }"
    page.js(f"({tick})({row(target)}.querySelector('.pick-row'))")
    page.js(f"{row(target)}.querySelector('.doc-name').focus()")
    page.js(f"{row(target)}.__before = true; window.scrollTo(0, 200)")
    scrolled = page.js("window.scrollY")
    renamed = f"Renamed Bistro {page.js('navigator.language')}"
    result(live.call("documents.update", {"id": target, "merchant": renamed}))
    within(page, f"{row(target)}.querySelector('.doc-name').innerText === {json.dumps(renamed)}")
    assert page.js(f"{row(target)}.__before") is True  # the same row, not a list drawn again
    assert row_ids(page) == ids
    assert page.js(f"{row(target)}.querySelector('.pick-row').checked")
    assert page.js(f"document.activeElement === {row(target)}.querySelector('.doc-name')")
    assert page.js("window.scrollY") == scrolled
    assert page.js("document.querySelector('#selected-count').innerText").startswith("1 ")
    assert_accessible(page)  # the row marked as changed


def test_a_rename_elsewhere_shows_on_the_open_document(live: LiveDashboard, page: Page) -> None:
    target = result(live.call("documents.search", {"limit": 3}))["documents"][2]["id"]
    page.go(f"{live.base}/app/#/documents/{target}")
    page.wait("!!document.querySelector('#fields') && window.__fincapLive?.status === 'open'")
    renamed = f"Elsewhere Café {page.js('navigator.language')}"
    result(live.call("documents.update", {"id": target, "merchant": renamed}))
    within(
        page,
        f"document.querySelector('#value-merchant .value')?.innerText === {json.dumps(renamed)}",
    )
    assert page.js("document.querySelector('main h1').innerText") == renamed
    assert "merchant" in page.js("document.querySelector('#changed-elsewhere').innerText")

    # A correction being typed is never overwritten: the field says it changed underneath.
    page.click("[data-edit=merchant]")
    page.wait("document.activeElement?.id === 'edit-merchant'")
    page.fill("#edit-merchant", "What I am typing")
    result(
        live.call("documents.update", {"id": target, "merchant": "Changed Again", "summary": "x"})
    )
    within(page, "!!document.querySelector('#changed-merchant')")
    assert "Changed Again" in page.js("document.querySelector('#changed-merchant').innerText")
    assert page.js("document.activeElement?.id") == "edit-merchant"
    assert page.js("document.activeElement.value") == "What I am typing"
    # The other fields did follow.
    assert page.js("document.querySelector('#value-summary .value').innerText") == "x"
    assert_accessible(page)  # the status line and the notice under the open correction
    # Cancel shows the value stored now.
    page.press("Escape")
    page.wait("document.querySelector('#value-merchant .value')?.innerText === 'Changed Again'")


def test_a_new_upload_joins_the_top_of_an_open_table(live: LiveDashboard, page: Page) -> None:
    open_list(page, live)
    before = count(page)
    first = row_ids(page)[0]
    added = upload(live, FIXTURES / "text-layer.pdf")
    within(page, f"document.querySelector('{ROWS}')?.dataset.id === {json.dumps(added)}")
    page.wait(f"document.querySelector('#result-count').dataset.count === '{before + 1}'", 5)
    assert row_ids(page)[1] == first
    # Processed while on screen: its row fills in, in place.
    page.wait(
        f"['processed', 'warning'].includes({row(added)}.querySelector('.badge').innerText)",
        timeout=120,
    )
    # Dated 2019 (a receipt kept for years): still first, the newest added, live and on a reload.
    result(live.call("documents.update", {"id": added, "docDate": "2019-03-14"}))
    within(page, f"{row(added)}.querySelector('[data-col=docDate]').innerText === '2019-03-14'")
    assert row_ids(page)[0] == added
    open_list(page, live)
    assert row_ids(page)[0] == added


def test_an_archive_elsewhere_takes_the_row_away_and_counts_again(
    live: LiveDashboard, page: Page
) -> None:
    open_list(page, live)
    before = count(page)
    ids = row_ids(page)
    gone = ids[3]
    result(live.call("documents.delete", {"id": gone}))  # archives it
    try:
        within(page, f"!{row(gone)}")
        page.wait(f"document.querySelector('#result-count').dataset.count === '{before - 1}'", 3)
        line = page.js("document.querySelector('#result-count').innerText")
        written = page.js(f"({before - 1}).toLocaleString()")
        assert f"{written} documents match" in line, line
        assert page.js("document.querySelector('#csv-download').innerText").endswith(
            f"{written} matching"
        )
        assert row_ids(page) == [i for i in ids if i != gone]
    finally:
        result(live.call("documents.unarchive", {"id": gone}))


def test_an_archive_elsewhere_shows_on_the_open_document(live: LiveDashboard, page: Page) -> None:
    target = result(live.call("documents.search", {"limit": 5}))["documents"][4]["id"]
    page.go(f"{live.base}/app/#/documents/{target}")
    page.wait("!!document.querySelector('#archive') && window.__fincapLive?.status === 'open'")
    assert page.js("document.querySelector('#archive').innerText") == "Archive"
    result(live.call("documents.delete", {"id": target}))
    try:
        within(page, f"{NOTE}.includes('archived elsewhere')")
        assert page.js("document.querySelector('#archive').innerText") == "Restore"
    finally:
        result(live.call("documents.unarchive", {"id": target}))
    within(page, f"{NOTE}.includes('restored elsewhere')")


def new_outside(live: LiveDashboard, since: str, start: str) -> int:
    """How many documents received since ``since`` are dated before ``start`` (REST)."""
    where = {
        "conditions": [
            {"field": "receivedAt", "op": "gte", "value": since},
            {"field": "docDate", "op": "lt", "value": start},
        ]
    }
    return int(result(live.call("documents.count", {"where": where}))["count"])


def test_the_overview_says_which_new_documents_its_range_leaves_out(
    live: LiveDashboard, page: Page
) -> None:
    """A receipt dated 2024 uploaded now is in neither chart of the last 12 months: the overview
    says how many new ones are dated before its range, live, and links to them."""
    page.go(f"{live.base}/app/#/")
    page.wait("!!document.querySelector('#doc-count') && window.__fincapLive?.status === 'open'")
    start = page.js("document.querySelector('#f-from').value")
    added = upload(live, FIXTURES / "text-layer.pdf")  # dated 2024-02-29
    deadline = time.monotonic() + 120
    while not result(live.call("documents.get", {"id": added}))["document"].get("docDate"):
        assert time.monotonic() < deadline, "not processed"
        time.sleep(0.5)
    expected = new_outside(live, (datetime.now(UTC) - timedelta(days=7)).isoformat(), start)
    assert expected >= 1
    written = page.js(f"({expected}).toLocaleString()")
    noun = "document" if expected == 1 else "documents"
    said = f"{written} new {noun} dated before this range"
    # No reload: the overview follows the events (a refresh at most once a second).
    page.wait(f"document.querySelector('#outside-range')?.innerText.includes({json.dumps(said)})")
    line = page.js("document.querySelector('#outside-range').innerText")
    assert "added in the last 7 days" in line
    assert_accessible(page)
    # The link opens them: every date, the newest added first.
    page.click("#outside-link")
    page.wait("document.querySelector('#doc-list')?.dataset.hash === location.hash", timeout=30)
    assert page.js("location.hash") == "#/documents"
    assert row_ids(page)[0] == added


# Every GraphQL request the page sends from now on (its operation name).
SPY = """(() => {
  window.__sent = [];
  const original = window.fetch;
  window.fetch = (url, options = {}) => {
    const body = String(options.body || '');
    if (String(url).endsWith('/graphql')) window.__sent.push(body.slice(0, 40));
    return original(url, options);
  };
})()"""


def test_a_burst_of_changes_is_read_in_a_few_requests(live: LiveDashboard, page: Page) -> None:
    """Forty corrections at once (as a bulk edit makes them): every shown row follows, read in
    a few batched requests, not one per event."""
    open_list(page, live)
    ids = row_ids(page)[:40]
    page.js(SPY)
    tag = f"Burst {page.js('navigator.language')} {time.monotonic_ns() % 100000}"

    def correct(n: int) -> None:
        result(live.call("documents.update", {"id": ids[n], "category": f"{tag} {n}"}))

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(correct, range(len(ids))))
    within(page, f"{row(ids[-1])}.querySelector('[data-col=category]').innerText === '{tag} 39'")
    page.wait(
        f'{json.dumps(ids)}.every((id, n) => document.querySelector(`tr[data-id="${{id}}"] '
        f"[data-col=category]`).innerText === `{tag} ${{n}}`)",
        timeout=live_bound(),
    )
    sent = page.js("window.__sent")
    # Batches of the 40 events, never one request per event. How many batches depends on how
    # spread out the events arrive: never more than 6 before, 7 in a suite at load 15.
    assert 1 <= len(sent) <= len(ids) // 4, sent
    assert row_ids(page)[: len(ids)] == ids  # in place
