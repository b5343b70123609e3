"""Saved views (issue 41 item 4) in headless Chromium against a live ``fincap serve``, in an
English and a German browser: a filtered Documents list saved as a view, the view in the
navigation with its count, opened again by its address after a reload (the same documents),
its count following a change made elsewhere, and deleted after an in-place confirmation.
axe-core finds no serious or critical violation; the page fits 390 px."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from tests.requires import requires
from tests.web.accessibility import assert_accessible
from tests.web.dashboard_live import LiveDashboard, Page, result
from tests.web.shared_dashboard import SharedDashboard, signed_in_context, workspace_on

pytestmark = [requires("chromium"), pytest.mark.wire]
WAIT = 30
ROWS = "[...document.querySelectorAll('#doc-rows tr')].map(r => r.dataset.id)"
LISTED = (
    "document.querySelector('#doc-list')?.dataset.hash === location.hash "
    "|| !!document.querySelector('#no-documents')"
)


@pytest.fixture(scope="module")
def live(dashboard: SharedDashboard) -> LiveDashboard:
    return workspace_on(dashboard, "views", 30)


@pytest.fixture(scope="module")
def tab(live: LiveDashboard, dashboard: SharedDashboard) -> Iterator[Page]:
    with signed_in_context(dashboard, live) as page:
        yield page


def nav_count(page: Page, view_id: str) -> Any:
    return page.js(
        f"document.querySelector('#views-nav a[data-view={json.dumps(view_id)}] .badge')"
        "?.dataset.count"
    )


@pytest.mark.parametrize("locale", ["en-US", "de-DE"])
def test_a_list_saved_as_a_view_opens_again_by_its_address(
    live: LiveDashboard, tab: Page, locale: str
) -> None:
    page = tab
    category = "Groceries" if locale == "en-US" else "Travel"
    where = {"conditions": [{"field": "category", "op": "eq", "value": category}]}
    expected = result(live.call("documents.count", {"where": where}))["count"]
    assert expected > 0
    page.call("Emulation.setLocaleOverride", locale=locale)
    try:
        page.go("about:blank")
        page.go(f"{live.base}/app/#/documents?category={category}&sort=amount&order=asc")
        page.wait(LISTED, WAIT)
        filtered = page.js(ROWS)
        assert page.js("document.querySelector('#result-count').dataset.count") == str(expected)

        # Saved with the keyboard's way in: the button, the name, Enter.
        page.click("#save-view-open")
        page.wait("document.activeElement?.id === 'view-name'", WAIT)
        page.type_text(f"{category} by amount")
        page.press("Enter")
        page.wait("location.hash.includes('view=view_')", WAIT)
        view_id = page.js("new URLSearchParams(location.hash.split('?')[1]).get('view')")
        page.wait(LISTED, WAIT)
        assert page.js(ROWS) == filtered  # the same documents, in the same order
        page.wait(f"!!{_link(view_id)}", WAIT)
        assert nav_count(page, view_id) == str(expected)
        assert_accessible(page)

        # By its address after a reload: the same list, named.
        address = page.js("location.hash")
        page.go("about:blank")
        page.go(f"{live.base}/app/{address}")
        page.wait(LISTED, WAIT)
        assert page.js(ROWS) == filtered
        assert page.js("document.querySelector('h1').textContent") == f"{category} by amount"
        assert page.js("document.querySelector('#view-meta').dataset.view") == view_id

        # A change elsewhere moves the navigation's count (live events).
        page.wait("window.__fincapLive?.status === 'open'", WAIT)
        result(live.call("documents.update", {"id": filtered[0], "category": "Meals"}))
        page.wait(f"{json.dumps(str(expected - 1))} === " + _count_expression(view_id), WAIT)

        # A phone: nothing scrolls sideways.
        page.viewport(390, 844, mobile=True)
        try:
            page.wait("!!document.querySelector('#save-view-open')", WAIT)
            assert page.js("document.documentElement.scrollWidth") <= 390
        finally:
            page.call("Emulation.clearDeviceMetricsOverride")

        # Deleted after the confirmation in place: gone from the navigation and the API.
        page.click("#view-delete")
        page.wait("!!document.querySelector('#view-delete-yes')", WAIT)
        page.click("#view-delete-yes")
        page.wait(
            f"location.hash === '#/documents' && !{_link(view_id)}",
            WAIT,
        )
        assert result(live.call("views.list", {}))["views"] == []
    finally:
        page.call("Emulation.setLocaleOverride")


def _link(view_id: str) -> str:
    return f"document.querySelector('#views-nav a[data-view={json.dumps(view_id)}]')"


def _count_expression(view_id: str) -> str:
    return f"{_link(view_id)}?.querySelector('.badge')?.dataset.count"


COLUMNS_SHOWN = (
    "[...document.querySelectorAll('#doc-rows tr:first-child td[data-col]')]"
    ".map(t => t.dataset.col)"
)


def test_a_views_columns_are_chosen_saved_and_shown_again(live: LiveDashboard, tab: Page) -> None:
    """Columns unticked by keyboard leave the table (the address keeps the choice and the focus
    comes back to the box); a view saved then keeps them, and opens with them by its address."""
    page = tab
    page.go("about:blank")
    page.go(f"{live.base}/app/#/documents")
    page.wait(LISTED, WAIT)
    assert "tags" in page.js(COLUMNS_SHOWN) and "docType" in page.js(COLUMNS_SHOWN)
    page.click("#columns-box > summary")
    for column in ("tags", "docType"):
        page.js(f"document.querySelector('#col-{column}').focus()")
        page.press(" ")
        page.wait(
            f"location.hash.includes('cols=') && document.activeElement?.id === 'col-{column}'"
            f" && !({COLUMNS_SHOWN}).includes({json.dumps(column)})",
            WAIT,
        )
    shown = page.js(COLUMNS_SHOWN)
    kept = ["docDate", "merchant", "amount", "convertedAmount", "category", "processingStatus"]
    assert shown == [*kept, "receivedAt"]
    assert page.js("document.querySelector('#col-merchant').disabled") is True
    assert_accessible(page)

    page.click("#save-view-open")
    page.wait("document.activeElement?.id === 'view-name'", WAIT)
    page.type_text("Narrow")
    page.press("Enter")
    page.wait("location.hash.includes('view=view_')", WAIT)
    view_id = page.js("new URLSearchParams(location.hash.split('?')[1]).get('view')")
    saved = result(live.call("views.get", {"id": view_id}))["view"]
    assert saved["columns"] == shown

    # By the view's address alone (no cols in it): the view's columns.
    page.go("about:blank")
    page.go(f"{live.base}/app/#/documents?view={view_id}")
    page.wait(LISTED, WAIT)
    assert page.js(COLUMNS_SHOWN) == shown
    result(live.call("views.delete", {"id": view_id}))
