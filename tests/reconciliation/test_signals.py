"""Each signal: its contribution (weight × strength, ``policy.WEIGHTS``) and the sentence it
shows; the names normalised for comparison; the card ending and invoice number found in a
booking text."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest

from engines.reconciliation import WEIGHTS, card_ending, normalise, signals
from engines.reconciliation.index import DocumentIndex

from .stand_ins import DAY, doc, txn


def test_an_exact_amount_counts_in_full() -> None:
    fit = signals.amount(Decimal("42.50"), "EUR", doc(total="42.50"), None, False)
    assert fit is not None and fit.kind == "single"
    assert fit.signal.contribution == WEIGHTS["amount"]
    assert fit.signal.reason == "amount 42.50 EUR equals the total"


def test_the_printed_tip_is_added_to_the_total() -> None:
    receipt = doc(total="38.00", tip="4.50")
    fit = signals.amount(Decimal("42.50"), "EUR", receipt, None, False)
    assert fit is not None and fit.signal.contribution == WEIGHTS["amount"]
    assert "plus the tip 4.50" in fit.signal.reason


def test_a_guessed_tip_is_weak_and_bounded() -> None:
    fit = signals.amount(Decimal("44.00"), "EUR", doc(total="40.00"), None, False)
    assert fit is not None and fit.kind == "single"
    assert fit.signal.contribution == pytest.approx(0.3 * WEIGHTS["amount"])
    assert "10% above the total 40.00 EUR: a tip?" in fit.signal.reason
    # More than 25% above the total is no tip; a receipt with a printed tip needs no guess.
    assert signals.amount(Decimal("50.01"), "EUR", doc(total="40.00"), None, False) is None
    printed = doc(total="40.00", tip="2.00")
    assert signals.amount(Decimal("44.00"), "EUR", printed, None, False) is None


def test_a_converted_amount_within_the_tolerance() -> None:
    receipt = doc(total="50.00", currency="USD")
    fit = signals.amount(Decimal("45.60"), "EUR", receipt, Decimal("45.00"), False)
    assert fit is not None and fit.kind == "single"
    assert fit.signal.contribution == pytest.approx(0.75 * WEIGHTS["amount"])
    assert fit.signal.reason == (
        "amount 45.60 EUR is within 1.3% of the total 50.00 USD converted at the booking date "
        "(45.00 EUR; tolerance 2.5%)"
    )
    assert signals.amount(Decimal("46.20"), "EUR", receipt, Decimal("45.00"), False) is None
    assert signals.amount(Decimal("45.00"), "EUR", receipt, None, False) is None  # no rate


def test_less_than_a_named_invoice_is_a_partial_payment() -> None:
    invoice = doc(total="1200.00", invoice_number="RE-2025-0042")
    fit = signals.amount(Decimal("500.00"), "EUR", invoice, None, True)
    assert fit is not None and fit.kind == "partial"
    assert fit.signal.reason == "pays 500.00 EUR of the total 1,200.00 EUR: a partial payment"
    assert signals.amount(Decimal("500.00"), "EUR", invoice, None, False) is None


@pytest.mark.parametrize(
    ("lag", "strength", "said"),
    [
        (0, 1.0, "booked the same day as the document date (card bookings lag 0–5 days)"),
        (3, 1.0, "booked 3 days after the document date (card bookings lag 0–5 days)"),
        (10, -0.2, "booked 10 days after the document date (late for a card)"),
        (30, -0.4, "booked 30 days after the document date (an invoice paid within 45 days)"),
        (-1, 0.3, "booked 1 day before the document date"),
    ],
)
def test_the_date_window_is_asymmetric(lag: int, strength: float, said: str) -> None:
    found = signals.date_window(txn(booking_date=DAY + timedelta(days=lag)), doc(), False)
    assert found is not None
    assert found.contribution == pytest.approx(strength * WEIGHTS["date"])
    assert found.reason == said


def test_outside_the_window_there_is_no_candidate_unless_the_text_names_it() -> None:
    early = txn(booking_date=DAY - timedelta(days=5))
    late = txn(booking_date=DAY + timedelta(days=60))
    assert signals.date_window(early, doc(), False) is None
    assert signals.date_window(late, doc(), False) is None
    named = signals.date_window(late, doc(), True)
    assert named is not None and named.contribution == 0


def test_the_value_date_counts_when_it_is_closer() -> None:
    booked = txn(booking_date=DAY + timedelta(days=8), value_date=DAY + timedelta(days=1))
    found = signals.date_window(booked, doc(), False)
    assert found is not None and found.contribution == WEIGHTS["date"]
    assert found.reason.startswith("value date 1 day after")


@pytest.mark.parametrize(
    ("booked", "printed", "expected"),
    [
        ("SQ *BLUE BOTTLE COFFEE 0423", "Blue Bottle Coffee Inc.", "blue bottle coffee"),
        ("PAYPAL *EBAY", "eBay GmbH", "ebay"),
        ("AMAZON EU S.A R.L.", "Amazon EU S.à r.l.", "amazon eu"),
        ("PRET A MANGER LTD", "Pret A Manger Ltd.", "pret a manger"),
        ("ARAL AG 1234", "Aral AG", "aral"),
        ("CAFE MUELLER", "Café Müller", "cafe mueller"),
    ],
)
def test_names_are_normalised(booked: str, printed: str, expected: str) -> None:
    assert normalise(booked) == expected
    assert normalise(printed) == expected


def test_merchant_similarity_with_its_reason() -> None:
    names = ((normalise("Shell"), "Shell"),)
    found = signals.merchant(normalise("SHELL DEUTSCHLAND OIL"), "SHELL DEUTSCHLAND OIL", names)
    assert found is not None and found.contribution == WEIGHTS["merchant"]
    assert found.reason == "'SHELL DEUTSCHLAND OIL' ~ 'Shell' 90%"


def test_another_merchant_speaks_against_but_a_cut_name_does_not() -> None:
    other = signals.merchant(
        normalise("REWE MARKT"), "REWE MARKT", ((normalise("Edeka"), "Edeka"),)
    )
    assert other is not None and other.contribution < 0
    assert other.reason.endswith("another merchant?")
    cut = signals.merchant(normalise("JET TANKSTELLE"), "JET TANKSTELLE", (("j", "J"),))
    assert cut is not None and cut.contribution >= 0
    # A short name inside a longer one counts only as a whole word or its start.
    start = signals.merchant("rewe markt", "REWE MARKT", (("re", "RE"),))
    assert start is not None and 0 < start.contribution < WEIGHTS["merchant"]
    inside = signals.merchant("jet tankstelle", "JET TANKSTELLE", (("an", "AN"),))
    assert inside is not None and inside.contribution == 0
    assert signals.merchant("", "", (("shell", "Shell"),)) is None


def test_the_invoice_number_is_found_across_spaces_and_punctuation() -> None:
    invoice = doc(invoice_number="RE-2025-00042", merchant="Muster Software")
    index = DocumentIndex([invoice, doc("d2", invoice_number="42")])
    found = index.named_in("Rechnung RE 2025 00042 Kundennr 12345")
    assert [entry.doc.id for entry in found] == ["d1"]
    assert index.named_in("Rechnung RE-2025-00042") == found
    assert index.named_in("Zahlung 42 Muster") == []  # too short to be found anywhere
    said = signals.reference(True, invoice)
    assert said is not None and said.contribution == WEIGHTS["reference"]
    assert said.reason == "invoice number RE-2025-00042 in the booking text"
    assert signals.reference(False, invoice) is None


def test_currency_agreement() -> None:
    assert signals.currency(txn(), doc()).contribution == WEIGHTS["currency"]
    converted = signals.currency(txn(), doc(currency="USD"))
    assert converted.contribution == 0
    assert converted.reason == "receipt in USD, booked in EUR"


def test_card_endings_agree_disagree_or_say_nothing() -> None:
    same = signals.card(txn(card_last4="4242"), doc(card_last4="4242"))
    assert same is not None and same.contribution == WEIGHTS["card"]
    assert same.reason == "card ending 4242 on both"
    other = signals.card(txn(card_last4="4242"), doc(card_last4="1111"))
    assert other is not None and other.contribution == -WEIGHTS["card"]
    assert signals.card(txn(card_last4=None), doc(card_last4="4242")) is None


@pytest.mark.parametrize(
    ("text", "ending"),
    [
        ("SHELL 1234 // Karte ****4242 10.03", "4242"),
        ("VISA 9876 ARAL", "9876"),
        ("card ending 5555", "5555"),
        ("XXXX XXXX XXXX 1212", "1212"),
        ("Rechnung RE 2025 0042", None),
        # A date's year is no card ending (a CAMT booking text, a card statement's line).
        ("Kartenzahlung 2026-10-25 SHELL", None),
        ("Card payment 2026-10-25 ARAL", None),
        ("Kartenzahlung Karte 4242 2026-10-25", "4242"),
    ],
)
def test_the_card_ending_in_a_booking_text(text: str, ending: str | None) -> None:
    assert card_ending(text) == ending
