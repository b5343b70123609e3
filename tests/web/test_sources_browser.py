"""The Sources page (issue 41 item 7) in headless Chromium against a live ``fincap serve``, in an
English and a German browser: a WhatsApp number registered there shows the code it must send and
waits as pending (as whatsapp.list-senders says over REST); the receiving e-mail address replaced
after a confirmation shows the new address and says the old one no longer receives (as
workspaces.get-inbound-address says). axe-core finds no serious or critical violation in the
light and the dark scheme; the page fits 390 px."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

import pytest

from tests.requires import requires
from tests.web.accessibility import assert_accessible
from tests.web.dashboard_live import (
    LiveDashboard,
    Page,
    fits_a_phone,
    in_locale,
    result,
)
from tests.web.shared_dashboard import SharedDashboard, workspace_with_tab

pytestmark = [requires("chromium"), pytest.mark.wire]
WAIT = 30
PHONE = {
    "en-US": ("+1 (415) 555-0142", "14155550142"),
    "de-DE": ("+49 170 1234567", "491701234567"),
}
READY = "!!document.querySelector('#inbound-address') && !!document.querySelector('#sender-form')"


@pytest.fixture(scope="module")
def live_tab(dashboard: SharedDashboard) -> Iterator[tuple[LiveDashboard, Page]]:
    with workspace_with_tab(dashboard, "sources", 0) as pair:
        yield pair


def open_sources(page: Page, live: LiveDashboard) -> None:
    page.go("about:blank")
    page.go(f"{live.base}/app/#/sources")
    page.wait(READY, WAIT)


@pytest.mark.parametrize("locale", ["en-US", "de-DE"])
def test_register_a_whatsapp_number_and_replace_the_address(
    live_tab: tuple[LiveDashboard, Page], locale: str
) -> None:
    live, tab = live_tab
    typed, digits = PHONE[locale]
    with in_locale(tab, locale) as page:
        open_sources(page, live)
        item = f"document.querySelector('#senders li[data-phone=\"{digits}\"]')"
        assert not page.js(f"!!{item}")

        # Registered: the code to send is shown (once), and the number waits for it.
        page.fill("#sender-phone", typed)
        page.press("Enter")
        page.wait("!!document.querySelector('#sender-code-value')", WAIT)
        code = page.js("document.querySelector('#sender-code-value').innerText")
        assert re.fullmatch(r"[A-Z0-9]{4}-[A-Z0-9]{4}", code), code
        assert page.js(f"{item}.dataset.status") == "pending"
        assert "Waiting for its code" in page.js(f"{item}.innerText")
        senders = result(live.call("whatsapp.list-senders", {}))["senders"]
        assert {s["phoneNumber"]: s["status"] for s in senders}[digits] == "pending"
        open_sources(page, live)  # listed after a reload too, the code no longer shown
        assert page.js(f"{item}.dataset.status") == "pending"
        assert not page.js("!!document.querySelector('#sender-code-value')")

        # The address replaced after a confirmation: the new one shown, the old one said.
        before = page.js("document.querySelector('#inbound-address').innerText")
        assert before == result(live.call("workspaces.get-inbound-address", {}))["address"]
        page.click("#inbound-rotate")
        page.wait("document.activeElement?.id === 'inbound-rotate-yes'", WAIT)
        assert page.js("document.querySelector('#inbound-address').innerText") == before
        page.press("Enter")
        page.wait(
            f"document.querySelector('#inbound-address').innerText !== {json.dumps(before)}", WAIT
        )
        after = page.js("document.querySelector('#inbound-address').innerText")
        stored = result(live.call("workspaces.get-inbound-address", {}))
        assert after == stored["address"] and stored["rotatedAt"]
        assert before in page.js("document.querySelector('#inbound-retired').innerText")
        assert page.js("document.activeElement?.id") == "inbound-copy"
        page.wait(
            f"document.querySelector('#announce').innerText.includes({json.dumps(after)})", WAIT
        )
        assert_accessible(page)
        fits_a_phone(page, READY)


def test_removing_a_number_asks_first(live_tab: tuple[LiveDashboard, Page]) -> None:
    live, page = live_tab
    result(live.call("whatsapp.register-sender", {"phoneNumber": "+44 20 7946 0958"}))
    open_sources(page, live)
    item = "document.querySelector('#senders li[data-phone=\"442079460958\"]')"
    page.js(f"{item}.querySelector('.sender-remove').click()")
    page.wait("document.activeElement?.id === 'sender-remove-yes-442079460958'", WAIT)
    page.press("Enter")
    page.wait(f"!{item}", WAIT)
    senders = result(live.call("whatsapp.list-senders", {}))["senders"]
    assert "442079460958" not in {s["phoneNumber"] for s in senders}
