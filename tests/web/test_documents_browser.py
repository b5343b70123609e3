"""The Documents page in headless Chromium against a live ``fincap serve``: the table sorted by
the server across pages, filters that narrow the list and its count and survive a reload, bulk
archive with Undo, bulk category, a bulk send to Xero (a fake on loopback) that waits for
approval, the CSV file as downloaded, and one document's line items and evidence boxes.

The worker's shared server and browser (``tests/web/shared_dashboard.py``), with a workspace,
a browser context and a fake Xero of the module's own, and one sign-in for the module; the
steps run in order.
"""

from __future__ import annotations

import base64
import csv
import io
import json
import re
import time
from collections.abc import Iterator
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.integrations.fakes import FakeXero
from tests.requires import requires
from tests.web.dashboard_live import LiveDashboard, Page, result
from tests.web.shared_dashboard import SharedDashboard, own_context, workspace_on

pytestmark = [requires("chromium"), pytest.mark.wire]
FIXTURES = Path(__file__).parents[1] / "fixtures" / "extraction"
DEMO_DOCUMENTS = 160  # more than one page of 50 (about 80 in the last 12 months)
ROWS = "#doc-rows tr"


@pytest.fixture(scope="module")
def live(dashboard: SharedDashboard) -> LiveDashboard:
    return workspace_on(dashboard, "documents", DEMO_DOCUMENTS)


@pytest.fixture(scope="module")
def xero(live: LiveDashboard, dashboard: SharedDashboard) -> FakeXero:
    """The workspace's own fake Xero on the shared server's."""
    return dashboard.xero.of(live.org_id)


