"""The Bank page (issue 42 item 4) in headless Chromium against a live ``fincap serve``, in an
English and a German browser: a CAMT.053 statement imported through the page (the result said
with its balances as the locale writes money), its booking opened by keyboard with the document
that matches it ranked first and every signal's contribution in words, confirmed with the
keyboard (matched, on the server too), undone with the keyboard (unmatched again), and "receipts
missing" for the month counting it while it is unmatched, as transactions.count does. A malformed
statement is refused with the server's words; axe-core finds no serious or critical violation;
the page fits a 390 px phone."""

from __future__ import annotations

import base64
import datetime as dt
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.requires import requires
from tests.web.accessibility import assert_accessible
from tests.web.dashboard_live import (
    LiveDashboard,
    Page,
    own_key,
    result,
)
from tests.web.shared_dashboard import SharedDashboard, signed_in_context, workspace_on

pytestmark = [requires("chromium"), pytest.mark.wire]
FIXTURES = Path(__file__).parents[1] / "fixtures" / "statements"
WAIT = 30
DETAIL = "document.querySelector('#txn-detail')"
# Per locale: the booking's counterparty, the receipt's merchant, the amount (booked as a debit)
# and how the locale writes it.
BOOKINGS = {
    "en-US": ("SHELL DEUTSCHLAND OIL GMBH 1234", "Shell", "87.43", "87.43", 40),
    "de-DE": ("ARAL AG TANKSTELLE 0815", "Aral", "64.19", "64,19", 33),
}


@pytest.fixture(scope="module")
def live(dashboard: SharedDashboard) -> LiveDashboard:
    server = workspace_on(dashboard, "bank", 6)
    # Matching at import is off here: these tests confirm by keyboard what the matcher
    # proposes (tests/statements/test_auto_match.py tests matching at import).
    answer = server.call("matches.configure", {"autoMatch": False})
    assert answer.status_code == 200, answer.text
    return server


@pytest.fixture(scope="module")
def tab(live: LiveDashboard, dashboard: SharedDashboard) -> Iterator[Page]:
    with signed_in_context(dashboard, live) as page:
        yield page


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("screenshots")


def camt053(message_id: str, booked: dt.date, amount: str, counterparty: str) -> str:
    """A one-booking CAMT.053 statement, as ISO 20022's camt.053.001.08 lays one out."""
    opened = booked - dt.timedelta(days=1)
    closing = f"{5000 - float(amount):.2f}"
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.08">
  <BkToCstmrStmt>
    <GrpHdr><MsgId>{message_id}</MsgId><CreDtTm>{booked}T18:00:00+01:00</CreDtTm></GrpHdr>
    <Stmt>
      <Id>{message_id}-1</Id>
      <CreDtTm>{booked}T18:00:00+01:00</CreDtTm>
      <Acct><Id><IBAN>DE44500105175407324931</IBAN></Id><Ccy>EUR</Ccy></Acct>
      <Bal>
        <Tp><CdOrPrtry><Cd>PRCD</Cd></CdOrPrtry></Tp>
        <Amt Ccy="EUR">5000.00</Amt><CdtDbtInd>CRDT</CdtDbtInd><Dt><Dt>{opened}</Dt></Dt>
      </Bal>
      <Bal>
        <Tp><CdOrPrtry><Cd>CLBD</Cd></CdOrPrtry></Tp>
        <Amt Ccy="EUR">{closing}</Amt><CdtDbtInd>CRDT</CdtDbtInd><Dt><Dt>{booked}</Dt></Dt>
      </Bal>
      <Ntry>
        <NtryRef>1</NtryRef>
        <Amt Ccy="EUR">{amount}</Amt>
        <CdtDbtInd>DBIT</CdtDbtInd>
        <Sts><Cd>BOOK</Cd></Sts>
        <BookgDt><Dt>{booked}</Dt></BookgDt>
        <ValDt><Dt>{booked}</Dt></ValDt>
        <AcctSvcrRef>{message_id}-0001</AcctSvcrRef>
        <NtryDtls><TxDtls>
          <RltdPties><Cdtr><Pty><Nm>{counterparty}</Nm></Pty></Cdtr></RltdPties>
          <RmtInf><Ustrd>Kartenzahlung {booked - dt.timedelta(days=1)}</Ustrd></RmtInf>
        </TxDtls></NtryDtls>
      </Ntry>
    </Stmt>
  </BkToCstmrStmt>
