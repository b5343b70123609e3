"""Refunds and credit notes are money back: a negative amount and a type that says so
(issue 40, item 3). Constructed documents; names and numbers made up."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

from engines.extraction import ParseHints, parse_fields

TODAY = ParseHints(today=date(2025, 6, 1))
D = Decimal


def test_a_refund_receipt_with_its_total_printed_negative() -> None:
    # Before: every negative amount was left out, and the refund read as +12.50 (or nothing).
    text = "\n".join(
        [
            "SPORTHAUS MITTE",
            "RÜCKGABE",
            "Laufschuhe -49,99 A",
            "Socken -5,00 A",
            "SUMME EUR -54,99",
            "A 19,00% -46,21 -8,78 -54,99",
            "Datum 12.03.2024",
        ]
    )
    fields = parse_fields(text, TODAY)
    assert fields.amount == D("-54.99")
    assert fields.doc_type == "refund"
    assert fields.tax_amount == D("-8.78") and fields.subtotal == D("-46.21")
    assert [item.amount for item in fields.line_items] == [D("-49.99"), D("-5.00")]
    assert not any(found.warning for found in fields.evidence.values()), fields.evidence
    assert fields.summary.startswith("Refund from SPORTHAUS MITTE")


def test_a_total_printed_with_a_trailing_minus() -> None:
    text = "Baumarkt\nStorno\nBohrer 12,50-\nSUMME 12,50-\nDatum 12.03.2024"
    fields = parse_fields(text, TODAY)
    assert (fields.amount, fields.doc_type) == (D("-12.50"), "refund")


def test_a_credit_note_printed_positive_is_money_back() -> None:
    text = "\n".join(
        [
            "Kestrel Print Ltd",
            "CREDIT NOTE",
            "Credit note no.: CN-0042",
            "Date: 05/03/2024",
            "Bill to: Acme Ltd",
            "Returned paper 100.00",
            "Subtotal 100.00",
            "VAT 20% 20.00",
            "Total 120.00",
        ]
    )
    fields = parse_fields(text, TODAY)
    assert fields.amount == D("-120.00")
    assert fields.doc_type == "credit-note"
    assert (fields.subtotal, fields.tax_amount) == (D("-100.00"), D("-20.00"))


def test_a_returns_policy_is_no_refund() -> None:
    text = "\n".join(
        [
            "KEDAI ALAT SDN BHD",
            "Date: 12-03-2019",
            "HAMMER 35.00",
            "TOTAL 35.00",
            "STRICTLY NO CASH REFUND.",
            "Goods sold are not refundable",
        ]
    )
    fields = parse_fields(text, TODAY)
    assert (fields.amount, fields.doc_type) == (D("35.00"), "receipt")


def test_a_discount_row_below_zero_does_not_make_a_refund() -> None:
    text = "Cafe\nDate: 05/03/2024\nLatte 4.50\nDiscount -0.50\nTotal 4.00"
    fields = parse_fields(text, TODAY)
    assert (fields.amount, fields.doc_type) == (D("4.00"), "receipt")