@pytest.fixture(scope="module")
def downloads(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("downloads")


@pytest.fixture(scope="module")
def page(live: LiveDashboard, dashboard: SharedDashboard, downloads: Path) -> Iterator[Page]:
    # Files the page saves land in ``downloads`` (a setting of the module's browser context).
    with own_context(dashboard, downloads) as tab:
        tab.go(f"{live.base}/app/")
        tab.wait("!!document.querySelector('#api-key')")
        tab.fill("#api-key", live.api_key)
        tab.js("document.querySelector('#key-form').requestSubmit()")
        tab.wait("!!document.querySelector('#chart-months')")
        yield tab


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("screenshots")


def mark_stale(page: Page) -> None:
    """Mark the list on screen, so waiting for "the list" waits for the next one."""
    page.js("document.querySelector('#doc-list, #no-documents')?.setAttribute('data-stale', '1')")


def wait_list(page: Page) -> None:
    page.wait(
        "!document.querySelector('[data-stale]') && "
        "(document.querySelector('#doc-list')?.dataset.hash === location.hash "
        "|| !!document.querySelector('#no-documents'))"
    )


def open_list(page: Page, live: LiveDashboard, hash_: str = "#/documents") -> None:
    """The Documents page at ``hash_``, freshly rendered (also when the address is already it)."""
    mark_stale(page)
    if page.js("location.hash") == hash_:
        page.js("window.dispatchEvent(new HashChangeEvent('hashchange'))")
    else:
        page.go(f"{live.base}/app/{hash_}")
    wait_list(page)


def reload(page: Page) -> None:
    mark_stale(page)
    page.call("Page.reload")
    wait_list(page)


def click_and_wait(page: Page, selector: str) -> None:
    mark_stale(page)
    page.click(selector)
    wait_list(page)


def shown_count(page: Page) -> int:
    return int(page.js("document.querySelector('#result-count').dataset.count"))


def row_ids(page: Page) -> list[str]:
    return list(page.js(f"[...document.querySelectorAll('{ROWS}')].map(r => r.dataset.id)"))


def first_page(live: LiveDashboard, sort_by: str) -> list[str]:
    """The ids of the server's first page of 50 sorted by ``sort_by``, largest or newest first."""
    body = {"useSearch": False, "limit": 50, "sortBy": sort_by, "sortOrder": -1}
    return [d["id"] for d in result(live.call("documents.search", body))["documents"]]


def api_count(live: LiveDashboard, conditions: list[dict[str, Any]]) -> int:
    body = {"where": {"conditions": conditions}} if conditions else {}
    return int(result(live.call("documents.count", body))["count"])


def apply_filters(page: Page, values: dict[str, str]) -> None:
    """Set form fields (by id) and submit; wait for the new list."""
    for selector, value in values.items():
        page.js(f"document.querySelector({json.dumps(selector)}).value = {json.dumps(value)}")
    mark_stale(page)
    page.js("document.querySelector('form.filters').requestSubmit()")
    wait_list(page)


def select_rows(page: Page, ids: list[str]) -> None:
    for document_id in ids:
        page.js(
            f"(b => {{ b.checked = true; b.dispatchEvent(new Event('change')); }})"
            f"(document.querySelector('tr[data-id={json.dumps(document_id)}] .pick-row'))"
        )
    page.wait(f"document.querySelector('#selected-count').innerText.startsWith('{len(ids)} ')")


def open_and_select(page: Page, live: LiveDashboard, start: int, stop: int) -> list[str]:
    """The list afresh with rows ``start`` to ``stop`` ticked: their ids."""
    open_list(page, live)
    picked = row_ids(page)[start:stop]
    select_rows(page, picked)
    return picked


def test_sort_is_the_servers_across_pages(live: LiveDashboard, page: Page, shots: Path) -> None:
    open_list(page, live)
    # The default: every document whatever its date, the newest added first, a page of 50
    # and a count.
    assert len(row_ids(page)) == 50
    where: list[dict[str, Any]] = []
    assert shown_count(page) == api_count(live, where) > 50
    assert "(all dates)" in page.js("document.querySelector('#result-count').innerText")
    assert page.js("document.querySelector('#d-from').value") == ""
    assert row_ids(page) == first_page(live, "receivedAt")
    assert page.js("document.querySelector('th[aria-sort]').innerText").startswith("Added")
    page.screenshot(shots / "documents.png")

    click_and_wait(page, "button.sort[data-sort=amount]")
    assert page.js("location.hash") == "#/documents?sort=amount&order=desc"
    page.click("#load-more")
    page.wait(f"document.querySelectorAll('{ROWS}').length > 50")
    shown = row_ids(page)
    # The server's order over every matching document (not page one re-sorted in the browser).
    expected = result(
        live.call(
            "documents.search",
            {
                "useSearch": False,
                "limit": 100,
                "sortBy": "amount",
                "sortOrder": -1,
                "requiredFields": ["id", "amount"],
            },
        )
    )["documents"]
    assert shown == [d["id"] for d in expected][: len(shown)]
    amounts = [float(d["amount"]) for d in expected][: len(shown)]
    assert amounts == sorted(amounts, reverse=True)
    assert page.js("document.querySelector('th[aria-sort]').innerText").startswith("Amount")
    # The demo documents mix currencies: the count line says how amounts are compared.
    said = page.js("document.querySelector('#result-count').innerText")
    assert "sorted as written, each in its own currency" in said, said
    # A second click turns the order; a reload keeps it.
    click_and_wait(page, "button.sort[data-sort=amount]")
    assert page.js("location.hash") == "#/documents?sort=amount&order=asc"
    cheapest = row_ids(page)[0]
    reload(page)
    assert row_ids(page)[0] == cheapest
    assert (
        page.js("document.querySelector('th[aria-sort]').getAttribute('aria-sort')") == "ascending"
    )
    # Converted: the amounts compared in the workspace's currency, largest first, the server's
    # order (issue 38: ¥394,713 topped the amount sort).
    click_and_wait(page, "button.sort[data-sort=convertedAmount]")
    assert page.js("location.hash") == "#/documents?sort=convertedAmount&order=desc"
    assert row_ids(page) == first_page(live, "convertedAmount")
    first = f"document.querySelector('{ROWS} [data-col=convertedAmount]')"
    assert page.js(f"{first}.innerText") not in ("", "—")


def test_each_filter_narrows_the_list_and_its_count_and_survives_reload(
    live: LiveDashboard, page: Page
) -> None:
    open_list(page, live)
    where: list[dict[str, Any]] = []
    everything = shown_count(page)
    assert everything == api_count(live, [])
    category = page.js("document.querySelector('#d-category option:nth-child(2)').value")
    cases: list[tuple[str, dict[str, str], list[dict[str, Any]]]] = [
        (
            "category",
            {"#d-category": category},
            [{"field": "category", "op": "eq", "value": category}],
        ),
        ("docType", {"#d-type": "invoice"}, [{"field": "docType", "op": "eq", "value": "invoice"}]),
        (
            "status",
            {"#d-status": "warning"},
            [{"field": "processingStatus", "op": "eq", "value": "warning"}],
        ),
        (
            "amount",
            {"#d-amount-min": "50", "#d-amount-max": "1.000,00"},  # typed as a German would
            [
                {"field": "amount", "op": "gte", "value": "50.00"},
                {"field": "amount", "op": "lte", "value": "1000.00"},
            ],
        ),
    ]
    for name, values, conditions in cases:
        open_list(page, live)
        apply_filters(page, values)
        counted = api_count(live, where + conditions)
        assert shown_count(page) == counted < everything, name
        assert len(row_ids(page)) == min(counted, 50), name
        address = page.js("location.hash")
        reload(page)
        assert page.js("location.hash") == address and shown_count(page) == counted, name
        for selector in values:
            assert page.js(f"document.querySelector({json.dumps(selector)}).value"), (
                name,
                selector,
            )
    # Dates are opt-in: a range narrows; emptying the dates shows every document again.
    open_list(page, live)
    start = (date.today() - timedelta(days=180)).isoformat()
    end = (date.today() - timedelta(days=30)).isoformat()
    apply_filters(page, {"#d-from": start, "#d-to": end})
    assert f"from={start}" in page.js("location.hash")
    narrower = [
        {"field": "docDate", "op": "gte", "value": start},
        {"field": "docDate", "op": "lte", "value": end},
    ]
    assert shown_count(page) == api_count(live, narrower) < everything
    assert f"dated {start} to {end}" in page.js("document.querySelector('#result-count').innerText")
    apply_filters(page, {"#d-from": "", "#d-to": ""})
    assert shown_count(page) == everything
    # A hand-edited address: values the API would refuse are left out, not an error page.
    mark_stale(page)
    page.go(f"{live.base}/app/#/documents?status=finished&amountMin=lots&sort=colour")
    page.wait("!document.querySelector('[data-stale]') && !!document.querySelector('#doc-list')")
    assert shown_count(page) == everything


def test_bulk_archive_then_undo(live: LiveDashboard, page: Page) -> None:
    picked = open_and_select(page, live, 3, 5)
    before = int(page.js("document.querySelector('#result-count').dataset.count"))
    page.click("#bulk-archive")
    page.wait("!!document.querySelector('#toast #undo')")
    assert "Archived 2 documents" in page.js("document.querySelector('#toast').innerText")
    # The count line and the CSV label say what is left (they kept the old numbers).
    left = before - 2
    assert int(page.js("document.querySelector('#result-count').dataset.count")) == left
    assert f"{left:,} documents match" in page.js(
        "document.querySelector('#result-count').innerText"
    )
    assert page.js("document.querySelector('#csv-download').innerText") == (
        f"Download CSV of all {left:,} matching"
    )
    assert not set(picked) & set(row_ids(page))  # gone from the list
    for document_id in picked:
        assert result(live.call("documents.get", {"id": document_id}))["document"]["archived"]
    page.click("#toast #undo")
    page.wait("document.querySelector('#toast')?.innerText === 'Restored'")
    page.wait(
        " && ".join(f"!!document.querySelector('tr[data-id={json.dumps(i)}]')" for i in picked)
    )
    for document_id in picked:
        assert not result(live.call("documents.get", {"id": document_id}))["document"]["archived"]


def test_bulk_set_category(live: LiveDashboard, page: Page) -> None:
    picked = open_and_select(page, live, 0, 3)
    page.click("#bulk-set-category")
    page.wait("!!document.querySelector('#bulk-category')")
    page.fill("#bulk-category", "Team events")
    page.js("document.querySelector('#bulk-category-form').requestSubmit()")
    page.wait("document.querySelector('#bulk-status').innerText.includes('3 set to Team events')")
    assert page.js("document.querySelector('#bulk-progress').value") == 3
    for document_id in picked:
        cell = page.js(
            f"document.querySelector('tr[data-id={json.dumps(document_id)}] "
            "[data-col=category]').innerText"
        )
        assert cell == "Team events"
        stored = result(live.call("documents.get", {"id": document_id}))["document"]
        assert stored["category"] == "Team events"


def test_bulk_send_to_xero_waits_for_approval(
    live: LiveDashboard, page: Page, xero: FakeXero, shots: Path
) -> None:
    live.connect_xero()
    picked = open_and_select(page, live, 5, 7)
    page.click("#bulk-send")
    page.wait("!!document.querySelector('#bulk-integration option')")
    assert "Xero: Acme Ltd" in page.js("document.querySelector('#bulk-integration').innerText")
    page.js("document.querySelector('#bulk-send-form').requestSubmit()")
    page.wait("document.querySelector('#bulk-status').innerText.includes('2 waiting for approval')")
    for document_id in picked:
        note = page.js(
            f"document.querySelector('tr[data-id={json.dumps(document_id)}] .row-note').innerText"
        )
        found = re.fullmatch(r"waiting for approval #(apr_\S+)", note)
        assert found, note
        request = result(live.call("approvals.get", {"approvalRequestId": found.group(1)}))
        assert request["status"] == "pending" and request["capabilitySlug"] == "integrations.send"
        assert request["input"]["documentId"] == document_id
    assert not xero.bills, "a bill reached Xero before its approval"
    page.screenshot(shots / "bulk-send.png")


def read_download(downloads: Path, before: set[Path], delimiter: str = ",") -> list[list[str]]:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        done = [p for p in downloads.glob("*.csv") if p not in before]
        if done:
            text = done[0].read_bytes().decode("utf-8-sig")  # spreadsheets want the BOM
            done[0].unlink()  # the next file may take the same name
            return list(csv.reader(io.StringIO(text, newline=""), delimiter=delimiter))
        time.sleep(0.2)
    raise AssertionError("no CSV file was saved")


def test_csv_of_the_selection_and_of_everything_matching(
    live: LiveDashboard, page: Page, downloads: Path
) -> None:
    open_list(page, live)
    awkward, formula, semicolon = row_ids(page)[:3]
    tricky = 'Smith, "Jones" & Co\nLtd'
    result(live.call("documents.update", {"id": awkward, "merchant": tricky}))
    for tag in ("Client X", "=Tax"):
        created = live.call("tags.create", {"name": tag})
        assert created.status_code == 200 or "already" in created.text, created.text
    result(live.call("documents.update", {"id": semicolon, "tags": ["Client X", "=Tax"]}))
    result(
        live.call("documents.update", {"id": formula, "merchant": '=HYPERLINK("http://x.test")'})
    )
    # Where ';' separates fields (a spreadsheet in a German locale), this was two cells, the
    # second a formula (the hostile probe's Low item).
    result(live.call("documents.update", {"id": semicolon, "merchant": "Acme;=1+2"}))
    open_list(page, live)
    select_rows(page, [awkward, formula, semicolon])
    assert page.js("document.querySelector('#csv-download').innerText") == (
        "Download CSV of the 3 selected"
    )
    before = set(downloads.glob("*.csv"))
    page.click("#csv-download")
    rows = read_download(downloads, before)
    assert rows[0] == [
        "id",
        "date",
        "merchant",
        "amount",
        "currency",
        "category",
        "type",
        "status",
        "archived",
        "tags",
    ]
    by_id = {row[0]: row for row in rows[1:]}
    assert len(rows) == 4 and set(by_id) == {awkward, formula, semicolon}
    assert by_id[awkward][2] == tricky  # commas, quotes and the line break survive
    assert by_id[formula][2] == "'" + '=HYPERLINK("http://x.test")'  # not a formula
    assert by_id[semicolon][2] == "Acme;'=1+2"
    assert by_id[semicolon][9] == "Client X, =Tax"  # a tag can't start the cell: not a formula
    assert by_id[awkward][9] == ""
    # The same file read as a ';'-separated one: no cell starts a formula.
    before = set(downloads.glob("*.csv"))
    page.click("#csv-download")
    for row in read_download(downloads, before, delimiter=";"):
        assert not [cell for cell in row if cell[:1] in ("=", "+", "-", "@")], row
    for row in rows[1:]:
        assert re.fullmatch(r"-?\d+(\.\d+)?", row[3]), row

    # Nothing selected: every document the filters match, fetched page by page.
    page.js(
        "(b => { b.checked = false; b.dispatchEvent(new Event('change')); })"
        "(document.querySelector('#select-page'))"
    )
    page.wait("document.querySelector('#csv-download').innerText.startsWith('Download CSV of all')")
    before = set(downloads.glob("*.csv"))
    page.click("#csv-download")
    rows = read_download(downloads, before)
    assert len(rows) - 1 == shown_count(page) == api_count(live, [])
    assert len({row[0] for row in rows[1:]}) == len(rows) - 1


def upload(live: LiveDashboard, path: Path) -> dict[str, Any]:
    started = result(
        live.call(
            "files.upload",
            {"fileName": path.name, "base64Data": base64.b64encode(path.read_bytes()).decode()},
        )
    )
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        document = result(live.call("documents.get", {"id": started["documentId"]}))["document"]
        if document["processingStatus"] not in ("queued", "processing"):
            return dict(document)
        time.sleep(0.5)
    raise AssertionError(f"{path.name} was not processed")


def check_boxes(page: Page, document: dict[str, Any]) -> None:
    """Every evidence box of page 1 sits where its fractions put it on the drawn picture."""
    drawn = [e for e in document["evidence"] if e.get("box") and (e.get("page") or 1) == 1]
    assert drawn, document["evidence"]
    page.wait(
        f"document.querySelectorAll('.evidence-box').length === {len(drawn)} && "
        "document.querySelector('#original').complete"
    )
    image = page.js(
        "(r => [r.left, r.top, r.width, r.height])"
        "(document.querySelector('#original').getBoundingClientRect())"
    )
    left, top, width, height = image
    assert width > 100 and height > 100
    for evidence in drawn:
        x0, y0, x1, y1 = evidence["box"]
        rect = page.js(
            "(r => [r.left, r.top, r.right, r.bottom])(document.querySelector("
            f"'.evidence-box[data-field={evidence['field']}]').getBoundingClientRect())"
        )
        expected = [left + x0 * width, top + y0 * height, left + x1 * width, top + y1 * height]
        assert all(abs(a - b) < 1.5 for a, b in zip(rect, expected, strict=True)), (
            evidence,
            rect,
            expected,
        )
    # Pointing at a field's row highlights its box; the legend names the field.
    field = drawn[0]["field"]
    page.js(
        f"document.querySelector('#evidence-legend [data-field={field}]')"
        ".dispatchEvent(new FocusEvent('focus'))"
    )
    assert page.js(
        f"document.querySelector('.evidence-box[data-field={field}]').classList.contains('active')"
    )


def test_line_items_and_evidence_boxes(live: LiveDashboard, page: Page, shots: Path) -> None:
    receipt = upload(live, FIXTURES / "receipt.png")  # the photo itself is drawn
    invoice = upload(live, FIXTURES / "text-layer.pdf")  # the PDF through its page-1 preview
    page.go(f"{live.base}/app/#/documents/{receipt['id']}")
    page.wait("!!document.querySelector('#line-items')")
    rows = page.js(
        "[...document.querySelectorAll('#line-items tbody tr')]"
        ".map(r => [...r.cells].map(c => c.innerText))"
    )
    assert [r[0] for r in rows] == [item["description"] for item in receipt["lineItems"]]
    latte = next(r for r, item in zip(rows, receipt["lineItems"], strict=True) if item["quantity"])
    assert latte[1] == "2" and latte[2] == "£3.50" and latte[3] == "£7.00", latte
    check_boxes(page, receipt)
    page.js(
        "document.querySelector('.field-row[data-field=amount]')"
        ".dispatchEvent(new MouseEvent('mouseenter'))"
    )
    assert page.js(
        "document.querySelector('.evidence-box[data-field=amount]').classList.contains('active')"
    )
    page.screenshot(shots / "evidence-receipt.png")

    page.go(f"{live.base}/app/#/documents/{invoice['id']}")
    page.wait("!!document.querySelector('#line-items')")
    check_boxes(page, invoice)
    page.screenshot(shots / "evidence-invoice.png")
    # On a phone the picture fits the screen and the boxes follow it.
    page.viewport(390, 844, mobile=True)
    try:
        check_boxes(page, invoice)
        assert page.js("document.documentElement.scrollWidth") <= 390
    finally:
        page.call("Emulation.clearDeviceMetricsOverride")


def test_a_phone_sees_rows_as_cards(live: LiveDashboard, page: Page, shots: Path) -> None:
    page.viewport(390, 844, mobile=True)
    try:
        open_list(page, live)
        assert page.js("document.documentElement.scrollWidth") <= 390  # no sideways scrolling
        labels = page.js(
            "getComputedStyle(document.querySelector('#doc-rows td[data-col=amount]'), "
            "'::before').content"
        )
        assert labels == '"Amount"'
        page.screenshot(shots / "documents-phone.png")
    finally:
        page.call("Emulation.clearDeviceMetricsOverride")


def test_a_new_upload_dated_long_ago_is_first_on_the_documents_page(
    live: LiveDashboard, page: Page
) -> None:
    """A receipt from 2019 uploaded a minute ago used to vanish: the page opened on the last
    12 months, sorted by the document's date. It opens on every date, the newest added first."""
    added = upload(live, FIXTURES / "text-layer.pdf")
    result(live.call("documents.update", {"id": added["id"], "docDate": "2019-03-14"}))
    open_list(page, live)
    assert row_ids(page)[0] == added["id"]
    first = f"document.querySelector('{ROWS}')"
    assert page.js(f"{first}.querySelector('[data-col=docDate]').innerText") == "2019-03-14"
    assert page.js(f"{first}.querySelector('[data-col=receivedAt] time').getAttribute('datetime')")
