"""The signals: each weighs one kind of evidence about a (transaction, document) pair and says
why in a sentence. A signal's contribution is its weight (``policy.WEIGHTS``) times a strength
in [-1, 1]; a signal that has nothing to say (no card on the receipt) is left out.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from .names import SHORT_NAME, similarity
from .policy import (
    CARD_LAG_DAYS,
    CONVERSION_TOLERANCE,
    CONVERTED_STRENGTH,
    DIFFERENT_MERCHANT,
    EARLY_DAYS,
    INVOICE_LAG_DAYS,
    LATE_LAG_DAYS,
    REFERENCE_LAG_DAYS,
    SAME_MERCHANT,
    SIMILAR_MERCHANT,
    TIP_ALLOWANCE,
    TIP_STRENGTH,
    WEIGHTS,
)
from .types import BankTransaction, CandidateDocument, CandidateKind, Signal


def money(amount: Decimal, currency: str) -> str:
    return f"{amount:,.2f} {currency}"


def weighted(name: str, strength: float, reason: str) -> Signal:
    """A signal of ``strength`` (−1 to 1) times the weight ``policy.WEIGHTS`` gives ``name``."""
    return Signal(name, round(WEIGHTS[name] * strength, 2), reason)


@dataclass(frozen=True)
class AmountFit:
    """How a booking's amount fits a document: the signal, and what kind of match it makes."""

    signal: Signal
    kind: CandidateKind


def amount(
    paid: Decimal,
    currency: str,
    doc: CandidateDocument,
    converted: Decimal | None,
    referenced: bool,
) -> AmountFit | None:
    """The booking's size (``paid``, in ``currency``) against the document's total: equal
    (with the printed tip, if any), within the conversion tolerance when the document is in
    another currency (``converted``: its total at the booking date's rate), a little above
    the total (a tip written on the slip), or below it when the booking names the document (a
    partial payment). None: the amount does not fit."""
    total = doc.total
    if doc.currency == currency:
        shown = money(total, currency)
        if paid == total:
            return AmountFit(
                weighted("amount", 1.0, f"amount {money(paid, currency)} equals the total"),
                "single",
            )
        if doc.tip is not None and paid == total + doc.tip:
            reason = (
                f"amount {money(paid, currency)} equals the total {shown} "
                f"plus the tip {doc.tip:.2f}"
            )
            return AmountFit(weighted("amount", 1.0, reason), "single")
        if total < paid <= total * (1 + TIP_ALLOWANCE) and doc.tip is None:
            share = (paid - total) / total * 100
            reason = (
                f"amount {money(paid, currency)} is {share:.0f}% above the total {shown}: "
                f"a tip? (up to {TIP_ALLOWANCE * 100:.0f}% allowed)"
            )
            return AmountFit(weighted("amount", TIP_STRENGTH, reason), "single")
        if referenced and paid < total:
            reason = f"pays {money(paid, currency)} of the total {shown}: a partial payment"
            return AmountFit(weighted("amount", 0.3, reason), "partial")
        return None
    if converted is None or converted == 0:
        return None
    drift = abs(paid - converted) / converted
    if drift <= CONVERSION_TOLERANCE:
        reason = (
            f"amount {money(paid, currency)} is within {drift * 100:.1f}% of the total "
            f"{money(total, doc.currency)} converted at the booking date "
            f"({money(converted, currency)}; tolerance {CONVERSION_TOLERANCE * 100:.1f}%)"
        )
        return AmountFit(weighted("amount", CONVERTED_STRENGTH, reason), "single")
    if referenced and paid < converted:
        reason = (
            f"pays {money(paid, currency)} of the total {money(total, doc.currency)} "
            f"(≈ {money(converted, currency)}): a partial payment"
        )
        return AmountFit(weighted("amount", 0.3, reason), "partial")
    return None


def split_amount(paid: Decimal, currency: str, docs: list[CandidateDocument]) -> Signal:
    """Receipts whose totals add up to the booking exactly (the index found them)."""
    parts = " + ".join(f"{doc.total:.2f}" for doc in docs)
    reason = f"amount {money(paid, currency)} is the sum of {len(docs)} receipts: {parts}"
    return weighted("amount", 1.0, reason)