</Document>
"""


def choose_file(page: Page, name: str, content: bytes) -> None:
    """The file as if picked in the page's statement file input (its change event fires)."""
    encoded = base64.b64encode(content).decode()
    page.js(
        f"(() => {{ const text = atob({json.dumps(encoded)});"
        "const bytes = Uint8Array.from(text, c => c.charCodeAt(0));"
        "const transfer = new DataTransfer();"
        f"transfer.items.add(new File([bytes], {json.dumps(name)}, {{type: 'application/xml'}}));"
        "const input = document.querySelector('#statement-file');"
        "input.files = transfer.files;"
        "input.dispatchEvent(new Event('change', {bubbles: true})); })()"
    )


def open_bank(page: Page, live: LiveDashboard) -> None:
    page.go("about:blank")
    page.go(f"{live.base}/app/#/bank")
    page.wait(
        "!!document.querySelector('#missing-box h2') && !!document.querySelector('#txn-list-h')",
        WAIT,
    )


def missing_in(live: LiveDashboard, month: str) -> int:
    """The month's unmatched debits, as transactions.count says."""
    start = dt.date.fromisoformat(f"{month}-01")
    end = (start + dt.timedelta(days=32)).replace(day=1)
    where = {
        "conditions": [
            {"field": "bookingDate", "op": "gte", "value": start.isoformat()},
            {"field": "bookingDate", "op": "lt", "value": end.isoformat()},
            {"field": "amount", "op": "lt", "value": 0},
            {"field": "matched", "op": "eq", "value": False},
        ]
    }
    count: int = result(live.call("transactions.count", {"where": where}))["count"]
    return count


def settled(page: Page, expression: str) -> None:
    """Wait for ``expression``; a refusal the page shows fails here with its words."""
    refused = "document.querySelector('#bank-status .error')?.textContent"
    page.wait(f"({expression}) || {refused}", WAIT)
    assert not page.js(refused)


def missing_row(month: str) -> str:
    """The month's row of "receipts missing" (an expression)."""
    return f"document.querySelector('#missing tr[data-month=\"{month}\"]')"


def shown_missing(page: Page, month: str) -> str:
    return str(page.js(f"{missing_row(month)}?.dataset.count"))


