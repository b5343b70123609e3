"""The Integrations and Approvals pages (issue 41 item 7) in headless Chromium against a live
``fincap serve`` pointed at the fake Xero, in an English and a German browser: Xero connected
from the page (the real redirects: our connect URL, the provider's consent, our callback, back
to the page), a document sent and seen in the export history as sent, an export the provider
refuses shown with its error, Disconnect after a confirmation; an owner gates integrations.send,
a member asks to send, the owner approves with the keyboard on the Approvals page (another
request rejected with a reason), and the history shows who approved. axe-core finds no serious or
critical violation in light and dark; both pages fit a 390 px phone."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.integrations.fakes import Failure, FakeXero
from tests.requires import requires
from tests.web.accessibility import assert_accessible
from tests.web.dashboard_live import LiveDashboard, Page, cli, result
from tests.web.shared_dashboard import SharedDashboard, signed_in_context, workspace_on

pytestmark = [requires("chromium"), pytest.mark.wire]
# Not test_dashboard_browser.py's teammate: the accounts of every module on the worker's
# server share its store.
MEMBER = "integrations-bea@example.com"
STATE = "document.querySelector('#xero-state')"
# The decimal mark each locale writes money with (the history's totals).
DECIMAL = {"en-US": r"\d\.\d\d", "de-DE": r"\d,\d\d"}


@pytest.fixture(scope="module")
def live(dashboard: SharedDashboard) -> LiveDashboard:
    """The module's workspace on the shared server, with 12 demo documents."""
    return workspace_on(dashboard, "integrations", 12)


@pytest.fixture(scope="module", autouse=True)
def xero(live: LiveDashboard, dashboard: SharedDashboard) -> FakeXero:
    """The workspace's own fake Xero (what it receives and the failures it is told to inject
    are this workspace's alone), there before any test connects."""
    return dashboard.xero.of(live.org_id)


@pytest.fixture(scope="module")
def bea(live: LiveDashboard, dashboard: SharedDashboard) -> dict[str, Any]:
    """Bea: an account (made with the operator's command on the running server's store) that
    joins the workspace as a member."""
    made = cli(
        dashboard.data_dir, "admin", "bootstrap", "--email", MEMBER, "--workspace", "Bea's books"
    )
    live.join(made, MEMBER)
    return made


@pytest.fixture(scope="module")
def page(live: LiveDashboard, dashboard: SharedDashboard) -> Iterator[Page]:
    with signed_in_context(dashboard, live) as tab:
        yield tab


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("screenshots")


def gate(live: LiveDashboard, on: bool) -> None:
    result(live.call("approvals.configure", {"capabilitySlug": "integrations.send", "gated": on}))


def unsent(live: LiveDashboard) -> list[str]:
    found = result(
        live.call(
            "documents.search", {"exportStatus": "not-exported", "limit": 20, "sortBy": "docDate"}
        )
    )
    return [d["id"] for d in found["documents"]]


def text(page: Page, selector: str) -> str:
    return str(page.js(f"document.querySelector({json.dumps(selector)})?.innerText ?? ''"))


def open_integrations(page: Page, live: LiveDashboard) -> None:
    """The Integrations page, freshly rendered. From another ``#/…`` route of the dashboard,
    navigating is only a change of fragment: the old page stays in the document until the new
    render replaces it, so a wait for ``#xero-state`` could pass on the old page and the next
    click land on a button the render then removes (``test_connect_the_fake_xero_and_send``'s
    de-DE run once clicked a Disconnect confirmation that was gone, and waited 60 s for a
    disconnect never sent). A blank page first makes it a new document."""
    page.go("about:blank")
    page.wait("location.href === 'about:blank'")
    page.go(f"{live.base}/app/#/integrations")
    page.wait(f"!!{STATE} && !document.querySelector('#main').hasAttribute('aria-busy')")


def send_from_the_page(page: Page, document_id: str) -> None:
    page.wait(f"!!document.querySelector('#send-{document_id}')")
    page.js(f"document.querySelector('#send-{document_id}').checked = true")
    page.js("document.querySelector('#send-target').value = 'xero|tenant-acme'")
    page.js("document.querySelector('#send-form').requestSubmit()")
    page.wait(
        f"document.querySelector('#send-outcome li[data-doc={json.dumps(document_id)}]')"
        "?.innerText.includes('queued for sending')"
    )


def history_row(document_id: str, status: str) -> str:
    row = f"#export-history tr[data-doc={json.dumps(document_id)}][data-status={status}]"
    return f"document.querySelector({json.dumps(row)})"


def request_in(where: str, request_id: str) -> str:
    """The element of approval request ``request_id`` in ``where`` (a list or table)."""
    return f"document.querySelector({json.dumps(f'{where} [data-request={request_id!r}]')})"