def date_window(txn: BankTransaction, doc: CandidateDocument, referenced: bool) -> Signal | None:
    """Days from the document's date to the booking (or to the value date, when that is
    closer): card bookings lag 0–5 days, transfers pay invoices later, a booking rarely comes
    first. None: outside the window."""
    lag = (txn.booking_date - doc.date).days
    which = "booked"
    if txn.value_date is not None:
        value_lag = (txn.value_date - doc.date).days
        if 0 <= value_lag < lag or (lag < 0 and value_lag > lag):
            lag, which = value_lag, "value date"
    days = f"{abs(lag)} day{'s' if abs(lag) != 1 else ''}"
    if 0 <= lag <= CARD_LAG_DAYS:
        when = "the same day as" if lag == 0 else f"{days} after"
        return weighted(
            "date",
            1.0,
            f"{which} {when} the document date (card bookings lag 0–{CARD_LAG_DAYS} days)",
        )
    if CARD_LAG_DAYS < lag <= LATE_LAG_DAYS:
        return weighted("date", -0.2, f"{which} {days} after the document date (late for a card)")
    if LATE_LAG_DAYS < lag <= INVOICE_LAG_DAYS:
        return weighted(
            "date",
            -0.4,
            f"{which} {days} after the document date (an invoice paid within "
            f"{INVOICE_LAG_DAYS} days)",
        )
    if -EARLY_DAYS <= lag < 0:
        return weighted("date", 0.3, f"{which} {days} before the document date")
    if referenced and -REFERENCE_LAG_DAYS <= lag <= REFERENCE_LAG_DAYS:
        return weighted("date", 0.0, f"{which} {days} from the document date (named in the text)")
    return None


def merchant(counterparty: str, shown: str, names: tuple[tuple[str, str], ...]) -> Signal | None:
    """The booking's counterparty (normalised ``counterparty``, as booked ``shown``) against the
    document's merchant and seller names (pairs of normalised and printed name): the best
    similarity. None when either side has no name."""
    if not counterparty or not names:
        return None
    best, printed, norm = max((similarity(counterparty, norm), raw, norm) for norm, raw in names)
    said = f"'{shown}' ~ '{printed}' {best:.0f}%"
    if best >= SAME_MERCHANT:
        return weighted("merchant", 1.0, said)
    if best >= SIMILAR_MERCHANT:
        strength = 0.4 + 0.6 * (best - SIMILAR_MERCHANT) / (SAME_MERCHANT - SIMILAR_MERCHANT)
        return weighted("merchant", strength, said)
    # A name too short to judge (an OCR'd 'Ar') does not speak against the match.
    if best < DIFFERENT_MERCHANT and len(norm) >= SHORT_NAME:
        return weighted("merchant", -0.4, f"{said}: another merchant?")
    return weighted("merchant", 0.0, said)


def reference(found: bool, doc: CandidateDocument) -> Signal | None:
    """The document's invoice number in the booking text (found by the index, across spaces and
    punctuation)."""
    if not found:
        return None
    return weighted("reference", 1.0, f"invoice number {doc.invoice_number} in the booking text")


def currency(txn: BankTransaction, doc: CandidateDocument) -> Signal:
    """The same currency on both sides; a converted one is neither for nor against."""
    if txn.currency == doc.currency:
        return weighted("currency", 1.0, f"both in {txn.currency}")
    return weighted("currency", 0.0, f"receipt in {doc.currency}, booked in {txn.currency}")


def card(txn: BankTransaction, doc: CandidateDocument) -> Signal | None:
    """The card's last four digits on the receipt and in the booking text: the same speaks for
    the match, different ones against it. None when either side does not show them."""
    if not txn.card_last4 or not doc.card_last4:
        return None
    if txn.card_last4 == doc.card_last4:
        return weighted("card", 1.0, f"card ending {doc.card_last4} on both")
    return weighted(
        "card",
        -1.0,
        f"receipt paid with card ending {doc.card_last4}, booked on card ending {txn.card_last4}",
    )