@pytest.mark.parametrize("locale", list(BOOKINGS))
def test_a_booking_matched_and_undone_by_keyboard(
    live: LiveDashboard, tab: Page, shots: Path, locale: str
) -> None:
    counterparty, merchant, amount, written, days_ago = BOOKINGS[locale]
    booked = dt.date.today() - dt.timedelta(days=days_ago)
    month = booked.isoformat()[:7]
    # A demo document made the receipt of the booking: merchant, total and the day before.
    documents = result(live.call("documents.search", {"useSearch": False, "limit": 100}))
    receipt = documents["documents"][0 if locale == "en-US" else 1]["id"]
    receipt_fields = {
        "id": receipt,
        "merchant": merchant,
        "amount": amount,
        "currency": "EUR",
        "docDate": (booked - dt.timedelta(days=1)).isoformat(),
    }
    result(live.call("documents.update", receipt_fields))
    page = tab
    own_key(page, live, f"bank {locale}")
    page.call("Emulation.setLocaleOverride", locale=locale)
    try:
        open_bank(page, live)
        statement = camt053(f"STMT-{locale}", booked, amount, counterparty)
        choose_file(page, f"statement-{locale}.xml", statement.encode())
        said = page.wait(
            "document.querySelector('#import-done')?.textContent "
            "|| document.querySelector('#import-error')?.textContent",
            WAIT,
        )
        assert "CAMT.053" in said and "1 transaction imported, 0 already there" in said, said
        opening = "5,000.00" if locale == "en-US" else "5.000,00"
        assert "Opening balance" in said and opening in said, said

        where = {"conditions": [{"field": "amount", "op": "eq", "value": f"-{amount}"}]}
        txn = result(live.call("transactions.search", {"where": where}))["transactions"][0]
        row = f"document.querySelector('button.txn-row[data-id=\"{txn['id']}\"]')"
        page.wait(f"!!{row}", WAIT)
        assert written in page.js(f"{row}.innerText")
        before = missing_in(live, month)
        assert before >= 1
        page.wait(f"!!{missing_row(month)}", WAIT)
        assert shown_missing(page, month) == str(before)

        # j moves to the booking's row (the first j focuses the selected row), Enter opens it.
        for _ in range(20):
            if page.js(f"{row} === document.activeElement"):
                break
            page.key("j")
        assert page.js(f"{row}.getAttribute('aria-current')") == "true"
        page.press("Enter")
        opened = f"{DETAIL}?.dataset.id === {json.dumps(txn['id'])}"
        page.wait(f"{opened} && !!document.querySelector('#candidates')", WAIT)
        top = "document.querySelector('#candidates li.candidate')"
        assert page.js(f"{top}.dataset.docIds") == receipt
        signals = page.js(f"[...{top}.querySelectorAll('.signals li')].map(l => l.innerText)")
        amount_said = next(s for s in signals if s.startswith("amount"))
        assert "+40" in amount_said and "equals the total" in amount_said, signals
        assert any(s.startswith("merchant") and merchant in s for s in signals), signals
        assert page.js("document.activeElement?.classList.contains('candidate-confirm')")
        assert page.js("document.querySelector('#candidate-evidence')?.dataset.doc") == receipt
        assert "c" in page.js("document.querySelector('#key-hints').innerText")
        assert (
            page.js(f"{top}.querySelector('.candidate-confirm').getAttribute('aria-keyshortcuts')")
            == "c Enter"
        )
        assert_accessible(page)
        page.screenshot(shots / f"bank-candidates-{locale}.png")

        # c confirms the top candidate: matched here and on the server, and one fewer missing.
        page.key("c")
        settled(page, f"{DETAIL}?.dataset.matched === 'true'")
        assert page.js("document.activeElement?.id") == "match-undo"
        page.wait("document.querySelector('#announce').textContent.startsWith('Matched to')", WAIT)
        stored = result(live.call("transactions.get", {"id": txn["id"]}))["transaction"]
        assert stored["matched"] is True and stored["matches"][0]["documentIds"] == [receipt]
        page.wait(f"{missing_row(month)}?.dataset.count === '{before - 1}'", WAIT)
        assert missing_in(live, month) == before - 1
        assert_accessible(page)

        # u undoes it: unmatched again, here and on the server, and counted missing again.
        page.key("u")
        settled(page, f"{DETAIL}?.dataset.matched === 'false'")
        page.wait(
            "document.querySelector('#announce').textContent.startsWith('Match undone')", WAIT
        )
        stored = result(live.call("transactions.get", {"id": txn["id"]}))["transaction"]
        assert stored["matched"] is False
        page.wait(f"{missing_row(month)}?.dataset.count === '{before}'", WAIT)
        assert missing_in(live, month) == before
        # The undone document is not proposed for it again.
        assert (
            page.js(f"document.querySelector('#candidates li[data-doc-ids=\"{receipt}\"]')") is None
        )
    finally:
        page.call("Emulation.setLocaleOverride")


