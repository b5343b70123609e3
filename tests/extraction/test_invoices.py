"""Invoices the project generates (tests/extraction/synthetic): every language and layout.

Generated invoices put the traps of real ones in known places: the buyer's address as the
first text on the page, due, order and delivery dates beside the invoice date, customer
and order numbers beside the invoice number, two tax rates, items running onto a second
page. The parser must read the issuer, the total, the invoice date and number, and the
currency from each.
"""

from __future__ import annotations

from datetime import date

import pytest

from engines.extraction import extract_text, parse_fields
from tests.extraction.synthetic import LANGUAGES, LAYOUTS, generate, make_invoice
from tests.extraction.synthetic.pdf import render

TODAY = date(2025, 11, 30)
# Every language in every layout; different seeds from the bench's.
INVOICES = generate(len(LANGUAGES) * len(LAYOUTS), seed=7)


def _letters(name: str) -> str:
    return "".join(ch for ch in name.lower() if ch.isalnum())


def _read(pdf: bytes):  # type: ignore[no-untyped-def]
    return parse_fields(extract_text(pdf, "application/pdf").layouts, {"today": TODAY})


@pytest.mark.parametrize("made", INVOICES, ids=[made.name for made in INVOICES])
def test_generated_invoice_kind_currency_and_evidence(made) -> None:  # type: ignore[no-untyped-def]
    invoice = made.invoice
    fields = _read(made.pdf)
    assert fields.doc_type == "invoice"
    assert fields.currency == invoice.language.currency
    assert fields.merchant is not None and fields.amount is not None
    # The chosen values are backed by evidence on the page they came from.
    for name in ("amount", "doc_date", "invoice_id", "merchant"):
        if name in fields.evidence:
            evidence = fields.evidence[name]
            assert evidence.page is not None and evidence.box is not None and evidence.text


def test_generated_invoice_fields_are_read() -> None:
    # The generator words some labels the parser does not know (test_synthetic_vocabulary),
    # so a field may be missed now and then; nine in ten right is the floor per field.
    right = {"amount": 0, "date": 0, "number": 0, "merchant": 0}
    for made in INVOICES:
        invoice, fields = made.invoice, _read(made.pdf)
        right["amount"] += fields.amount == invoice.payable
        right["date"] += fields.doc_date == invoice.invoice_date
        right["number"] += fields.invoice_id == invoice.number
        right["merchant"] += fields.merchant is not None and _letters(invoice.issuer.name) in (
            _letters(fields.merchant)
        )
    for name, count in right.items():
        assert count >= 0.9 * len(INVOICES), f"{name}: {count}/{len(INVOICES)}"


def test_every_language_and_layout_is_generated() -> None:
    assert {made.invoice.language.code for made in INVOICES} == {lang.code for lang in LANGUAGES}
    assert {made.layout for made in INVOICES} == set(LAYOUTS)


def test_generation_is_reproducible() -> None:
    again = make_invoice(INVOICES[3].invoice.seed, INVOICES[3].invoice.language)
    assert again == INVOICES[3].invoice
    text = extract_text(render(again, INVOICES[3].layout), "application/pdf").text
    assert text == extract_text(INVOICES[3].pdf, "application/pdf").text


def test_a_long_invoice_totals_on_its_last_page() -> None:
    long = next((made for made in generate(200, seed=11) if len(made.invoice.items) > 25), None)
    assert long is not None
    extracted = extract_text(long.pdf, "application/pdf")
    assert extracted.page_count >= 2
    fields = parse_fields(extracted.layouts, {"today": TODAY})
    assert fields.amount == long.invoice.payable
    assert fields.evidence["amount"].page == extracted.page_count
