"""The dashboard in headless Chromium against a live ``fincap serve`` with demo data.

One server and one browser for the module; the steps run in order as a person would take them:
sign in through the OAuth pages, read the charts, filter, search, open a document, correct its
amount and see the month's bar change, upload a receipt and watch it finish, create and revoke
an API key, and use a phone-width screen. Screenshots are checked for what they show.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.requires import requires
from tests.web.dashboard_live import (
    PASSWORD,
    LiveDashboard,
    Page,
    cli,
    colour_share,
)
from tests.web.shared_dashboard import SharedDashboard, own_context, workspace_on

pytestmark = [requires("chromium"), pytest.mark.wire]
FIXTURES = Path(__file__).parents[1] / "fixtures" / "extraction"
ACCENT = (0x1F, 0x5F, 0xBF)  # the bars' colour (site.css --accent)
DEMO_DOCUMENTS = 300
TEAMMATE = "bea@example.com"


@pytest.fixture(scope="module")
def live(dashboard: SharedDashboard) -> LiveDashboard:
    return workspace_on(dashboard, "dashboard", DEMO_DOCUMENTS, password=True)


@pytest.fixture(scope="module")
def teammate(dashboard: SharedDashboard) -> dict[str, Any]:
    """A second person with an account (and a workspace of their own), made with the
    operator's command on the running server's store: the owner invites them in the members
    test."""
    return cli(
        dashboard.data_dir, "admin", "bootstrap", "--email", TEAMMATE, "--workspace", "Bea's books"
    )


@pytest.fixture(scope="module")
def page(live: LiveDashboard, dashboard: SharedDashboard) -> Iterator[Page]:
    with own_context(dashboard) as tab:
        yield tab


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("screenshots")


def bar_values(page: Page) -> dict[str, float]:
    return dict(
        page.js(
            "[...document.querySelectorAll('#chart-months .bar')]"
            ".map(b => [b.dataset.key, Number(b.dataset.value)])"
        )
    )


def test_sign_in_through_the_oauth_pages_and_see_the_charts(
    live: LiveDashboard, page: Page, shots: Path
) -> None:
    page.go(f"{live.base}/app/")
    page.wait("!!document.querySelector('#oauth-sign-in')")
    page.click("#oauth-sign-in")
    # fincap's own sign-in page (plain HTML form); no consent page: the dashboard is the
    # person, and they have one workspace, so there is nothing to ask.
    page.wait("location.pathname === '/v1/oauth/sign-in' && !!document.querySelector('#email')")
    page.fill("#email", live.email)
    page.fill("#password", PASSWORD)
    page.js("document.querySelector('form').submit()")
    # Back on the dashboard with a code: exchanged for tokens, then the overview renders.
    page.wait(
        "!!document.querySelector('button[value=allow]') "
        "|| document.querySelectorAll('#chart-months .bar').length > 0"
    )
    assert not page.js("!!document.querySelector('button[value=allow]')")
    assert page.js("location.search") == ""  # the code left the address bar
    assert page.js("document.querySelector('h1').innerText") == "Corner Shop"
    months = bar_values(page)
    # Two years of demo spend, shown by default for the last 12 months, each month a column.
    assert len(months) == 12 and sum(months.values()) > 500, months
    assert "Last 12 months" in page.js("document.querySelector('#range').innerText")
    categories = page.js(
        "[...document.querySelectorAll('#chart-categories .hbar-label')].map(b => b.innerText)"
    )
    # The 8 largest categories, then the rest as one "Other" bar.
    assert "Fuel" in categories and len(categories) == 9, categories
    assert categories[-1].startswith("Other ("), categories
    assert page.js("document.querySelectorAll('#latest tbody tr').length") == 10
    assert page.js("document.querySelector('#total').innerText").startswith("$")
    # Everything on the page came from one GraphQL request (after the token exchange), and
    # the navigation's review count and saved views from one more (Navigation, once per
    # sign-in).
    assert page.js("window.__fincapRequests") == 2
    png = page.screenshot(shots / "overview.png")
    # The month chart is drawn: a real share of the upper half is the bars' blue.
    assert colour_share(png, ACCENT, (0, 150, 1280, 800)) > 0.01


def test_filters_become_where_clauses(live: LiveDashboard, page: Page) -> None:
    before = page.js("document.querySelector('#doc-count').innerText")
    page.js("document.querySelector('#f-category').value = 'Fuel'")
    page.js("document.querySelector('form.filters').requestSubmit()")
    page.wait(
        "document.querySelector('#chart-categories .hbar-label')?.innerText === 'Fuel' "
        "&& document.querySelectorAll('#chart-categories .hbar-label').length === 1"
    )
    fuel = int(page.js("document.querySelector('#doc-count').innerText"))
    # Within the default range (the last 12 months), shown in the date fields.
    start, end = page.js(
        "[document.querySelector('#f-from').value, document.querySelector('#f-to').value]"
    )
    conditions = [
        {"field": "category", "op": "eq", "value": "Fuel"},
        {"field": "docDate", "op": "gte", "value": start},
        {"field": "docDate", "op": "lte", "value": end},
    ]
    expected = live.call("documents.count", {"where": {"conditions": conditions}}).json()["data"][
        "result"
    ]["count"]
    assert fuel == expected < int(before)
    assert all(
        row == "Fuel"
        for row in page.js(
            "[...document.querySelectorAll('#latest tbody "
            "tr td:nth-child(3)')].map(t => t.innerText)"
        )
    )
    # A month column narrows the dates too; "Clear" removes every filter.
    page.js(
        "document.querySelector('#chart-months "
        ".bar:last-of-type').dispatchEvent(new MouseEvent('click', {bubbles: true}))"
    )
    page.wait("document.querySelector('#f-from').value !== ''")
    page.wait(
        "[...document.querySelectorAll('form.filters "
        "button')].some(b => b.innerText.startsWith('Clear 3'))"
    )
    page.js(
        "[...document.querySelectorAll('form.filters button')].find(b "
        "=> b.innerText.startsWith('Clear')).click()"
    )
    page.wait(f"document.querySelector('#doc-count')?.innerText === {json.dumps(before)}")


def test_range_other_and_filters_in_the_address(live: LiveDashboard, page: Page) -> None:
    """All time is a click away; categories past the top 8 are one "Other" bar; the filters
    are in the address: a reload keeps them, back and forward step through them."""
    page.go(f"{live.base}/app/#/")
    page.wait("document.querySelectorAll('#chart-months .bar').length === 12")
    page.click("#all-time")
    page.wait(
        "location.hash === '#/?range=all' && "
        "document.querySelectorAll('#chart-months .bar').length > 12"
    )
    every = bar_values(page)
    counted = live.call("documents.count", {"groupBy": "month"}).json()["data"]["result"]
    first, last = (
        min(g["key"] for g in counted["groups"] if g["key"]),
        max(g["key"] for g in counted["groups"] if g["key"]),
    )
    assert min(every) == first and max(every) == last  # every month between, none missing
    labels = page.js(
        "[...document.querySelectorAll('#chart-categories .hbar-label')].map(b => b.innerText)"
    )
    by_category = live.call("documents.count", {"groupBy": "category"}).json()["data"]["result"]
    named = [g for g in by_category["groups"] if g["key"]]
    if len(named) > 8:
        assert len(labels) == 9 and labels[-1].startswith("Other ("), labels
        rest = len(named) - 8
        assert labels[-1] == f"Other ({rest} {'category' if rest == 1 else 'categories'})"
        # "Other" opens in place into the categories it holds, focus on the first of them.
        page.js("[...document.querySelectorAll('#chart-categories .hbar-label')].at(-1).click()")
        page.wait(
            f"document.querySelectorAll('#chart-categories .hbar-label').length === {len(named)}"
        )
        opened = page.js(
            "[...document.querySelectorAll('#chart-categories .hbar-label')].map(b => b.innerText)"
        )
        assert opened[:8] == labels[:8] and not any(o.startswith("Other") for o in opened)
        assert page.js("document.activeElement.innerText") == opened[8]
    # A category filter is in the address; a reload keeps it.
    page.js("document.querySelector('#f-category').value = 'Fuel'")
    page.js("document.querySelector('form.filters').requestSubmit()")
    page.wait("location.hash.includes('category=Fuel')")
    page.wait("document.querySelector('#chart-categories .hbar-label')?.innerText === 'Fuel'")
    fuel_hash = page.js("location.hash")
    page.call("Page.reload")
    page.wait("document.querySelector('#chart-categories .hbar-label')?.innerText === 'Fuel'")
    assert page.js("location.hash") == fuel_hash
    assert page.js("document.querySelector('#f-category').value") == "Fuel"
    # Back: all time without a category; forward: Fuel again.
    page.js("history.back()")
    page.wait(
        "location.hash === '#/?range=all' && "
        "document.querySelectorAll('#chart-categories .hbar-label').length > 1"
    )
    assert page.js("document.querySelector('#f-category').value") == ""
    page.js("history.forward()")
    page.wait("document.querySelector('#f-category')?.value === 'Fuel'")
    # A shared link opens on the same view in a fresh load.
    page.go("about:blank")
    page.go(f"{live.base}/app/{fuel_hash}")
    page.wait("document.querySelector('#chart-categories .hbar-label')?.innerText === 'Fuel'")
    page.go(f"{live.base}/app/#/")
    page.wait("document.querySelectorAll('#chart-months .bar').length === 12")


def test_search_and_thumbnails(live: LiveDashboard, page: Page, shots: Path) -> None:
    page.go(f"{live.base}/app/#/documents")
    page.wait("document.querySelectorAll('#doc-rows tr').length > 0")
    page.fill("#search", "Shell")
    page.js("document.querySelector('form.search').requestSubmit()")
    page.wait("document.querySelector('#doc-list')?.dataset.query === 'Shell'")
    names = page.js("[...document.querySelectorAll('#doc-rows .doc-name')].map(s => s.innerText)")
    assert names[:3] == ["Shell"] * 3, names  # the closest matches first
    page.screenshot(shots / "search.png")
    # Possible duplicates only: the demo data has some, each marked.
    page.fill("#search", "")
    page.click("#duplicates")
    page.js("document.querySelector('form.search').requestSubmit()")
    page.wait(
        "document.querySelector('#doc-list')?.dataset.query === '' && "
        "document.querySelectorAll('#doc-list .badge.warn').length > 0"
    )
    assert page.js(
        "[...document.querySelectorAll('#doc-rows "
        "tr')].every(tr => tr.querySelector('.badge.warn'))"
    )
    page.click("#duplicates")
    page.js("document.querySelector('form.search').requestSubmit()")
    page.wait("document.querySelectorAll('#doc-rows tr').length === 50")


def test_open_a_document_correct_its_amount_and_see_the_chart_change(
    live: LiveDashboard, page: Page, shots: Path
) -> None:
    page.go(f"{live.base}/app/#/")
    page.wait("document.querySelectorAll('#latest tbody a').length > 0")
    href = page.js("document.querySelector('#latest tbody a').getAttribute('href')")
    document_id = href.rsplit("/", 1)[1]
    stored = live.call("documents.get", {"id": document_id}).json()["data"]["result"]["document"]
    month = stored["docDate"][:7]
    before = bar_values(page)[month]
    total_before = page.js("document.querySelector('#total').innerText")

    page.click("#latest tbody a")
    page.wait("!!document.querySelector('#fields [data-edit=amount]')")
    assert page.js("document.querySelector('h1').innerText") == stored["merchant"]
    shown = page.js("document.querySelector('#fields').innerText")
    assert "Merchant" in shown and "Category" in shown and stored["category"] in shown
    # With the keyboard: focus "Correct" on the amount, Enter, type, Enter to save.
    page.js("document.querySelector('[data-edit=amount]').focus()")
    page.press("Enter")
    page.wait("document.activeElement?.id === 'edit-amount'")
    page.js("document.activeElement.value = ''")
    page.type_text("5000")
    page.press("Enter")
    if float(stored["amount"]) * 10 <= 5000:  # ten times more or less: confirmed with Enter
        page.wait("document.activeElement?.innerText.startsWith('Yes, save')")
        page.press("Enter")
    page.wait("document.querySelector('#value-amount .value')?.innerText.includes('5,000')")
    assert page.js("document.activeElement?.dataset.edit") == "amount"  # focus came back
    page.screenshot(shots / "document.png")
    corrected = live.call("documents.get", {"id": document_id}).json()["data"]["result"]["document"]
    assert float(corrected["amount"]) == 5000
    assert corrected["editHistory"][-1]["field"] == "amount"

    page.go(f"{live.base}/app/#/")
    page.wait(
        "(document.querySelectorAll('#chart-months .bar').length > 0) && "
        f"document.querySelector('#total').innerText !== {json.dumps(total_before)}"
    )
    after = bar_values(page)[month]
    rate = corrected["conversionRate"] or 1.0
    expected = before + (5000 - float(stored["amount"])) * rate
    assert abs(after - expected) < 0.05, (before, after, expected)


@pytest.mark.parametrize(
    ("locale", "pattern"),
    # Round, short labels in each locale's own way ("$10K"; German keeps thousands: "10.000 $").
    [("en-US", r"^\$\d+(\.\d)?[KM]?$"), ("de-DE", r"^\d+(\.\d{3})*(,\d)?( Mio\.)? \$$")],
)
def test_the_month_axis_is_round_in_the_locale(
    live: LiveDashboard, page: Page, locale: str, pattern: str
) -> None:
    page.call("Emulation.setLocaleOverride", locale=locale)
    try:
        page.go("about:blank")
        page.go(f"{live.base}/app/#/")
        page.wait("document.querySelectorAll('#chart-months .bar').length === 12")
        axis = page.js(
            "[...document.querySelectorAll('#chart-months text.axis[text-anchor=end]')]"
            ".map(t => t.textContent)"
        )
        top = max(bar_values(page).values())
    finally:
        page.call("Emulation.setLocaleOverride")
    assert len(axis) == 3, axis
    for label in axis:
        assert re.match(pattern, label.replace("\u00a0", " ")), (locale, axis)
    assert top > 0 and axis[0] != axis[2]  # a scale, not three zeros


@pytest.mark.parametrize(
    ("locale", "shown", "large"),
    [("en-US", "12.50", "1,234.56"), ("de-DE", "12,50", "1.234,56")],
)
def test_amounts_are_read_for_the_locale_and_big_changes_are_confirmed(
    live: LiveDashboard, page: Page, locale: str, shown: str, large: str
) -> None:
    """Typing ``12,50`` saves 12.50 in an English and a German browser (a number input in
    English used to drop the comma and save 1,250.00); the parsed value is shown before saving;
    a change by a factor of 10 or more waits for a second "Yes, save"."""
    page.go(f"{live.base}/app/#/")
    page.wait("document.querySelectorAll('#latest tbody a').length > 1")
    href = page.js("document.querySelectorAll('#latest tbody a')[1].getAttribute('href')")
    document_id = href.rsplit("/", 1)[1]
    assert live.call("documents.update", {"id": document_id, "amount": "20.00"}).status_code == 200
    page.call("Emulation.setLocaleOverride", locale=locale)
    try:
        page.go("about:blank")
        page.go(f"{live.base}/app/#/documents/{document_id}")
        page.wait("!!document.querySelector('#fields [data-edit=amount]')")
        assert page.js("new Intl.NumberFormat().resolvedOptions().locale") == locale
        page.click("[data-edit=amount]")
        page.wait("document.activeElement?.id === 'edit-amount'")
        # The stored amount is shown as this person writes numbers.
        written = page.js("document.activeElement.value")
        assert written == ("20.00" if locale == "en-US" else "20,00")
        page.fill("#edit-amount", "12,50")
        parsed = page.js("document.querySelector('#parsed-amount').innerText")
        assert shown in parsed, parsed
        page.press("Enter")
        page.wait(
            "document.querySelector('#value-amount .value')"
            f"?.innerText.includes({json.dumps(shown)})"
        )

        def saved() -> str:
            got = live.call("documents.get", {"id": document_id}).json()["data"]["result"]
            return str(got["document"]["amount"])

        assert float(saved()) == 12.5
        # About 99 times more: a warning and a second "Yes, save" before anything is written.
        page.click("[data-edit=amount]")
        page.wait("document.activeElement?.id === 'edit-amount'")
        page.fill("#edit-amount", large)
        page.js("document.querySelector('#value-amount form').requestSubmit()")
        warning = page.wait("document.querySelector('#value-amount .error')?.innerText")
        assert "99×" in warning, warning
        button = page.js("document.querySelector('#value-amount button[type=submit]').innerText")
        assert button.startswith("Yes, save"), button
        assert float(saved()) == 12.5
        page.js("document.querySelector('#value-amount form').requestSubmit()")
        page.wait("!document.querySelector('#value-amount form')")
        assert float(saved()) == 1234.56
        # Text that is not an amount is refused in words, and nothing is saved.
        page.click("[data-edit=amount]")
        page.wait("document.activeElement?.id === 'edit-amount'")
        page.fill("#edit-amount", "12,5,0")
        page.js("document.querySelector('#value-amount form').requestSubmit()")
        assert page.wait("document.querySelector('#value-amount .error')?.innerText")
        assert float(saved()) == 1234.56
    finally:
        page.call("Emulation.setLocaleOverride")


# The WCAG contrast ratio of an element's text against the first opaque background behind it.
CONTRAST_JS = """(() => {
  const element = document.querySelector(%s);
  const rgb = (text) => text.match(/[\\d.]+/g).map(Number);
  let behind = element, background = [0, 0, 0, 0];
  while (behind && (background = rgb(getComputedStyle(behind).backgroundColor))[3] === 0) {
    behind = behind.parentElement;
  }
  if (!behind) background = [255, 255, 255];
  const luminance = ([r, g, b]) => [r, g, b]
    .map((c) => c / 255).map((c) => (c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4))
    .reduce((sum, c, i) => sum + c * [0.2126, 0.7152, 0.0722][i], 0);
  const [a, b] = [luminance(rgb(getComputedStyle(element).color)), luminance(background)];
  return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
})()"""


def test_archive_then_undo_from_the_toast(live: LiveDashboard, page: Page) -> None:
    page.go(f"{live.base}/app/#/")
    page.wait("document.querySelectorAll('#latest tbody a').length > 2")
    href = page.js("document.querySelectorAll('#latest tbody a')[2].getAttribute('href')")
    document_id = href.rsplit("/", 1)[1]

    def archived() -> bool:
        got = live.call("documents.get", {"id": document_id}).json()["data"]["result"]
        return bool(got["document"]["archived"])

    page.go(f"{live.base}/app/#/documents/{document_id}")
    page.wait("!!document.querySelector('#archive')")
    page.click("#archive")
    # Back on the list, the toast says what was archived and offers Undo.
    page.wait("location.hash.startsWith('#/documents') && !!document.querySelector('#toast #undo')")
    assert "Archived" in page.js("document.querySelector('#toast').innerText")
    # Legible: the Undo button's text against what is behind it (it was white on white).
    assert page.js(CONTRAST_JS % json.dumps("#toast #undo")) >= 4.5
    assert archived()
    page.click("#toast #undo")
    page.wait("document.querySelector('#toast')?.innerText === 'Restored'")
    assert not archived()
    page.wait(f"!!document.querySelector('#doc-list a[href$={json.dumps(document_id)}]')")


def test_upload_a_receipt_and_watch_it_finish(live: LiveDashboard, page: Page, shots: Path) -> None:
    page.go(f"{live.base}/app/#/upload")
    page.wait("!!document.querySelector('#drop-zone')")
    data = (FIXTURES / "text-layer.pdf").read_bytes()
    # Dropped onto the zone as a person drags a file from their desktop.
    page.js(
        "(() => { const bytes = Uint8Array.from(atob("
        + json.dumps(__import__("base64").b64encode(data).decode())
        + "), c => c.charCodeAt(0));"
        "const transfer = new DataTransfer();"
        "transfer.items.add(new File([bytes], 'northwind.pdf', {type: 'application/pdf'}));"
        "const zone = document.querySelector('#drop-zone');"
        "zone.dispatchEvent(new DragEvent('drop', {dataTransfer: "
        "transfer, bubbles: true, cancelable: true})); })()"
    )
    page.wait("!!document.querySelector('#uploads li[data-file=\"northwind.pdf\"]')")
    seen = set()
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        status = page.js("document.querySelector('#uploads li').dataset.status")
        seen.add(status)
        if status in ("processed", "warning", "failed", "skipped"):
            break
        time.sleep(0.2)
    assert status == "processed", page.js("document.querySelector('#uploads li').innerText")
    assert seen & {"queued", "processing", "sending"}, seen  # it was watched, not just done
    assert page.js("document.querySelector('#uploads progress').value") == 1
    text = page.js("document.querySelector('#uploads li').innerText")
    assert "Northwind Consulting GmbH" in text
    page.screenshot(shots / "upload.png")
    # Its thumbnail is the PDF's first page, drawn by the server.
    page.click("#uploads li a")
    page.wait("!!document.querySelector('.preview img')", timeout=30)
    size = page.js(
        "(i => i.complete && [i.naturalWidth, "
        "i.naturalHeight])(document.querySelector('.preview img'))"
    )
    assert size and max(size) == 320
    # Extracted fields carry the extraction's confidence.
    assert page.js("document.querySelectorAll('#fields .confidence').length") >= 3
    assert "Northwind Consulting GmbH" in page.js("document.querySelector('#fields').innerText")


def test_create_and_revoke_a_key(live: LiveDashboard, page: Page, shots: Path) -> None:
    page.go(f"{live.base}/app/#/keys")
    page.wait("!!document.querySelector('#create-key')")
    page.fill("#key-name", "bookkeeping export")
    page.js("document.querySelector('#create-key').requestSubmit()")
    secret = page.wait("document.querySelector('#new-secret')?.innerText")
    assert secret.startswith("sk_")
    # The list has the new key at once, beside its secret (no reload, no "Done" first).
    assert page.js(
        "[...document.querySelectorAll('#keys tbody tr')].some(r "
        "=> r.innerText.includes('bookkeeping export'))"
    )
    assert page.js("!!document.querySelector('#new-secret')")
    # The new key works through REST, in this workspace.
    assert live.call("workspaces.list", {}, key=secret).status_code == 200
    page.js(
        "[...document.querySelectorAll('#created-key "
        "button')].find(b => b.innerText === 'Done').click()"
    )
    page.wait("!document.querySelector('#new-secret')")  # redrawn without the secret
    page.wait(
        "[...document.querySelectorAll('#keys tbody tr')].some(r "
        "=> r.innerText.includes('bookkeeping export'))"
    )
    page.js(
        "[...document.querySelectorAll('#keys tbody tr')].find(r => "
        "r.innerText.includes('bookkeeping export')).querySelector('[data-revoke]').click()"
    )
    page.wait("document.activeElement?.id === 'confirm-revoke'")
    page.press("Enter")
    page.wait(
        "![...document.querySelectorAll('#keys tbody tr')].some(r "
        "=> r.innerText.includes('bookkeeping export'))"
    )
    page.screenshot(shots / "keys.png")
    # Revoked means refused at once (the server's auth cache forgot it).
    assert live.call("workspaces.list", {}, key=secret).status_code == 401


def test_keyboard_and_phone_width(live: LiveDashboard, page: Page, shots: Path) -> None:
    page.go(f"{live.base}/app/#/")
    page.wait("document.querySelectorAll('#chart-months .bar').length > 0")
    # From the skip link (first in the page, shown when focused), Tab walks the navigation.
    page.js("document.querySelector('.skip').focus()")
    assert page.js("document.querySelector('.skip').getBoundingClientRect().left") >= 0
    focused = []
    for _ in range(8):
        page.press("Tab")
        focused.append(page.js("document.activeElement.textContent.trim()"))
    # The Review link carries the queue's count ("Review 11 waiting").
    assert focused[3].startswith("Review ") and focused[3].endswith(" waiting"), focused
    expected = ["fincap", "Overview", "Documents", "Bank", "Rules", "Sources", "Upload"]
    assert [*focused[:3], *focused[4:]] == expected, focused
    for _ in range(5):  # Integrations, Approvals, API keys, Members, then the workspace picker
        page.press("Tab")
    assert page.js("document.activeElement.id") == "workspace"  # the workspace picker
    page.js("document.querySelector('[data-route=documents]').focus()")
    page.press("Enter")
    page.wait(
        "location.hash === '#/documents' && document.querySelectorAll('#doc-rows tr').length > 0"
    )
    assert page.js("document.activeElement.tagName") == "H1"  # focus moved to the new page

    page.viewport(390, 844, mobile=True)
    try:
        page.go(f"{live.base}/app/#/")
        page.wait("document.querySelectorAll('#chart-months .bar').length > 0")
        # Nothing wider than the phone: no sideways scrolling of the page.
        assert page.js("document.documentElement.scrollWidth") <= 390
        png = page.screenshot(shots / "phone.png")
        import io

        from PIL import Image

        assert Image.open(io.BytesIO(png)).size == (390, 844)
        assert colour_share(png, ACCENT) > 0.005  # the charts are on the first screen
    finally:
        page.call("Emulation.clearDeviceMetricsOverride")


def test_pages_keep_their_content_security_policy(live: LiveDashboard) -> None:
    for path in ("/", "/app/", "/api"):
        response = httpx.get(live.base + path)
        csp = response.headers["content-security-policy"]
        assert "script-src 'self'" in csp and "unsafe-inline" not in csp
        assert "<script>" not in response.text  # no inline script anywhere


def test_sign_out_then_sign_in_with_an_api_key(live: LiveDashboard, page: Page) -> None:
    page.go(f"{live.base}/app/#/")
    page.wait("!!document.querySelector('#sign-out') && !document.querySelector('#nav').hidden")
    page.click("#sign-out")
    page.wait("!!document.querySelector('#key-form')")
    assert page.js("sessionStorage.getItem('fincap.session')") is None
    # Signed out, the header offers "Sign in" only: no "Sign out", no workspace list from before.
    shown = "(s => { const e = document.querySelector(s); return !!e && e.offsetParent !== null; })"
    assert page.js(f"{shown}('#header-sign-in')")
    assert page.js("document.querySelector('#header-sign-in').innerText") == "Sign in"
    assert not page.js(f"{shown}('#sign-out')")
    assert not page.js(f"{shown}('#workspace')")
    assert page.js("document.querySelector('#workspace').options.length") == 0
    page.fill("#api-key", live.api_key)
    page.js("document.querySelector('#key-form').requestSubmit()")
    page.wait("document.querySelectorAll('#chart-months .bar').length > 0")
    # An unrestricted key: the first workspace is chosen and the picker lists it.
    assert page.js("document.querySelector('#workspace').selectedOptions[0].innerText") == (
        "Corner Shop (owner)"
    )
    # A revoked key sends the person back to the sign-in page with the reason.
    revoked = json.dumps(json.dumps({"kind": "key", "secret": "sk_revoked", "orgId": None}))
    page.js(f"sessionStorage.setItem('fincap.session', {revoked})")
    page.go(f"{live.base}/app/#/documents")
    page.wait("!!document.querySelector('#key-form') && !!document.querySelector('.error')")


def test_members_invite_change_a_role_and_remove(
    live: LiveDashboard, page: Page, teammate: dict[str, Any], shots: Path
) -> None:
    # Bea (an existing account) joins through the API; then the owner manages her on the screen.
    code = live.call("members.invite", {"email": TEAMMATE}).json()["data"]["result"]["code"]
    joined = httpx.post(
        f"{live.base}/v1/capabilities/members.accept-invite",
        json={"code": code},
        headers={"Authorization": f"Bearer {teammate['apiKey']}"},
        timeout=30,
    )
    assert joined.status_code == 200, joined.text
    # As a plain member, Bea sees the people but no invite form; the actions are disabled, with why.
    as_bea = {"kind": "key", "secret": teammate["apiKey"], "orgId": live.org_id}
    page.go(f"{live.base}/app/")  # sessionStorage belongs to the origin: be on it first
    page.js(f"sessionStorage.setItem('fincap.session', {json.dumps(json.dumps(as_bea))})")
    page.go(f"{live.base}/app/#/members")
    page.wait("document.querySelectorAll('#members tbody tr').length === 2")
    assert page.js("document.querySelector('#invite-form')") is None
    assert "Only owners and admins" in page.js(
        "document.querySelector('#members-readonly').innerText"
    )
    assert page.js("[...document.querySelectorAll('#members select')].every(s => s.disabled)")
    owner = json.dumps(json.dumps({"kind": "key", "secret": live.api_key, "orgId": live.org_id}))
    page.js(f"sessionStorage.setItem('fincap.session', {owner})")
    page.call("Page.reload")  # same address: reload so the owner's view is drawn
    page.wait("!!document.querySelector('#invite-form')")
    rows = page.js("[...document.querySelectorAll('#members tbody tr')].map(r => r.innerText)")
    assert any(live.email in r and "you" in r for r in rows) and any(TEAMMATE in r for r in rows)

    # Invite a new address: the one-time code is shown, and it opens a real invitation.
    page.fill("#invite-email", "carl@example.com")
    page.js("document.querySelector('#invite-form').requestSubmit()")
    shown = page.wait("document.querySelector('#invite-code')?.innerText")
    assert shown.startswith("fic_")
    page.js(
        "[...document.querySelectorAll('#invite-result button')]"
        ".find(b => b.innerText === 'Done').click()"
    )
    page.wait("!!document.querySelector('[data-invitation=\"carl@example.com\"]')")
    assert "as member" in page.js(
        "document.querySelector('[data-invitation=\"carl@example.com\"]').innerText"
    )
    page.screenshot(shots / "members.png")
    listed = live.call("members.list", {}).json()["data"]["result"]["invitations"]
    assert [i["email"] for i in listed] == ["carl@example.com"]

    # The last owner cannot step down: the API's words are shown and the role stays.
    me = page.js("document.querySelector('#members tbody tr .badge').closest('tr').dataset.member")
    select = f"document.querySelector('[data-role-of=\"{me}\"]')"
    page.js(f"{select}.value = 'member'; {select}.dispatchEvent(new Event('change'))")
    page.wait(f"!!document.querySelector('[data-member=\"{me}\"] .error')")
    refusal = page.js(f"document.querySelector('[data-member=\"{me}\"] .error').innerText")
    assert "last owner" in refusal and "make another member owner first" in refusal
    assert page.js(f"{select}.value") == "owner"

    # Make Bea an admin: the server has it.
    bea = teammate["userId"]
    select = f"document.querySelector('[data-role-of=\"{bea}\"]')"
    page.js(f"{select}.value = 'admin'; {select}.dispatchEvent(new Event('change'))")
    page.wait("document.querySelector('#announce').textContent.includes('is now admin')")
    roles = {
        m["email"]: m["role"]
        for m in live.call("members.list", {}).json()["data"]["result"]["members"]
    }
    assert roles[TEAMMATE] == "admin"

    # Remove her after confirming: gone from the list, and her key no longer opens it.
    page.click(f'[data-remove="{bea}"]')
    page.wait("document.activeElement?.id === 'confirm-remove'")
    page.press("Enter")
    page.wait("document.querySelectorAll('#members tbody tr').length === 1")
    after = live.call("members.list", {}, key=teammate["apiKey"])
    assert after.status_code in (403, 404), after.text

    # Cancel the open invitation: its code stops working.
    page.click('[data-cancel="carl@example.com"]')
    page.wait("!!document.querySelector('#no-invitations')")
    assert live.call("members.list", {}).json()["data"]["result"]["invitations"] == []
