"""Notes on a document's page (issue 41 item 5) in headless Chromium against a live
``fincap serve``, in an English and a German browser: a note written by keyboard shows its
author, changed it keeps its earlier text, and its words find the document from the Documents
page's search; deleted, they no longer do. axe-core finds no serious or critical violation, and
the page fits a 390 px phone."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from tests.requires import requires
from tests.web.accessibility import assert_accessible
from tests.web.dashboard_live import (
    LiveDashboard,
    Page,
    result,
)
from tests.web.shared_dashboard import SharedDashboard, signed_in_context, workspace_on

pytestmark = [requires("chromium"), pytest.mark.wire]
# A made-up word per locale, found only through the note that carries it (the test checks so
# first: a search by meaning can find a document for some made-up words).
WORDS = {"en-US": "quokkaplan", "de-DE": "quokkaliste"}
WAIT = 30
ROWS = "[...document.querySelectorAll('#doc-rows tr')].map(r => r.dataset.id)"


@pytest.fixture(scope="module")
def live(dashboard: SharedDashboard) -> LiveDashboard:
    return workspace_on(dashboard, "notes", 8)


@pytest.fixture(scope="module")
def tab(live: LiveDashboard, dashboard: SharedDashboard) -> Iterator[Page]:
    with signed_in_context(dashboard, live) as page:
        yield page


def search(page: Page, live: LiveDashboard, words: str) -> list[str]:
    page.go("about:blank")
    page.go(f"{live.base}/app/#/documents?q={words}")
    page.wait(
        "document.querySelector('#doc-list')?.dataset.hash === location.hash "
        "|| !!document.querySelector('#no-documents')",
        WAIT,
    )
    return list(page.js(ROWS))


@pytest.mark.parametrize("locale", list(WORDS))
def test_a_note_written_changed_and_found_by_search(
    live: LiveDashboard, tab: Page, locale: str
) -> None:
    page = tab
    word = WORDS[locale]
    body = {"useSearch": False, "sortBy": "createdAt", "sortOrder": 1, "limit": 10}
    documents = result(live.call("documents.search", body))["documents"]
    target = documents[0 if locale == "en-US" else 1]["id"]
    page.call("Emulation.setLocaleOverride", locale=locale)
    try:
        assert search(page, live, word) == []
        page.go("about:blank")
        page.go(f"{live.base}/app/#/documents/{target}")
        page.wait("document.querySelector('#notes-section')?.dataset.loaded === '1'", WAIT)

        # Written with the keyboard: type, then Enter on the button.
        page.js("document.querySelector('#note-text').focus()")
        page.type_text(f"Ask about the {word} before March")
        page.js("document.querySelector('#note-save').focus()")
        page.press("Enter")
        page.wait("document.querySelectorAll('#notes-list .note').length === 1", WAIT)
        assert word in page.js("document.querySelector('#notes-list .note-text').textContent")
        assert live.email in page.js(
            "document.querySelector('#notes-list .note .meta').textContent"
        )
        assert page.js("document.querySelector('#note-text').value") == ""
        assert_accessible(page)

        # Changed: the earlier text is kept under it.
        page.click("#notes-list .note-edit")
        page.wait("document.activeElement?.matches('.note-editor textarea')", WAIT)
        page.js("(t => { t.value = t.value + ', with the receipts'; })(document.activeElement)")
        page.js("document.querySelector('.note-editor button[type=submit]').focus()")
        page.press("Enter")
        page.wait("!!document.querySelector('#notes-list .note details.history')", WAIT)
        assert page.js("document.querySelector('#notes-list .note-text').textContent").endswith(
            "with the receipts"
        )
        earlier = page.js("document.querySelector('#notes-list .note details li q').textContent")
        assert earlier == f"Ask about the {word} before March"
        assert_accessible(page)

        # A phone: nothing scrolls sideways.
        page.viewport(390, 844, mobile=True)
        try:
            page.wait("!!document.querySelector('#notes-section')", WAIT)
            assert page.js("document.documentElement.scrollWidth") <= 390
        finally:
            page.call("Emulation.clearDeviceMetricsOverride")

        # Its words find the document from the Documents page's search.
        assert search(page, live, word) == [target]

        # Deleted (after the in-place confirmation): the words find nothing.
        page.go("about:blank")
        page.go(f"{live.base}/app/#/documents/{target}")
        page.wait("document.querySelector('#notes-section')?.dataset.loaded === '1'", WAIT)
        page.click("#notes-list .note-delete")
        page.wait("!!document.querySelector('[id^=note-delete-yes-]')", WAIT)
        page.click("[id^=note-delete-yes-]")
        page.wait("document.querySelectorAll('#notes-list .note').length === 0", WAIT)
        notes = result(live.call("notes.list", {"documentId": target}))["notes"]
        assert notes == []
        assert search(page, live, word) == []
    finally:
        page.call("Emulation.setLocaleOverride")


def test_a_refused_note_says_why_and_keeps_the_text(live: LiveDashboard, tab: Page) -> None:
    documents = result(live.call("documents.search", {"useSearch": False, "limit": 1}))
    target = documents["documents"][0]["id"]
    tab.go("about:blank")
    tab.go(f"{live.base}/app/#/documents/{target}")
    tab.wait("document.querySelector('#notes-section')?.dataset.loaded === '1'", WAIT)
    bell = json.dumps("ring \u0007 the bell")  # a control character: refused by the server
    tab.js(f"document.querySelector('#note-text').value = {bell}")
    tab.click("#note-save")
    tab.wait("!!document.querySelector('#note-error')?.textContent", WAIT)
    assert "control characters" in tab.js("document.querySelector('#note-error').textContent")
    assert tab.js("document.querySelector('#note-text').value") == "ring \u0007 the bell"
    assert result(live.call("notes.list", {"documentId": target}))["notes"] == []