def test_a_candidate_rejected_by_keyboard(live: LiveDashboard, tab: Page) -> None:
    """x rejects the selected candidate: it leaves the list, is recorded on the server, the
    rejection is announced and the transaction stays unmatched."""
    booked = dt.date.today() - dt.timedelta(days=25)
    documents = result(live.call("documents.search", {"useSearch": False, "limit": 100}))
    wrong = documents["documents"][2]["id"]
    result(
        live.call(
            "documents.update",
            {
                "id": wrong,
                "merchant": "Corner Cafe",
                "amount": "23.45",
                "currency": "EUR",
                "docDate": booked.isoformat(),
            },
        )
    )
    own_key(tab, live, "bank reject")
    open_bank(tab, live)
    choose_file(
        tab, "cafe.xml", camt053("STMT-reject", booked, "23.45", "CORNER CAFE BERLIN").encode()
    )
    tab.wait("!!document.querySelector('#import-done')", WAIT)
    where = {"conditions": [{"field": "amount", "op": "eq", "value": "-23.45"}]}
    txn = result(live.call("transactions.search", {"where": where}))["transactions"][0]
    tab.click(f'button.txn-row[data-id="{txn["id"]}"]')
    candidate = f"document.querySelector('#candidates li[data-doc-ids=\"{wrong}\"]')"
    settled(tab, f"!!{candidate}")
    assert (
        tab.js(f"{candidate}.querySelector('.candidate-reject').getAttribute('aria-keyshortcuts')")
        == "x"
    )
    tab.js(f"{candidate}.querySelector('.candidate-confirm').focus()")
    tab.key("x")
    settled(tab, f"!{candidate} && {DETAIL}?.dataset.id === {json.dumps(txn['id'])}")
    tab.wait("document.querySelector('#announce').textContent.includes('rejected')", WAIT)
    stored = result(live.call("transactions.get", {"id": txn["id"]}))["transaction"]
    assert stored["rejectedDocumentIds"] == [wrong] and stored["matched"] is False
    assert tab.js(f"{DETAIL}.dataset.matched") == "false"


def test_a_malformed_statement_is_refused_with_the_place(live: LiveDashboard, tab: Page) -> None:
    own_key(tab, live, "bank refused")
    open_bank(tab, live)
    choose_file(tab, "broken.xml", (FIXTURES / "malformed-camt053.xml").read_bytes())
    said = tab.wait("document.querySelector('#import-error')?.textContent", WAIT)
    refused = live.call(
        "statements.import",
        {
            "fileName": "broken.xml",
            "base64Data": base64.b64encode(
                (FIXTURES / "malformed-camt053.xml").read_bytes()
            ).decode(),
        },
    )
    assert refused.status_code == 400
    assert refused.json()["error"]["errorMessage"] in said, said
    assert tab.js("document.querySelector('#import-error').getAttribute('role')") == "alert"


def test_the_bank_page_fits_a_phone(live: LiveDashboard, tab: Page, shots: Path) -> None:
    booked = dt.date.today() - dt.timedelta(days=20)
    result(
        live.call(
            "statements.import",
            {
                "fileName": "phone.xml",
                "base64Data": base64.b64encode(
                    camt053("STMT-phone", booked, "12.30", "SQ *CORNER CAFE BERLIN 0042").encode()
                ).decode(),
            },
        )
    )
    own_key(tab, live, "bank phone")
    tab.viewport(390, 844, mobile=True)
    try:
        open_bank(tab, live)
        tab.wait("!!document.querySelector('button.txn-row')", WAIT)
        assert tab.js("document.documentElement.scrollWidth") <= 390
        tab.click("button.txn-row")
        settled(tab, f"!!{DETAIL}")
        assert tab.js("document.documentElement.scrollWidth") <= 390
        tab.screenshot(shots / "bank-phone.png")
    finally:
        tab.call("Emulation.clearDeviceMetricsOverride")