@pytest.mark.parametrize("locale", ["en-US", "de-DE"])
def test_connect_the_fake_xero_and_send(
    live: LiveDashboard, page: Page, xero: FakeXero, shots: Path, locale: str
) -> None:
    gate(live, False)
    page.call("Emulation.setLocaleOverride", locale=locale)
    try:
        open_integrations(page, live)
        if page.js(f"{STATE}.dataset.status") == "connected":
            # Connected by the locale before: Disconnect, after the in-place confirmation.
            page.click("#disconnect-xero")
            page.wait("!!document.querySelector('#confirm-disconnect-xero')")
            assert "Disconnect Xero?" in text(page, "#xero-actions")
            page.click("#confirm-disconnect-xero")
            # The state, or an error shown in its place (then the assertion below says which).
            page.wait(
                f"{STATE}?.innerText === 'Not connected.'"
                " || !!document.querySelector('#xero-actions .error')"
            )
            assert text(page, "#xero-state") == "Not connected.", text(page, "#main")
            listed = result(live.call("integrations.list", {}))["integrations"]
            assert {i["id"]: i["status"] for i in listed}["xero"] == "available"
        assert text(page, "#xero-state") == "Not connected."
        # Connect: the browser goes to our connect URL's answer, the fake's consent, our
        # callback, and back to this page.
        page.click("#connect-xero")
        page.wait("location.hash.startsWith('#/integrations?connected=xero')")
        page.wait(f"{STATE}?.dataset.status === 'connected'")
        assert text(page, "#xero-state").startswith("Connected to Acme Ltd, Beta GmbH since ")
        assert text(page, "#integrations-status") == "Xero is connected"

        sent, refused = unsent(live)[:2]
        send_from_the_page(page, sent)
        page.wait(f"!!{history_row(sent, 'exported')}", timeout=60)
        row = page.js(f"{history_row(sent, 'exported')}.innerText")
        assert "Sent" in row and "Xero: Acme Ltd" in row and f"{live.email} (you)" in row
        assert "not needed" in row
        assert re.search(DECIMAL[locale], row), row
        assert xero.bills, "the fake Xero received no bill"

        # The provider refuses the next bill: the history says so, with the provider's error.
        xero.fail = [Failure("PUT", "/Invoices", 400)]
        send_from_the_page(page, refused)
        page.wait(f"!!{history_row(refused, 'failed')}", timeout=60)
        error = page.js(
            f"{history_row(refused, 'failed')}.querySelector('.export-error').innerText"
        )
        assert "400" in error, error
        assert "Failed" in page.js(f"{history_row(refused, 'failed')}.innerText")
        assert_accessible(page)
        page.screenshot(shots / f"integrations-{locale}.png")
    finally:
        xero.fail = []
        page.call("Emulation.setLocaleOverride")


@pytest.mark.parametrize("locale", ["en-US", "de-DE"])
def test_approve_a_gated_export(
    live: LiveDashboard, page: Page, bea: dict[str, Any], shots: Path, locale: str
) -> None:
    connected = result(live.call("integrations.list", {"status": "connected"}))["integrations"]
    if not connected:
        live.connect_xero()
    gate(live, True)
    document_id, other_id = unsent(live)[:2]
    asks = []
    for doc_id in (document_id, other_id):
        send = {"documentId": doc_id, "integrationId": "xero", "tenantId": "tenant-acme"}
        waiting = result(
            live.call("integrations.send", {**send, "dryRun": False}, key=bea["apiKey"])
        )
        assert waiting["status"] == "approval_required"
        asks.append(waiting["approvalRequestId"])
    approve_id, reject_id = asks
    page.call("Emulation.setLocaleOverride", locale=locale)
    try:
        page.go(f"{live.base}/app/#/approvals")
        item = request_in("#pending-approvals", approve_id)
        page.wait(f"!!{item}")
        shown = page.js(f"{item}.innerText")
        assert f"Asked by {MEMBER}" in shown and "Send a document to accounting" in shown
        assert f"Send document {document_id} to xero (tenant tenant-acme)" in shown
        assert page.js("document.querySelector('#gate-integrations\\\\.send').checked") is True
        assert_accessible(page)

        # Reject the other with a reason (a click), then approve this one with the keyboard.
        page.fill(f"#reason-{reject_id}", "Not a business expense")
        page.click(f"#reject-{reject_id}")
        decided = request_in("#decided-approvals", reject_id)
        page.wait(f"!!{decided}")
        row = page.js(f"{decided}.innerText")
        assert (
            "Rejected" in row and "Not a business expense" in row and f"{live.email} (you)" in row
        )
        assert text(page, "#approvals-status").startswith("Rejected: ")

        page.wait(f"!!document.querySelector('#approve-{approve_id}')")
        page.js(f"document.querySelector('#approve-{approve_id}').focus()")
        page.press("Enter")
        approved = request_in("#decided-approvals", approve_id)
        page.wait(f"!!{approved}")
        row = page.js(f"{approved}.innerText")
        assert "Approved" in row and f"{live.email} (you)" in row and "Queued for sending" in row
        assert page.js(f"!!{item}") is False
        request = result(live.call("approvals.get", {"approvalRequestId": approve_id}))
        assert request["status"] == "executed"

        # The export ran as Bea, and the history says the owner approved it.
        open_integrations(page, live)
        page.wait(f"!!{history_row(document_id, 'exported')}", timeout=60)
        sent = page.js(f"{history_row(document_id, 'exported')}.innerText")
        assert MEMBER in sent
        approver = page.js(
            f"{history_row(document_id, 'exported')}.querySelector('.export-approver').innerText"
        )
        assert approver == f"{live.email} (you)"
        rejected = result(live.call("approvals.get", {"approvalRequestId": reject_id}))
        assert rejected["status"] == "rejected"
        assert result(live.call("exports.list", {"documentId": other_id}))["exports"] == []
        page.screenshot(shots / f"approvals-{locale}.png")
    finally:
        page.call("Emulation.setLocaleOverride")


def test_both_pages_fit_a_phone(live: LiveDashboard, page: Page, shots: Path) -> None:
    page.viewport(390, 844, mobile=True)
    try:
        for route, ready in (
            ("integrations", STATE),
            ("approvals", "document.querySelector('h1')"),
        ):
            page.go(f"{live.base}/app/#/{route}")
            page.wait(f"!!{ready} && !document.querySelector('#main').hasAttribute('aria-busy')")
            assert page.js("document.documentElement.scrollWidth") <= 390, route
            page.screenshot(shots / f"{route}-phone.png")
    finally:
        page.call("Emulation.clearDeviceMetricsOverride")
