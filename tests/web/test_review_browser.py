"""The Review page in headless Chromium against a live ``fincap serve``, in an English and a
German browser: three flagged documents reviewed by keyboard alone (accept, correct an amount
typed as the locale writes it, accept), the sidebar's count following to zero; axe-core finds
no serious or critical violation; the page fits a 390 px phone."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.requires import requires
from tests.web.accessibility import assert_accessible
from tests.web.dashboard_live import LiveDashboard, Page, result
from tests.web.shared_dashboard import SharedDashboard, signed_in_context, workspace_on

pytestmark = [requires("chromium"), pytest.mark.wire]
LOCALES = {"en-US": ("12.50", "1,234.56"), "de-DE": ("12,50", "1.234,56")}
DEMO_DOCUMENTS = 12
COUNT = "document.querySelector('#review-count')?.dataset.count"
SHOWN = "document.querySelector('#review-doc')?.dataset.id"


@pytest.fixture(scope="module")
def live(dashboard: SharedDashboard) -> LiveDashboard:
    return workspace_on(dashboard, "review", DEMO_DOCUMENTS)


@pytest.fixture(scope="module")
def tab(live: LiveDashboard, dashboard: SharedDashboard) -> Iterator[Page]:
    with signed_in_context(dashboard, live) as page:
        yield page


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("screenshots")


def queue(live: LiveDashboard) -> list[str]:
    body = {
        "where": {"conditions": [{"field": "needsReview", "op": "eq", "value": True}]},
        "useSearch": False,
        "sortBy": "createdAt",
        "sortOrder": 1,
        "limit": 100,
    }
    return [d["id"] for d in result(live.call("documents.search", body))["documents"]]


def flag_three(live: LiveDashboard, offset: int) -> list[str]:
    """Empty the queue (the demo data has a few duplicates), then clear the amount of three
    documents: three to review, the oldest first. Each is made a euro document: the demo data
    has yen ones, where an amount typed with cents is rightly refused, and the order of
    documents created in one batch is not fixed."""
    for document_id in queue(live):
        result(live.call("documents.review", {"id": document_id}))
    body = {"useSearch": False, "sortBy": "createdAt", "sortOrder": 1, "limit": 100}
    ids = [d["id"] for d in result(live.call("documents.search", body))["documents"]]
    picked = ids[offset : offset + 3]
    for document_id in picked:
        result(
            live.call("documents.update", {"id": document_id, "amount": None, "currency": "EUR"})
        )
    assert sorted(queue(live)) == sorted(picked)
    return queue(live)


def key(page: Page, letter: str) -> None:
    """A real key press of a letter, as the keyboard sends it."""
    code = ord(letter.upper())
    down = {"key": letter, "code": f"Key{letter.upper()}", "windowsVirtualKeyCode": code}
    page.call("Input.dispatchKeyEvent", type="keyDown", text=letter, **down)
    page.call("Input.dispatchKeyEvent", type="keyUp", **down)


@pytest.mark.parametrize("locale", list(LOCALES))
def test_three_flagged_documents_reviewed_by_keyboard(
    live: LiveDashboard, tab: Page, shots: Path, locale: str
) -> None:
    typed, _ = LOCALES[locale]
    page = tab
    page.call("Emulation.setLocaleOverride", locale=locale)
    try:
        flagged = flag_three(live, 0 if locale == "en-US" else 3)
        page.go("about:blank")
        page.go(f"{live.base}/app/#/review")
        page.wait(f"{SHOWN} === {json.dumps(flagged[0])} && window.__fincapLive?.status === 'open'")
        assert page.wait(f"{COUNT} === '3'")
        reasons = page.js(
            "[...document.querySelectorAll('#review-reasons li')].map(l => l.dataset.reason)"
        )
        assert reasons == ["noAmount"]
        assert "a" in page.js("document.querySelector('#key-hints').innerText")
        accept = "document.querySelector('#review-accept')"
        assert page.js(f"{accept}.getAttribute('aria-keyshortcuts')") == "a"
        assert_accessible(page)
        page.screenshot(shots / f"review-{locale}.png")

        # Next and previous move through the queue, oldest first.
        key(page, "j")
        page.wait(f"{SHOWN} === {json.dumps(flagged[1])}")
        key(page, "k")
        page.wait(f"{SHOWN} === {json.dumps(flagged[0])}")
        key(page, "n")
        page.wait(f"{SHOWN} === {json.dumps(flagged[1])}")
        key(page, "p")
        page.wait(f"{SHOWN} === {json.dumps(flagged[0])}")

        # a: accepted as it is; the next one shows and the count follows.
        key(page, "a")
        page.wait(f"{SHOWN} === {json.dumps(flagged[1])}")
        assert page.wait(f"{COUNT} === '2'")

        # e: the form, the first field focused; the amount typed as this locale writes it.
        key(page, "e")
        page.wait("document.activeElement?.id === 'review-edit-merchant'")
        assert_accessible(page)
        page.fill("#review-edit-amount", typed)
        page.js("document.querySelector('#review-edit-amount').focus()")
        page.press("Enter")
        # A refusal (the form's alert) fails here with its words, not after a long wait.
        refused = "document.querySelector('#review-error')?.textContent"
        page.wait(f"{SHOWN} === {json.dumps(flagged[2])} || {refused}")
        assert not page.js(refused)
        corrected = result(live.call("documents.get", {"id": flagged[1]}))["document"]
        assert corrected["amount"] == 12.5 and corrected["needsReview"] is False
        assert corrected["reviewedBy"]

        # The last: accepted, nothing left, and the sidebar says zero.
        key(page, "a")
        page.wait("!!document.querySelector('#review-empty')")
        assert page.wait(f"{COUNT} === '0'")
        assert queue(live) == []
        assert_accessible(page)
    finally:
        page.call("Emulation.setLocaleOverride")


def test_the_count_follows_changes_made_elsewhere(live: LiveDashboard, tab: Page) -> None:
    """The sidebar count on another page follows a review made through REST (live events)."""
    flagged = flag_three(live, 6)
    tab.go(f"{live.base}/app/#/documents")
    tab.wait(f"{COUNT} === '3' && window.__fincapLive?.status === 'open'")
    result(live.call("documents.review", {"id": flagged[0]}))
    tab.wait(f"{COUNT} === '2'", timeout=10)


def test_the_review_page_fits_a_phone(live: LiveDashboard, tab: Page, shots: Path) -> None:
    flag_three(live, 9)
    tab.viewport(390, 844, mobile=True)
    try:
        tab.go(f"{live.base}/app/#/review")
        tab.wait("!!document.querySelector('#review-doc')")
        assert tab.js("document.documentElement.scrollWidth") <= 390
        key(tab, "e")
        tab.wait("document.activeElement?.id === 'review-edit-merchant'")
        assert tab.js("document.documentElement.scrollWidth") <= 390
        tab.screenshot(shots / "review-phone.png")
    finally:
        tab.call("Emulation.clearDeviceMetricsOverride")


@pytest.mark.parametrize("locale", list(LOCALES))
def test_a_line_item_fixed_shows_the_total_warning(
    live: LiveDashboard, tab: Page, shots: Path, locale: str
) -> None:
    """Edit lines on a document's page: a line's total typed as the locale writes it, saved;
    the lines no longer add up, the page says so, and the total stays as it was."""
    _, typed = LOCALES[locale]
    body = {"useSearch": False, "sortBy": "createdAt", "sortOrder": 1, "limit": 100}
    documents = result(live.call("documents.search", body))["documents"]
    # Two decimal places (a yen amount has none: "1,234.56" would rightly be refused).
    cents = [d for d in documents if d["currency"] in ("EUR", "USD", "GBP")]
    target = cents[-1 if locale == "en-US" else -2]["id"]
    lines = [
        {"description": "Cable", "quantity": 1, "unitPrice": "4.00", "amount": "4.00"},
        {"description": "Plug", "quantity": 2, "unitPrice": "3.00", "amount": "6.00"},
    ]
    before = result(live.call("documents.update", {"id": target, "lineItems": lines}))
    total = before["document"]["amount"]
    agree = {"amount": "10.00", "subtotal": "10.00", "taxAmount": None, "taxLines": None}
    result(live.call("documents.update", {"id": target, **agree, "tipAmount": None}))
    tab.call("Emulation.setLocaleOverride", locale=locale)
    try:
        tab.go("about:blank")
        tab.go(f"{live.base}/app/#/documents/{target}")
        tab.wait("!!document.querySelector('#edit-lines')")
        assert tab.js("!!document.querySelector('#amount-warnings')") is False
        tab.click("#edit-lines")
        tab.wait("document.activeElement?.id === 'line-0-description'")
        tab.fill("#line-0-amount", typed)
        assert_accessible(tab)
        tab.click("#save-lines")
        tab.wait("!!document.querySelector('#amount-warnings li[data-field=lineItems]')")
        said = tab.js("document.querySelector('#amount-warnings').innerText")
        assert "the 2 lines add up to 1240.56, not the subtotal 10.00" in said, said
        assert tab.js("document.activeElement?.id") == "edit-lines"
        cells = tab.js(
            "[...document.querySelectorAll('#line-items tbody tr')].map(r => r.cells[3].innerText)"
        )
        assert len(cells) == 2 and "1" in cells[0] and "234" in cells[0]
        document = result(live.call("documents.get", {"id": target}))["document"]
        assert document["amount"] == 10.0 and document["lineItems"][0]["amount"] == 1234.56
        assert document["needsReview"] is True
        assert_accessible(tab)
        tab.screenshot(shots / f"lines-warning-{locale}.png")
    finally:
        tab.call("Emulation.setLocaleOverride")
        result(live.call("documents.update", {"id": target, "amount": total}))
