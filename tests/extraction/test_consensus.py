"""A receipt states its total several ways; when the total read disagrees with them it is
flagged, and when they agree among themselves on another figure that figure is taken — with
a warning, never silently (issue 40, items 2 and 4). Constructed slips; names made up."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

from engines.extraction import ParseHints, parse_fields

TODAY = ParseHints(today=date(2025, 6, 1))
D = Decimal


def slip(*rows: str) -> str:
    return "\n".join(["KEDAI RUNCITAN MAJU", "12 Jalan Melur", "Date: 03/02/2025", *rows])


def test_a_total_that_lost_a_digit_is_replaced_by_what_the_slip_agrees_on() -> None:
    # OCR dropped the 0 of 20.00 in the total; the articles and the cash less the change
    # both give 20.00.
    text = slip(
        "Roti canai 3.50",
        "Teh tarik 12.00",
        "Kuih 4.50",
        "TOTAL 2.00",
        "CASH 50.00",
        "CHANGE 30.00",
    )
    fields = parse_fields(text, TODAY)
    assert fields.amount == D("20.00")
    warning = fields.evidence["amount"].warning
    assert warning is not None and "2.00" in warning and "20.00" in warning, warning
    assert "the cash less the change" in warning
    assert (fields.confidence("amount") or 1.0) < 0.8


def test_a_total_the_subtotal_and_tax_dispute_is_kept_and_flagged() -> None:
    text = slip(
        "Nasi lemak 18.00",
        "SUBTOTAL 18.00",
        "SST 6% 1.08",
        "TOTAL 19.80",
    )
    fields = parse_fields(text, TODAY)
    assert fields.amount == D("19.80")  # never silently "fixed" from one source
    warning = fields.evidence["amount"].warning
    assert warning is not None and "19.08" in warning, warning


def test_a_total_its_sources_confirm_carries_no_warning() -> None:
    text = slip(
        "Nasi lemak 18.00",
        "SUBTOTAL 18.00",
        "SST 6% 1.08",
        "TOTAL 19.08",
        "CASH 20.00",
        "CHANGE 0.92",
    )
    fields = parse_fields(text, TODAY)
    assert fields.amount == D("19.08")
    assert fields.evidence["amount"].warning is None


def test_a_slip_with_nothing_to_check_the_total_against_says_nothing() -> None:
    fields = parse_fields(slip("TOTAL 12.00"), TODAY)
    assert fields.amount == D("12.00")
    assert fields.evidence["amount"].warning is None
